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
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
	"google.golang.org/grpc"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/limits"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// redDot is the picture every showcase returns: a 1x1 red PNG.
var redDot, _ = hex.DecodeString("89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082")

// showcaseTools are the tools of every showcase plugin.
var showcaseTools = []string{"count", "crash", "explode", "fail", "finish", "greet", "hog", "picture", "shell", "slow", "spawn", "spin", "swarm", "traced"}

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
	var tried []string
	for _, py := range []string{os.Getenv("AGENTCORE_PYTHON"), "python3", "/usr/bin/python3"} {
		if py == "" {
			continue
		}
		out, err := exec.Command(py, "-c", "import grpc, google.protobuf").CombinedOutput()
		if err == nil {
			return py
		}
		tried = append(tried, fmt.Sprintf("%s: %v %s", py, err, lastLine(out)))
	}
	unavailable(t, "no Python with grpcio and protobuf (apt-get install python3-grpcio python3-protobuf): %s", strings.Join(tried, "; "))
	return ""
}

func nodeLang(t *testing.T) lang {
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not on PATH")
	}
	root := e2e.RepoRoot()
	if _, err := os.Stat(filepath.Join(root, "sdk", "node", "node_modules", "@grpc", "grpc-js", "package.json")); err != nil {
		unavailable(t, "sdk/node has no node_modules: run (cd sdk/node && npm ci)")
	}
	return lang{name: "node", dir: filepath.Join(root, "examples", "tools", "node")}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
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

