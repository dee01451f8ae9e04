// Package fakemodel is a model server on 127.0.0.1 that speaks the providers'
// wire formats: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages
// and Gemini generateContent, streaming (SSE) and not. Every test in the
// project that needs a model talks to it over real HTTP, and so can an
// offline demo.
//
// A test scripts turns and reads back the requests it got:
//
//	srv := fakemodel.StartTB(t)
//	srv.Push(fakemodel.Turn{Text: "hi", Usage: &fakemodel.Usage{Input: 10, Output: 2}})
//	// point the adapter at srv.URL, call it, then:
//	req := srv.Requests()[0] // Protocol, Path, Header, Body, Stream; JSON(), Field(key, &v)
//
// Requests are routed by path (a leading /v1 is accepted everywhere):
//
//	POST {URL}/chat/completions                      chat
//	POST {URL}/responses                             responses
//	POST {URL}/messages                              anthropic
//	POST {URL}/models/{model}:generateContent        gemini
//	POST {URL}/models/{model}:streamGenerateContent  gemini, streaming
//
// Each request takes the next pushed Turn; when none is queued the Handle
// function (if any) makes one; otherwise the reply is HTTP 500 with a body
// saying "fakemodel: no scripted turn", so that a test that forgot to script
// a turn fails loudly.
//
// A Turn is written in the protocol the request used: Text, Reasoning,
// ToolCalls, Usage and FinishReason are protocol-neutral. Status with
// ErrorBody and Header make an HTTP error (Retry-After goes in Header);
// StreamError ends a stream with the protocol's error event; Delay,
// ChunkDelay, EndDelay, CutAfter and StallAfter shape the timing; Events and
// Raw replay recorded streams and bodies verbatim.
package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bytedance/sonic"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// NoTurnMessage is the body text of the reply to an unscripted request.
const NoTurnMessage = "fakemodel: no scripted turn"

// maxRequestBody bounds a request body the server reads.
const maxRequestBody = 64 << 20

// Turn is one scripted model reply.
type Turn struct {
	// Text is the whole answer text, sent as one delta when streaming.
	Text string
	// TextChunks, when set, are the text deltas (Text is then ignored).
	TextChunks []string
	// Reasoning is the model's reasoning ("thinking") text.
	Reasoning string
	// ReasoningSignature is the protocol's opaque reasoning token: Anthropic's
	// thinking signature, the Responses encrypted_content, Gemini's thought
	// signature.
	ReasoningSignature string
	// ToolCalls are the tool calls the model makes.
	ToolCalls []ToolCall
	// Usage is reported when set.
	Usage *Usage
	// FinishReason is stop, length, tool_calls or content_filter; empty means
	// tool_calls when there are tool calls and stop otherwise. Other values are
	// sent as they are.
	FinishReason string

	// Status, when 400 or more, makes an HTTP error reply with ErrorBody, or
	// the protocol's error body for that status when ErrorBody is empty. With
	// Raw it is the status sent with the raw body.
	Status int
	// ErrorBody is the body of an HTTP error reply.
	ErrorBody string
	// Header is added to the reply (e.g. Retry-After).
	Header http.Header
	// StreamError ends a stream with the protocol's error event after the
	// turn's content. A non-streaming request gets a success status with the
	// protocol's error body instead, as some gateways do.
	StreamError *StreamError

	// Delay is waited before the response headers are sent.
	Delay time.Duration
	// ChunkDelay is waited between streamed events.
	ChunkDelay time.Duration
	// CutAfter, when positive, drops the connection after that many events,
	// so the terminal event is not sent (with N at least the event count,
	// after all of them); a non-streaming reply is cut halfway.
	CutAfter int
	// StallAfter, when positive, stops sending after that many events (or
	// all of them) and holds the connection open until the client goes or
	// the server closes; a non-streaming reply stalls after its headers.
	StallAfter int
	// EndDelay is waited after a stream's last event before its body ends,
	// as a server or gateway that is slow to end the response.
	EndDelay time.Duration

	// Events, when set, are streamed instead of the events encoded from the
	// turn; ChunkDelay, CutAfter and StallAfter apply.
	Events []Event
	// Raw, when set, is sent verbatim as the body, with Status (default 200).
	Raw []byte
	// RawContentType is Raw's Content-Type; empty means text/event-stream for
	// a streaming request and application/json otherwise.
	RawContentType string
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	// ID is the call id; empty means one is made up.
	ID string
	// Name is the tool name.
	Name string
	// Arguments is the arguments JSON text.
	Arguments string
}

// Usage is scripted token usage, protocol-neutral.
type Usage struct {
	// Input counts every input token, cache reads and writes included;
	// encoders subtract the cached parts where the protocol counts them apart.
	Input int
	// Output counts every output token, reasoning included.
	Output int
	// CacheRead counts input tokens served from the prompt cache.
	CacheRead int
	// CacheWrite counts input tokens written to the prompt cache.
	CacheWrite int
	// Reasoning counts output tokens spent on reasoning.
	Reasoning int
}

