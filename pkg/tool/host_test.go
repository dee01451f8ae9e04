package tool

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentcore/agentcore/pkg/tool/limits"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

func TestScanFindsToolsAndSkipsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(dir, "sub", "testplug"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# tools\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(dirs.notplugin, "notplugin"), filepath.Join(dir, ".hidden", "notplugin"), 0o755)

	h := newHost(t, Config{})
	set := scan(t, h, dir)
	names := set.Names()
	if len(names) < 10 || names[0] != "add" {
		t.Fatalf("names = %v", names)
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("names not sorted: %v", names)
		}
	}
	spec, ok := set.Lookup("loop_timeout")
	if !ok || spec.Timeout != 300*time.Millisecond {
		t.Fatalf("loop_timeout spec = %+v, %v", spec, ok)
	}
	raw, _ := set.Lookup("raw")
	if !raw.ReadOnly || !raw.Idempotent || raw.Source != filepath.Join(dir, "sub", "testplug") {
		t.Fatalf("raw spec = %+v", raw)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw.InputSchema, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("raw schema = %s", raw.InputSchema)
	}
	if _, ok := set.Lookup("nope"); ok {
		t.Fatal("Lookup found an unknown tool")
	}
	if got := set.Specs(); len(got) != len(names) || got[0].Name != "add" {
		t.Fatalf("Specs = %v", got)
	}
}

func TestScanFailsLoudly(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho not a plugin either\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Executable, but no kernel would run it: the start fails at exec.
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte{0x7f, 'E', 'L', 'F', 0}, 0o755); err != nil {
		t.Fatal(err)
	}
	mixed := t.TempDir()
	if err := os.WriteFile(filepath.Join(mixed, "README"), []byte("read me"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(dirs.notplugin, "notplugin"), filepath.Join(mixed, "notplugin"), 0o755)
	copyFile(t, filepath.Join(dirs.badschema, "badschema"), filepath.Join(mixed, "badschema"), 0o755)
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(mixed, "testplug"), 0o755)
	twice := t.TempDir()
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(twice, "a"), 0o755)
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(twice, "b"), 0o755)

	tests := []struct {
		name string
		path string
		want []string
	}{
		{"non-plugin executable", dirs.notplugin, []string{filepath.Join(dirs.notplugin, "notplugin"), "hello, I am not a plugin"}},
		{"script", script, []string{script, "not a plugin either"}},
		{"file that cannot be run", garbage, []string{garbage, "exec format error", "did not start"}},
		{"broken plugin", dirs.badschema, []string{filepath.Join(dirs.badschema, "badschema"), `"type": "object"`}},
		{"mixed directory", mixed, []string{"notplugin", "badschema"}},
		{"missing path", filepath.Join(mixed, "nothing"), []string{"nothing", "no such file"}},
		{"non-executable file", filepath.Join(mixed, "README"), []string{"README", "not a tool plugin"}},
		{"same tool twice in one directory", twice, []string{"offered by both", filepath.Join(twice, "a"), filepath.Join(twice, "b")}},
	}
	h := newHost(t, Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Scan(context.Background(), tt.path)
			if err == nil {
				t.Fatal("Scan succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestScanLaterDirectoryWins(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(first, "testplug"), 0o755)
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(second, "other"), 0o755)
	copyFile(t, filepath.Join(dirs.ready, "hello"), filepath.Join(first, "hello"), 0o755)
	h := newHost(t, Config{})
	set := scan(t, h, first, second)
	if s, _ := set.Lookup("echo"); s.Source != filepath.Join(second, "other") {
		t.Errorf("echo comes from %s, want the second directory", s.Source)
	}
	if s, _ := set.Lookup("say_hello"); s.Source != filepath.Join(first, "hello") {
		t.Errorf("say_hello comes from %s", s.Source)
	}
	res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{})
	if res.Error || OutputText(res.Output) != "x" {
		t.Fatalf("echo = %+v", res)
	}
}

