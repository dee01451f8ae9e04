package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func add(id string) fakemodel.ToolCall {
	return fakemodel.ToolCall{ID: id, Name: "add", Arguments: `{"a":2,"b":3}`}
}

func TestEndReasons(t *testing.T) {
	tests := []struct {
		name      string
		tools     []string
		config    func(*agentv1.AgentConfig)
		turns     []fakemodel.Turn
		reason    agentv1.EndReason
		steps     int
		text      string
		lastRole  agentv1.Role
		historyLn int
	}{{
		name:  "no tools registered ends at the first answer, whatever no_tool_rounds says",
		turns: []fakemodel.Turn{{Text: "hello"}},
		config: func(c *agentv1.AgentConfig) {
			c.NoToolRounds = proto.Int32(3)
		},
		reason: agentv1.EndReason_END_REASON_NO_TOOL, steps: 1, text: "hello",
		lastRole: agentv1.Role_ROLE_ASSISTANT, historyLn: 2,
	}, {
		name:  "tools offered but switched off in native mode count as none",
		tools: []string{"add"},
		config: func(c *agentv1.AgentConfig) {
			c.Capabilities = &agentv1.Capabilities{Tools: proto.Bool(false)}
			c.NoToolRounds = proto.Int32(0)
		},
		turns:  []fakemodel.Turn{{Text: "no tools here"}},
		reason: agentv1.EndReason_END_REASON_NO_TOOL, steps: 1, text: "no tools here",
		lastRole: agentv1.Role_ROLE_ASSISTANT, historyLn: 2,
	}, {
		name:   "no-tool after a tool round",
		tools:  []string{"add"},
		turns:  []fakemodel.Turn{{ToolCalls: []fakemodel.ToolCall{add("c1")}}, {Text: "it is 5"}},
		reason: agentv1.EndReason_END_REASON_NO_TOOL, steps: 2, text: "it is 5",
		lastRole: agentv1.Role_ROLE_ASSISTANT, historyLn: 4,
	}, {
		name:  "tool-stop after writing the round's results",
		tools: []string{"add", "finish"},
		turns: []fakemodel.Turn{{Text: "done", ToolCalls: []fakemodel.ToolCall{
			add("c1"), {ID: "c2", Name: "finish", Arguments: `{"summary":"all done"}`},
		}}},
		reason: agentv1.EndReason_END_REASON_TOOL_STOP, steps: 1, text: "done",
		lastRole: agentv1.Role_ROLE_TOOL, historyLn: 3,
	}, {
		name:   "step-limit after writing the round's results",
		tools:  []string{"add"},
		config: func(c *agentv1.AgentConfig) { c.MaxSteps = proto.Int32(2) },
		turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{add("c1")}},
			{Text: "again", ToolCalls: []fakemodel.ToolCall{add("c2")}},
		},
		reason: agentv1.EndReason_END_REASON_STEP_LIMIT, steps: 2, text: "again",
		lastRole: agentv1.Role_ROLE_TOOL, historyLn: 5,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newSession(t, func(o *agent.Options) {
				if tc.tools != nil {
					o.Tools = pick(t, tc.tools...)
				}
				if tc.config != nil {
					tc.config(o.Config)
				}
			})
			srv.Push(tc.turns...)
			res, err := s.Send(context.Background(), agent.SendOptions{Input: input("go")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != tc.reason || res.Steps != tc.steps || res.Text != tc.text {
				t.Fatalf("result = %v, %d steps, %q; want %v, %d, %q", res.Reason, res.Steps, res.Text, tc.reason, tc.steps, tc.text)
			}
			h := s.History()
			if len(h) != tc.historyLn || h[len(h)-1].GetRole() != tc.lastRole {
				t.Fatalf("history:\n%s", history.RenderWith(h, history.English()))
			}
			if err := history.Validate(h); err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Requests()); n != tc.steps {
				t.Fatalf("%d model requests, want %d", n, tc.steps)
			}
		})
	}
}

func TestToolResultsInHistory(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add", "finish") })
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{
		add("c1"), {ID: "c2", Name: "finish", Arguments: `{"summary":"all done"}`},
	}})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("go")}); err != nil {
		t.Fatal(err)
	}
	got := history.RenderWith(s.History(), history.English())
	want := "user: go\n" +
		"assistant: [call add {\"a\":2,\"b\":3}] [call finish {\"summary\":\"all done\"}]\n" +
		"tool: [add result] 5 [finish result] all done"
	if got != want {
		t.Fatalf("history:\n%s\nwant:\n%s", got, want)
	}
}

