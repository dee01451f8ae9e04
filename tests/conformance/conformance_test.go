// Package conformance runs one contract against the tool plugin SDKs: the
// showcase plugin of examples/tools in Go (sdk/tool), Python (sdk/python)
// and Node.js (sdk/node), each offering the same tools, called through the
// real host (pkg/tool) over real sockets, under resource limits enforced
// with the mechanism agent-server would pick (AGENTCORE_TOOL_LIMITS, auto
// by default), and through a plain go-plugin client for what the host does
// not show (declared limits, the health check, Execute without Session,
// the controller's shutdown).
//
// A language whose runtime is missing (Python's grpcio and protobuf, Node's
// node_modules) is skipped with the reason; under CI=true it fails instead.
package conformance

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/limits"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// redDot is the picture every showcase returns: a 1x1 red PNG.
var redDot, _ = hex.DecodeString("89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082")

// showcaseTools are the tools of every showcase plugin.
var showcaseTools = []string{"count", "crash", "explode", "fail", "finish", "greet", "hog", "keyed", "picture", "shell", "slow", "spawn", "spin", "swarm", "traced"}

// lang is one SDK under test.
type lang struct {
	name string
	dir  string // the tool directory holding its showcase plugin
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// unavailable skips the test with why, or fails it under CI, which must
// have installed every runtime (.ci/run).
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf(format, args...)
}

func goLang(t *testing.T) lang {
	dir := t.TempDir()
	cmd := e2e.Go("build", "-o", filepath.Join(dir, "showcase"), "./examples/tools/go")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/tools/go: %v\n%s", err, out)
	}
	return lang{name: "go", dir: dir}
}

func pythonLang(t *testing.T) lang {
	// The showcase starts with #!/usr/bin/env python3 and runs itself again
	// with $AGENTCORE_PYTHON or /usr/bin/python3 when that one lacks grpcio.
	pythonWithGRPC(t)
	return lang{name: "python", dir: filepath.Join(e2e.RepoRoot(), "examples", "tools", "python")}
}

// pythonWithGRPC returns the first of $AGENTCORE_PYTHON, python3 and
// /usr/bin/python3 that imports grpc and protobuf.
func pythonWithGRPC(t *testing.T) string {
	py, err := e2e.Python()
	if err != nil {
		unavailable(t, "%v", err)
	}
	return py
}

func nodeLang(t *testing.T) lang {
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not on PATH")
	}
	root := e2e.RepoRoot()
	if _, err := os.Stat(filepath.Join(root, "sdk", "node", "node_modules", "@grpc", "grpc-js", "package.json")); err != nil {
		unavailable(t, "sdk/node has no node_modules: run make test-deps (or npm ci there)")
	}
	return lang{name: "node", dir: filepath.Join(root, "examples", "tools", "node")}
}

// TestConformance runs the contract against each SDK, the three at once.
func TestConformance(t *testing.T) {
	lim := limitsController(t)
	for _, l := range []struct {
		name string
		get  func(*testing.T) lang
	}{{"go", goLang}, {"python", pythonLang}, {"node", nodeLang}} {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			contract(t, l.get(t), lim)
		})
	}
}

// call is one finished call: its output chunks in order, and its result.
type call struct {
	chunks []tool.Chunk
	res    tool.Result
}

func (c call) text() string { return tool.OutputText(c.res.Output) }

// stream joins the chunks of one stream.
func (c call) stream(s agentv1.OutputStream) string {
	var b strings.Builder
	for _, ch := range c.chunks {
		if ch.Stream == s {
			b.WriteString(ch.Data)
		}
	}
	return b.String()
}

func run(ctx context.Context, set *tool.Set, name, input string) call {
	var c call
	var mu sync.Mutex
	c.res = set.Execute(ctx, name, []byte(input), tool.Options{OnOutput: func(ch tool.Chunk) {
		mu.Lock()
		c.chunks = append(c.chunks, ch)
		mu.Unlock()
	}})
	return c
}