func TestMergeSelectAndInProcess(t *testing.T) {
	mk := func(name, text string) *Set {
		s, err := InProcess(Spec{Name: name, Description: text}, func(context.Context, json.RawMessage, func(string)) (Result, error) {
			return Result{Output: TextOutput(text)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	set := Merge(mk("a", "first"), nil, mk("b", "b"), mk("a", "second"))
	if got := strings.Join(set.Names(), ","); got != "a,b" {
		t.Fatalf("names = %s", got)
	}
	if s, _ := set.Lookup("a"); s.Description != "second" || s.Source != "builtin" {
		t.Fatalf("a = %+v", s)
	}
	res := set.Execute(context.Background(), "a", nil, Options{})
	if OutputText(res.Output) != "second" {
		t.Fatalf("a returned %v", res.Output)
	}
	sub, err := set.Select("b")
	if err != nil || sub.Len() != 1 {
		t.Fatalf("Select = %v, %v", sub, err)
	}
	if _, err := set.Select("b", "zzz"); err == nil || !strings.Contains(err.Error(), `"zzz"`) || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("Select unknown: %v", err)
	}
	if _, err := InProcess(Spec{Name: "bad name"}, nil); err == nil {
		t.Fatal("InProcess accepted a bad name")
	}
	var empty *Set
	if empty.Len() != 0 || !empty.Execute(context.Background(), "x", nil, Options{}).Error {
		t.Fatal("nil set")
	}
}

func TestInProcessSemantics(t *testing.T) {
	set := Merge(
		mustInProcess(t, Spec{Name: "slow", Timeout: 50 * time.Millisecond, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, _ json.RawMessage, emit func(string)) (Result, error) {
				emit("waiting")
				<-ctx.Done()
				return Result{Output: TextOutput("late")}, nil
			}),
		mustInProcess(t, Spec{Name: "boom"}, func(context.Context, json.RawMessage, func(string)) (Result, error) {
			panic("in-process boom")
		}),
		mustInProcess(t, Spec{Name: "typed", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
			func(_ context.Context, in json.RawMessage, _ func(string)) (Result, error) {
				return Result{Output: JSONOutput(in), Stop: true}, nil
			}),
	)
	var chunks []Chunk
	res := set.Execute(context.Background(), "slow", nil, Options{OnOutput: func(c Chunk) { chunks = append(chunks, c) }})
	if !res.Error || !strings.Contains(OutputText(res.Output), "timed out after 50ms") || len(chunks) != 1 || chunks[0].Data != "waiting" {
		t.Fatalf("slow = %+v, chunks %v", res, chunks)
	}
	if res := set.Execute(context.Background(), "boom", nil, Options{}); !res.Error || !strings.Contains(OutputText(res.Output), "in-process boom") {
		t.Fatalf("boom = %+v", res)
	}
	if res := set.Execute(context.Background(), "typed", json.RawMessage(`{"n":"x"}`), Options{}); !res.Error || !strings.Contains(OutputText(res.Output), "/n") {
		t.Fatalf("typed bad = %+v", res)
	}
	if res := set.Execute(context.Background(), "typed", json.RawMessage(`{"n":2}`), Options{}); res.Error || !res.Stop || OutputText(res.Output) != `{"n":2}` {
		t.Fatalf("typed = %+v", res)
	}
}

func mustInProcess(t *testing.T, spec Spec, fn Func) *Set {
	t.Helper()
	s, err := InProcess(spec, fn)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExecuteResults(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	tests := []struct {
		tool, input string
		wantErr     bool
		stop        bool
		check       func(t *testing.T, out *agentv1.ToolOutput)
	}{
		{"echo", `{"text":"héllo"}`, false, false, textIs("héllo")},
		{"add", `{"a":1,"b":2.5}`, false, false, jsonIs("3.5")},
		{"raw", `{"x":7}`, false, false, jsonIs(`{"x":7}`)},
		{"stop", `{}`, false, true, textIs("bye")},
		{"fail", `{}`, true, false, textIs("it went wrong")},
		{"panic", `{}`, true, false, textHas(`"panic" panicked: boom`, "testplug/main.go")},
		{"badpart", `{}`, true, false, textHas(`type "media" is not allowed`)},
		{"unserialisable", `{}`, true, false, textHas("cannot be serialised", "chan int")},
		{"add", `{"a":"1"}`, true, false, textHas(`invalid input for tool "add"`, "at /a", "missing property 'b'", `"required":["a","b"]`)},
		{"raw", `{"x":0}`, true, false, textHas("minimum")},
		{"raw", `not json`, true, false, textHas("not valid JSON")},
		{"nope", `{}`, true, false, textHas(`unknown tool "nope"`, "add, badpart")},
		{"image", `{}`, false, false, func(t *testing.T, out *agentv1.ToolOutput) {
			parts := out.GetContent().GetParts()
			if len(parts) != 3 || parts[0].GetText() == "" {
				t.Fatalf("parts = %v", parts)
			}
			for _, p := range parts[1:] {
				if f := p.GetFile(); f.GetMediaType() != "image/png" || len(f.GetData()) == 0 {
					t.Fatalf("file part = %v", p)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.input, func(t *testing.T) {
			res := set.Execute(context.Background(), tt.tool, json.RawMessage(tt.input), Options{})
			if res.Error != tt.wantErr || res.Stop != tt.stop {
				t.Fatalf("error=%v stop=%v, want %v %v: %v", res.Error, res.Stop, tt.wantErr, tt.stop, res.Output)
			}
			tt.check(t, res.Output)
		})
	}
	// The panic left the plugin serving: the next call works, on the same process.
	a := set.Execute(context.Background(), "pid", nil, Options{})
	set.Execute(context.Background(), "panic", nil, Options{})
	b := set.Execute(context.Background(), "pid", nil, Options{})
	if a.Error || OutputText(a.Output) != OutputText(b.Output) {
		t.Fatalf("pid before and after a panic: %v, %v", a.Output, b.Output)
	}
}

func textIs(want string) func(*testing.T, *agentv1.ToolOutput) {
	return func(t *testing.T, out *agentv1.ToolOutput) {
		t.Helper()
		if _, ok := out.GetValue().(*agentv1.ToolOutput_Text); !ok || out.GetText() != want {
			t.Fatalf("output = %v, want text %q", out, want)
		}
	}
}

func jsonIs(want string) func(*testing.T, *agentv1.ToolOutput) {
	return func(t *testing.T, out *agentv1.ToolOutput) {
		t.Helper()
		if out.GetJson() != want {
			t.Fatalf("output = %v, want JSON %s", out, want)
		}
	}
}

func textHas(subs ...string) func(*testing.T, *agentv1.ToolOutput) {
	return func(t *testing.T, out *agentv1.ToolOutput) {
		t.Helper()
		for _, s := range subs {
			if !strings.Contains(out.GetText(), s) {
				t.Fatalf("output does not contain %q:\n%s", s, out.GetText())
			}
		}
	}
}

func TestCrashesBecomeResults(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	tests := []struct {
		tool, input string
		want        []string
	}{
		{"exit", `{"code":3}`, []string{"crashed", "exited with status 3"}},
		{"segfault", `{}`, []string{"crashed", "exited with status 2", "SIGSEGV", "nil pointer dereference"}},
		{"sigkill", `{}`, []string{"crashed", "killed by signal 9"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := set.Execute(context.Background(), tt.tool, json.RawMessage(tt.input), Options{})
			if !res.Error {
				t.Fatalf("not an error: %v", res.Output)
			}
			textHas(tt.want...)(t, res.Output)
			if next := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"after"}`), Options{}); next.Error || OutputText(next.Output) != "after" {
				t.Fatalf("next call = %+v", next)
			}
		})
	}
}

// loopStarted runs loop-like tools and returns the pid of the plugin once
// the tool has started spinning.
func pidOfPlugin(t *testing.T, set *Set) int {
	res := set.Execute(context.Background(), "pid", nil, Options{})
	var pid int
	if err := json.Unmarshal([]byte(res.Output.GetJson()), &pid); err != nil {
		t.Fatalf("pid: %v", res.Output)
	}
	return pid
}

func TestTimeoutAndCancelKill(t *testing.T) {
	h := newHost(t, Config{MaxIdle: 1})
	set := scan(t, h, dirs.good)

	t.Run("declared timeout", func(t *testing.T) {
		pid := pidOfPlugin(t, set) // the idle process the loop will run on
		start := time.Now()
		res := set.Execute(context.Background(), "loop_timeout", nil, Options{})
		if !res.Error || !strings.Contains(OutputText(res.Output), `"loop_timeout" timed out after 300ms and was killed`) {
			t.Fatalf("result = %+v", res)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Fatalf("returned after %v", d)
		}
		if alive(pid) {
			t.Fatalf("plugin %d survived its timeout", pid)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		pid := pidOfPlugin(t, set)
		ctx, cancel := context.WithCancel(context.Background())
		res := set.Execute(ctx, "loop", nil, Options{OnOutput: func(c Chunk) {
			if c.Data == "started" {
				cancel()
			}
		}})
		if !res.Error || !strings.Contains(OutputText(res.Output), `"loop" was stopped: context canceled`) {
			t.Fatalf("result = %+v", res)
		}
		if alive(pid) {
			t.Fatalf("plugin %d survived the cancel", pid)
		}
	})
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"still here"}`), Options{}); res.Error {
		t.Fatalf("after kills: %+v", res)
	}
}

// TestGrandchildDiesWithTheCall: when a cancelled call's result arrives, no
// process of the plugin's process group runs any more, its grandchild
// included, and one whose death takes a while (memory to free) too: without
// a cgroup the result waits until the group is dead, not only the plugin.
func TestGrandchildDiesWithTheCall(t *testing.T) {
	kids := []struct{ name, input string }{
		{"direct", `{}`},
		{"via bash", `{"shell":true}`},
		{"holding memory", `{"hold_mib":256}`},
	}
	// "": a host without a limits controller.
	for _, mech := range []limits.Mechanism{"", limits.Off, limits.Rlimit} {
		for _, kid := range kids {
			t.Run(fmt.Sprintf("%s/%s", cmp.Or(string(mech), "none"), kid.name), func(t *testing.T) {
				cfg := Config{}
				if mech != "" {
					c, err := limits.New(limits.Options{Mechanism: mech})
					if err != nil {
						t.Fatal(err)
					}
					cfg.Limits = c
				}
				h := newHost(t, cfg)
				t.Cleanup(func() { // the host first, then the controller, then newHost's checks
					h.Close()
					if cfg.Limits != nil {
						cfg.Limits.Close()
					}
				})
				set := scan(t, h, dirs.good)
				ctx, cancel := context.WithCancel(context.Background())
				var plugin, child int
				res := set.Execute(ctx, "grandchild", json.RawMessage(kid.input), Options{OnOutput: func(c Chunk) {
					var err error
					if plugin, child, err = pidsFrom(c.Data); err == nil {
						if !alive(child) {
							t.Errorf("child %d is not running", child)
						}
						cancel()
					}
				}})
				live := liveInGroup(plugin)
				if !res.Error || child == 0 {
					t.Fatalf("result = %+v (child %d)", res, child)
				}
				if len(live) > 0 {
					t.Errorf("processes of the call's group still ran when its result arrived: %v", live)
				}
				waitGone(t, plugin, child)
			})
		}
	}
}

func TestHostSIGKILLTakesPluginsAndGrandchildren(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// The killed host cannot remove its socket directories: they go where
	// the test removes them.
	cmd.Env = append(os.Environ(), "TOOLTEST_HELPER=host", "TOOLTEST_DIR="+dirs.good, "TOOLTEST_SOCKETS="+shortTempDir(t))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := readLine(out)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("host helper: %v", err)
	}
	plugin, sleep, err := pidsFrom(line)
	if err != nil {
		t.Fatalf("host helper said %q", line)
	}
	if !alive(plugin) || !alive(sleep) {
		t.Fatal("plugin or sleep not running before the kill")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, plugin, sleep)
}

func TestOutputArrivesInOrderBeforeTheResult(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	var chunks []Chunk
	res := set.Execute(context.Background(), "stdio", nil, Options{OnOutput: func(c Chunk) { chunks = append(chunks, c) }})
	if res.Error || OutputText(res.Output) != "done" {
		t.Fatalf("result = %+v", res)
	}
	var streams = map[agentv1.OutputStream]*strings.Builder{}
	pos := map[string]int{}
	for i, c := range chunks {
		if len(c.Data) > MaxChunkBytes {
			t.Errorf("chunk %d holds %d bytes, more than %d", i, len(c.Data), MaxChunkBytes)
		}
		if streams[c.Stream] == nil {
			streams[c.Stream] = &strings.Builder{}
		}
		streams[c.Stream].WriteString(c.Data)
		for _, mark := range []string{"go-stdout", "go-stderr", "emitted", "cmd-stdout", "cmd-stderr", "raw-fd-1", "last-line"} {
			if _, seen := pos[mark]; !seen && strings.Contains(c.Data, mark) {
				pos[mark] = i
			}
		}
	}
	wantOut := "go-stdout\ncmd-stdout\ninherited\nraw-fd-1\n" + strings.Repeat("x", 100000) + "\nlast-line\n"
	if got := streams[agentv1.OutputStream_OUTPUT_STREAM_STDOUT].String(); got != wantOut {
		t.Errorf("stdout = %.200q…", got)
	}
	if got := streams[agentv1.OutputStream_OUTPUT_STREAM_STDERR].String(); got != "go-stderr\ncmd-stderr\n" {
		t.Errorf("stderr = %q", got)
	}
	if got := streams[agentv1.OutputStream_OUTPUT_STREAM_OUTPUT].String(); got != "emitted" {
		t.Errorf("output = %q", got)
	}
	order := [][2]string{{"go-stdout", "emitted"}, {"go-stderr", "emitted"}, {"emitted", "cmd-stdout"}, {"emitted", "cmd-stderr"}, {"cmd-stdout", "raw-fd-1"}, {"raw-fd-1", "last-line"}}
	for _, o := range order {
		if pos[o[0]] > pos[o[1]] {
			t.Errorf("%s arrived after %s (chunks %d, %d)", o[0], o[1], pos[o[0]], pos[o[1]])
		}
	}
}

func TestChunkDecoderKeepsUTF8Whole(t *testing.T) {
	var got []string
	d := &chunkDecoder{onOutput: func(c Chunk) { got = append(got, c.Data) }}
	euro := []byte("€") // 3 bytes
	d.write(2, append([]byte("a"), euro[:1]...))
	d.write(2, euro[1:2])
	d.write(2, append(euro[2:], 'b'))
	d.write(2, []byte{0xff, 'c'})
	d.write(2, euro[:2])
	d.flush()
	if strings.Join(got, "|") != "a|€b|\uFFFDc|\uFFFD" {
		t.Fatalf("chunks = %q", got)
	}
}

func TestParallelCallsOverlapAndTheLimiterCapsThem(t *testing.T) {
	type span struct{ Start, End int64 }
	run := func(t *testing.T, set *Set, tool, input string, lim *Limiter) []span {
		var mu sync.Mutex
		var spans []span
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				res := set.Execute(context.Background(), tool, json.RawMessage(input), Options{Limiter: lim})
				var s span
				if err := json.Unmarshal([]byte(res.Output.GetJson()), &s); err != nil || res.Error {
					t.Errorf("%s: %v", tool, res.Output)
				}
				mu.Lock()
				spans = append(spans, s)
				mu.Unlock()
			})
		}
		wg.Wait()
		return spans
	}
	maxOverlap := func(spans []span) int {
		best := 0
		for _, a := range spans {
			n := 0
			for _, b := range spans {
				if b.Start <= a.Start && a.Start < b.End {
					n++
				}
			}
			best = max(best, n)
		}
		return best
	}
	h := newHost(t, Config{MaxIdle: 8})
	set := scan(t, h, dirs.good)
	// Each call waits until all 8 have arrived: that only ends if they
	// really run at the same time; then each records when it ran.
	input, _ := json.Marshal(map[string]any{"dir": t.TempDir(), "n": 8, "ms": 100})
	if got := maxOverlap(run(t, set, "barrier", string(input), nil)); got != 8 {
		t.Errorf("without a cap, %d of 8 calls overlapped", got)
	}
	if got := maxOverlap(run(t, set, "span", `{"ms":100}`, NewLimiter(2))); got > 2 || got < 1 {
		t.Errorf("with a cap of 2, %d calls overlapped", got)
	}
}

func TestLimiterQueueHonoursCancel(t *testing.T) {
	running := make(chan struct{}, 1)
	set := mustInProcess(t, Spec{Name: "wait"}, func(ctx context.Context, _ json.RawMessage, _ func(string)) (Result, error) {
		running <- struct{}{}
		<-ctx.Done()
		return Result{}, nil
	})
	lim := NewLimiter(1)
	busy, stopBusy := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() { done <- set.Execute(busy, "wait", nil, Options{Limiter: lim}) }()
	<-running
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := set.Execute(ctx, "wait", nil, Options{Limiter: lim})
	if !res.Error || !strings.Contains(OutputText(res.Output), "waiting for its turn") {
		t.Fatalf("queued call = %+v", res)
	}
	stopBusy()
	<-done
	if NewLimiter(0) != nil {
		t.Fatal("NewLimiter(0) should mean no limit")
	}
}

func TestIdleProcessesAreReused(t *testing.T) {
	t.Run("kept", func(t *testing.T) {
		set := scan(t, newHost(t, Config{MaxIdle: 1}), dirs.good)
		if a, b := pidOfPlugin(t, set), pidOfPlugin(t, set); a != b {
			t.Fatalf("sequential calls ran in %d and %d", a, b)
		}
	})
	t.Run("none kept", func(t *testing.T) {
		set := scan(t, newHost(t, Config{MaxIdle: -1}), dirs.good)
		if a, b := pidOfPlugin(t, set), pidOfPlugin(t, set); a == b {
			t.Fatal("with MaxIdle -1 a process was reused")
		}
	})
}

func TestTruncateThroughExecute(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	res := set.Execute(context.Background(), "big", json.RawMessage(`{"n":100000}`), Options{Limit: 1000})
	text := OutputText(res.Output)
	if res.Error || !strings.HasPrefix(text, strings.Repeat("a", 500)+"\n\n[… 99000 of 100000 characters cut") ||
		!strings.HasSuffix(text, "pages.]\n\n"+strings.Repeat("z", 500)) {
		t.Fatalf("truncated = %.300q … %.100q", text, text[max(len(text)-100, 0):])
	}
	img := set.Execute(context.Background(), "image", nil, Options{Limit: 10})
	parts := img.Output.GetContent().GetParts()
	if len(parts) != 3 || !strings.Contains(parts[0].GetText(), "cut from the middle") {
		t.Fatalf("image text part = %v", parts[0])
	}
	if _, err := png.Decode(bytes.NewReader(parts[1].GetFile().GetData())); err != nil {
		t.Fatalf("the image was touched: %v", err)
	}
}

func TestCloseKillsBusyAndIdleProcesses(t *testing.T) {
	h := NewHost(Config{SocketDir: shortTempDir(t)})
	set := scan(t, h, dirs.good)
	idle := pidOfPlugin(t, set)
	started := make(chan struct{})
	done := make(chan Result)
	go func() {
		done <- set.Execute(context.Background(), "loop", nil, Options{OnOutput: func(Chunk) { close(started) }})
	}()
	<-started
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !res.Error || !strings.Contains(OutputText(res.Output), "tool host is closed") {
		t.Fatalf("busy call after Close = %+v", res)
	}
	if alive(idle) || len(children()) > 0 {
		t.Fatalf("processes left: idle %d alive=%v, children %v", idle, alive(idle), children())
	}
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{}); !res.Error || !strings.Contains(OutputText(res.Output), "closed") {
		t.Fatalf("call after Close = %+v", res)
	}
	if _, err := h.Scan(context.Background(), dirs.good); err == nil {
		t.Fatal("Scan after Close succeeded")
	}
}

func TestStartStopCyclesLeaveNothingBehind(t *testing.T) {
	sockets := shortTempDir(t)
	h := newHost(t, Config{MaxIdle: -1, SocketDir: sockets})
	set := scan(t, h, dirs.good)
	set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"warm"}`), Options{})
	h.wg.Wait() // cleanups of the first processes
	fds := openFDs()
	for i := range 200 {
		res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{})
		if res.Error {
			t.Fatalf("cycle %d: %+v", i, res)
		}
	}
	h.wg.Wait()
	if kids := children(); len(kids) > 0 {
		t.Errorf("processes left: %v", kids)
	}
	if left, _ := os.ReadDir(h.sockets); len(left) > 1 { // the marker
		t.Errorf("socket directories left: %d", len(left)-1)
	}
	if now := openFDs(); now > fds {
		t.Errorf("open fds grew from %d to %d", fds, now)
	}
}

func TestPluginWithoutSessionIsCalledThroughExecute(t *testing.T) {
	h := newHost(t, Config{MaxIdle: 1})
	set := scan(t, h, dirs.plain)
	var pids []string
	for range 2 {
		var out strings.Builder
		res := set.Execute(context.Background(), "plain_echo", json.RawMessage(`{"k":1}`), Options{OnOutput: func(c Chunk) {
			if c.Stream != agentv1.OutputStream_OUTPUT_STREAM_STDOUT {
				t.Errorf("stream %v", c.Stream)
			}
			out.WriteString(c.Data)
		}})
		if res.Error || res.Output.GetJson() != `{"k":1}` {
			t.Fatalf("result = %+v", res)
		}
		pid, rest, _ := strings.Cut(strings.TrimPrefix(out.String(), "pid "), " ")
		if rest != "€\uFFFD" {
			t.Fatalf("output = %q", out.String())
		}
		pids = append(pids, pid)
	}
	if pids[0] != pids[1] {
		t.Fatalf("calls ran in %v: the process was not reused", pids)
	}
}

func TestPluginProcessIsolation(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	res := set.Execute(context.Background(), "procinfo", nil, Options{})
	var info struct {
		Pid, Pgid, Pdeathsig int
		Stdin                string
	}
	if err := json.Unmarshal([]byte(res.Output.GetJson()), &info); err != nil {
		t.Fatalf("procinfo: %v", res.Output)
	}
	if info.Pgid != info.Pid {
		t.Errorf("the plugin is not in its own process group: pid %d, pgid %d", info.Pid, info.Pgid)
	}
	if info.Stdin != "/dev/null" {
		t.Errorf("stdin is %s", info.Stdin)
	}
	// The host sets SIGKILL; sdk/tool swaps it for SIGTERM to take its group along.
	if info.Pdeathsig != int(syscall.SIGTERM) {
		t.Errorf("parent-death signal = %d", info.Pdeathsig)
	}
	if ppid, _, _ := procStat(strconv.Itoa(info.Pid)); ppid != os.Getpid() {
		t.Errorf("the plugin's parent is %d", ppid)
	}
}

func TestScanAFileAndOtherKinds(t *testing.T) {
	plug := filepath.Join(dirs.good, "testplug")
	dir := t.TempDir()
	def := filepath.Join(dir, "x.def.json")
	if err := os.WriteFile(def, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A kind like issue 6's MCP definitions: a data file served by a plugin
	// command with arguments.
	kind := Kind{
		Name:  "def",
		Match: func(path string, _ os.FileInfo) bool { return strings.HasSuffix(path, ".def.json") },
		Command: func(path string) (Command, error) {
			return Command{Path: plug, Args: []string{"serve", path}, Env: []string{"DEF=" + path}, Source: "def:" + path}, nil
		},
	}
	h := newHost(t, Config{Kinds: []Kind{kind}})
	set := scan(t, h, dir)
	if s, ok := set.Lookup("echo"); !ok || s.Source != "def:"+def {
		t.Fatalf("echo from a def file = %+v", s)
	}
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"via kind"}`), Options{}); OutputText(res.Output) != "via kind" {
		t.Fatalf("echo = %+v", res)
	}
	file := scan(t, h, plug)
	if s, _ := file.Lookup("echo"); s.Source != plug {
		t.Fatalf("scanning a file: %+v", s)
	}
	loaded, err := h.Load(context.Background(), Command{Path: plug, Source: "loaded"})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := loaded.Lookup("add"); s.Source != "loaded" {
		t.Fatalf("Load: %+v", s)
	}
}

