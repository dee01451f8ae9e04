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
		// answers holds each call's tool_call event's permission, by tool.
		answers map[string]string
	}{
		{"ask listed, deny", agentv1.PermissionMode_PERMISSION_MODE_ASK_LISTED, []string{"shell"}, []string{"shell"}, true,
			map[string]string{"shell": "PERMISSION_OUTCOME_DENIED not on a Sunday", "add": "none"}},
		{"ask all, allow", agentv1.PermissionMode_PERMISSION_MODE_ASK_ALL, nil, []string{"add", "shell"}, false,
			map[string]string{"shell": "PERMISSION_OUTCOME_ALLOWED", "add": "PERMISSION_OUTCOME_ALLOWED"}},
		{"allow all", agentv1.PermissionMode_PERMISSION_MODE_ALLOW_ALL, nil, nil, false,
			map[string]string{"shell": "none", "add": "none"}},
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
			answers := map[string]string{}
			for _, e := range rec.all() {
				if p := e.GetPermissionRequest(); p != nil {
					asked = append(asked, p.GetToolName())
				}
				if c := e.GetToolCall(); c != nil {
					called = append(called, c.GetToolName())
					seen[c.GetToolCallId()] = true
					answers[c.GetToolName()] = permissionText(c.GetPermission())
				}
				if r := e.GetToolResult(); r != nil && !seen[r.GetToolCallId()] {
					t.Errorf("tool_result of %s without a tool_call event before it", r.GetToolCallId())
				}
			}
			if fmt.Sprint(sorted(asked)) != fmt.Sprint(tc.asked) {
				t.Errorf("asked for %v, want %v", asked, tc.asked)
			}
			if fmt.Sprint(answers) != fmt.Sprint(tc.answers) {
				t.Errorf("the tool_call events' answers: %v, want %v", answers, tc.answers)
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

// permissionText is a tool_call event's answer in a few words: "none",
// the outcome, and the reason after it.
func permissionText(p *agentv1.PermissionDecision) string {
	if p == nil {
		return "none"
	}
	return strings.TrimSpace(p.GetOutcome().String() + " " + p.GetReason())
}

// TestPermissionNotAnswered stops a run while a permission request waits:
// the call does not run, its result says so, and its tool_call event says
// the request was not answered.
func TestPermissionNotAnswered(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "shell") })
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "s1", Name: "shell", Arguments: `{"command":"echo ran"}`}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder()
	_, err := s.Send(ctx, agent.SendOptions{
		Input: input("go"), OnEvent: rec.add, PermissionMode: agentv1.PermissionMode_PERMISSION_MODE_ASK_ALL,
		OnPermission: func(ctx context.Context, req agent.PermissionRequest) agent.Decision {
			cancel() // the run is stopped while the request waits
			<-ctx.Done()
			return agent.Decision{}
		},
	})
	if err == nil {
		t.Fatal("the stopped send succeeded")
	}
	var call *agentv1.ToolCallEvent
	var result *agentv1.ToolResultEvent
	for _, e := range rec.all() {
		if c := e.GetToolCall(); c != nil {
			call = c
		}
		if r := e.GetToolResult(); r != nil {
			result = r
		}
	}
	if got := permissionText(call.GetPermission()); got != "PERMISSION_OUTCOME_NOT_ANSWERED" {
		t.Errorf("the tool_call event's answer: %s", got)
	}
	if !result.GetError() || !strings.Contains(result.GetOutput().GetText(), "Not run") {
		t.Errorf("the result: %v", result)
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
