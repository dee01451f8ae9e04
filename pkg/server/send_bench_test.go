package server_test

import (
	"context"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/servetest"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// BenchmarkSendInProcess is one one-step send per iteration through a real
// gRPC connection to an in-process server and the fake model: the server's
// own cost per send, for profiling (-cpuprofile). The server runs as the
// benchmarks in bench/ run it: JSON logs at info (the audit lines), a model
// API key it holds (so every response is checked for it), the memory store.
// With tools=all the agent offers every tool of the repository's plugins,
// built into a temporary directory, as a server started with `make run` does.
func BenchmarkSendInProcess(b *testing.B) {
	b.Run("tools=none", func(b *testing.B) { benchSendInProcess(b, b.TempDir(), []string{}) })
	b.Run("tools=all", func(b *testing.B) { benchSendInProcess(b, buildPlugins(b), nil) })
}

// buildPlugins builds the repository's plugins into a temporary directory.
func buildPlugins(b *testing.B) string {
	dir := b.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+"/", "../../plugins/...") // go test puts its go first on PATH
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building the plugins: %v\n%s", err, out)
	}
	return dir
}

func benchSendInProcess(b *testing.B, toolDir string, tools []string) {
	model := fakemodel.StartTB(b)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
	target, stop := servetest.Start(b, []string{"-store", "memory", "-listen", "127.0.0.1:0", "-tool-dir", toolDir, "-model-base-url", model.URL, "-model", "m",
		"-log-format", "json", "-log-level", "info"}, map[string]string{"AGENTCORE_MODEL_API_KEY": "sk-bench-0123456789abcdef"})
	defer func() { _ = stop() }()
	c, err := client.Dial(target)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var a *client.Agent
	for deadline := time.Now().Add(10 * time.Second); ; {
		a, err = c.CreateAgent(context.Background(), client.AgentOptions{Tools: tools, Config: &agentv1.AgentConfig{System: proto.String("s")}})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := a.Send(context.Background(), "hi", client.Callbacks{}); err != nil {
			b.Fatal(err)
		}
		_ = a.SetHistory(context.Background(), nil)
	}
	b.StopTimer()
	runtime.GC()
}