// StreamError is an error reported inside a stream.
type StreamError struct {
	// Type is the provider's error type or code, e.g. rate_limit_exceeded.
	Type string
	// Message is the error message.
	Message string
}

// Event is one server-sent event.
type Event struct {
	// Name is the "event:" field; empty sends none.
	Name string
	// Data is sent as "data:" lines, one per line of Data.
	Data string
}

// Request is a request the server received.
type Request struct {
	// Protocol is the protocol of the path the request used.
	Protocol provider.Protocol
	// Method is the HTTP method.
	Method string
	// Path is the URL path.
	Path string
	// Query is the URL query.
	Query url.Values
	// Header is the request's headers.
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Stream says whether the request asked for a stream.
	Stream bool

	jsonOnce sync.Once
	json     map[string]any
}

// JSON returns Body decoded, nil when it is not a JSON object. It is
// decoded on the first call: most requests are never read whole, and a
// request that offers a model many tools takes this server, which shares
// the benchmarks' cores, about a hundred microseconds to decode.
func (r *Request) JSON() map[string]any {
	r.jsonOnce.Do(func() {
		var m map[string]any
		if json.Unmarshal(r.Body, &m) == nil {
			r.json = m
		}
	})
	return r.json
}

// Field decodes the body's top-level member key into v and reports
// whether it is there with v's type. It finds the member without decoding
// the rest of the body.
func (r *Request) Field(key string, v any) bool {
	node, err := sonic.Get(r.Body, key)
	if err != nil {
		return false
	}
	raw, err := node.Raw()
	return err == nil && json.Unmarshal([]byte(raw), v) == nil
}

// Server is a running fake model server.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:41234.
	URL string

	srv      *http.Server
	encoders []encoder
	served   chan struct{} // closed when Serve returns
	done     chan struct{} // closed by Close: ends delays and stalls

	mu       sync.Mutex
	closed   bool
	handlers sync.WaitGroup
	queue    []Turn
	handle   func(*Request) Turn
	requests []*Request

	closeOnce sync.Once
}

// Start starts a server on a free port of 127.0.0.1. Close it when done.
func Start() (*Server, error) {
	encs, err := collectEncoders()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	s := &Server{
		URL:      "http://" + ln.Addr().String(),
		encoders: encs,
		served:   make(chan struct{}),
		done:     make(chan struct{}),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s, nil
}

// TB is the part of testing.TB that StartTB uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// StartTB starts a server that is closed when the test ends.
func StartTB(tb TB) *Server {
	tb.Helper()
	s, err := Start()
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server: stalled and delayed replies end, connections are
// closed, and Close returns when every handler has returned.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		_ = s.srv.Close()
		<-s.served
		s.handlers.Wait()
	})
}

// Push queues turns; each request takes the first queued turn.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, turns...)
}

// Handle sets the function that makes a turn for a request when the queue is
// empty. It may be called concurrently from many requests.
func (s *Server) Handle(fn func(r *Request) Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handle = fn
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Pending returns how many pushed turns no request has taken yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// enter registers a running handler; false once the server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		http.Error(w, "fakemodel: closed", http.StatusServiceUnavailable)
		return
	}
	defer s.handlers.Done()

	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "fakemodel: reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	var enc encoder
	for _, e := range s.encoders {
		if e.match(path) {
			enc = e
			break
		}
	}
	if enc == nil || r.Method != http.MethodPost {
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("fakemodel: nothing serves %s %s", r.Method, r.URL.Path))
		return
	}
	req := &Request{
		Protocol: enc.protocol(),
		Method:   r.Method,
		Path:     r.URL.Path,
		Query:    r.URL.Query(),
		Header:   r.Header.Clone(),
		Body:     body,
	}
	req.Stream = enc.streaming(req)

	t, ok := s.next(req)
	if !ok {
		writeJSONError(w, http.StatusInternalServerError, NoTurnMessage)
		return
	}
	if !s.wait(r.Context(), t.Delay) {
		return
	}
	for k, vs := range t.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch {
	case t.Raw != nil:
		s.writeRaw(w, req, t)
	case t.Status >= 400:
		b := []byte(t.ErrorBody)
		if t.ErrorBody == "" {
			b = enc.errorBody(t.Status, http.StatusText(t.Status))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		_, _ = w.Write(b)
	case req.Stream:
		events := t.Events
		if events == nil {
			events = enc.events(req, t)
		}
		s.writeStream(w, r, t, events)
	default:
		b, err := enc.reply(req, t)
		if err != nil {
			writeJSONError(w, http.StatusInternalServerError, "fakemodel: encoding reply: "+err.Error())
			return
		}
		s.writeBody(w, r, t, http.StatusOK, "application/json", b)
	}
}