func TestRescanReplacesAChangedBinary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plug")
	copyFile(t, filepath.Join(dirs.good, "testplug"), path, 0o755)
	h := newHost(t, Config{MaxIdle: 1})
	set := scan(t, h, dir)
	before := pidOfPlugin(t, set)
	if again := pidOfPlugin(t, scan(t, h, dir)); again != before {
		t.Fatalf("rescanning an unchanged binary started a new process: %d, then %d", before, again)
	}
	// The same binary written anew: a new modification time.
	time.Sleep(10 * time.Millisecond)
	copyFile(t, filepath.Join(dirs.good, "testplug"), path+".new", 0o755)
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	after := pidOfPlugin(t, scan(t, h, dir))
	if after == before {
		t.Fatal("a changed binary was not restarted")
	}
	waitGone(t, before)
}

func TestKindCommandDataFilesAndDescribeTimeout(t *testing.T) {
	plug := filepath.Join(dirs.good, "testplug")
	dir := t.TempDir()
	def := filepath.Join(dir, "x.def.json")
	if err := os.WriteFile(def, []byte(`{"v":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var describeTimeout time.Duration
	kind := Kind{
		Name:  "def",
		Match: func(path string, _ os.FileInfo) bool { return strings.HasSuffix(path, ".def.json") },
		Command: func(path string) (Command, error) {
			if strings.Contains(filepath.Base(path), "bad") {
				return Command{}, fmt.Errorf("reading %s: broken", path)
			}
			return Command{Path: plug, Args: []string{path}, Files: []string{path}, DescribeTimeout: describeTimeout}, nil
		},
	}
	h := newHost(t, Config{MaxIdle: 1, Kinds: []Kind{kind}})

	t.Run("a changed data file restarts the plugin", func(t *testing.T) {
		before := pidOfPlugin(t, scan(t, h, dir))
		if again := pidOfPlugin(t, scan(t, h, dir)); again != before {
			t.Fatalf("rescanning an unchanged data file started a new process: %d, then %d", before, again)
		}
		if err := os.WriteFile(def, []byte(`{"v":22}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if after := pidOfPlugin(t, scan(t, h, dir)); after == before {
			t.Fatal("the plugin of a changed data file was not restarted")
		}
		waitGone(t, before)
	})

	t.Run("describe timeout", func(t *testing.T) {
		describeTimeout = time.Nanosecond
		defer func() { describeTimeout = 0 }()
		// Another file: a new pool, so a new process that must Describe.
		other := filepath.Join(dir, "y.def.json")
		if err := os.WriteFile(other, []byte(`{}`), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(other)
		_, err := h.Scan(context.Background(), other)
		if err == nil || !strings.Contains(err.Error(), "Describe timed out after 1ns") {
			t.Fatalf("Scan with a 1ns describe timeout: %v", err)
		}
	})

	t.Run("an error naming the file is not prefixed again", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.def.json")
		if err := os.WriteFile(bad, []byte(`{}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := h.Scan(context.Background(), bad)
		if err == nil || strings.Count(err.Error(), bad) != 1 || !strings.Contains(err.Error(), "broken") {
			t.Fatalf("Scan of a bad file: %v", err)
		}
	})
}

// TestDefaultSocketDir checks that plugin sockets go to a memory file
// system when the host may write to one, in the documented order.
func TestDefaultSocketDir(t *testing.T) {
	isTmpfs := func(dir string) bool {
		var fs unix.Statfs_t
		return unix.Statfs(dir, &fs) == nil && fs.Type == unix.TMPFS_MAGIC
	}
	disk, err := os.Getwd() // the package's directory
	if err != nil || isTmpfs(disk) {
		t.Skip("no disk directory to compare with")
	}
	if !isTmpfs("/dev/shm") {
		t.Skip("no tmpfs at /dev/shm")
	}
	mem, err := os.MkdirTemp("/dev/shm", "sockettest")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(mem) })
	tests := []struct {
		name, tmpdir, runtime, want string
	}{
		{"a memory temporary directory", mem, "", mem},
		{"the runtime directory when the temporary one is on disk", disk, mem, mem},
		{"/dev/shm when the runtime directory is missing", disk, filepath.Join(mem, "missing"), "/dev/shm"},
		{"/dev/shm when the runtime directory is on disk", disk, disk, "/dev/shm"},
	}
	for _, tt := range tests {
		t.Setenv("TMPDIR", tt.tmpdir)
		t.Setenv("XDG_RUNTIME_DIR", tt.runtime)
		if got := defaultSocketDir(); got != tt.want {
			t.Errorf("%s: defaultSocketDir() = %s, want %s", tt.name, got, tt.want)
		}
	}

	// A host with no SocketDir makes its sockets there and leaves none.
	t.Setenv("TMPDIR", disk)
	t.Setenv("XDG_RUNTIME_DIR", mem)
	h := NewHost(Config{MaxIdle: 1})
	set := scan(t, h, dirs.good)
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{}); res.Error {
		t.Fatal(res.Output)
	}
	if used, _ := os.ReadDir(mem); len(used) != 1 { // the idle process's
		t.Errorf("socket directories in %s while a process is idle: %v", mem, used)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(mem); len(left) > 0 {
		t.Errorf("socket directories left in %s: %v", mem, left)
	}
}
