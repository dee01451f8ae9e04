package tests

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// TestRenderedHistoryLabels renders a history with tool calls: in English
// by default, with agent-core's original labels when a request asks for
// them, and by default on a server started with -render-labels original.
func TestRenderedHistoryLabels(t *testing.T) {
	t.Parallel()
	english := []string{`assistant: Let me do that. [call say_hello {"name":"Ming"}] [call add {"a":2,"b":3}]`, "tool: [say_hello result] Hello, Ming!", "[add result] 5"}
	original := []string{`assistant: Let me do that. [调用 say_hello {"name":"Ming"}] [调用 add {"a":2,"b":3}]`, "tool: [say_hello 返回] Hello, Ming!", "[add 返回] 5"}
	check := func(t *testing.T, c *client.Client, labels agentv1.RenderLabels, want []string) {
		t.Helper()
		ctx := e2e.Context(t, 30*time.Second)
		a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, e2e.TwoTools))}})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Delete(ctx)
		if _, err := a.Send(ctx, "greet Ming and add 2 and 3", client.Callbacks{}); err != nil {
			t.Fatal(err)
		}
		text, err := a.RenderWith(ctx, labels)
		for _, w := range want {
			if err != nil || !strings.Contains(text, w) {
				t.Fatalf("rendered with %v: %v\n%s\nwant %q", labels, err, text, w)
			}
		}
	}
	t.Run("the default", func(t *testing.T) {
		t.Parallel()
		check(t, suite.client, agentv1.RenderLabels_RENDER_LABELS_UNSPECIFIED, english)
	})
	t.Run("original, asked for", func(t *testing.T) {
		t.Parallel()
		check(t, suite.client, agentv1.RenderLabels_RENDER_LABELS_ORIGINAL, original)
	})
	t.Run("a server whose default is original", func(t *testing.T) {
		t.Parallel()
		p, err := suite.StartServer(suite.Plugins, []string{"-render-labels", "original"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stopServer(t, p) })
		c := dialTo(t, p)
		check(t, c, agentv1.RenderLabels_RENDER_LABELS_UNSPECIFIED, original)
		check(t, c, agentv1.RenderLabels_RENDER_LABELS_ENGLISH, english)
	})
}
