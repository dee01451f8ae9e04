package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// serve serves def's bridge over gRPC on a unix socket, as toolhost would,
// and returns a client of it.
func serve(t *testing.T, def *Definition) pluginv1.ToolPluginServiceClient {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "plugin.sock"))
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	pluginv1.RegisterToolPluginServiceServer(gs, NewService(newTestBridge(t, def)))
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		gs.Stop()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	return pluginv1.NewToolPluginServiceClient(conn)
}

func TestServiceOverGRPC(t *testing.T) {
	client := serve(t, stdioDefinition(t, variantFull, `"prefix": "x_"`))
	desc, err := client.Describe(t.Context(), &pluginv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, spec := range desc.GetTools() {
		names = append(names, spec.GetName())
	}
	if !slices.Contains(names, "x_echo") || !slices.Contains(names, "x_read_resource") {
		t.Fatalf("described %v", names)
	}

	stream, err := client.Execute(t.Context(), &pluginv1.ExecuteRequest{Tool: "x_progress", InputJson: `{"steps":2}`})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if out := resp.GetOutput(); out != nil {
			events = append(events, "chunk "+string(out.GetData()))
		} else {
			events = append(events, "result "+summary(resp.GetResult()))
		}
	}
	if got, want := strings.Join(events, ""), "chunk 1/2 step 1\nchunk 2/2 step 2\nresult text done"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestServiceCancel(t *testing.T) {
	client := serve(t, stdioDefinition(t, variantFull, ""))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stream, err := client.Execute(ctx, &pluginv1.ExecuteRequest{Tool: "hang", InputJson: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscanf(string(first.GetOutput().GetData()), "0 pid %d", &pid); err != nil {
		t.Fatalf("first event %v: %v", first, err)
	}
	cancel()
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("after cancel: %v", err)
	}
	// The server learns of the cancel asynchronously; the bridge kills the
	// stdio server before Execute returns.
	waitGone(t, pid)
}

func TestServiceDescribeUnreachable(t *testing.T) {
	def := writeDefinition(t, "down.mcp.json", `{"transport": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}`)
	_, err := serve(t, def).Describe(t.Context(), &pluginv1.DescribeRequest{})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), def.Path) {
		t.Errorf("Describe: %v, want Unavailable naming %s", err, def.Path)
	}
}
