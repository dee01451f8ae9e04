// Package tests holds agentcore's end-to-end tests: the real agent-server
// binary on a free port, the real plugins, the fake model server speaking
// the chat protocol on 127.0.0.1, and the Go client.
package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/sdk/client"
)

// testKey is the default profile's API key: it must never show in a log,
// an error or GetAgent.
const testKey = "sk-e2e-very-secret-key-0123456789"

// suite is what every test shares: built binaries, the fake model and one
// running server.
var suite struct {
	dir     string // the suite's temporary folder
	bin     string // the agent-server binary
	plugins string // bin/plugins
	// mcpServer is an MCP server over stdio (internal/mcptest's).
	mcpServer string
	// testPlugins holds the plugins of tests/testdata/plugins.
	testPlugins string
	model       *fakemodel.Server
	router      *router
	server      *serverProc
	client      *client.Client
}

func TestMain(m *testing.M) {
	if code, ok := relayMain(); ok { // started as the benchmarks' bare relay
		os.Exit(code)
	}
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "agentcore-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	suite.dir = dir
	// Binaries only: servers run as another user (the trust tests) must reach them.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		return 1
	}
	suite.model, err = fakemodel.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	suite.router = newRouter()
	suite.model.Handle(suite.router.handle)

	suite.server, err = startServer(suite.plugins, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start agent-server:", err)
		suite.model.Close()
		return 1
	}
	suite.client, err = client.Dial(suite.server.addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()

	if err := stopBench(); err != nil {
		fmt.Fprintln(os.Stderr, "the benchmarks' agent-server did not stop cleanly:", err)
		code = 1
	}
	suite.client.Close()
	if err := suite.server.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "agent-server did not stop cleanly:", err)
		code = 1
	}
	if strings.Contains(suite.server.logs(), testKey) {
		for _, line := range strings.Split(suite.server.logs(), "\n") {
			if strings.Contains(line, testKey) {
				fmt.Fprintln(os.Stderr, "the API key appeared in the server's logs:", line)
			}
		}
		code = 1
	}
	suite.model.Close()
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
		code = 1
	}
	return code
}

// repoRoot is the repository's top folder.
func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Dir(wd)
}

