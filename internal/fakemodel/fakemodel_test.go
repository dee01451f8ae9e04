package fakemodel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// post sends body to srv.URL+path and returns the reply.
func post(t *testing.T, ctx context.Context, client *http.Client, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return string(b)
}

// events reads a stream's events as (type, data) pairs.
func events(t *testing.T, resp *http.Response) [][2]string {
	t.Helper()
	r := sse.NewReader(context.Background(), resp.Body)
	defer r.Close()
	var out [][2]string
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		out = append(out, [2]string{e.Type, string(e.Data)})
	}
}

func TestRoutes(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	tests := []struct {
		path   string
		body   string
		proto  provider.Protocol
		stream bool
	}{
		{"/chat/completions", `{"model":"m"}`, provider.ProtocolChat, false},
		{"/v1/chat/completions", `{"model":"m","stream":true}`, provider.ProtocolChat, true},
		{"/responses", `{"model":"m","stream":true}`, provider.ProtocolResponses, true},
		{"/v1/responses", `{"model":"m"}`, provider.ProtocolResponses, false},
	}
	for _, tt := range tests {
		srv.Push(fakemodel.Turn{Text: "ok"})
		resp := post(t, context.Background(), c, srv.URL+tt.path, tt.body)
		_ = readBody(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", tt.path, resp.StatusCode)
		}
		reqs := srv.Requests()
		got := reqs[len(reqs)-1]
		if got.Protocol != tt.proto || got.Stream != tt.stream || got.Path != tt.path || got.JSON()["model"] != "m" {
			t.Errorf("%s: recorded %+v", tt.path, got)
		}
	}
	resp := post(t, context.Background(), c, srv.URL+"/nope", `{}`)
	if body := readBody(t, resp); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "nothing serves") {
		t.Errorf("unknown path: %d %s", resp.StatusCode, body)
	}
}

// TestRequestFields: a request's members read one by one (as the server
// reads stream, stream_options and model) and its body decoded whole on
// demand, for bodies that are an object, another JSON value, or no JSON.
func TestRequestFields(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	tests := []struct {
		name     string
		body     string
		stream   bool // the reply is a stream
		model    string
		hasModel bool
		object   bool // JSON() is not nil
	}{
		{"object", `{"model":"m","stream":true,"tools":[{"type":"function"}]}`, true, "m", true, true},
		{"stream of another type", `{"model":"m","stream":"yes"}`, false, "m", true, true},
		{"no stream", `{"model":"m"}`, false, "m", true, true},
		{"model of another type", `{"model":7,"stream":false}`, false, "", false, true},
		{"array", `[{"model":"m"}]`, false, "", false, false},
		{"not JSON", `model=m`, false, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Push(fakemodel.Turn{Text: "ok"})
			readBody(t, post(t, context.Background(), c, srv.URL+"/chat/completions", tt.body))
			reqs := srv.Requests()
			r := reqs[len(reqs)-1]
			var model string
			if r.Stream != tt.stream || r.Field("model", &model) != tt.hasModel || model != tt.model || (r.JSON() != nil) != tt.object {
				t.Fatalf("stream %v, model %q (%v), JSON %v; want %v, %q (%v), object %v",
					r.Stream, model, r.Field("model", &model), r.JSON(), tt.stream, tt.model, tt.hasModel, tt.object)
			}
		})
	}
}

func TestScript(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	url := srv.URL + "/chat/completions"

	resp := post(t, context.Background(), c, url, `{}`)
	if body := readBody(t, resp); resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, fakemodel.NoTurnMessage) {
		t.Fatalf("unscripted: %d %s", resp.StatusCode, body)
	}

	srv.Push(fakemodel.Turn{Text: "first"}, fakemodel.Turn{Text: "second"})
	srv.Handle(func(r *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Text: "handled " + r.JSON()["model"].(string)}
	})
	want := []string{"first", "second", "handled m", "handled m"}
	for _, w := range want {
		body := readBody(t, post(t, context.Background(), c, url, `{"model":"m"}`))
		var r struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Choices) != 1 || r.Choices[0].Message.Content != w {
			t.Fatalf("got %s, want content %q", body, w)
		}
	}
	if srv.Pending() != 0 {
		t.Fatalf("Pending = %d", srv.Pending())
	}
	if n := len(srv.Requests()); n != 5 {
		t.Fatalf("recorded %d requests, want 5", n)
	}
}

