// Package redact keeps secrets out of what the server says. Secrets holds
// every secret the server knows, counted as they come and go: the
// server-held ones (profile keys, the bearer token), fixed at start, and
// the keys clients send with their configs while a session or a send holds
// them. Every known secret is replaced in errors (RedactStatus) and log
// lines (Writer); the server-held ones also in every response and event
// (RedactMessage) and in what tools return (RedactHeld): a client never
// learns the operator's keys, and may see its own.
package redact

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// minSecret is the shortest string treated as a secret: replacing shorter
// ones would mangle ordinary text.
const minSecret = 4

// Secrets holds every secret the server knows (profile keys, the bearer
// token, keys clients sent), counted, so that none is repeated in an error
// or a log line. The server-held ones (given to New) are also removed from
// every response and event.
type Secrets struct {
	// held are the server-held secrets, fixed at start (heldStr the same as strings).
	held    [][]byte
	heldStr []string

	mu  sync.RWMutex
	set map[string]int
	// asBytes holds the keys of set as bytes, in no order: what a log line,
	// which is bytes, is searched for.
	asBytes [][]byte
}

// New returns the secrets with held, the server-held ones.
func New(held ...string) *Secrets {
	s := &Secrets{set: map[string]int{}}
	for _, k := range held {
		if len(k) >= minSecret {
			s.held = append(s.held, []byte(k))
			s.heldStr = append(s.heldStr, k)
		}
	}
	s.Add(held...)
	return s
}

// Add counts keys as known secrets (each at least minSecret long).
func (s *Secrets) Add(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if len(k) >= minSecret {
			s.set[k]++
			if s.set[k] == 1 {
				s.asBytes = append(s.asBytes, []byte(k))
			}
		}
	}
}

// inBytes reports whether p holds a known secret.
func (s *Secrets) inBytes(p []byte) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, k := range s.asBytes {
		if bytes.Contains(p, k) {
			return true
		}
	}
	return false
}

// Remove forgets keys once each: a key added twice is known until it is
// removed twice.
func (s *Secrets) Remove(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if n, ok := s.set[k]; ok {
			if n <= 1 {
				delete(s.set, k)
				s.asBytes = slices.DeleteFunc(s.asBytes, func(b []byte) bool { return string(b) == k })
			} else {
				s.set[k] = n - 1
			}
		}
	}
}

// Redact replaces every known secret in text.
func (s *Secrets) Redact(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k := range s.set {
		if strings.Contains(text, k) {
			text = strings.ReplaceAll(text, k, Mark)
		}
	}
	return text
}

// RedactHeld replaces the server-held secrets in text (what a tool found:
// its results go to the model, which must not get them either).
func (s *Secrets) RedactHeld(text string) string {
	for _, k := range s.heldStr {
		if strings.Contains(text, k) {
			text = strings.ReplaceAll(text, k, Mark)
		}
	}
	return text
}