func TestStepLimitThenContinue(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) {
		o.Tools = pick(t, "add")
		o.Config.MaxSteps = proto.Int32(1)
	})
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("c1")}})
	res, err := s.Send(context.Background(), agent.SendOptions{Input: input("add 2 and 3")})
	if err != nil || res.Reason != agentv1.EndReason_END_REASON_STEP_LIMIT {
		t.Fatalf("first send: %v, %v", res, err)
	}
	srv.Push(fakemodel.Turn{Text: "it was 5"})
	res, err = s.Send(context.Background(), agent.SendOptions{Input: input("go on")})
	if err != nil || res.Reason != agentv1.EndReason_END_REASON_NO_TOOL || res.Text != "it was 5" {
		t.Fatalf("second send: %v, %v", res, err)
	}
	// The second request carries the saved result of the first send's call.
	msgs := messages(srv.Requests()[1])
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,user" {
		t.Fatalf("roles = %v", roles)
	}
	if text(msgs[3]["content"]) != "5" || msgs[3]["tool_call_id"] != "c1" {
		t.Fatalf("tool message = %v", msgs[3])
	}
}

func TestNoToolRounds(t *testing.T) {
	const nudge = "Use a tool, or call finish when you are done."
	tests := []struct {
		name     string
		rounds   *int32
		maxSteps *int32
		prompt   string
		answers  int
		reason   agentv1.EndReason
		nudgedAt int // index of the request that carries the prompt last; -1: none
	}{
		{"default 1 ends at once, no prompt", nil, nil, nudge, 1, agentv1.EndReason_END_REASON_NO_TOOL, -1},
		{"3 rounds, prompt before the last", proto.Int32(3), nil, nudge, 3, agentv1.EndReason_END_REASON_NO_TOOL, 2},
		{"2 rounds, prompt before the second", proto.Int32(2), nil, nudge, 2, agentv1.EndReason_END_REASON_NO_TOOL, 1},
		{"3 rounds without a prompt", proto.Int32(3), nil, "", 3, agentv1.EndReason_END_REASON_NO_TOOL, -1},
		{"0 never ends for that reason", proto.Int32(0), proto.Int32(4), nudge, 4, agentv1.EndReason_END_REASON_STEP_LIMIT, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newSession(t, func(o *agent.Options) {
				o.Tools = pick(t, "add")
				o.Config.NoToolRounds = tc.rounds
				o.Config.MaxSteps = tc.maxSteps
				if tc.prompt != "" {
					o.Config.NoToolPrompt = proto.String(tc.prompt)
				}
			})
			for range tc.answers {
				srv.Push(fakemodel.Turn{Text: "thinking it over"})
			}
			res, err := s.Send(context.Background(), agent.SendOptions{Input: input("go")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != tc.reason || res.Steps != tc.answers {
				t.Fatalf("result %v after %d steps", res.Reason, res.Steps)
			}
			reqs := srv.Requests()
			for i, r := range reqs {
				msgs := messages(r)
				last := msgs[len(msgs)-1]
				nudged := last["role"] == "user" && text(last["content"]) == nudge
				if nudged != (i == tc.nudgedAt) {
					t.Errorf("request %d ends with the prompt: %v", i, nudged)
				}
			}
			if tc.nudgedAt >= 0 {
				// Sent once, then kept in history like any message.
				n := strings.Count(history.Render(s.History()), nudge)
				if n != 1 {
					t.Errorf("the prompt is in history %d times", n)
				}
			}
		})
	}
}

func TestToolSetOverrideAndEmpty(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add") })
	srv.Push(fakemodel.Turn{Text: "ok"}, fakemodel.Turn{Text: "ok"})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("a"), Tools: pick(t, "finish")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("b"), Tools: &tool.Set{}}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got := toolNames(reqs[0]); strings.Join(got, ",") != "finish" {
		t.Errorf("first send offered %v", got)
	}
	if got := toolNames(reqs[1]); len(got) != 0 {
		t.Errorf("second send offered %v", got)
	}
	if got := s.Tools().Names(); strings.Join(got, ",") != "add" {
		t.Errorf("the session's tools changed: %v", got)
	}
}

func TestCrashingToolIsAResult(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "crash", "add") })
	srv.Push(
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "crash", Arguments: `{}`}, add("c2")}},
		fakemodel.Turn{Text: "the crash tool crashed; 2+3 is 5"},
	)
	res, err := s.Send(context.Background(), agent.SendOptions{Input: input("go")})
	if err != nil || res.Reason != agentv1.EndReason_END_REASON_NO_TOOL {
		t.Fatalf("%v, %v", res, err)
	}
	msgs := messages(srv.Requests()[1])
	var crash, sum string
	for _, m := range msgs {
		if m["role"] == "tool" {
			switch m["tool_call_id"] {
			case "c1":
				crash = text(m["content"])
			case "c2":
				sum = text(m["content"])
			}
		}
	}
	if !strings.Contains(crash, "crashed") || !strings.Contains(crash, "status 3") || sum != "5" {
		t.Fatalf("the model saw crash=%q sum=%q", crash, sum)
	}
	if r := s.History()[2].GetParts()[0].GetToolResult(); !r.GetError() {
		t.Fatalf("the crash result is not marked failed: %v", r)
	}
}

