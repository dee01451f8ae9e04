package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestEventsInOrder(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add") })
	srv.Push(
		fakemodel.Turn{TextChunks: []string{"Let me ", "add."}, ToolCalls: []fakemodel.ToolCall{add("a1")}},
		fakemodel.Turn{TextChunks: []string{"It is ", "5."}},
	)
	rec := newRecorder()
	res, err := s.Send(context.Background(), agent.SendOptions{Input: input("2+3?"), OnEvent: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, k := range rec.kinds() {
		if k == "model_delta" && len(kinds) > 0 && kinds[len(kinds)-1] == "model_delta+" {
			continue
		}
		if k == "model_delta" {
			k = "model_delta+"
		}
		kinds = append(kinds, k)
	}
	want := "run_started model_request model_delta+ model_response tool_call tool_result step " +
		"model_request model_delta+ model_response step result"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("events:\n%v\nwant:\n%v", kinds, want)
	}
	for i, e := range rec.all() {
		if e.GetSeq() != int64(i+1) || e.GetRunId() != res.RunID || e.GetTime() == nil {
			t.Fatalf("event %d: seq %d run %q", i, e.GetSeq(), e.GetRunId())
		}
	}
	evs := rec.all()
	if r := evs[len(evs)-1].GetResult(); r.GetText() != "It is 5." || r.GetSteps() != 2 {
		t.Fatalf("result event %v", r)
	}
	var text string
	for _, e := range evs {
		text += e.GetModelDelta().GetText()
	}
	if text != "Let me add.It is 5." {
		t.Fatalf("deltas %q", text)
	}
	first := func(kind string) *agentv1.Event {
		for _, e := range evs {
			if kindOf(e) == kind {
				return e
			}
		}
		return nil
	}
	if tr := first("tool_result").GetToolResult(); tr.GetStep() != 1 || tr.GetToolCallId() != "a1" || tr.GetDuration() == nil {
		t.Fatalf("tool result event %v", tr)
	}
	if st := first("step").GetStep(); st.GetStep() != 1 || len(st.GetToolResults()) != 1 || len(st.GetResponse().GetToolCalls()) != 1 {
		t.Fatalf("step event %v", st)
	}
	if mr := evs[1].GetModelRequest(); mr.GetStep() != 1 || mr.GetMessageCount() != 1 || fmt.Sprint(mr.GetTools()) != "[add]" {
		t.Fatalf("model request event %v", mr)
	}
}

func TestUsageSums(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add") })
	srv.Push(
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("a1")}, Usage: &fakemodel.Usage{Input: 100, Output: 10, CacheRead: 60, CacheWrite: 20}},
		fakemodel.Turn{Text: "5", Usage: &fakemodel.Usage{Input: 120, Output: 5, CacheRead: 100, Reasoning: 2}},
	)
	res, err := s.Send(context.Background(), agent.SendOptions{Input: input("go")})
	if err != nil {
		t.Fatal(err)
	}
	want := &agentv1.Usage{InputTokens: 220, OutputTokens: 15, TotalTokens: 235, CacheReadTokens: 160, CacheWriteTokens: 20, ReasoningTokens: 2}
	if !proto.Equal(res.Usage, want) {
		t.Fatalf("usage %v, want %v", res.Usage, want)
	}
	srv.Push(fakemodel.Turn{Text: "again", Usage: &fakemodel.Usage{Input: 10, Output: 1}})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("again")}); err != nil {
		t.Fatal(err)
	}
	if got := s.Usage(); got.GetInputTokens() != 230 || got.GetOutputTokens() != 16 || got.GetCacheReadTokens() != 160 {
		t.Fatalf("session usage %v", got)
	}
}

