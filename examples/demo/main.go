// Command demo runs agentcore end to end, offline: a scripted model server
// speaking the OpenAI chat protocol on 127.0.0.1, the real agent-server with
// the ready plugins, and a Go client that gives it a task needing two tools
// and prints the events as they stream in. `make demo` runs it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

func main() {
	server := flag.String("server", "bin/agent-server", "the agent-server binary")
	plugins := flag.String("plugins", "bin/plugins", "the plugin directory")
	flag.Parse()
	if err := run(*server, *plugins); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// script is the model's part: first it asks for two tools, then it answers
// with their results, each streamed in small pieces.
func script(r *fakemodel.Request) fakemodel.Turn {
	msgs, _ := r.JSON()["messages"].([]any)
	var results []string
	for _, m := range msgs {
		if mm, _ := m.(map[string]any); mm["role"] == "tool" {
			s, _ := mm["content"].(string)
			results = append(results, s)
		}
	}
	if len(results) == 0 {
		return fakemodel.Turn{
			TextChunks: []string{"I'll greet ", "Ming and ", "multiply ", "6 by 7."},
			ToolCalls: []fakemodel.ToolCall{
				{ID: "call_1", Name: "say_hello", Arguments: `{"name":"Ming"}`},
				{ID: "call_2", Name: "multiply", Arguments: `{"a":6,"b":7}`},
			},
			ChunkDelay: 40 * time.Millisecond,
			Usage:      &fakemodel.Usage{Input: 210, Output: 32},
		}
	}
	return fakemodel.Turn{
		TextChunks: []string{"Done. ", "The greeting: ", results[0], " ", "And 6 × 7 = ", results[len(results)-1], "."},
		ChunkDelay: 40 * time.Millisecond,
		Usage:      &fakemodel.Usage{Input: 260, Output: 18, CacheRead: 192},
	}
}

func run(serverBin, plugins string) error {
	model, err := fakemodel.Start()
	if err != nil {
		return err
	}
	defer model.Close()
	model.Handle(script)
	fmt.Printf("scripted model (chat protocol) at %s\n", model.URL)

	addr, stop, err := startServer(serverBin, plugins, model.URL)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("agent-server at %s, tools from %s\n\n", addr, plugins)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	agent, err := c.CreateAgent(ctx, client.AgentOptions{
		Config: &agentv1.AgentConfig{System: proto.String("You are a helpful assistant. Use the tools to do the task.")},
		Tools:  []string{"say_hello", "multiply"},
	})
	if err != nil {
		return err
	}
	const task = "Say hello to Ming, then tell me what 6 times 7 is."
	fmt.Printf("task: %s\n\n", task)
	inText := false
	endText := func() {
		if inText {
			fmt.Println()
			inText = false
		}
	}
	res, err := agent.Send(ctx, task, client.Callbacks{
		OnStart: func(runID string) { fmt.Printf("[run started] %s\n", runID) },
		OnLLMStart: func(e *agentv1.ModelRequestEvent) {
			endText()
			fmt.Printf("[step %d] asking the model (%d messages, tools %s)\n", e.GetStep(), e.GetMessageCount(), strings.Join(e.GetTools(), ", "))
		},
		OnLLMEvent: func(e *agentv1.ModelDeltaEvent) {
			if t := e.GetText(); t != "" {
				if !inText {
					fmt.Print("  model: ")
					inText = true
				}
				fmt.Print(t)
			}
		},
		OnLLMFinish: func(e *agentv1.ModelResponseEvent) {
			endText()
			fmt.Printf("  model finished: %s, %d tool call(s)\n", e.GetFinishReason(), len(e.GetToolCalls()))
		},
		OnToolCall: func(e *agentv1.ToolCallEvent) {
			fmt.Printf("  -> %s %s\n", e.GetToolName(), e.GetArguments())
		},
		OnToolOutput: func(e *agentv1.ToolOutputEvent) {
			fmt.Printf("     %s: %s\n", strings.ToLower(strings.TrimPrefix(e.GetStream().String(), "OUTPUT_STREAM_")), strings.TrimSpace(e.GetData()))
		},
		OnToolResult: func(e *agentv1.ToolResultEvent) {
			out := e.GetOutput().GetText()
			if out == "" {
				out = e.GetOutput().GetJson()
			}
			fmt.Printf("  <- %s = %s (%s)\n", e.GetToolName(), out, e.GetDuration().AsDuration().Round(time.Microsecond))
		},
		OnStep: func(e *agentv1.StepEvent) { fmt.Printf("[step %d done]\n", e.GetStep()) },
	})
	endText()
	if err != nil {
		return err
	}
	u := res.Usage
	fmt.Printf("\nresult: reason=%s steps=%d\n  %s\nusage: input=%d output=%d cache_read=%d\n",
		res.Reason, res.Steps, res.Text, u.GetInputTokens(), u.GetOutputTokens(), u.GetCacheReadTokens())
	if res.Reason != agentv1.EndReason_END_REASON_NO_TOOL || !strings.Contains(res.Text, "42") {
		return errors.New("the task did not finish as scripted")
	}
	return nil
}

// startServer runs agent-server on a free port and waits until it serves.
func startServer(bin, plugins, modelURL string) (string, func(), error) {
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-tool-dir", plugins, "-store", "memory", "-log-format", "json", "-log-level", "info")
	cmd.Env = append(os.Environ(), "AGENTCORE_MODEL_BASE_URL="+modelURL, "AGENTCORE_MODEL=demo-model")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s (run `make build` first): %w", bin, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	addr := make(chan string, 1)
	ready := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				continue
			}
			switch rec["@message"] {
			case "listening":
				a, _ := rec["addr"].(string)
				addr <- a
			case "tools loaded":
				ready <- struct{}{}
			}
			if rec["@level"] == "error" || rec["@level"] == "warn" {
				fmt.Fprintf(os.Stderr, "agent-server: %s\n", sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	timeout := time.After(30 * time.Second)
	var a string
	select {
	case a = <-addr:
	case <-timeout:
		stop()
		return "", nil, errors.New("agent-server did not listen within 30s")
	}
	select {
	case <-ready:
	case <-timeout:
		stop()
		return "", nil, errors.New("agent-server did not load its tools within 30s")
	}
	return a, stop, nil
}