func TestMaxToolOutput(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) {
		o.Tools = pick(t, "shell")
		o.Config.MaxToolOutput = proto.Int64(200)
	})
	srv.Push(
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "shell", Arguments: `{"command":"head -c 5000 /dev/zero | tr '\\\\0' a"}`}}},
		fakemodel.Turn{Text: "long"},
	)
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("go")}); err != nil {
		t.Fatal(err)
	}
	out := s.History()[2].GetParts()[0].GetToolResult().GetOutput().GetText()
	if !strings.Contains(out, "cut from the middle") || strings.Count(out, "a") > 400 {
		t.Fatalf("output not cut (%d chars): %.300s", len(out), out)
	}
}

// TestServerBoundsOnToolOutput: the server's max_tool_output is the
// default and the ceiling of an agent's own; its byte cap bounds what a
// result adds to the history.
func TestServerBoundsOnToolOutput(t *testing.T) {
	tests := []struct {
		name     string
		own      *int64
		maxChars int // characters of the server's bound
		maxBytes int
		wantAs   int // most 'a's kept
	}{
		{"unset takes the server's", nil, 300, 0, 300},
		{"more than the server's is lowered", proto.Int64(4000), 300, 0, 300},
		{"less than the server's is kept", proto.Int64(100), 300, 0, 100},
		{"the byte cap", nil, 0, 600, 600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := newSession(t, func(o *agent.Options) {
				o.Tools = pick(t, "shell")
				o.Config.MaxToolOutput = tt.own
				o.MaxToolOutput = tt.maxChars
				o.MaxToolResultBytes = tt.maxBytes
			})
			srv.Push(
				fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "shell", Arguments: `{"command":"head -c 5000 /dev/zero | tr '\\0' a"}`}}},
				fakemodel.Turn{Text: "long"},
			)
			if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("go")}); err != nil {
				t.Fatal(err)
			}
			out := s.History()[2].GetParts()[0].GetToolResult().GetOutput().GetText()
			if !strings.Contains(out, "cut from the middle") || strings.Count(out, "a") > tt.wantAs || strings.Count(out, "a") < tt.wantAs/2 {
				t.Fatalf("%d 'a's kept, want at most %d: %.300s", strings.Count(out, "a"), tt.wantAs, out)
			}
		})
	}
}

func TestToolConcurrencyCap(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) {
		o.Tools = pick(t, "sleep")
		o.Config.MaxToolConcurrency = proto.Int32(1)
	})
	srv.Push(
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{
			{ID: "c1", Name: "sleep", Arguments: `{"ms":150}`},
			{ID: "c2", Name: "sleep", Arguments: `{"ms":150}`},
		}},
		fakemodel.Turn{Text: "slept"},
	)
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("go")}); err != nil {
		t.Fatal(err)
	}
	var spans [][2]int64
	for _, p := range s.History()[2].GetParts() {
		var v struct{ Start, End int64 }
		if err := json.Unmarshal([]byte(p.GetToolResult().GetOutput().GetJson()), &v); err != nil {
			t.Fatal(err)
		}
		spans = append(spans, [2]int64{v.Start, v.End})
	}
	if len(spans) != 2 || spans[0][0] < spans[1][1] && spans[1][0] < spans[0][1] {
		t.Fatalf("calls overlapped with a cap of 1: %v", spans)
	}
}

