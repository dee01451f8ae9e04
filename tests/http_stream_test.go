package tests

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// blockingModel answers each task with text chunks once release is closed.
func blockingModel(release <-chan struct{}) e2e.Script {
	return func(step int, req *fakemodel.Request) fakemodel.Turn {
		<-release
		return fakemodel.Turn{TextChunks: []string{"one ", "two ", "three"}, Usage: &fakemodel.Usage{Input: 5, Output: 3}}
	}
}

func testHTTPSendStream(t *testing.T, h *httpServer) {
	release := make(chan struct{})
	id := h.createAgent(t, blockingModel(release), "")
	resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "count"}]}`})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("send: %s %v %s", resp.Status, resp.Header, b)
	}
	ch := events(t, resp.Body)
	// The first events arrive while the model has not answered: a stream,
	// not a buffered reply.
	var got []*agentv1.Event
	for len(got) < 2 {
		e, ok := next(t, ch, 10*time.Second)
		if !ok {
			t.Fatal("the stream ended early")
		}
		got = append(got, runEvent(t, e))
		if e.id != strconv.Itoa(len(got)) {
			t.Errorf("event %d has id %q", len(got), e.id)
		}
	}
	if got[0].GetRunStarted().GetAgentId() != id || got[1].GetModelRequest() == nil {
		t.Fatalf("first events: %v", got)
	}
	close(release)
	for {
		e, ok := next(t, ch, 10*time.Second)
		if !ok {
			break
		}
		if e.event != "" {
			t.Fatalf("event %q: %s", e.event, e.data)
		}
		ev := runEvent(t, e)
		got = append(got, ev)
		if e.id != strconv.Itoa(len(got)) || ev.GetSeq() != int64(len(got)) || ev.GetRunId() != got[0].GetRunId() {
			t.Errorf("event %d: id %q seq %d run %s", len(got), e.id, ev.GetSeq(), ev.GetRunId())
		}
	}
	var text strings.Builder
	for _, ev := range got {
		text.WriteString(ev.GetModelDelta().GetText())
	}
	last := got[len(got)-1].GetResult()
	if last == nil || last.GetText() != "one two three" || text.String() != "one two three" || last.GetReason() != agentv1.EndReason_END_REASON_NO_TOOL {
		t.Errorf("result %v, deltas %q", last, text.String())
	}
}

func testHTTPSendErrors(t *testing.T, h *httpServer) {
	// Before the first event: a plain HTTP error.
	resp, b := h.do(t, request{method: "POST", path: "/v1/agents/nobody:send", body: `{"input": [{"text": "hi"}]}`})
	if e := parseError(t, resp, b); e.status != 404 || e.reason != "AGENT_NOT_FOUND" {
		t.Errorf("unknown agent: %+v", e)
	}
	id := h.createAgent(t, func(int, *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Status: 401, ErrorBody: `{"error": {"message": "bad key", "type": "invalid_request_error"}}`}
	}, "")
	resp, b = h.do(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{}`})
	if e := parseError(t, resp, b); e.status != 400 || e.violations["start.input"] == "" {
		t.Errorf("no input: %+v", e)
	}
	resp, b = h.do(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"txt": "hi"}]}`})
	if e := parseError(t, resp, b); e.status != 400 || !strings.Contains(e.message, "txt") {
		t.Errorf("unknown field: %+v", e)
	}
	// After it: the stream's last event is the error.
	resp = h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "hi"}]}`})
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("send: %s", resp.Status)
	}
	var last sse
	for e := range events(t, resp.Body) {
		last = e
	}
	if last.event != "error" {
		t.Fatalf("last event %+v, want an error event", last)
	}
	st := &spb.Status{}
	if err := protojson.Unmarshal([]byte(last.data), st); err != nil {
		t.Fatal(err)
	}
	info := &errdetails.ErrorInfo{}
	if len(st.GetDetails()) == 0 || st.GetDetails()[0].UnmarshalTo(info) != nil || info.GetReason() != "AUTH" || st.GetCode() != 9 {
		t.Errorf("error event: %v", st)
	}
	if strings.Contains(last.data, e2e.TestKey) {
		t.Errorf("the error event holds the API key")
	}
}

