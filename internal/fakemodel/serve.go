package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// maxRequestBody bounds a request body the server reads.
const maxRequestBody = 64 << 20

// serveHTTP routes a request to the encoder of its path, takes its turn and
// writes the turn in that protocol.
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
	if err := s.refuse(enc, req); err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(enc.errorBody(http.StatusBadRequest, err.Error()))
		return
	}

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

// writeRaw sends Turn.Raw verbatim.
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