func TestStructuredOutput(t *testing.T) {
	schema, _ := structpb.NewStruct(map[string]any{
		"type": "object", "properties": map[string]any{"total": map[string]any{"type": "number"}}, "required": []any{"total"},
	})
	tests := []struct {
		name   string
		turns  []fakemodel.Turn
		reason agentv1.EndReason
		output bool
	}{
		{"after tool rounds", []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{add("a1")}},
			{ToolCalls: []fakemodel.ToolCall{add("a2")}},
			{Text: `{"total":5}`},
		}, agentv1.EndReason_END_REASON_NO_TOOL, true},
		{"a valid answer ends the send, whatever no_tool_rounds says", []fakemodel.Turn{
			{Text: `{"total":5}`},
		}, agentv1.EndReason_END_REASON_NO_TOOL, true},
		{"never on tool-stop", []fakemodel.Turn{
			{Text: `{"total":5}`, ToolCalls: []fakemodel.ToolCall{{ID: "f", Name: "finish", Arguments: `{"summary":"x"}`}}},
		}, agentv1.EndReason_END_REASON_TOOL_STOP, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newSession(t, func(o *agent.Options) {
				o.Tools = pick(t, "add", "finish")
				o.Config.Output = &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_OBJECT, Schema: schema, Name: "order"}
				o.Config.NoToolRounds = proto.Int32(3)
			})
			srv.Push(tc.turns...)
			res, err := s.Send(context.Background(), agent.SendOptions{Input: input("count")})
			if err != nil || res.Reason != tc.reason {
				t.Fatalf("%v, %v", res, err)
			}
			if got := res.Output.GetStructValue().GetFields()["total"].GetNumberValue(); (got == 5) != tc.output || (res.Output != nil) != tc.output {
				t.Fatalf("output %v", res.Output)
			}
		})
	}
}

func TestRestoredHistoryWithResultsBeforeCalls(t *testing.T) {
	restored := []*agentv1.Message{
		history.User("add 2 and 3"),
		history.ToolText("c1", "add", "5"), // stored before its call
		history.Assistant(history.ToolCall("c1", "add", `{"a":2,"b":3}`)),
		history.AssistantText("It is 5."),
	}
	s, srv := newSession(t, func(o *agent.Options) {
		o.History = restored
		o.Tools = pick(t, "add")
	})
	srv.Push(fakemodel.Turn{Text: "Still 5."})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("and now?")}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range messages(srv.Requests()[0]) {
		got = append(got, fmt.Sprintf("%s:%s", m["role"], text(m["content"])))
	}
	want := "system:You are a test agent. | user:add 2 and 3 | assistant: | tool:5 | assistant:It is 5. | user:and now?"
	if strings.Join(got, " | ") != want {
		t.Fatalf("sent:\n%s\nwant:\n%s", strings.Join(got, " | "), want)
	}
}

func TestInvalidAndDuplicateCalls(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) {
		o.Tools = pick(t, "add")
		o.Config.ToolMode = agentv1.ToolMode_TOOL_MODE_TEXT
	})
	srv.Push(
		fakemodel.Turn{Text: "Adding.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": \n</tool_call>"},
		fakemodel.Turn{Text: "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}\n</tool_call>"},
		fakemodel.Turn{Text: "It is 5."},
	)
	res, err := s.Send(context.Background(), agent.SendOptions{Input: input("2+3?")})
	if err != nil || res.Text != "It is 5." || res.Steps != 3 {
		t.Fatalf("%v, %v", res, err)
	}
	h := s.History()
	if err := history.Validate(h); err != nil {
		t.Fatal(err)
	}
	bad := h[1].GetParts()[len(h[1].GetParts())-1].GetToolCall()
	if bad.GetArguments() != "{}" || bad.GetName() != "add" {
		t.Fatalf("stored invalid call %v", bad)
	}
	r := h[2].GetParts()[0].GetToolResult()
	if !r.GetError() || !strings.Contains(r.GetOutput().GetText(), `"b": `) || r.GetToolCallId() != bad.GetId() {
		t.Fatalf("invalid call's result %v", r)
	}
	if r := h[4].GetParts()[0].GetToolResult(); r.GetError() || r.GetOutput().GetJson() != "5" {
		t.Fatalf("rewritten call's result %v", r)
	}
}

// TestEveryCallHasCallAndResultEvents: a native call whose arguments are
// not a JSON object is not run, but it has its tool_call event before its
// failed tool_result, as every call the model makes does.
func TestEveryCallHasCallAndResultEvents(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add") })
	srv.Push(
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{
			{ID: "c1", Name: "add", Arguments: `[2, 3]`}, {ID: "c2", Name: "add", Arguments: `{"a": 2,`}, add("c3"),
		}},
		fakemodel.Turn{Text: "done"},
	)
	rec := newRecorder()
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("go"), OnEvent: rec.add}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rec.all() {
		if c := e.GetToolCall(); c != nil {
			got = append(got, "call "+c.GetToolCallId())
		}
		if r := e.GetToolResult(); r != nil {
			got = append(got, fmt.Sprintf("result %s error=%v", r.GetToolCallId(), r.GetError()))
		}
	}
	want := "[call c1 result c1 error=true call c2 result c2 error=true call c3 result c3 error=false]"
	if fmt.Sprint(got) != want {
		t.Fatalf("events %v, want %s", got, want)
	}
}