func testHTTPDisconnect(t *testing.T, h *httpServer) {
	release := make(chan struct{})
	defer close(release)
	id := h.createAgent(t, blockingModel(release), "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/agents/"+id+":send", strings.NewReader(`{"input": [{"text": "wait"}]}`))
	req.Header.Set("Authorization", "Bearer "+e2e.HTTPToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := events(t, resp.Body)
	if _, ok := next(t, ch, 10*time.Second); !ok {
		t.Fatal("no first event")
	}
	var got agentv1.GetAgentResponse
	h.ok(t, request{method: "GET", path: "/v1/agents/" + id}, &got)
	if got.GetAgent().GetState() != agentv1.AgentState_AGENT_STATE_RUNNING {
		t.Fatalf("agent %v while its send streams", got.GetAgent().GetState())
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.ok(t, request{method: "GET", path: "/v1/agents/" + id}, &got)
		if got.GetAgent().GetState() == agentv1.AgentState_AGENT_STATE_IDLE {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run still runs 10s after its client went away")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHTTPShutdown sends SIGTERM while two event streams run over HTTP: the
// listener stops accepting, the run that ends within the grace period
// streams to its result, the one that does not ends with an error event
// (UNAVAILABLE, SHUTTING_DOWN), and the server exits 0.
func TestHTTPShutdown(t *testing.T) {
	t.Parallel()
	h := startHTTPServer(t, "-shutdown-grace", "2s")
	quickGo, held := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(held) })
	quick := h.createAgent(t, blockingModel(quickGo), "")
	blocked := h.createAgent(t, blockingModel(held), "")
	open := func(id string) <-chan sse {
		resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "go"}]}`})
		t.Cleanup(func() { resp.Body.Close() })
		ch := events(t, resp.Body)
		if _, ok := next(t, ch, 10*time.Second); !ok {
			t.Fatalf("%s: no first event", id)
		}
		return ch
	}
	quickEvents, blockedEvents := open(quick), open(blocked)
	if err := h.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	refused := false
	for deadline := time.Now().Add(2 * time.Second); !refused && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(h.url + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		refused = err != nil
	}
	if !refused {
		t.Error("the HTTP listener still accepts after SIGTERM")
	}
	close(quickGo)
	last := func(ch <-chan sse) sse {
		var e sse
		for {
			got, ok := next(t, ch, 15*time.Second)
			if !ok {
				return e
			}
			e = got
		}
	}
	if e := last(quickEvents); runEvent(t, e).GetResult().GetText() != "one two three" {
		t.Errorf("the run that fits in the grace period ended with %+v", e)
	}
	e := last(blockedEvents)
	if e.event != "error" || !strings.Contains(e.data, `"reason":"SHUTTING_DOWN"`) || !strings.Contains(e.data, `"code":14`) {
		t.Errorf("the run cut by the shutdown ended with %+v", e)
	}
	select {
	case <-h.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("agent-server still running 20s after SIGTERM")
	}
	if h.Err() != nil {
		t.Errorf("agent-server exit: %v, want 0", h.Err())
	}
}

// readRun reads a send's or an attach's events to the end: the run events
// (ids checked against their seq) and the error event, if any.
func readRun(t *testing.T, body io.Reader) ([]*agentv1.Event, *sse) {
	t.Helper()
	var got []*agentv1.Event
	for e := range events(t, body) {
		if e.event == "error" {
			return got, &e
		}
		ev := runEvent(t, e)
		if e.id != strconv.FormatInt(ev.GetSeq(), 10) {
			t.Errorf("event id %q, seq %d", e.id, ev.GetSeq())
		}
		got = append(got, ev)
	}
	return got, nil
}

func testHTTPRuns(t *testing.T, h *httpServer) {
	id := h.createAgent(t, e2e.TwoTools, "")
	resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "go"}]}`})
	evs, fail := readRun(t, resp.Body)
	resp.Body.Close()
	if fail != nil || len(evs) == 0 || evs[len(evs)-1].GetResult() == nil {
		t.Fatalf("send: %d events, error %v", len(evs), fail)
	}
	runID := evs[0].GetRunId()
	var run agentv1.GetRunResponse
	h.ok(t, request{method: "GET", path: "/v1/runs/" + runID}, &run)
	if r := run.GetRun(); r.GetAgentId() != id || r.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED ||
		r.GetLastSeq() != int64(len(evs)) || r.GetResult().GetText() != evs[len(evs)-1].GetResult().GetText() {
		t.Errorf("run %v", r)
	}
	for _, path := range []string{"/v1/agents/" + id + "/runs", "/v1/runs?pageSize=1000", "/v1/runs?state=RUN_STATE_SUCCEEDED&pageSize=1000"} {
		var list agentv1.ListRunsResponse
		h.ok(t, request{method: "GET", path: path}, &list)
		found := false
		for _, r := range list.GetRuns() {
			found = found || r.GetId() == runID
		}
		if !found {
			t.Errorf("GET %s lacks run %s", path, runID)
		}
	}
	// A finished run replays whole; with nothing left after the seq given, 204.
	resp = h.open(t, request{method: "GET", path: "/v1/agents/" + id + ":attach"})
	replay, fail := readRun(t, resp.Body)
	resp.Body.Close()
	if fail != nil || len(replay) != len(evs) || !proto.Equal(replay[len(replay)-1], evs[len(evs)-1]) {
		t.Errorf("attach to the agent's latest run: %d events (want %d), error %v", len(replay), len(evs), fail)
	}
	resp, b := h.do(t, request{method: "GET", path: "/v1/runs/" + runID + ":attach", header: http.Header{
		"Authorization": {"Bearer " + e2e.HTTPToken}, "Last-Event-ID": {strconv.Itoa(len(evs))}}})
	if resp.StatusCode != http.StatusNoContent || len(b) != 0 {
		t.Errorf("attach after the last event: %s %q, want 204", resp.Status, b)
	}
	for _, tt := range []struct {
		req    request
		status int
		reason string
	}{
		{request{method: "GET", path: "/v1/runs/run_nothing"}, 404, "RUN_NOT_FOUND"},
		{request{method: "GET", path: "/v1/runs/run_nothing:attach"}, 404, "RUN_NOT_FOUND"},
		{request{method: "GET", path: "/v1/runs/" + runID + ":attach?afterSeq=-1"}, 400, "INVALID_ARGUMENT"},
		{request{method: "GET", path: "/v1/runs/" + runID + ":attach", header: http.Header{
			"Authorization": {"Bearer " + e2e.HTTPToken}, "Last-Event-ID": {"seven"}}}, 400, "INVALID_ARGUMENT"},
		{request{method: "POST", path: "/v1/runs/" + runID + "/permissions/call_none", body: `{"allow": true}`}, 404, "PERMISSION_NOT_FOUND"},
		{request{method: "POST", path: "/v1/runs/run_nothing/permissions/call_none", body: `{"allow": true}`}, 404, "RUN_NOT_FOUND"},
	} {
		resp, b := h.do(t, tt.req)
		e := parseError(t, resp, b)
		if e.status != tt.status || e.reason != tt.reason {
			t.Errorf("%s %s: %d %s, want %d %s: %s", tt.req.method, tt.req.path, e.status, e.reason, tt.status, tt.reason, b)
		}
	}
}

