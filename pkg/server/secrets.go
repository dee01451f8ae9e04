package server

import (
	"io"
	"strings"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// minSecret is the shortest string treated as a secret: replacing shorter
// ones would mangle ordinary text.
const minSecret = 4

// secrets holds every secret the server knows (profile keys, the bearer
// token, keys clients sent), counted, so that none is repeated in an error
// or a streamed message.
type secrets struct {
	mu  sync.RWMutex
	set map[string]int
}

func newSecrets(initial ...string) *secrets {
	s := &secrets{set: map[string]int{}}
	s.add(initial...)
	return s
}

func (s *secrets) add(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if len(k) >= minSecret {
			s.set[k]++
		}
	}
}

func (s *secrets) remove(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if n, ok := s.set[k]; ok {
			if n <= 1 {
				delete(s.set, k)
			} else {
				s.set[k] = n - 1
			}
		}
	}
}

// redact replaces every known secret in text.
func (s *secrets) redact(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k := range s.set {
		if strings.Contains(text, k) {
			text = strings.ReplaceAll(text, k, "[redacted]")
		}
	}
	return text
}

// redactStatus removes secrets from a status error's message and its
// ErrorInfo metadata; other errors are returned as they are.
func (s *secrets) redactStatus(err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	p := st.Proto()
	changed := false
	if m := s.redact(p.GetMessage()); m != p.GetMessage() {
		p.Message, changed = m, true
	}
	for i, a := range p.GetDetails() {
		info := &errdetails.ErrorInfo{}
		if a.UnmarshalTo(info) != nil {
			continue
		}
		dirty := false
		for k, v := range info.GetMetadata() {
			if r := s.redact(v); r != v {
				info.Metadata[k], dirty = r, true
			}
		}
		if dirty {
			if b, merr := proto.Marshal(info); merr == nil {
				p.Details[i].Value, changed = b, true
			}
		}
	}
	if !changed {
		return err
	}
	return status.FromProto(p).Err()
}

// writer returns a writer that redacts secrets from each write to w (hclog
// writes one whole entry per call).
func (s *secrets) writer(w io.Writer) io.Writer { return redactingWriter{s: s, w: w} }

type redactingWriter struct {
	s *secrets
	w io.Writer
}

func (r redactingWriter) Write(p []byte) (int, error) {
	clean := r.s.redact(string(p))
	if len(clean) == len(p) && clean == string(p) {
		return r.w.Write(p)
	}
	if _, err := io.WriteString(r.w, clean); err != nil {
		return 0, err
	}
	return len(p), nil
}
