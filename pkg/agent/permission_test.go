package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestPermission(t *testing.T) {
	tests := []struct {
		name   string
		mode   agentv1.PermissionMode
		ask    []string
		asked  []string
		denied bool
	}{
		{"ask listed, deny", agentv1.PermissionMode_PERMISSION_MODE_ASK_LISTED, []string{"shell"}, []string{"shell"}, true},
		{"ask all, allow", agentv1.PermissionMode_PERMISSION_MODE_ASK_ALL, nil, []string{"add", "shell"}, false},
		{"allow all", agentv1.PermissionMode_PERMISSION_MODE_ALLOW_ALL, nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "shell", "add") })
			srv.Push(
				fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{
					{ID: "s1", Name: "shell", Arguments: `{"command":"echo ran"}`}, add("a1"),
				}},
				fakemodel.Turn{Text: "ok"},
			)
			rec := newRecorder()
			res, err := s.Send(context.Background(), agent.SendOptions{
				Input: input("go"), OnEvent: rec.add, PermissionMode: tc.mode, AskTools: tc.ask,
				OnPermission: func(ctx context.Context, req agent.PermissionRequest) agent.Decision {
					if req.ToolName == "shell" && tc.denied {
						return agent.Decision{Reason: "not on a Sunday"}
					}
					return agent.Decision{Allow: true}
				},
			})
			if err != nil || res.Reason != agentv1.EndReason_END_REASON_NO_TOOL {
				t.Fatalf("%v, %v", res, err)
			}
			var asked, called []string
			seen := map[string]bool{} // tool_call events so far, by call id
			for _, e := range rec.all() {
				if p := e.GetPermissionRequest(); p != nil {
					asked = append(asked, p.GetToolName())
				}
				if c := e.GetToolCall(); c != nil {
					called = append(called, c.GetToolName())
					seen[c.GetToolCallId()] = true
				}
				if r := e.GetToolResult(); r != nil && !seen[r.GetToolCallId()] {
					t.Errorf("tool_result of %s without a tool_call event before it", r.GetToolCallId())
				}
			}
			if fmt.Sprint(sorted(asked)) != fmt.Sprint(tc.asked) {
				t.Errorf("asked for %v, want %v", asked, tc.asked)
			}
			shell := s.History()[2].GetParts()[0].GetToolResult()
			if tc.denied {
				// A denied call has its tool_call event too (and no output).
				if fmt.Sprint(sorted(called)) != "[add shell]" || !shell.GetError() ||
					!strings.Contains(shell.GetOutput().GetText(), "Permission denied") ||
					!strings.Contains(shell.GetOutput().GetText(), "not on a Sunday") {
					t.Fatalf("called %v; shell result %v", called, shell)
				}
				// The model reads the denial and the loop went on.
				if !strings.Contains(srv.Requests()[1].JSON()["messages"].([]any)[3].(map[string]any)["content"].(string), "not on a Sunday") {
					t.Fatal("the denial did not reach the model")
				}
			} else if shell.GetError() || !strings.Contains(shell.GetOutput().GetJson(), "ran") {
				t.Fatalf("shell result %v", shell)
			}
		})
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	if out == nil {
		return []string{}
	}
	return out
}