func contract(t *testing.T, l lang, lim *limits.Controller) {
	// The contract is about what a plugin does, not how fast it starts: three
	// Python interpreters importing grpc at once on a loaded 2-core machine
	// can take longer than the default 10 s start timeout.
	host := tool.NewHost(tool.Config{Logger: hclog.NewNullLogger(), Limits: lim, LimitPolicy: policy(lim), StartTimeout: time.Minute})
	t.Cleanup(func() { host.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	set, err := host.Scan(ctx, l.dir)
	if err != nil {
		t.Fatalf("scan %s: %v", l.dir, err)
	}

	t.Run("list", func(t *testing.T) {
		if got := set.Names(); !equal(got, showcaseTools) {
			t.Fatalf("tools %v, want %v", got, showcaseTools)
		}
		greet, _ := set.Lookup("greet")
		if greet.Description != "Greets someone by name." || !greet.ReadOnly || !greet.Idempotent {
			t.Errorf("greet spec %+v", greet)
		}
		var schema struct {
			Type       string
			Properties map[string]struct{ Type, Description string }
			Required   []string
		}
		if err := json.Unmarshal(greet.InputSchema, &schema); err != nil {
			t.Fatalf("greet schema %s: %v", greet.InputSchema, err)
		}
		if name := schema.Properties["name"]; schema.Type != "object" || name.Type != "string" || name.Description != "who to greet" ||
			!equal(schema.Required, []string{"name"}) {
			t.Errorf("greet schema %s", greet.InputSchema)
		}
		if slow, _ := set.Lookup("slow"); slow.Timeout != time.Second {
			t.Errorf("slow's timeout is %v, want 1s", slow.Timeout)
		}
	})

	t.Run("call", func(t *testing.T) {
		c := run(ctx, set, "greet", `{"name":"Ada","excited":true}`)
		if c.res.Error || c.text() != "Hello, Ada!" {
			t.Fatalf("result %q (error %v)", c.text(), c.res.Error)
		}
		if got := c.stream(agentv1.OutputStream_OUTPUT_STREAM_OUTPUT); got != "thinking of a greeting" {
			t.Errorf("live output %q", got)
		}
		if c := run(ctx, set, "greet", `{"name":"Ada"}`); c.text() != "Hello, Ada." {
			t.Errorf("without the optional field: %q", c.text())
		}
	})

	t.Run("input validation", func(t *testing.T) {
		for _, in := range []string{`{}`, `{"name":5}`, `{"name":"Ada","age":3}`, `not json`} {
			c := run(ctx, set, "greet", in)
			if !c.res.Error || !strings.Contains(c.text(), "input") {
				t.Errorf("greet %s: %q (error %v), want an input error", in, c.text(), c.res.Error)
			}
		}
	})

	t.Run("output order", func(t *testing.T) {
		const n = 5
		c := run(ctx, set, "count", fmt.Sprintf(`{"n":%d}`, n))
		if c.res.Error || compact([]byte(c.text())) != fmt.Sprintf(`{"counted":%d}`, n) {
			t.Fatalf("result %q", c.text())
		}
		for _, s := range []struct {
			stream agentv1.OutputStream
			word   string
		}{{agentv1.OutputStream_OUTPUT_STREAM_OUTPUT, "emit"}, {agentv1.OutputStream_OUTPUT_STREAM_STDOUT, "stdout"}, {agentv1.OutputStream_OUTPUT_STREAM_STDERR, "stderr"}} {
			var want strings.Builder
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&want, "%s %d\n", s.word, i)
			}
			if got := c.stream(s.stream); got != want.String() {
				t.Errorf("%s stream %q, want %q", s.stream, got, want.String())
			}
		}
		// An emitted chunk comes after everything the process wrote before it.
		for i := 2; i <= n; i++ {
			at := arrival(c.chunks, agentv1.OutputStream_OUTPUT_STREAM_OUTPUT, fmt.Sprintf("emit %d\n", i))
			for _, prev := range []struct {
				stream agentv1.OutputStream
				line   string
			}{{agentv1.OutputStream_OUTPUT_STREAM_STDOUT, fmt.Sprintf("stdout %d\n", i-1)}, {agentv1.OutputStream_OUTPUT_STREAM_STDERR, fmt.Sprintf("stderr %d\n", i-1)}} {
				if p := arrival(c.chunks, prev.stream, prev.line); p < 0 || p > at {
					t.Errorf("%q (chunk %d) arrived before %q (chunk %d)", fmt.Sprintf("emit %d", i), at, prev.line, p)
				}
			}
		}
	})

	t.Run("subprocess output", func(t *testing.T) {
		c := run(ctx, set, "shell", `{"command":"echo out; echo err >&2; exit 3"}`)
		if c.res.Error || compact([]byte(c.text())) != `{"exitCode":3}` {
			t.Fatalf("result %q (error %v)", c.text(), c.res.Error)
		}
		if out, errOut := c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDOUT), c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDERR); out != "out\n" || errOut != "err\n" {
			t.Errorf("stdout %q, stderr %q", out, errOut)
		}
	})

	t.Run("stop", func(t *testing.T) {
		c := run(ctx, set, "finish", `{"summary":"all done"}`)
		if !c.res.Stop || c.res.Error || c.text() != "all done" {
			t.Fatalf("result %q stop %v error %v", c.text(), c.res.Stop, c.res.Error)
		}
	})

	t.Run("content parts", func(t *testing.T) {
		c := run(ctx, set, "picture", `{}`)
		parts := c.res.Output.GetContent().GetParts()
		if c.res.Error || len(parts) != 2 {
			t.Fatalf("result %v", c.res.Output)
		}
		if parts[0].GetText() != "a red dot" {
			t.Errorf("part 0: %v", parts[0])
		}
		if f := parts[1].GetFile(); f.GetMediaType() != "image/png" || !bytes.Equal(f.GetData(), redDot) {
			t.Errorf("part 1: %v", parts[1])
		}
	})

	t.Run("error result", func(t *testing.T) {
		c := run(ctx, set, "fail", `{"message":"no luck today"}`)
		if !c.res.Error || c.text() != "no luck today" {
			t.Fatalf("result %q (error %v)", c.text(), c.res.Error)
		}
	})

	t.Run("exception", func(t *testing.T) {
		c := run(ctx, set, "explode", `{}`)
		if !c.res.Error || !strings.Contains(c.text(), "kaboom") {
			t.Fatalf("result %q (error %v)", c.text(), c.res.Error)
		}
		if c := run(ctx, set, "greet", `{"name":"again"}`); c.text() != "Hello, again." {
			t.Errorf("after the exception: %q", c.text())
		}
	})

	t.Run("crash isolation", func(t *testing.T) {
		c := run(ctx, set, "crash", `{"code":3}`)
		if !c.res.Error || !strings.Contains(c.text(), "crashed") || !strings.Contains(c.text(), "exited with status 3") {
			t.Fatalf("result %q (error %v)", c.text(), c.res.Error)
		}
		if c := run(ctx, set, "greet", `{"name":"survivor"}`); c.res.Error || c.text() != "Hello, survivor." {
			t.Errorf("after the crash: %q", c.text())
		}
	})

	t.Run("timeout", func(t *testing.T) {
		c := run(ctx, set, "slow", `{"seconds":60}`)
		if !c.res.Error || !strings.Contains(c.text(), "timed out after 1s") {
			t.Fatalf("result %q (error %v)", c.text(), c.res.Error)
		}
	})

	t.Run("cancel kills the process tree", func(t *testing.T) { killTree(t, ctx, set) })

	t.Run("concurrency", func(t *testing.T) {
		// Calls that overlap run in processes of their own: each reports its
		// plugin process ($PPID of its shell) and its own number.
		const n = 3
		results := make([]call, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				results[i] = run(ctx, set, "shell", fmt.Sprintf(`{"command":"echo $PPID; sleep 0.5; echo %d >&2"}`, i))
			})
		}
		wg.Wait()
		pids := map[string]bool{}
		for i, c := range results {
			if c.res.Error || c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDERR) != fmt.Sprintf("%d\n", i) {
				t.Errorf("call %d: %q, stderr %q", i, c.text(), c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDERR))
			}
			pids[strings.TrimSpace(c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDOUT))] = true
		}
		if len(pids) != n {
			t.Errorf("%d overlapping calls ran in %d processes: %v", n, len(pids), pids)
		}
	})

	t.Run("trace context", func(t *testing.T) { traceContext(t, ctx, set) })

	t.Run("idempotency key", func(t *testing.T) { idempotencyKey(t, ctx, set) })

	t.Run("protocol", func(t *testing.T) { protocol(t, l, func(t *testing.T) { enforced(t, ctx, set, lim) }) })
}