// testHTTPReconnect: a send that goes on without its client (onDisconnect
// CONTINUE) is followed again with Last-Event-ID, and the events after the
// reconnection are exactly the ones the first stream missed.
func testHTTPReconnect(t *testing.T, h *httpServer) {
	release := make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	defer releaseOnce()
	id := h.createAgent(t, blockingModel(release), "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/agents/"+id+":send",
		strings.NewReader(`{"input": [{"text": "count"}], "onDisconnect": "ON_DISCONNECT_CONTINUE"}`))
	req.Header.Set("Authorization", "Bearer "+e2e.HTTPToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := events(t, resp.Body)
	var before []*agentv1.Event
	var lastID string
	for len(before) < 2 {
		e, ok := next(t, ch, 10*time.Second)
		if !ok {
			t.Fatal("the send ended early")
		}
		before = append(before, runEvent(t, e))
		lastID = e.id
	}
	runID := before[0].GetRunId()
	cancel() // the client goes away mid-run
	resp.Body.Close()

	// Reconnect while the run still waits for its model, as an EventSource
	// does: the same URL, Last-Event-ID the last id received.
	resp = h.open(t, request{method: "GET", path: "/v1/runs/" + runID + ":attach?afterSeq=0", header: http.Header{
		"Authorization": {"Bearer " + e2e.HTTPToken}, "Last-Event-ID": {lastID}}})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("attach: %s %v", resp.Status, resp.Header)
	}
	releaseOnce()
	after, fail := readRun(t, resp.Body)
	if fail != nil {
		t.Fatalf("attach ended with %s", fail.data)
	}
	if len(after) == 0 || after[0].GetSeq() != before[len(before)-1].GetSeq()+1 {
		t.Fatalf("after reconnecting, the first event is %v, want seq %d", after, before[len(before)-1].GetSeq()+1)
	}
	// Exactly the missed events: together the two streams are the whole run, once each.
	resp2 := h.open(t, request{method: "GET", path: "/v1/runs/" + runID + ":attach"})
	whole, fail := readRun(t, resp2.Body)
	resp2.Body.Close()
	joined := append(append([]*agentv1.Event{}, before...), after...)
	if fail != nil || len(whole) != len(joined) {
		t.Fatalf("the run has %d events, the two streams %d (error %v)", len(whole), len(joined), fail)
	}
	for i := range whole {
		if !proto.Equal(whole[i], joined[i]) {
			t.Errorf("event %d: replay %v, streams %v", i+1, whole[i], joined[i])
		}
	}
	if last := joined[len(joined)-1].GetResult(); last.GetText() != "one two three" {
		t.Errorf("result %v", last)
	}
}

