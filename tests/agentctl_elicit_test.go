package tests

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// TestAgentctlElicitation answers an MCP server's elicitation (the go-sdk
// test server's ask_user: name required, greeting defaulting to "hello")
// with agentctl: in chat, field by field with the default shown, and
// declined; from outside with agentctl respond, after agentctl run shows
// the request; a second answer and a bad command line are refused.
func TestAgentctlElicitation(t *testing.T) {
	t.Parallel()
	h, c := mcpToolClient(t)
	ctx := e2e.Context(t, time.Minute)
	newAgent := func() string {
		a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, callOnce("ask_user", `{}`)))}})
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	env := []string{"AGENTCORE_ADDR=" + h.Addr, "AGENTCORE_AUTH_TOKEN=" + e2e.HTTPToken}

	// Chat: accept; the required name is asked again when left empty, the
	// greeting left to its default.
	r := ctl(t, env, "ask\na\n\nAda\n\n", "chat", newAgent(), "--ask", "none")
	r.want(t, 0, "? ask_user asks: Who are you?", "name (string; required): ", "a value is needed",
		`greeting (string; enter for "hello"): `, "request for input accepted", "hello, Ada")
	// Chat: declined, which the tool is told.
	ctl(t, env, "ask\nd\n", "chat", newAgent(), "--ask", "none").want(t, 0, "request for input declined", "← ask_user: decline")

	// From outside: a detached run waits; run shows the request and how
	// to answer it; respond answers it.
	r = ctl(t, env, "", "send", newAgent(), "ask", "--detach")
	r.want(t, 0, "started; agentctl attach")
	run := regexp.MustCompile(`run (\S+) started`).FindStringSubmatch(r.stdout)[1]
	hint := regexp.MustCompile(`agentctl respond (\S+) (\S+) --accept JSON`)
	var m []string
	deadline := time.Now().Add(20 * time.Second)
	for m = nil; m == nil; m = hint.FindStringSubmatch(ctl(t, env, "", "run", run).stdout) {
		if time.Now().After(deadline) {
			t.Fatal("the detached run never asked for input")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctl(t, env, "", "run", run).want(t, 0, `waiting for input: ask_user asks "Who are you?"`)
	ctl(t, env, "", "respond", run, m[2]).want(t, 2)
	ctl(t, env, "", "respond", run, m[2], "--accept", "[1]").want(t, 2)
	ctl(t, env, "", "respond", run, m[2], "--accept", `{"name": 7}`).want(t, 2) // INVALID_ARGUMENT: not the schema's
	ctl(t, env, "", "respond", run, m[2], "--accept", `{"name": "Lin"}`, "--json").want(t, 0, `{"greeting":"hello","name":"Lin"}`)
	ctl(t, env, "", "respond", run, m[2], "--decline").want(t, 8) // ELICITATION_ANSWERED
	out := ctl(t, env, "", "attach", run)
	out.want(t, 0, "hello, Lin")
	if !strings.Contains(out.stdout, "agentctl respond "+run+" "+m[2]) {
		t.Errorf("attach does not show how to answer the request:\n%s", out.stdout)
	}
}