// traceContext checks that a traced call's W3C trace context reaches the
// tool (it returns what it got) and the command it runs (which prints
// $TRACEPARENT|$TRACESTATE), and that an untraced call gets none.
func traceContext(t *testing.T, ctx context.Context, set *tool.Set) {
	ts, err := trace.ParseTraceState("vendor=abc")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xa1, 0xb2, 15: 0x01}, SpanID: trace.SpanID{0xc3, 0xd4, 7: 0x02}, TraceFlags: trace.FlagsSampled, TraceState: ts,
	})
	const traceparent = "00-a1b20000000000000000000000000001-c3d4000000000002-01"
	for _, c := range []struct {
		name             string
		ctx              context.Context
		parent, state    string
		checkEnvironment bool
	}{
		{"traced", trace.ContextWithSpanContext(ctx, sc), traceparent, "vendor=abc", true},
		// The plugin's environment is the test's: a TRACEPARENT there would
		// reach the command.
		{"not traced", ctx, "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := run(c.ctx, set, "traced", `{}`)
			var got struct{ Traceparent, Tracestate string }
			if err := json.Unmarshal([]byte(res.text()), &got); err != nil || res.res.Error {
				t.Fatalf("result %q (error %v): %v", res.text(), res.res.Error, err)
			}
			if got.Traceparent != c.parent || got.Tracestate != c.state {
				t.Errorf("the tool got traceparent %q, tracestate %q; want %q, %q", got.Traceparent, got.Tracestate, c.parent, c.state)
			}
			if want := c.parent + "|" + c.state + "\n"; c.checkEnvironment && res.stream(agentv1.OutputStream_OUTPUT_STREAM_STDOUT) != want {
				t.Errorf("the command printed %q, want %q", res.stream(agentv1.OutputStream_OUTPUT_STREAM_STDOUT), want)
			}
		})
	}
}

