package fakemodel_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
)

// TestStrict: a strict server refuses, as the API would, a conversation
// the protocol rejects, and takes a turn for one it accepts.
func TestStrict(t *testing.T) {
	const tools = `,"tools":[{"name":"add","input_schema":{"type":"object"}}]`
	tests := []struct {
		name, path, body string
		want             string // in the refusal; "" when accepted
	}{
		{"anthropic: a call and its result", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"call_1","name":"add","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"2"},{"type":"text","text":"go on"}]}]` + tools + `}`, ""},
		{"anthropic: unsigned thinking", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"x"}]},{"role":"user","content":"more"}]}`, "signature"},
		{"anthropic: a call without its result", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"add","input":{}}]},{"role":"user","content":"more"}]` + tools + `}`, "without tool_result"},
		{"anthropic: a result without its call", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_9","content":"2"}]}]` + tools + `}`, "unexpected tool_use_id"},
		{"anthropic: an id it refuses", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"functions.add:0","name":"add","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"functions.add:0","content":"2"}]}]` + tools + `}`, "pattern"},
		{"anthropic: tool blocks without tools", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"add","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"2"}]}]}`, "must define tools"},
		{"anthropic: a system message", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"},{"role":"system","content":"x"}]}`, "role"},
		{"anthropic: reasoning as text of another protocol", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"reasoning","text":"x"}]}]}`, "assistant messages cannot hold reasoning blocks"},
		{"chat: a call and its result", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"2"}]}`, ""},
		{"chat: a result without its call", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1","content":"2"}]}`, "role 'tool'"},
		{"chat: a call without its result", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{}"}}]},{"role":"user","content":"x"}]}`, "missing [c1]"},
	}
	c := newClient(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Strict()
			srv.Push(fakemodel.Turn{Text: "ok"})
			resp := post(t, context.Background(), c, srv.URL+tt.path, tt.body)
			body := readBody(t, resp)
			if tt.want == "" {
				if resp.StatusCode != http.StatusOK || srv.Pending() != 0 || len(srv.Rejected()) != 0 {
					t.Fatalf("status %d, body %s, rejected %v", resp.StatusCode, body, srv.Rejected())
				}
				return
			}
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, tt.want) || srv.Pending() != 1 ||
				len(srv.Rejected()) != 1 || len(srv.Requests()) != 1 {
				t.Fatalf("status %d, body %s, pending %d, rejected %v; want a 400 saying %q", resp.StatusCode, body, srv.Pending(), srv.Rejected(), tt.want)
			}
		})
	}
}