// RedactStatus removes secrets from a status error's message and its
// ErrorInfo metadata; other errors are returned as they are.
func (s *Secrets) RedactStatus(err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	p := st.Proto()
	changed := false
	if m := s.Redact(p.GetMessage()); m != p.GetMessage() {
		p.Message, changed = m, true
	}
	for i, a := range p.GetDetails() {
		info := &errdetails.ErrorInfo{}
		if a.UnmarshalTo(info) != nil {
			continue
		}
		dirty := false
		for k, v := range info.GetMetadata() {
			if r := s.Redact(v); r != v {
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

// Writer returns a writer that redacts secrets from each write to w (hclog
// writes one whole entry per call).
func (s *Secrets) Writer(w io.Writer) io.Writer { return redactingWriter{s: s, w: w} }

type redactingWriter struct {
	s *Secrets
	w io.Writer
}

// Write writes p to the underlying writer with every known secret replaced.
func (r redactingWriter) Write(p []byte) (int, error) {
	if !r.s.inBytes(p) { // most lines: no copy
		return r.w.Write(p)
	}
	clean := r.s.Redact(string(p))
	if _, err := io.WriteString(r.w, clean); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Mark is what replaces a secret.
const Mark = "[redacted]"

// RedactMessage returns m as it is when it holds no server-held secret, or
// a copy with each one replaced in every string, bytes field and map key.
// m itself is never changed: it may be shared (with a history, say).
func (s *Secrets) RedactMessage(m any) any {
	pm, ok := m.(proto.Message)
	if !ok || len(s.held) == 0 || pm == nil || s.cleanDelta(pm) {
		return m
	}
	if !s.walk(pm.ProtoReflect(), false) {
		return m
	}
	c := proto.Clone(pm)
	s.walk(c.ProtoReflect(), true)
	return c
}

// cleanDelta is the fast path of the most frequent message, a streamed
// text or reasoning delta: it reports whether m is one and holds no secret.
func (s *Secrets) cleanDelta(m proto.Message) bool {
	var ev *agentv1.Event
	switch r := m.(type) {
	case *agentv1.SendResponse:
		ev = r.GetEvent()
	case *agentv1.Event:
		ev = r
	}
	d := ev.GetModelDelta()
	if d == nil || d.GetToolCall() != nil {
		return false
	}
	for _, k := range s.heldStr {
		if strings.Contains(d.GetText(), k) || strings.Contains(d.GetReasoning(), k) || strings.Contains(ev.GetRunId(), k) {
			return false
		}
	}
	return true
}

// HasHeld reports whether there are server-held secrets at all.
func (s *Secrets) HasHeld() bool { return len(s.held) > 0 }

// Holds reports whether b contains a server-held secret.
func (s *Secrets) Holds(b []byte) bool {
	for _, k := range s.held {
		if bytes.Contains(b, k) {
			return true
		}
	}
	return false
}

func (s *Secrets) scrub(b []byte) []byte {
	for _, k := range s.held {
		b = bytes.ReplaceAll(b, k, []byte(Mark))
	}
	return b
}

// walk reports whether m holds a server-held secret; with fix, it replaces them.
func (s *Secrets) walk(m protoreflect.Message, fix bool) bool {
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if nv, hit := s.value(fd, l.Get(i), fix); hit {
					found = true
					if fix && nv.IsValid() {
						l.Set(i, nv)
					}
				}
			}
		case fd.IsMap():
			mp := v.Map()
			type rename struct{ from, to protoreflect.MapKey }
			var renames []rename
			mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if nv, hit := s.value(fd.MapValue(), mv, fix); hit {
					found = true
					if fix && nv.IsValid() {
						mp.Set(k, nv)
					}
				}
				if fd.MapKey().Kind() == protoreflect.StringKind && s.Holds([]byte(k.String())) {
					found = true
					renames = append(renames, rename{k, protoreflect.ValueOfString(string(s.scrub([]byte(k.String())))).MapKey()})
				}
				return !found || fix
			})
			for _, r := range renames {
				if fix {
					v := mp.Get(r.from)
					mp.Clear(r.from)
					mp.Set(r.to, v)
				}
			}
		default:
			if nv, hit := s.value(fd, v, fix); hit {
				found = true
				if fix && nv.IsValid() {
					m.Set(fd, nv)
				}
			}
		}
		return !found || fix // without fix, the first secret is enough
	})
	return found
}

// value checks one singular value of field fd; with fix, it returns the
// cleaned scalar (an invalid Value for messages, cleaned in place).
func (s *Secrets) value(fd protoreflect.FieldDescriptor, v protoreflect.Value, fix bool) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		str := v.String()
		for _, k := range s.heldStr {
			if strings.Contains(str, k) {
				if !fix {
					return protoreflect.Value{}, true
				}
				return protoreflect.ValueOfString(string(s.scrub([]byte(str)))), true
			}
		}
	case protoreflect.BytesKind:
		if b := v.Bytes(); s.Holds(b) {
			if !fix {
				return protoreflect.Value{}, true
			}
			return protoreflect.ValueOfBytes(s.scrub(append([]byte(nil), b...))), true
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return protoreflect.Value{}, s.walk(v.Message(), fix)
	}
	return protoreflect.Value{}, false
}
