package tests

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// grpcurlCall matches the README's grpcurl commands with a request body.
var grpcurlCall = regexp.MustCompile(`grpcurl -plaintext -d '([^']*)'\s+\S+\s+agentcore\.v1\.AgentService/(\w+)`)

// TestReadmeGrpcurl runs the README's grpcurl commands, in order, against the
// real server: each body must be a valid request and each call must succeed.
func TestReadmeGrpcurl(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ") // join continued lines
	calls := grpcurlCall.FindAllStringSubmatch(text, -1)
	if len(calls) < 4 {
		t.Fatalf("found %d grpcurl calls in the README", len(calls))
	}
	const system = "Use the tools to do the task."
	suite.Router.Set(t, system, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
		}
		return fakemodel.Turn{Text: "Done: " + strings.Join(e2e.LastToolResults(req), "")}
	})
	t.Cleanup(func() {
		_, _ = suite.client.API().DeleteAgent(context.Background(), &agentv1.DeleteAgentRequest{AgentId: "demo"})
	})
	conn, err := grpc.NewClient(suite.server.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	svc := agentv1.File_agentcore_v1_agent_service_proto.Services().ByName("AgentService")
	for _, c := range calls {
		body, method := c[1], c[2]
		md := svc.Methods().ByName(protoreflect.Name(method))
		if md == nil {
			t.Fatalf("README calls unknown method %s", method)
		}
		req := newMessage(t, md.Input().FullName())
		if err := protojson.Unmarshal([]byte(body), req); err != nil {
			t.Fatalf("%s: README body %s: %v", method, body, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		full := "/agentcore.v1.AgentService/" + method
		if !md.IsStreamingClient() && !md.IsStreamingServer() {
			err = conn.Invoke(ctx, full, req, newMessage(t, md.Output().FullName()))
		} else {
			err = stream(ctx, conn, full, md, req)
		}
		cancel()
		if err != nil {
			t.Errorf("README's %s %s: %v", method, body, err)
		}
	}
}

func newMessage(t *testing.T, name protoreflect.FullName) proto.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return mt.New().Interface()
}

// stream sends req as grpcurl does (then closes its side) and reads to the end.
func stream(ctx context.Context, conn *grpc.ClientConn, full string, md protoreflect.MethodDescriptor, req proto.Message) error {
	desc := &grpc.StreamDesc{ServerStreams: md.IsStreamingServer(), ClientStreams: md.IsStreamingClient()}
	s, err := conn.NewStream(ctx, desc, full)
	if err != nil {
		return err
	}
	if err := s.SendMsg(req); err != nil {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	for {
		out := md.Output()
		mt, _ := protoregistry.GlobalTypes.FindMessageByName(out.FullName())
		if err := s.RecvMsg(mt.New().Interface()); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// goProgram matches the README's Go code blocks that are whole programs.
var goProgram = regexp.MustCompile("(?s)```go\n(package main\n.*?)```")

// TestReadmeGo builds every Go program of the README in a module outside
// this repository, set up with the README's commands: the snippets are
// complete and the module can be used from elsewhere.
func TestReadmeGo(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	programs := goProgram.FindAllStringSubmatch(string(b), -1)
	if len(programs) < 3 { // a tool, the tools of "Writing tools", the client
		t.Fatalf("found %d Go programs in the README", len(programs))
	}
	mod := t.TempDir()
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	for _, args := range [][]string{
		{"mod", "init", "example.com/myapp"},
		{"mod", "edit", "-require=github.com/agentcore/agentcore@v0.0.0", "-replace=github.com/agentcore/agentcore=" + e2e.RepoRoot()},
	} {
		cmd := e2e.Go(args...)
		cmd.Dir, cmd.Env = mod, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// The repository's sums cover every module the programs build with; the
	// module graph may still need go.mod files the repository's own pruned
	// graph never asked for, which the module proxy serves.
	sums, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, p := range programs {
		dir := filepath.Join(mod, fmt.Sprintf("program%d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(p[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := e2e.Go("build", "-o", os.DevNull, "./...")
	cmd.Dir, cmd.Env = mod, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the README's Go programs outside the repository: %v\n%s", err, out)
	}
}
