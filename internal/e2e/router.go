package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
)

// Script answers one agent's model requests: step is how many assistant
// messages the request holds (0 for the first request of a task).
type Script func(step int, req *fakemodel.Request) fakemodel.Turn

// Router sends each model request to the script registered for the agent's
// system prompt, so that parallel tests share one fake model.
type Router struct {
	mu      sync.Mutex
	scripts map[string]Script
}

// NewRouter returns a router without scripts.
func NewRouter() *Router { return &Router{scripts: map[string]Script{}} }

// Add registers a script under a fresh system prompt, which it returns.
func (r *Router) Add(t testing.TB, s Script) string {
	t.Helper()
	system := "e2e:" + t.Name()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 2; r.scripts[system] != nil; i++ {
		system = fmt.Sprintf("e2e:%s#%d", t.Name(), i)
	}
	r.scripts[system] = s
	return system
}

// Set registers a script under a given system prompt until the test ends.
func (r *Router) Set(t testing.TB, system string, s Script) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scripts[system] = s
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.scripts, system)
	})
}

// Handle answers a model request with the script of its system prompt: the
// fake model's handler.
func (r *Router) Handle(req *fakemodel.Request) fakemodel.Turn {
	// Only the messages are decoded: the tools a request offers are most
	// of its bytes, and under the benchmarks' load this process reads
	// thousands of requests a second.
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	req.Field("messages", &msgs)
	system, steps := "", 0
	for _, m := range msgs {
		switch m.Role {
		case "system":
			if system == "" {
				var c any
				_ = json.Unmarshal(m.Content, &c)
				system = ContentText(c)
			}
		case "assistant":
			steps++
		}
	}
	// The agent's prompt is the first line: skills or a summary may follow.
	system, _, _ = strings.Cut(system, "\n")
	r.mu.Lock()
	s := r.scripts[system]
	if s == nil {
		// A compaction request has its own system prompt and shows the
		// agent's inside the transcript: find the longest prompt it holds.
		best := ""
		for key, fn := range r.scripts {
			if len(key) > len(best) && bytes.Contains(req.Body, []byte(key)) {
				best, s = key, fn
			}
		}
	}
	r.mu.Unlock()
	if s == nil {
		// 400: not retried, so a test without its script fails at once.
		return fakemodel.Turn{Status: 400, ErrorBody: "e2e router: no script for system prompt " + system}
	}
	return s(steps, req)
}

// ContentText reads a chat message's content, a string or parts.
func ContentText(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if pm, ok := p.(map[string]any); ok {
				if s, ok := pm["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// LastToolResults returns the content of the trailing tool messages of a request.
func LastToolResults(req *fakemodel.Request) []string {
	msgs, _ := req.JSON()["messages"].([]any)
	var out []string
	for i := len(msgs) - 1; i >= 0; i-- {
		mm, _ := msgs[i].(map[string]any)
		if mm["role"] != "tool" {
			break
		}
		out = append([]string{ContentText(mm["content"])}, out...)
	}
	return out
}

// LastUserText returns the text of the request's last user message.
func LastUserText(req *fakemodel.Request) string {
	msgs, _ := req.JSON()["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if mm, _ := msgs[i].(map[string]any); mm["role"] == "user" {
			return ContentText(mm["content"])
		}
	}
	return ""
}

// TwoTools is a task needing two tools: say_hello and add in one round,
// then an answer quoting their results.
func TwoTools(step int, req *fakemodel.Request) fakemodel.Turn {
	switch step {
	case 0:
		return fakemodel.Turn{
			TextChunks: []string{"Let me ", "do that."},
			ToolCalls: []fakemodel.ToolCall{
				{ID: "call_hello", Name: "say_hello", Arguments: `{"name":"Ming"}`},
				{ID: "call_add", Name: "add", Arguments: `{"a":2,"b":3}`},
			},
			Usage: &fakemodel.Usage{Input: 50, Output: 10, CacheRead: 20},
		}
	default:
		return fakemodel.Turn{
			TextChunks: []string{"Done: ", strings.Join(LastToolResults(req), " and ")},
			Usage:      &fakemodel.Usage{Input: 80, Output: 12, CacheRead: 40},
		}
	}
}