func TestHTTPError(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	tests := []struct {
		turn     fakemodel.Turn
		wantBody string
	}{
		{fakemodel.Turn{Status: 429, Header: http.Header{"Retry-After": {"7"}}}, `"rate_limit_exceeded"`},
		{fakemodel.Turn{Status: 400, ErrorBody: `{"error":{"message":"bad"}}`}, `{"error":{"message":"bad"}}`},
	}
	for _, tt := range tests {
		srv.Push(tt.turn)
		resp := post(t, context.Background(), c, srv.URL+"/responses", `{"stream":true}`)
		body := readBody(t, resp)
		if resp.StatusCode != tt.turn.Status || !strings.Contains(body, tt.wantBody) {
			t.Errorf("got %d %s", resp.StatusCode, body)
		}
		if got, want := resp.Header.Get("Retry-After"), tt.turn.Header.Get("Retry-After"); got != want {
			t.Errorf("Retry-After = %q, want %q", got, want)
		}
		if got := provider.FromStatus(resp.StatusCode, resp.Header, []byte(body)); tt.turn.Status == 429 && (got.Kind != provider.KindLimit || got.RetryAfter != 7*time.Second) {
			t.Errorf("classified as %+v", got)
		}
	}
}

func TestRawAndEvents(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	evs, err := fakemodel.ChunkEvents([]byte("{\"type\":\"a\",\"x\":1}\n\n{\"type\":\"b\"}\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	srv.Push(fakemodel.Turn{Events: evs})
	got := events(t, post(t, context.Background(), c, srv.URL+"/responses", `{"stream":true}`))
	if len(got) != 2 || got[0] != [2]string{"a", `{"type":"a","x":1}`} || got[1][0] != "b" {
		t.Fatalf("events: %q", got)
	}

	raw := fakemodel.SSE(fakemodel.Event{Data: "one\ntwo"}, fakemodel.Event{Name: "n", Data: "[DONE]"})
	if want := "data: one\ndata: two\n\nevent: n\ndata: [DONE]\n\n"; string(raw) != want {
		t.Fatalf("SSE = %q, want %q", raw, want)
	}
	srv.Push(fakemodel.Turn{Raw: raw})
	resp := post(t, context.Background(), c, srv.URL+"/chat/completions", `{"stream":true}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	if body := readBody(t, resp); body != string(raw) {
		t.Fatalf("raw body %q", body)
	}

	srv.Push(fakemodel.Turn{Raw: []byte("<html>"), Status: 502, RawContentType: "text/html"})
	resp = post(t, context.Background(), c, srv.URL+"/chat/completions", `{}`)
	if body := readBody(t, resp); resp.StatusCode != 502 || body != "<html>" || resp.Header.Get("Content-Type") != "text/html" {
		t.Fatalf("raw error: %d %q", resp.StatusCode, body)
	}
}

func TestCutAndStall(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	turn := fakemodel.Turn{TextChunks: []string{"a", "b", "c"}}

	cut := turn
	cut.CutAfter = 2
	srv.Push(cut)
	resp := post(t, context.Background(), c, srv.URL+"/chat/completions", `{"stream":true}`)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut stream: err = %v, want unexpected EOF", err)
	}
	if n := bytes.Count(b, []byte("data: ")); n != 2 {
		t.Fatalf("cut stream sent %d events, want 2: %s", n, b)
	}

	late := turn
	late.CutAfter = 1000
	srv.Push(late)
	resp = post(t, context.Background(), c, srv.URL+"/chat/completions", `{"stream":true}`)
	b, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Contains(b, []byte("[DONE]")) {
		t.Fatalf("cut after the whole stream: err = %v, body %s", err, b)
	}

	stall := turn
	stall.StallAfter = 1
	srv.Push(stall)
	ctx, cancel := context.WithCancel(context.Background())
	resp = post(t, ctx, c, srv.URL+"/chat/completions", `{"stream":true}`)
	r := sse.NewReader(ctx, resp.Body)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	next := make(chan error, 1)
	go func() {
		_, err := r.Next()
		next <- err
	}()
	select {
	case err := <-next:
		t.Fatalf("stalled stream returned %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if err := <-next; !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
	r.Close()
}

// TestCloseEndsStallAndDelay shows Close returns while a reply is stalled or
// delayed, and the client sees its request end.
func TestCloseEndsStallAndDelay(t *testing.T) {
	for _, turn := range []fakemodel.Turn{
		{Text: "x", StallAfter: 1},
		{Text: "x", Delay: time.Hour},
		{Text: "x", StallAfter: 1, ChunkDelay: time.Millisecond},
	} {
		srv, err := fakemodel.Start()
		if err != nil {
			t.Fatal(err)
		}
		c := newClient(t)
		srv.Push(turn)
		got := make(chan error, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(`{"stream":true}`))
			resp, err := c.Do(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			got <- err
		}()
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		closed := make(chan struct{})
		go func() { srv.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not return")
		}
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("client request did not end")
		}
	}
}

func TestChatEncoder(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	turn := fakemodel.Turn{
		Reasoning:  "think",
		TextChunks: []string{"Hel", "lo"},
		ToolCalls:  []fakemodel.ToolCall{{ID: "call_1", Name: "add", Arguments: `{"a":1,"b":2}`}},
		Usage:      &fakemodel.Usage{Input: 100, Output: 20, CacheRead: 60, Reasoning: 5},
	}
	srv.Push(turn)
	evs := events(t, post(t, context.Background(), c, srv.URL+"/chat/completions",
		`{"model":"m","stream":true,"stream_options":{"include_usage":true}}`))
	all := ""
	for _, e := range evs {
		all += e[1] + "\n"
	}
	for _, want := range []string{`"reasoning_content":"think"`, `"content":"Hel"`, `"content":"lo"`,
		`"id":"call_1"`, `"name":"add"`, `"finish_reason":"tool_calls"`, `"cached_tokens":60`, `"reasoning_tokens":5`} {
		if !strings.Contains(all, want) {
			t.Errorf("stream lacks %s:\n%s", want, all)
		}
	}
	if last := evs[len(evs)-1][1]; last != "[DONE]" {
		t.Errorf("last event %q", last)
	}

	turn.StreamError = &fakemodel.StreamError{Type: "server_error", Message: "boom"}
	srv.Push(turn)
	evs = events(t, post(t, context.Background(), c, srv.URL+"/chat/completions", `{"stream":true}`))
	if last := evs[len(evs)-1][1]; !strings.Contains(last, `"error"`) || !strings.Contains(last, "boom") {
		t.Errorf("stream error: last event %q", last)
	}
}

func TestResponsesEncoder(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	turn := fakemodel.Turn{
		Reasoning: "think", ReasoningSignature: "enc",
		Text:      "Hi",
		ToolCalls: []fakemodel.ToolCall{{Name: "add", Arguments: `{"a":1}`}},
		Usage:     &fakemodel.Usage{Input: 10, Output: 3, CacheRead: 4, Reasoning: 1},
	}
	srv.Push(turn)
	evs := events(t, post(t, context.Background(), c, srv.URL+"/responses", `{"model":"m","stream":true}`))
	var types []string
	for _, e := range evs {
		types = append(types, e[0])
		var p map[string]any
		if err := json.Unmarshal([]byte(e[1]), &p); err != nil || p["type"] != e[0] {
			t.Fatalf("event %s data %s", e[0], e[1])
		}
	}
	joined := strings.Join(types, ",")
	for _, want := range []string{"response.created", "response.reasoning_summary_text.delta", "response.output_text.delta",
		"response.function_call_arguments.delta", "response.completed"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %s in %s", want, joined)
		}
	}
	if types[len(types)-1] != "response.completed" || !strings.Contains(evs[len(evs)-1][1], `"cached_tokens":4`) {
		t.Errorf("last event %v", evs[len(evs)-1])
	}

	turn.FinishReason = "length"
	srv.Push(turn)
	body := readBody(t, post(t, context.Background(), c, srv.URL+"/responses", `{"model":"m"}`))
	if !strings.Contains(body, `"status":"incomplete"`) || !strings.Contains(body, `"max_output_tokens"`) || !strings.Contains(body, `"encrypted_content":"enc"`) {
		t.Errorf("incomplete reply %s", body)
	}

	turn.StreamError = &fakemodel.StreamError{Type: "rate_limit_exceeded", Message: "slow down"}
	srv.Push(turn)
	evs = events(t, post(t, context.Background(), c, srv.URL+"/responses", `{"stream":true}`))
	if n := len(evs); evs[n-2][0] != "error" || evs[n-1][0] != "response.failed" {
		t.Errorf("stream error tail %v", evs[n-2:])
	}
}
