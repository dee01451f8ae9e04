// Package fakemodel is a model server on 127.0.0.1 that speaks the providers'
// wire formats: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages
// and Gemini generateContent, streaming (SSE) and not. Every test in the
// project that needs a model talks to it over real HTTP, and so does the
// offline demo (examples/demo). It is test support, internal so that only
// this module's tests, examples and commands can import it.
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
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// NoTurnMessage is the body text of the reply to an unscripted request.
const NoTurnMessage = "fakemodel: no scripted turn"

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
	strict   bool     // check requests (Strict)
	rejected []string // why each refused request was

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
