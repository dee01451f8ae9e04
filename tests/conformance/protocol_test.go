package conformance

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// protocol checks, through a plain go-plugin client, what the host does not
// show: the declared limits, the health check go-plugin's Ping uses, a call
// through Execute (the host prefers Session), and the controller's shutdown.
// enforced runs after the declared limits: the host's enforcement of them.
func protocol(t *testing.T, l lang, enforced func(*testing.T)) {
	path := filepath.Join(l.dir, "showcase")
	for _, ext := range []string{".py", ".js"} {
		if _, err := os.Stat(path + ext); err == nil {
			path += ext
		}
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  pluginv1.ProtocolVersion,
			MagicCookieKey:   pluginv1.MagicCookieKey,
			MagicCookieValue: pluginv1.MagicCookieValue,
		},
		Plugins:          plugin.PluginSet{pluginv1.PluginName: grpcPlugin{}},
		Cmd:              exec.Command(path),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
		StartTimeout:     30 * time.Second,
	})
	defer client.Kill()
	cp, err := client.Client()
	if err != nil {
		t.Fatalf("go-plugin client: %v", err)
	}
	if err := cp.Ping(); err != nil {
		t.Errorf("health check (go-plugin's Ping): %v", err)
	}
	raw, err := cp.Dispense(pluginv1.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	rpc := raw.(pluginv1.ToolPluginServiceClient)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	desc, err := rpc.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	specs := map[string]*pluginv1.ToolSpec{}
	for _, s := range desc.GetTools() {
		specs[s.GetName()] = s
	}
	t.Run("declared limits", func(t *testing.T) {
		lim := specs["greet"].GetLimits()
		if lim.GetMemoryBytes() != 256<<20 || lim.GetMaxProcesses() != 64 || lim.GetCpuTime().AsDuration() != 10*time.Second || lim.GetMaxOpenFiles() != 256 {
			t.Errorf("greet's limits %v, want 256 MiB, 64 processes, 10s CPU, 256 files", lim)
		}
		if specs["count"].GetLimits() != nil {
			t.Errorf("count declares limits %v, want none", specs["count"].GetLimits())
		}
	})
	t.Run("enforced limits", enforced)

	t.Run("execute without session", func(t *testing.T) {
		stream, err := rpc.Execute(ctx, &pluginv1.ExecuteRequest{Tool: "greet", InputJson: `{"name":"Bo"}`, CallId: "call_1"})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		var res *pluginv1.ToolResult
		for {
			msg, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("Execute stream: %v", err)
			}
			switch {
			case msg.GetOutput() != nil:
				kinds = append(kinds, "output:"+string(msg.GetOutput().GetData()))
			case msg.GetResult() != nil:
				kinds = append(kinds, "result")
				res = msg.GetResult()
			}
		}
		if strings.Join(kinds, ",") != "output:thinking of a greeting,result" || res.GetText() != "Hello, Bo." {
			t.Errorf("Execute sent %v, result %v", kinds, res)
		}
		stream, err = rpc.Execute(ctx, &pluginv1.ExecuteRequest{Tool: "nope", InputJson: `{}`})
		if err != nil {
			t.Fatal(err)
		}
		msg, err := stream.Recv()
		if err != nil || msg.GetResult().GetError() == "" || !strings.Contains(msg.GetResult().GetError(), "greet") {
			t.Errorf("unknown tool: %v, %v; want an error result naming the tools", msg, err)
		}
	})

	t.Run("shutdown", func(t *testing.T) {
		// go-plugin's Kill asks the controller to shut down and waits for the
		// process to exit before it would kill it (2s).
		start := time.Now()
		client.Kill()
		if !client.Exited() {
			t.Error("the plugin did not exit")
		}
		if d := time.Since(start); d > 1900*time.Millisecond {
			t.Errorf("the plugin took %v to exit after Shutdown: it was killed, not shut down", d)
		}
	})
}

// grpcPlugin is the client half of the plugin protocol for go-plugin.
type grpcPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (grpcPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }

func (grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginv1.NewToolPluginServiceClient(c), nil
}