// idempotencyKey checks that a call's id, idempotency key and attempt
// reach the tool, and that a call outside a run gets none.
func idempotencyKey(t *testing.T, ctx context.Context, set *tool.Set) {
	for _, c := range []struct {
		name string
		opts tool.Options
		want string
	}{
		{"retried", tool.Options{CallID: "call_7", IdempotencyKey: "run_1/call_7", Attempt: 2}, `{"attempt":2,"call_id":"call_7","idempotency_key":"run_1/call_7"}`},
		{"outside a run", tool.Options{}, `{"attempt":0,"call_id":"","idempotency_key":""}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := set.Execute(ctx, "keyed", []byte(`{}`), c.opts)
			var got map[string]any
			if err := json.Unmarshal([]byte(res.Output.GetText()+res.Output.GetJson()), &got); err != nil || res.Error {
				t.Fatalf("result %v: %v", res.Output, err)
			}
			b, _ := json.Marshal(got) // keys sorted
			if string(b) != c.want {
				t.Errorf("the tool got %s, want %s", b, c.want)
			}
		})
	}
}

// arrival returns the index of the chunk with which stream's text first
// holds line, or -1.
func arrival(chunks []tool.Chunk, stream agentv1.OutputStream, line string) int {
	var b strings.Builder
	for i, ch := range chunks {
		if ch.Stream != stream {
			continue
		}
		b.WriteString(ch.Data)
		if strings.Contains(b.String(), line) {
			return i
		}
	}
	return -1
}

func equal(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return strings.Join(a, ",") == strings.Join(b, ",")
}

// compact removes the spaces of JSON text (the showcases' JSON holds no strings with spaces).
func compact(b []byte) string {
	return strings.NewReplacer(" ", "", "\n", "").Replace(string(b))
}
