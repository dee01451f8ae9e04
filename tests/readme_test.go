package tests

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
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

// docPage is a page of the documentation: the README or a page of docs/.
type docPage struct {
	path string // from the repository's root
	text string
}

// docPages reads the README and every page of docs/, the README first.
func docPages(t *testing.T) []docPage {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(e2e.RepoRoot(), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append([]string{filepath.Join(e2e.RepoRoot(), "README.md")}, paths...)
	pages := make([]docPage, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(e2e.RepoRoot(), p)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, docPage{path: filepath.ToSlash(rel), text: string(b)})
	}
	return pages
}

// grpcurlCall matches the documentation's grpcurl commands with a request body.
var grpcurlCall = regexp.MustCompile(`grpcurl -plaintext -d '([^']*)'\s+\S+\s+agentcore\.v1\.AgentService/(\w+)`)

// readmeTool matches the name of the tool the README's first program serves.
var readmeTool = regexp.MustCompile(`tool\.New\("(\w+)"`)

// TestReadmeGrpcurl follows the five-minute start: it builds the tool the
// README writes, starts a server with it beside the ready plugins, and runs
// the grpcurl commands of the README and docs/ in order against it, the
// model calling the README's tool: each body must be a valid request, each
// call must succeed, and the tool the README calls must be the one it wrote.
func TestReadmeGrpcurl(t *testing.T) {
	type call struct{ page, body, method string }
	var calls []call
	pages := docPages(t)
	for _, p := range pages {
		text := strings.ReplaceAll(p.text, "\\\n", " ") // join continued lines
		for _, m := range grpcurlCall.FindAllStringSubmatch(text, -1) {
			calls = append(calls, call{p.path, m[1], m[2]})
		}
	}
	if len(calls) < 4 {
		t.Fatalf("found %d grpcurl calls in the README and docs/", len(calls))
	}
	first := goProgram.FindStringSubmatch(pages[0].text)
	name := readmeTool.FindStringSubmatch(first[1])
	if name == nil {
		t.Fatalf("the README's first program serves no tool:\n%s", first[1])
	}
	dir := privatePlugins(t, "hello", "shell")
	src := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(src, []byte(first[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	build := e2e.Go("build", "-o", filepath.Join(dir, name[1]), src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the README's tool: %v\n%s", err, out)
	}
	for _, c := range calls {
		if c.method == "ExecuteTool" && !strings.Contains(c.body, `"name": "`+name[1]+`"`) {
			t.Errorf("%s calls another tool than the %s it wrote: %s", c.page, name[1], c.body)
		}
	}
	var toolSaid atomic.Value // what the README's tool answered the model
	const system = "Use the tools to do the task."
	suite.Router.Set(t, system, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: name[1], Arguments: `{"name":"Ming"}`}}}
		}
		results := strings.Join(e2e.LastToolResults(req), "")
		toolSaid.Store(results)
		return fakemodel.Turn{Text: "Done: " + results}
	})
	p, _ := ownServer(t, dir)
	t.Cleanup(func() { stopServer(t, p) })
	conn, err := grpc.NewClient(p.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	svc := agentv1.File_agentcore_v1_agent_service_proto.Services().ByName("AgentService")
	for _, c := range calls {
		body, method := c.body, c.method
		md := svc.Methods().ByName(protoreflect.Name(method))
		if md == nil {
			t.Fatalf("%s calls unknown method %s", c.page, method)
		}
		req := newMessage(t, md.Input().FullName())
		if err := protojson.Unmarshal([]byte(body), req); err != nil {
			t.Fatalf("%s: %s's body %s: %v", method, c.page, body, err)
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
			t.Errorf("%s's %s %s: %v", c.page, method, body, err)
		}
	}
	if said, _ := toolSaid.Load().(string); said != "Hello, Ming!" {
		t.Errorf("the README's tool answered the model %q, want Hello, Ming!", said)
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

// goProgram matches the documentation's Go code blocks that are whole programs.
var goProgram = regexp.MustCompile("(?s)```go\n(package main\n.*?)```")

// TestReadmeGo builds every Go program of the README and docs/ in a module
// outside this repository, set up with the README's commands: the snippets
// are complete and the module can be used from elsewhere.
func TestReadmeGo(t *testing.T) {
	t.Parallel()
	// The README's tool and client; the tools of docs/tools.md.
	least := map[string]int{"README.md": 2, "docs/tools.md": 1}
	var programs []string
	for _, p := range docPages(t) {
		found := goProgram.FindAllStringSubmatch(p.text, -1)
		if len(found) < least[p.path] {
			t.Errorf("found %d Go programs in %s, want %d or more", len(found), p.path, least[p.path])
		}
		for _, m := range found {
			programs = append(programs, m[1])
		}
		delete(least, p.path)
	}
	for path := range least {
		t.Errorf("no page %s", path)
	}
	if t.Failed() {
		t.FailNow()
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
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := e2e.Go("build", "-o", os.DevNull, "./...")
	cmd.Dir, cmd.Env = mod, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the Go programs of the README and docs/ outside the repository: %v\n%s", err, out)
	}
}
