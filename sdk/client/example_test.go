package client_test

import (
	"context"
	"fmt"
	"log"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// The README's Go example: create an agent and send it a task, printing the
// model's text as it streams and approving every tool call.
func Example() {
	ctx := context.Background()
	c, err := client.Dial("127.0.0.1:50051") // or "unix:/path/agent.sock"; client.WithToken(…) when the server wants one
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	agent, err := c.CreateAgent(ctx, client.AgentOptions{
		Config: &agentv1.AgentConfig{System: proto.String("Use the tools to do the task.")},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := agent.Send(ctx, "Say hello to Ming", client.Callbacks{
		OnLLMEvent:   func(e *agentv1.ModelDeltaEvent) { fmt.Print(e.GetText()) },
		OnToolResult: func(e *agentv1.ToolResultEvent) { fmt.Println("\ntool:", e.GetToolName(), e.GetOutput()) },
		OnPermission: func(ctx context.Context, req *agentv1.PermissionRequestEvent) client.Decision {
			return client.Allow() // ask a person here; client.Deny("reason") refuses
		},
	})
	if err != nil {
		log.Fatalf("send failed (%s): %v", client.KindOf(err), err)
	}
	fmt.Println(res.Reason, res.Steps, res.Text) // END_REASON_NO_TOOL | END_REASON_TOOL_STOP | END_REASON_STEP_LIMIT
}