// testHTTPPermissions answers a send's permission requests with
// RespondPermission over another HTTP connection: one allowed, one denied
// with a reason the model then reads.
func testHTTPPermissions(t *testing.T, h *httpServer) {
	id := h.createAgent(t, e2e.TwoTools, "")
	resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send",
		body: `{"input": [{"text": "greet and add"}], "permissionMode": "PERMISSION_MODE_ASK_ALL"}`})
	defer resp.Body.Close()
	ch := events(t, resp.Body)
	var results []*agentv1.ToolResultEvent
	var final *agentv1.RunResultEvent
	asked := 0
	for final == nil {
		e, ok := next(t, ch, 20*time.Second)
		if !ok {
			t.Fatal("the stream ended without a result")
		}
		if e.event == "error" {
			t.Fatalf("error event: %s", e.data)
		}
		ev := runEvent(t, e)
		if p := ev.GetPermissionRequest(); p != nil {
			asked++
			body := `{"allow": true}`
			if p.GetToolName() == "add" {
				body = `{"allow": false, "reason": "no sums today"}`
			}
			var out agentv1.RespondPermissionResponse
			h.ok(t, request{method: "POST", path: "/v1/runs/" + ev.GetRunId() + "/permissions/" + p.GetToolCallId(), body: body}, &out)
			// A second answer to the same call is refused.
			r, b := h.do(t, request{method: "POST", path: "/v1/runs/" + ev.GetRunId() + "/permissions/" + p.GetToolCallId(), body: body})
			if e := parseError(t, r, b); e.status != http.StatusBadRequest || e.code != 9 || e.reason != "PERMISSION_ANSWERED" {
				t.Errorf("a second answer: %+v, want 400 FAILED_PRECONDITION PERMISSION_ANSWERED", e)
			}
		}
		if r := ev.GetToolResult(); r != nil {
			results = append(results, r)
		}
		final = ev.GetResult()
	}
	if asked != 2 || len(results) != 2 {
		t.Fatalf("asked %d times, %d results", asked, len(results))
	}
	for _, r := range results {
		text := r.GetOutput().GetText()
		switch r.GetToolName() {
		case "say_hello":
			if r.GetError() || !strings.Contains(text, "Hello, Ming") {
				t.Errorf("allowed call: %v", r)
			}
		case "add":
			if !r.GetError() || !strings.Contains(text, "no sums today") {
				t.Errorf("denied call: %v", r)
			}
		}
	}
}