func TestInvalidConfigAndInputMakeNoRequest(t *testing.T) {
	tests := []struct {
		name   string
		opts   agent.SendOptions
		fields []string
	}{
		{"no input", agent.SendOptions{}, []string{"input"}},
		{"blank input", agent.SendOptions{Input: input("  \n")}, []string{"input"}},
		{"bad media part", agent.SendOptions{Input: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "see"}}, {Kind: &agentv1.Part_Image{Image: &agentv1.FilePart{}}}}}, []string{"input[1].image"}},
		{"bad override", agent.SendOptions{Input: input("hi"), Config: &agentv1.AgentConfig{MaxSteps: proto.Int32(0), CompactThreshold: proto.Float64(2)}}, []string{"config.compact_threshold", "config.max_steps"}},
		{"bad history replacement", agent.SendOptions{Input: input("hi"), History: &agentv1.HistoryReplacement{Messages: []*agentv1.Message{history.ToolText("nope", "add", "5")}}}, []string{"history.messages[0].parts[0].tool_result.tool_call_id"}},
		{"ask without a hook", agent.SendOptions{Input: input("hi"), PermissionMode: agentv1.PermissionMode_PERMISSION_MODE_ASK_ALL}, []string{"permission_mode"}},
		{"no endpoint", agent.SendOptions{Input: input("hi"), Config: &agentv1.AgentConfig{BaseUrl: proto.String("")}}, []string{"config.base_url"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newSession(t, nil)
			_, err := s.Send(context.Background(), tc.opts)
			var ve *agent.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			var fields []string
			for _, v := range ve.Violations {
				fields = append(fields, v.Field)
			}
			for _, f := range tc.fields {
				if !strings.Contains(strings.Join(fields, " "), f) {
					t.Errorf("violations %v do not name %s", fields, f)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d model requests were made", n)
			}
			if n := len(s.History()); n != 0 {
				t.Errorf("history has %d messages", n)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	_, err := agent.New(agent.Options{
		ID: "bad id!", LLM: client,
		Config:  &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{Temperature: proto.Float64(3)}},
		History: []*agentv1.Message{history.ToolText("nope", "add", "5")},
	})
	var ve *agent.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	var fields []string
	for _, v := range ve.Violations {
		fields = append(fields, v.Field)
	}
	want := "agent_id config.provider.temperature history[0].parts[0].tool_result.tool_call_id"
	if strings.Join(fields, " ") != want {
		t.Fatalf("fields = %v, want %s", fields, want)
	}
}

// TestLiveOutputCap: a shell call printing 2 MB streams its first
// max_live_output bytes in a few coalesced ToolOutputEvents, then one
// ToolOutputCappedEvent before its result, which is the tool's; the
// server's bound is the default and ceiling of an agent's own; with
// LiveOutputStop the call is stopped at the cap.
func TestLiveOutputCap(t *testing.T) {
	const printed = 2_000_000
	tests := []struct {
		name   string
		own    *int64
		server int64
		stop   bool
		want   int64 // the cap that applies
	}{
		{"unset takes the server's", nil, 100_000, false, 100_000},
		{"more than the server's is lowered", proto.Int64(500_000), 100_000, false, 100_000},
		{"less than the server's is kept", proto.Int64(30_000), 100_000, false, 30_000},
		{"stopped at the cap", nil, 100_000, true, 100_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := newSession(t, func(o *agent.Options) {
				o.Tools = pick(t, "shell")
				o.Config.MaxLiveOutput = tt.own
				o.MaxLiveOutput, o.LiveOutputStop = tt.server, tt.stop
			})
			srv.Push(
				fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "shell", Arguments: fmt.Sprintf(`{"command":"yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c %d; echo done"}`, printed)}}},
				fakemodel.Turn{Text: "read it"},
			)
			rec := newRecorder()
			if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("go"), OnEvent: rec.add}); err != nil {
				t.Fatal(err)
			}
			var kept int64
			var outputs int
			var capped *agentv1.ToolOutputCappedEvent
			var result *agentv1.ToolResultEvent
			for _, e := range rec.all() {
				switch {
				case e.GetToolOutput() != nil:
					if capped != nil {
						t.Fatal("output after the capped event")
					}
					kept += int64(len(e.GetToolOutput().GetData()))
					outputs++
				case e.GetToolOutputCapped() != nil:
					if capped != nil {
						t.Fatal("two capped events")
					}
					capped = e.GetToolOutputCapped()
				case e.GetToolResult() != nil:
					result = e.GetToolResult()
				}
			}
			if capped == nil || result == nil {
				t.Fatalf("capped %v, result %v", capped, result)
			}
			if kept != tt.want || capped.GetKeptBytes() != kept || capped.GetMaxBytes() != tt.want || capped.GetToolCallId() != "c1" || capped.GetStopped() != tt.stop {
				t.Errorf("%d bytes in %d events; capped %v", kept, outputs, capped)
			}
			if outputs > 20 {
				t.Errorf("%d output events for %d bytes: not coalesced", outputs, kept)
			}
			text := result.GetOutput().GetText() + result.GetOutput().GetJson()
			if tt.stop {
				if !result.GetError() || !strings.Contains(text, "live output went over the cap") {
					t.Errorf("stopped call's result: %v %.200s", result.GetError(), text)
				}
				return
			}
			if capped.GetDroppedBytes() != printed+5-kept || result.GetError() || !strings.Contains(text, "done") {
				t.Errorf("dropped %d; result %v %.200s", capped.GetDroppedBytes(), result.GetError(), text)
			}
		})
	}
}