// next takes the turn for req.
func (s *Server) next(req *Request) (Turn, bool) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	if len(s.queue) > 0 {
		t := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return t, true
	}
	fn := s.handle
	s.mu.Unlock()
	if fn == nil {
		return Turn{}, false
	}
	return fn(req), true
}

// wait sleeps for d; false when the client went or the server closed first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// stall holds the reply until the client goes or the server closes.
func (s *Server) stall(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.done:
	}
}

func (s *Server) writeRaw(w http.ResponseWriter, req *Request, t Turn) {
	ct := t.RawContentType
	if ct == "" {
		ct = "application/json"
		if req.Stream {
			ct = "text/event-stream"
		}
	}
	status := t.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(t.Raw)
}

// writeBody sends a whole body, cut or stalled as the turn says.
func (s *Server) writeBody(w http.ResponseWriter, r *http.Request, t Turn, status int, contentType string, b []byte) {
	w.Header().Set("Content-Type", contentType)
	if t.CutAfter > 0 || t.StallAfter > 0 {
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.WriteHeader(status)
		flush(w)
		if t.StallAfter > 0 {
			s.stall(r.Context())
			return
		}
		_, _ = w.Write(b[:len(b)/2])
		flush(w)
		panic(http.ErrAbortHandler) // drops the connection without logging
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeStream sends events with the turn's pacing, cut and stall.
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, t Turn, events []Event) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
	var buf bytes.Buffer
	for i, e := range events {
		if t.CutAfter > 0 && i == t.CutAfter {
			panic(http.ErrAbortHandler)
		}
		if t.StallAfter > 0 && i == t.StallAfter {
			s.stall(r.Context())
			return
		}
		if i > 0 && !s.wait(r.Context(), t.ChunkDelay) {
			return
		}
		buf.Reset()
		writeEvent(&buf, e)
		if _, err := w.Write(buf.Bytes()); err != nil {
			return
		}
		flush(w)
	}
	switch {
	case t.CutAfter > 0:
		panic(http.ErrAbortHandler)
	case t.StallAfter > 0:
		s.stall(r.Context())
	default:
		s.wait(r.Context(), t.EndDelay)
	}
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "fakemodel"}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeEvent writes one event in SSE framing.
func writeEvent(b *bytes.Buffer, e Event) {
	if e.Name != "" {
		b.WriteString("event: ")
		b.WriteString(e.Name)
		b.WriteByte('\n')
	}
	for line := range strings.SplitSeq(e.Data, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}

// SSE returns events in SSE framing, for Turn.Raw.
func SSE(events ...Event) []byte {
	var b bytes.Buffer
	for _, e := range events {
		writeEvent(&b, e)
	}
	return b.Bytes()
}

// ChunkEvents turns a recorded *.chunks.txt (one JSON payload per line) into
// events. With named set each event is named after its payload's "type"
// field, as the Responses and Anthropic streams are.
func ChunkEvents(chunks []byte, named bool) ([]Event, error) {
	var out []Event
	for i, line := range strings.Split(string(chunks), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		e := Event{Data: line}
		if named {
			var p struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				return nil, fmt.Errorf("fakemodel: chunk line %d: %w", i+1, err)
			}
			if p.Type == "" {
				return nil, fmt.Errorf("fakemodel: chunk line %d has no type", i+1)
			}
			e.Name = p.Type
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, errors.New("fakemodel: no chunks")
	}
	return out, nil
}

// text returns the turn's text deltas.
func (t Turn) text() []string {
	if t.TextChunks != nil {
		return t.TextChunks
	}
	if t.Text == "" {
		return nil
	}
	return []string{t.Text}
}

// fullText returns the turn's whole text.
func (t Turn) fullText() string { return strings.Join(t.text(), "") }

// finish returns the neutral finish reason.
func (t Turn) finish() string {
	if t.FinishReason != "" {
		return t.FinishReason
	}
	if len(t.ToolCalls) > 0 {
		return provider.FinishToolCalls
	}
	return provider.FinishStop
}

// callID returns the id of the turn's i-th tool call.
func (t Turn) callID(i int) string {
	if id := t.ToolCalls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("call_fake_%d", i)
}

// splitArgs cuts tool arguments into two deltas at a rune boundary, so that
// clients must join pieces.
func splitArgs(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	i := len(s) / 2
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	if i == 0 {
		return []string{s}
	}
	return []string{s[:i], s[i:]}
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// mustJSON marshals v, which encoders build from maps, slices, strings,
// numbers and booleans only, so it cannot fail.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// requestModel returns the "model" field of a JSON request.
func requestModel(req *Request) string {
	var m string
	req.Field("model", &m)
	return m
}