// testHTTPStop stops live runs over HTTP while their sends stream: by the
// agent alone, and by the agent and the run's id (another run's id stops
// nothing). Stop answers stopped=true once the run has ended; the stream
// ends with an error event (CANCELLED, reason ABORTED, cause stopped: the
// model call was cut) and the run is stopped with that error.
func testHTTPStop(t *testing.T, h *httpServer) {
	release := make(chan struct{})
	defer close(release)
	id := h.createAgent(t, blockingModel(release), "")
	for _, tt := range []struct {
		name string
		body func(runID string) string
	}{
		{"by agent", func(string) string { return "" }},
		{"by run", func(runID string) string { return `{"runId": "` + runID + `"}` }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "wait"}]}`})
			defer resp.Body.Close()
			ch := events(t, resp.Body)
			var runID string
			for asked := false; !asked; {
				e, ok := next(t, ch, 10*time.Second)
				if !ok || e.event != "" {
					t.Fatalf("the stream ended before the model was asked: %+v", e)
				}
				ev := runEvent(t, e)
				runID, asked = ev.GetRunId(), ev.GetModelRequest() != nil
			}
			var stop agentv1.StopResponse
			h.ok(t, request{method: "POST", path: "/v1/agents/" + id + ":stop", body: `{"runId": "run_another"}`}, &stop)
			if stop.GetStopped() {
				t.Error("stop with another run's id says it stopped a run")
			}
			h.ok(t, request{method: "POST", path: "/v1/agents/" + id + ":stop", body: tt.body(runID)}, &stop)
			if !stop.GetStopped() {
				t.Error("stop of a running run says it stopped none")
			}
			var last sse
			for {
				e, ok := next(t, ch, 10*time.Second)
				if !ok {
					break
				}
				last = e
			}
			st := &spb.Status{}
			info := &errdetails.ErrorInfo{}
			if last.event != "error" || protojson.Unmarshal([]byte(last.data), st) != nil || len(st.GetDetails()) == 0 ||
				st.GetDetails()[0].UnmarshalTo(info) != nil || st.GetCode() != 1 || info.GetReason() != "ABORTED" || info.GetMetadata()["cause"] != "stopped" {
				t.Errorf("the stopped stream ended with %+v, want an error event CANCELLED ABORTED, cause stopped", last)
			}
			var run agentv1.GetRunResponse
			h.ok(t, request{method: "GET", path: "/v1/runs/" + runID}, &run)
			if r := run.GetRun(); r.GetState() != agentv1.RunState_RUN_STATE_STOPPED || r.GetError().GetReason() != "ABORTED" ||
				r.GetError().GetMetadata()["cause"] != "stopped" {
				t.Errorf("run %v, want stopped", r)
			}
		})
	}
}