// limitsController returns the limits mechanism agent-server would use
// (AGENTCORE_TOOL_LIMITS: auto, cgroup2, cgroup1, rlimit or off), closed
// once every contract is done.
func limitsController(t *testing.T) *limits.Controller {
	lim, err := limits.New(limits.Options{Mechanism: askedMechanism(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lim.Close(); err != nil {
			t.Errorf("limits controller: %v", err)
		}
	})
	t.Logf("tool limits: %s", lim)
	return lim
}

// askedMechanism is the limits mechanism AGENTCORE_TOOL_LIMITS asks for (auto when unset).
func askedMechanism(t *testing.T) limits.Mechanism {
	mech, err := limits.ParseMechanism(os.Getenv("AGENTCORE_TOOL_LIMITS"))
	if err != nil {
		t.Fatal(err)
	}
	return mech
}

// enforces ends the test unless lim enforces limits of kind k (for each
// process tree as a whole when tree is set). A mechanism that cannot by its
// nature is a skip saying so: rlimits count no processes and bound memory
// per process, not per tree, and "off" enforces nothing; both only when
// AGENTCORE_TOOL_LIMITS asked for them. Otherwise the mechanism or its
// controller is missing from this machine (no cgroup, no memory or pids
// controller, not root), which fails under CI: its machine has them.
func enforces(t *testing.T, lim *limits.Controller, k limits.Kind, tree bool) {
	t.Helper()
	if lim.Supports(k) && (!tree || cgroups(lim)) {
		return
	}
	if mech := lim.Mechanism(); mech == askedMechanism(t) && (mech == limits.Rlimit || mech == limits.Off) {
		t.Skipf("AGENTCORE_TOOL_LIMITS=%s cannot enforce this limit (%s)", mech, lim)
	}
	unavailable(t, "this limit needs a mechanism this machine lacks (root and cgroups with their memory and pids controllers): %s", lim)
}

// cgroups reports whether lim counts a process tree as a whole.
func cgroups(lim *limits.Controller) bool {
	return lim.Mechanism() == limits.Cgroup1 || lim.Mechanism() == limits.Cgroup2
}

// policy is the suite's host's limits: defaults for the tools that ask for
// none, and maximums below what greet asks for (256 MiB, 64 processes, 10s
// of CPU, 256 files) so that its limits show the cap. A process default
// (agent-server has one) and an open files default at the maximum let one
// process serve every tool: a process without a process limit cannot take
// one, and raising a hard rlimit takes CAP_SYS_RESOURCE, which containers
// lack. The memory default is for cgroups only: RLIMIT_DATA counts what a
// runtime reserves and its threads' stacks (Go and Python's gRPC hold
// about 128 MiB of it).
func policy(lim *limits.Controller) tool.LimitPolicy {
	p := tool.LimitPolicy{
		Default: limits.Limits{Processes: 256, OpenFiles: 128},
		Max:     limits.Limits{Memory: 224 << 20, Processes: 48, CPUTime: 5 * time.Second, OpenFiles: 128},
	}
	if cgroups(lim) {
		p.Default.Memory = 128 << 20
	}
	return p
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
	host := tool.NewHost(tool.Config{Logger: hclog.NewNullLogger(), Limits: lim, LimitPolicy: policy(lim)})
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

	t.Run("protocol", func(t *testing.T) { protocol(t, l, func(t *testing.T) { enforced(t, ctx, set, lim) }) })
}

// enforced checks that the host enforces the limits tools declare, capped
// by its maximums, on the SDKs' plugins: a call over its memory, process
// or CPU time limit is killed, its result names the limit (an outcome of
// its own, not a crash), and the next call works.
func enforced(t *testing.T, ctx context.Context, set *tool.Set, lim *limits.Controller) {
	pol := policy(lim)
	t.Run("capped by the host", func(t *testing.T) {
		for _, c := range []struct {
			tool string
			want limits.Limits
		}{
			{"greet", pol.Max},
			{"swarm", limits.Limits{Memory: pol.Default.Memory, Processes: 32, OpenFiles: pol.Default.OpenFiles}},
			{"spin", limits.Limits{Memory: pol.Default.Memory, Processes: pol.Default.Processes, CPUTime: 250 * time.Millisecond, OpenFiles: pol.Default.OpenFiles}},
			{"count", pol.Default},
		} {
			if spec, _ := set.Lookup(c.tool); spec.Limits != lim.Enforced(c.want) {
				t.Errorf("%s's limits %v, want %v", c.tool, spec.Limits, lim.Enforced(c.want))
			}
		}
	})
	next := func(t *testing.T) {
		t.Helper()
		if c := run(ctx, set, "greet", `{"name":"again"}`); c.res.Error || c.text() != "Hello, again." {
			t.Errorf("the next call: %q (error %v)", c.text(), c.res.Error)
		}
	}
	breach := func(t *testing.T, c call, name, limit string) {
		t.Helper()
		want := fmt.Sprintf("tool %q exceeded its %s and was killed", name, limit)
		if !c.res.Error || !strings.Contains(c.text(), want) || c.res.Outcome != tool.OutcomeLimit {
			t.Fatalf("result %q (error %v, outcome %q), want %q", c.text(), c.res.Error, c.res.Outcome, want)
		}
	}

	t.Run("memory", func(t *testing.T) {
		// Under RLIMIT_DATA an allocation fails in one process, which may
		// survive it (Python's MemoryError is an exception): per tree only.
		enforces(t, lim, limits.Memory, true)
		limit := pol.Default.Memory
		callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var mu sync.Mutex
		reached := 0
		res := set.Execute(callCtx, "hog", []byte(`{}`), tool.Options{OnOutput: func(ch tool.Chunk) {
			mu.Lock()
			defer mu.Unlock()
			for _, line := range strings.Split(ch.Data, "\n") {
				fmt.Sscanf(line, "%d MiB", &reached)
			}
			if uint64(reached)<<20 > 4*limit {
				cancel() // not enforced: stop it before it eats the machine
			}
		}})
		breach(t, call{res: res}, "hog", "memory limit of "+limits.FormatBytes(limit))
		mu.Lock()
		defer mu.Unlock()
		if uint64(reached)<<20 > limit {
			t.Errorf("hog reported %d MiB under a limit of %s", reached, limits.FormatBytes(limit))
		}
		next(t)
	})

	t.Run("processes", func(t *testing.T) {
		enforces(t, lim, limits.Processes, false)
		// The next call is the next subtest's.
		breach(t, run(ctx, set, "swarm", `{"n":100}`), "swarm", "limit of 32 processes")
	})

	t.Run("CPU time", func(t *testing.T) {
		enforces(t, lim, limits.CPUTime, false)
		callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		breach(t, run(callCtx, set, "spin", `{}`), "spin", "CPU time limit of 250ms")
		next(t)
	})

	t.Run("open files", func(t *testing.T) {
		enforces(t, lim, limits.OpenFiles, false)
		// A command started by the tool inherits its process's limit.
		c := run(ctx, set, "shell", `{"command":"ulimit -n"}`)
		if got := strings.TrimSpace(c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDOUT)); got != strconv.Itoa(int(pol.Default.OpenFiles)) {
			t.Errorf("ulimit -n in a call of shell: %q, want %d", got, pol.Default.OpenFiles)
		}
	})
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

// killTree starts a call whose plugin has a child and a grandchild, stops
// the call once their pids are out, and checks that all of them are gone.
func killTree(t *testing.T, ctx context.Context, set *tool.Set) {
	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	pidLine := regexp.MustCompile(`pids (\d+) (\d+)`)
	pids := make(chan []int, 1)
	var out strings.Builder
	done := make(chan tool.Result, 1)
	go func() {
		done <- set.Execute(callCtx, "spawn", []byte(`{}`), tool.Options{OnOutput: func(ch tool.Chunk) {
			out.WriteString(ch.Data)
			if m := pidLine.FindStringSubmatch(out.String()); m != nil {
				a, _ := strconv.Atoi(m[1])
				b, _ := strconv.Atoi(m[2])
				select {
				case pids <- []int{a, b}:
				default:
				}
			}
		}})
	}()
	var tree []int
	select {
	case tree = <-pids:
	case res := <-done:
		t.Fatalf("spawn ended before reporting its pids: %q", tool.OutputText(res.Output))
	case <-time.After(30 * time.Second):
		t.Fatal("spawn reported no pids within 30s")
	}
	for _, pid := range tree {
		if !alive(pid) {
			t.Fatalf("process %d is not running before the cancel", pid)
		}
	}
	stop()
	res := <-done
	if !res.Error || !strings.Contains(tool.OutputText(res.Output), "stopped") {
		t.Errorf("result %q (error %v)", tool.OutputText(res.Output), res.Error)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range tree {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs after the call was stopped", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
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
