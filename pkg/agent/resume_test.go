package agent_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// A run continued after a crash keeps its id and numbering, answers the
// calls the crash cut off by kind (or as the person asked says), never asks
// the model again for a round in the history, and ends as it would have.
func TestContinueAfterACrash(t *testing.T) {
	cut := history.Assistant(history.ToolCall("a1", "add", `{"a":2,"b":3}`), history.ToolCall("s1", "sleep", `{"ms":1}`))
	cases := []struct {
		name     string
		history  []*agentv1.Message
		cutCalls agentv1.CutCalls
		input    []*agentv1.Part
		allow    *bool // the answer to a rerun request; nil: no one answers
		turns    []fakemodel.Turn
		kinds    string
		requests int
		steps    int
		text     string
		sleepRan bool
		output   string // the config's structured output is an object; the result's output as JSON
	}{
		{
			name:     "cut calls reported",
			history:  []*agentv1.Message{history.User("go"), cut},
			turns:    []fakemodel.Turn{{Text: "done"}},
			kinds:    "run_resumed tool_call tool_call tool_result tool_result step model_request model_delta model_response step result",
			requests: 1, steps: 2, text: "done",
		},
		{
			name:     "cut call run again when allowed",
			history:  []*agentv1.Message{history.User("go"), cut},
			cutCalls: agentv1.CutCalls_CUT_CALLS_ASK, allow: new(true),
			turns:    []fakemodel.Turn{{Text: "done"}},
			kinds:    "run_resumed permission_request tool_call tool_call tool_result tool_result step model_request model_delta model_response step result",
			requests: 1, steps: 2, text: "done", sleepRan: true,
		},
		{
			name:     "cut call reported when denied",
			history:  []*agentv1.Message{history.User("go"), cut},
			cutCalls: agentv1.CutCalls_CUT_CALLS_ASK, allow: new(false),
			turns:    []fakemodel.Turn{{Text: "done"}},
			kinds:    "run_resumed permission_request tool_call tool_call tool_result tool_result step model_request model_delta model_response step result",
			requests: 1, steps: 2, text: "done",
		},
		{
			name:    "the answer was stored: nothing more to ask",
			history: []*agentv1.Message{history.User("go"), cut, history.Tool(history.ToolResult("a1", "add", history.TextOutput("5"), false), history.ToolResult("s1", "sleep", history.TextOutput("{}"), false)), history.AssistantText("it is 5")},
			kinds:   "run_resumed result",
			steps:   2, text: "it is 5",
		},
		{
			name:    "a structured answer was stored: it is the output",
			history: []*agentv1.Message{history.User("go"), cut, history.Tool(history.ToolResult("a1", "add", history.TextOutput("5"), false), history.ToolResult("s1", "sleep", history.TextOutput("{}"), false)), history.AssistantText(`{"sum":5}`)},
			kinds:   "run_resumed result",
			steps:   2, text: `{"sum":5}`, output: `{"sum":5}`,
		},
		{
			name:     "the step's results were stored: the next round",
			history:  []*agentv1.Message{history.User("go"), cut, history.Tool(history.ToolResult("a1", "add", history.TextOutput("5"), false), history.ToolResult("s1", "sleep", history.TextOutput("{}"), false))},
			turns:    []fakemodel.Turn{{Text: "five"}},
			kinds:    "run_resumed model_request model_delta model_response step result",
			requests: 1, steps: 2, text: "five",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prior := []*agentv1.Message{history.User("before"), history.AssistantText("earlier run")}
			s, srv := newSession(t, func(o *agent.Options) {
				o.Tools = pick(t, "add", "sleep")
				o.History = append(prior, tc.history...)
				if tc.output != "" {
					sch, err := structpb.NewStruct(map[string]any{"type": "object", "properties": map[string]any{"sum": map[string]any{"type": "number"}}, "required": []any{"sum"}})
					if err != nil {
						t.Fatal(err)
					}
					o.Config.Output = &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_OBJECT, Schema: sch}
					o.Config.NoToolRounds = proto.Int32(3) // without the output, the model would be asked again
				}
			})
			srv.Push(tc.turns...)
			rec := newRecorder()
			opts := agent.SendOptions{
				Continue: &agent.Continuation{RunID: "run_cut", Attempt: 2, LastSeq: 7, HistoryStart: len(prior), CutCalls: tc.cutCalls, Replica: "r1", Input: tc.input},
				OnEvent:  rec.add,
			}
			if tc.allow != nil {
				opts.PermissionMode = agentv1.PermissionMode_PERMISSION_MODE_ASK_LISTED
				opts.AskTools = []string{"nothing"}
				opts.OnPermission = func(_ context.Context, req agent.PermissionRequest) agent.Decision {
					if req.ToolCallID != "s1#rerun" {
						t.Errorf("asked about %q", req.ToolCallID)
					}
					return agent.Decision{Allow: *tc.allow}
				}
			}
			res, err := s.Send(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.RunID != "run_cut" || res.Steps != tc.steps || res.Text != tc.text {
				t.Errorf("result: run %s, %d steps, %q", res.RunID, res.Steps, res.Text)
			}
			var kinds []string
			for i, e := range rec.all() {
				if e.GetSeq() != int64(8+i) || e.GetAttempt() != 2 || e.GetRunId() != "run_cut" {
					t.Errorf("event %d: seq %d, attempt %d, run %s", i, e.GetSeq(), e.GetAttempt(), e.GetRunId())
				}
				kinds = append(kinds, kindOf(e))
			}
			if len(kinds) < 2 || kinds[0] != "run_resumed" || kinds[len(kinds)-1] != "result" {
				t.Errorf("events %v: want run_resumed first and result last", kinds)
			}
			// The cut calls run in parallel: their events may interleave.
			want := strings.Fields(tc.kinds)
			slices.Sort(kinds)
			slices.Sort(want)
			if !slices.Equal(kinds, want) {
				t.Errorf("events:\n%s\nwant (in some order)\n%s", kinds, tc.kinds)
			}
			if got, _ := protojson.Marshal(res.Output); tc.output != "" && strings.ReplaceAll(string(got), " ", "") != tc.output {
				t.Errorf("output %s, want %s", got, tc.output)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d model requests, want %d", n, tc.requests)
			}
			if tc.input != nil {
				h := s.History()
				if len(h) != len(prior)+2 || textOfMessage(h[len(prior)]) != "go" {
					t.Errorf("history after a resumption that stored the input: %v", h)
				}
			}
			if len(tc.history) == 2 {
				rs := rec.all()[0].GetRunResumed()
				if rs.GetAttempt() != 2 || rs.GetReplica() != "r1" || rs.GetStep() != 1 ||
					!slices.Equal(rs.GetRerunCallIds(), []string{"a1"}) || !slices.Equal(rs.GetReportedCallIds(), []string{"s1"}) {
					t.Errorf("run_resumed %v", rs)
				}
				results := s.History()[len(prior)+2].GetParts()
				add, sleep := results[0].GetToolResult(), results[1].GetToolResult()
				if add.GetError() || add.GetOutput().GetJson() != "5" {
					t.Errorf("the idempotent call's result: %v", add)
				}
				cutText := fmt.Sprintf(agent.CutText, "sleep")
				if ran := !sleep.GetError(); ran != tc.sleepRan || !ran && sleep.GetOutput().GetText() != cutText {
					t.Errorf("the other call's result: %v (ran again: want %v)", sleep, tc.sleepRan)
				}
			}
		})
	}
}

func textOfMessage(m *agentv1.Message) string {
	var b strings.Builder
	for _, p := range m.GetParts() {
		b.WriteString(p.GetText())
	}
	return b.String()
}