// build compiles agent-server and every plugin into dir.
func build(dir string) error {
	suite.bin = filepath.Join(dir, "agent-server")
	suite.plugins = filepath.Join(dir, "plugins")
	if err := os.MkdirAll(suite.plugins, 0o755); err != nil {
		return err
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	serverBuild := []string{"build", "-o", suite.bin, "./cmd/agent-server"}
	if os.Getenv("AGENTCORE_E2E_RACE") != "" { // the server under the race detector
		serverBuild = append(serverBuild[:1], append([]string{"-race"}, serverBuild[1:]...)...)
	}
	suite.mcpServer = filepath.Join(dir, "mcpserver")
	suite.testPlugins = filepath.Join(dir, "testplugins")
	if err := os.MkdirAll(suite.testPlugins, 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{
		serverBuild,
		{"build", "-o", dir + "/", "./cmd/toolhost"}, // beside agent-server, which serves MCP definitions with it
		{"build", "-o", suite.mcpServer, "./cmd/toolhost/testdata/mcpserver"},
		{"build", "-o", suite.plugins + "/", "./plugins/..."},
		{"build", "-o", suite.testPlugins + "/", "./tests/testdata/plugins/..."},
	} {
		cmd := exec.Command(goBin, args...)
		cmd.Dir = repoRoot()
		// Static, as make build and the sidecar image have them (the race
		// detector needs cgo).
		if os.Getenv("AGENTCORE_E2E_RACE") == "" {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// serverProc is a running agent-server.
type serverProc struct {
	cmd  *exec.Cmd
	addr string

	mu     sync.Mutex
	log    bytes.Buffer
	exited chan struct{}
	err    error
}

// startServer starts agent-server on a free port with the plugins in
// toolDir and the fake model as its default profile; extra adds flags.
// Unless extra names a store, the server gets the default store (SQLite) in
// a data folder of its own, never the developer's home.
func startServer(toolDir string, extra []string, env ...string) (*serverProc, error) {
	return launch(serverCmd(toolDir, extra, env...))
}

// serverCmd is the command startServer runs: agent-server on 127.0.0.1:0
// with the plugins in toolDir and the fake model as its default profile.
// Unless extra names a store, the server gets the default store (SQLite) in
// a data folder of its own, never the developer's home.
func serverCmd(toolDir string, extra []string, env ...string) *exec.Cmd {
	args := []string{"-listen", "127.0.0.1:0", "-log-format", "json", "-log-level", "debug",
		"-tool-dir", toolDir, "-shutdown-grace", "2s"}
	if !slices.Contains(extra, "-store") && !slices.Contains(extra, "-data-dir") {
		// Open to all: some tests run the server as another user.
		if data, err := os.MkdirTemp(suite.dir, "data-"); err == nil && os.Chmod(data, 0o777) == nil {
			args = append(args, "-data-dir", data)
		} else {
			args = append(args, "-store", "memory")
		}
	}
	args = append(args, extra...)
	cmd := exec.Command(suite.bin, args...)
	cmd.Env = append(os.Environ(),
		"AGENTCORE_MODEL_BASE_URL="+suite.model.URL,
		"AGENTCORE_MODEL=fake-model",
		"AGENTCORE_MODEL_API_KEY="+testKey,
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// startServerUnder is startServer with agent-server run by the command
// wrap (e.g. unshare), which execs it with its arguments.
func startServerUnder(wrap []string, toolDir string, extra []string, env ...string) (*serverProc, error) {
	cmd := serverCmd(toolDir, extra, env...)
	wrapped := exec.Command(wrap[0], append(append([]string{}, wrap[1:]...), cmd.Args...)...)
	wrapped.Env, wrapped.SysProcAttr = cmd.Env, cmd.SysProcAttr
	return launch(wrapped)
}

// launch starts an agent-server command and waits until it listens and its
// health service says SERVING (asked over a connection made with dial;
// plaintext by default). The address is the one of the "listening" log
// line, or the command's last -listen when it names a port (the line is
// missing at -log-level warn).
func launch(cmd *exec.Cmd, dial ...grpc.DialOption) (*serverProc, error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &serverProc{cmd: cmd, exited: make(chan struct{})}
	addrCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			var rec struct {
				Message string `json:"@message"`
				Addr    string `json:"addr"`
			}
			// Only lines that may say it are decoded: under the benchmarks'
			// load this process reads thousands of lines a second.
			if strings.Contains(line, `"listening"`) && json.Unmarshal([]byte(line), &rec) == nil && rec.Message == "listening" {
				select {
				case addrCh <- rec.Addr:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	known := ""
	for i, a := range cmd.Args[:len(cmd.Args)-1] {
		if a == "-listen" && !strings.HasSuffix(cmd.Args[i+1], ":0") {
			known = cmd.Args[i+1]
		}
	}
	if known != "" {
		addrCh <- known
	}
	select {
	case p.addr = <-addrCh:
	case <-p.exited:
		return nil, fmt.Errorf("exited early: %v\n%s", p.err, p.logs())
	case <-time.After(30 * time.Second):
		p.kill()
		return nil, fmt.Errorf("no listening line in 30s:\n%s", p.logs())
	}
	if err := p.waitServing(30*time.Second, dial...); err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

func (p *serverProc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// waitServing waits until the health service says SERVING.
func (p *serverProc) waitServing(d time.Duration, dial ...grpc.DialOption) error {
	if len(dial) == 0 {
		dial = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(p.addr, dial...)
	if err != nil {
		return err
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not SERVING after %s (last: %v %v)", d, resp.GetStatus(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (p *serverProc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(30 * time.Second):
		p.kill()
		return fmt.Errorf("still running 30s after SIGTERM")
	}
}

func (p *serverProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// script answers one agent's model requests: step is how many assistant
// messages the request holds (0 for the first request of a task).
type script func(step int, req *fakemodel.Request) fakemodel.Turn

// router sends each model request to the script registered for the agent's
// system prompt, so that parallel tests share one fake model.
type router struct {
	mu      sync.Mutex
	scripts map[string]script
}

func newRouter() *router { return &router{scripts: map[string]script{}} }

// add registers a script under a fresh system prompt, which it returns.
func (r *router) add(t testing.TB, s script) string {
	t.Helper()
	system := "e2e:" + t.Name()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 2; r.scripts[system] != nil; i++ {
		system = fmt.Sprintf("e2e:%s#%d", t.Name(), i)
	}
	r.scripts[system] = s
	return system
}

// set registers a script under a given system prompt until the test ends.
func (r *router) set(t testing.TB, system string, s script) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scripts[system] = s
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.scripts, system)
	})
}

func (r *router) handle(req *fakemodel.Request) fakemodel.Turn {
	// Only the messages are decoded: the tools a request offers are most
	// of its bytes, and under the benchmarks' load this process reads
	// thousands of requests a second.
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	req.Field("messages", &msgs)
	system, steps := "", 0
	for _, m := range msgs {
		switch m.Role {
		case "system":
			if system == "" {
				var c any
				_ = json.Unmarshal(m.Content, &c)
				system = contentText(c)
			}
		case "assistant":
			steps++
		}
	}
	// The agent's prompt is the first line: skills or a summary may follow.
	system, _, _ = strings.Cut(system, "\n")
	r.mu.Lock()
	s := r.scripts[system]
	if s == nil {
		// A compaction request has its own system prompt and shows the
		// agent's inside the transcript: find the longest prompt it holds.
		best := ""
		for key, fn := range r.scripts {
			if len(key) > len(best) && bytes.Contains(req.Body, []byte(key)) {
				best, s = key, fn
			}
		}
	}
	r.mu.Unlock()
	if s == nil {
		// 400: not retried, so a test without its script fails at once.
		return fakemodel.Turn{Status: 400, ErrorBody: "e2e router: no script for system prompt " + system}
	}
	return s(steps, req)
}

// contentText reads a chat message's content, a string or parts.
func contentText(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if pm, ok := p.(map[string]any); ok {
				if s, ok := pm["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// lastToolResults returns the content of the trailing tool messages of a request.
func lastToolResults(req *fakemodel.Request) []string {
	msgs, _ := req.JSON()["messages"].([]any)
	var out []string
	for i := len(msgs) - 1; i >= 0; i-- {
		mm, _ := msgs[i].(map[string]any)
		if mm["role"] != "tool" {
			break
		}
		out = append([]string{contentText(mm["content"])}, out...)
	}
	return out
}

// lastUserText returns the text of the request's last user message.
func lastUserText(req *fakemodel.Request) string {
	msgs, _ := req.JSON()["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if mm, _ := msgs[i].(map[string]any); mm["role"] == "user" {
			return contentText(mm["content"])
		}
	}
	return ""
}

// twoTools is a task needing two tools: say_hello and add in one round,
// then an answer quoting their results.
func twoTools(step int, req *fakemodel.Request) fakemodel.Turn {
	switch step {
	case 0:
		return fakemodel.Turn{
			TextChunks: []string{"Let me ", "do that."},
			ToolCalls: []fakemodel.ToolCall{
				{ID: "call_hello", Name: "say_hello", Arguments: `{"name":"Ming"}`},
				{ID: "call_add", Name: "add", Arguments: `{"a":2,"b":3}`},
			},
			Usage: &fakemodel.Usage{Input: 50, Output: 10, CacheRead: 20},
		}
	default:
		return fakemodel.Turn{
			TextChunks: []string{"Done: ", strings.Join(lastToolResults(req), " and ")},
			Usage:      &fakemodel.Usage{Input: 80, Output: 12, CacheRead: 40},
		}
	}
}

// ctxT returns a context that ends with the test (or after d).
func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