func TestRepeatedCallIDsAreRenamed(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add") })
	srv.Push(
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("call_0")}},
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("call_0")}},
		fakemodel.Turn{Text: "done"},
	)
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("go")}); err != nil {
		t.Fatal(err)
	}
	h := s.History()
	if err := history.Validate(h); err != nil {
		t.Fatal(err)
	}
	first, second := h[1].GetParts()[0].GetToolCall().GetId(), h[3].GetParts()[0].GetToolCall().GetId()
	if first != "call_0" || second == "call_0" || h[4].GetParts()[0].GetToolResult().GetToolCallId() != second {
		t.Fatalf("ids %q %q", first, second)
	}
}

func TestModelErrorKeepsKind(t *testing.T) {
	s, srv := newSession(t, nil)
	srv.Push(fakemodel.Turn{Status: 401})
	_, err := s.Send(context.Background(), agent.SendOptions{Input: input("hi")})
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindAuth || le.Status != 401 {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "sk-test") {
		t.Fatal("the error echoes the API key")
	}
}

func TestOverridesMergeProviderReplaced(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) {
		o.Config.Provider = &agentv1.ProviderOptions{Temperature: proto.Float64(0.5), TopP: proto.Float64(0.9)}
	})
	srv.Push(fakemodel.Turn{Text: "ok"})
	_, err := s.Send(context.Background(), agent.SendOptions{Input: input("hi"), Config: &agentv1.AgentConfig{
		Model:    proto.String("other-model"),
		Provider: &agentv1.ProviderOptions{Temperature: proto.Float64(0.1)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	j := srv.Requests()[0].JSON()
	if j["model"] != "other-model" || j["temperature"] != 0.1 || j["top_p"] != nil || system(srv.Requests()[0]) != "You are a test agent." {
		t.Fatalf("request %v", j)
	}
	if s.Config().GetModel() != "test-model" {
		t.Fatal("the override was stored")
	}
}

func TestInvalidStructuredOutputFailsKeepingTheAnswer(t *testing.T) {
	schema, _ := structpb.NewStruct(map[string]any{"type": "object", "properties": map[string]any{"total": map[string]any{"type": "number"}}, "required": []any{"total"}})
	s, srv := newSession(t, func(o *agent.Options) {
		o.Config.Output = &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_OBJECT, Schema: schema}
	})
	srv.Push(fakemodel.Turn{Text: `{"sum":5}`})
	_, err := s.Send(context.Background(), agent.SendOptions{Input: input("count")})
	var le *llm.Error
	if !errors.As(err, &le) || !errors.Is(err, llm.ErrInvalidOutput) || le.Retryable {
		t.Fatalf("err = %v", err)
	}
	if h := s.History(); len(h) != 2 || h[1].GetParts()[0].GetText() != `{"sum":5}` {
		t.Fatalf("history:\n%s", history.Render(h))
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests: a format error is not retried", n)
	}
}

func TestRetryEvents(t *testing.T) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	noWait := llm.NewClient(llm.Options{
		HTTPClient: &http.Client{Transport: tr},
		Sleep:      func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	s, srv := newSession(t, func(o *agent.Options) {
		o.LLM = noWait
		o.Config.RetryMaxElapsed = nil // retry
		o.Config.Compact = &agentv1.CompactConfig{Model: proto.String("cheap")}
	})
	srv.Push(fakemodel.Turn{Status: 503}, fakemodel.Turn{Text: "fine"})
	rec := newRecorder()
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("hi"), OnEvent: rec.add}); err != nil {
		t.Fatal(err)
	}
	srv.Push(fakemodel.Turn{Status: 429}, fakemodel.Turn{Text: "summary"})
	crec := newRecorder()
	if _, err := s.Compact(context.Background(), crec.add); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rec     *recorder
		kind    agentv1.ErrorKind
		status  int32
		compact bool
	}{
		{rec, agentv1.ErrorKind_ERROR_KIND_SERVER, 503, false},
		{crec, agentv1.ErrorKind_ERROR_KIND_LIMIT, 429, true},
	} {
		r := c.rec.wait(t, func(e *agentv1.Event) bool { return e.GetRetry() != nil }).GetRetry()
		if r.GetAttempt() != 1 || r.GetKind() != c.kind || r.GetStatus() != c.status || r.GetCompact() != c.compact || r.GetDelay() == nil {
			t.Errorf("retry event %v", r)
		}
	}
}
