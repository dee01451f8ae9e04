package bench

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// BenchmarkChildRun measures what calling an agent as a tool adds to a
// send, against what a plain tool call adds. Three sends per iteration,
// each from an empty history: base answers at once (one model round);
// tool calls add (a warm plugin call) and answers (two rounds); child
// calls an agent tool whose child run answers at once, then answers (two
// rounds of the root, one of the child). tool-added is tool − base (a tool
// call and one model round), child-added is child − base (the child run,
// its model round and the root's second round); child-ratio is their
// medians' ratio, which the design bounds at 2.
func BenchmarkChildRun(b *testing.B) {
	answer := fakemodel.Turn{Text: "done", Usage: &fakemodel.Usage{Input: 10, Output: 1}}
	twoRounds := func(call fakemodel.ToolCall) e2e.Script {
		return func(step int, _ *fakemodel.Request) fakemodel.Turn {
			if step == 0 {
				return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{call}, Usage: &fakemodel.Usage{Input: 10, Output: 1}}
			}
			return answer
		}
	}
	c := benchClient(b)
	base := benchAgentsOn(b, c, 1, suite.Router.Add(b, func(int, *fakemodel.Request) fakemodel.Turn { return answer }), []string{})[0]
	tool := benchAgentsOn(b, c, 1, suite.Router.Add(b, twoRounds(fakemodel.ToolCall{Name: "add", Arguments: `{"a":1,"b":2}`})), []string{"add"})[0]
	helper := benchAgentsOn(b, c, 1, suite.Router.Add(b, func(int, *fakemodel.Request) fakemodel.Turn { return answer }), []string{})[0]
	lead, err := c.CreateAgent(context.Background(), client.AgentOptions{
		Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(b, twoRounds(fakemodel.ToolCall{Name: "helper", Arguments: `{"task":"do it"}`})))},
		Tools:  []string{}, AgentTools: []*agentv1.AgentTool{{AgentId: helper.ID, Name: "helper"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = lead.Delete(context.Background()) })
	send := func(a *client.Agent) time.Duration {
		for _, x := range []*client.Agent{a, helper} {
			_ = x.SetHistory(context.Background(), nil) // every send starts from the same short context
		}
		start := time.Now()
		if _, err := a.Send(context.Background(), "go", client.Callbacks{}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 20 { // warm every path: connections, the plugin, the sessions
		send(base)
		send(tool)
		send(lead)
	}
	var toolAdded, childAdded []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := send(base)
		toolAdded = append(toolAdded, send(tool)-t0)
		childAdded = append(childAdded, send(lead)-t0)
	}
	b.StopTimer()
	report(b, "tool-added", toolAdded)
	report(b, "child-added", childAdded)
	tm, cm := percentile(toolAdded, 50), percentile(childAdded, 50)
	if tm > 0 {
		b.ReportMetric(float64(cm)/float64(tm), "child-ratio")
	}
}
