// Command testplug is a test plugin with one tool per behaviour the host
// must handle: output, crashes, hangs, grandchildren, bad results.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	"github.com/agentcore/agentcore/sdk/tool"
)

type empty struct{}

type text struct {
	Text string `json:"text"`
}

type code struct {
	Code int `json:"code"`
}

type linger struct {
	Path string `json:"path"`
}

type span struct {
	MS int `json:"ms"`
}

type barrier struct {
	Dir string `json:"dir"`
	N   int    `json:"n"`
	MS  int    `json:"ms"`
}

type flood struct {
	N      int  `json:"n"`
	Stdout bool `json:"stdout,omitempty"`
}

type size struct {
	N int `json:"n"`
}

type shell struct {
	Shell bool `json:"shell,omitempty"`
	// HoldMiB, when set, makes the child this program holding that much
	// memory, which makes its death after SIGKILL take a while.
	HoldMiB int `json:"hold_mib,omitempty"`
}

type nums struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// hog allocates and touches memory without end, saying how far it got.
func hog(_ context.Context, _ empty, emit tool.Emit) (any, error) {
	var keep [][]byte
	for i := 1; ; i++ {
		b := make([]byte, 8<<20)
		for j := range b {
			b[j] = 1
		}
		keep = append(keep, b)
		emit(fmt.Sprintf("%d MiB\n", i*8))
	}
}

func loop(ctx context.Context, _ empty, emit tool.Emit) (any, error) {
	emit("started")
	for {
	}
}

// pngBytes returns a small PNG image.
func pngBytes() []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4)))
	return b.Bytes()
}

// mainThreadPdeathsig is the parent-death signal of the main thread (it is
// per thread), read in init, which runs on the main thread after sdk/tool's.
var mainThreadPdeathsig int32

func init() {
	_ = unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&mainThreadPdeathsig)), 0, 0, 0)
}

func main() {
	if os.Getenv("TESTPLUG_HOG") != "" { // a child of child_hog
		_, _ = hog(context.Background(), empty{}, func(string) {})
	}
	if n, _ := strconv.Atoi(os.Getenv("TESTPLUG_HOLD")); n > 0 { // a child of grandchild
		b := make([]byte, n<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("holding")
		time.Sleep(time.Hour)
		runtime.KeepAlive(b)
		os.Exit(0)
	}
	tool.Serve(
		tool.New("echo", "Returns its text.", func(_ context.Context, in text, _ tool.Emit) (any, error) {
			return in.Text, nil
		}),
		tool.New("add", "Adds two numbers.", func(_ context.Context, in nums, _ tool.Emit) (any, error) {
			return in.A + in.B, nil
		}),
		tool.New("pid", "Returns the plugin's process id.", func(context.Context, empty, tool.Emit) (any, error) {
			return os.Getpid(), nil
		}),
		tool.New("cgroup", "Returns the plugin's /proc/self/cgroup.", func(context.Context, empty, tool.Emit) (any, error) {
			b, err := os.ReadFile("/proc/self/cgroup")
			return string(b), err
		}),
		tool.New("env", "Returns the plugin's environment.", func(context.Context, empty, tool.Emit) (any, error) {
			return os.Environ(), nil
		}),
		tool.New("loop", "Spins forever.", loop),
		tool.New("hog", "Allocates memory without end.", hog),
		tool.New("child_hog", "Runs a child that allocates without end; returns its exit as soon as it ends.", func(context.Context, empty, tool.Emit) (any, error) {
			self, err := os.Executable()
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), "TESTPLUG_HOG=1")
			err = cmd.Run()
			return map[string]any{"exit": cmd.ProcessState.String(), "error": fmt.Sprint(err)}, nil
		}),
		tool.New("small_hog", "Allocates memory without end, asking for 64 MiB.", hog, tool.WithLimits(tool.Limits{MemoryBytes: 64 << 20})),
		tool.New("spin_cpu", "Spins, asking for 300ms of CPU time.", loop, tool.WithLimits(tool.Limits{CPUTime: 300 * time.Millisecond, MaxOpenFiles: 99})),
		tool.New("nofile", "Reports its open-files limit.", func(context.Context, empty, tool.Emit) (any, error) {
			var rl unix.Rlimit
			err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
			return rl.Cur, err
		}, tool.WithLimits(tool.Limits{MaxOpenFiles: 99, MemoryBytes: 1 << 40})),
		tool.New("daemon", "Leaves a daemon (setsid, double fork) behind, reports its pid, blocks.", func(_ context.Context, _ empty, emit tool.Emit) (any, error) {
			out, err := exec.Command("bash", "-c", "setsid bash -c 'sleep 1000 >/dev/null 2>&1 & echo $!' </dev/null").Output()
			if err != nil {
				return nil, err
			}
			emit("daemon " + strings.TrimSpace(string(out)) + "\n")
			select {}
		}),
		tool.New("loop_timeout", "Spins forever, with a timeout.", loop, tool.Timeout(300*time.Millisecond)),
		tool.New("panic", "Panics.", func(context.Context, empty, tool.Emit) (any, error) {
			panic("boom")
		}),
		tool.New("exit", "Exits the process.", func(_ context.Context, in code, _ tool.Emit) (any, error) {
			fmt.Fprintln(os.Stderr, "exiting with", in.Code)
			os.Exit(in.Code)
			return nil, nil
		}),
		tool.New("segfault", "Faults outside any recover.", func(context.Context, empty, tool.Emit) (any, error) {
			go func() {
				var p *int
				*p = 1
			}()
			select {}
		}),
		tool.New("sigkill", "Dies like an OOM kill.", func(context.Context, empty, tool.Emit) (any, error) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}),
		tool.New("grandchild", "Starts sleep (or bash and sleep, or a child holding memory), reports pids, blocks.", func(_ context.Context, in shell, emit tool.Emit) (any, error) {
			var cmd *exec.Cmd
			switch {
			case in.HoldMiB > 0:
				self, err := os.Executable()
				if err != nil {
					return nil, err
				}
				cmd = exec.Command(self)
				cmd.Env = append(os.Environ(), "TESTPLUG_HOLD="+strconv.Itoa(in.HoldMiB))
			case in.Shell:
				cmd = exec.Command("bash", "-c", "sleep 1000 & echo $!; wait")
			default:
				cmd = exec.Command("sleep", "1000")
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				return nil, err
			}
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			sleepPid := cmd.Process.Pid
			if in.HoldMiB > 0 {
				if _, err := bufio.NewReader(out).ReadString('\n'); err != nil { // "holding": its memory is touched
					return nil, err
				}
			}
			if in.Shell {
				var pid int
				if _, err := fmt.Fscan(out, &pid); err != nil {
					return nil, err
				}
				sleepPid = pid
			}
			emit(fmt.Sprintf("pids %d %d\n", os.Getpid(), sleepPid))
			select {}
		}),
		tool.New("stdio", "Writes to stdout and stderr, runs a command, emits.", func(ctx context.Context, _ empty, emit tool.Emit) (any, error) {
			// Unreferenced *os.File values are closed by their finalizers:
			// the standard descriptors must survive collections.
			for range 3 {
				runtime.GC()
				time.Sleep(5 * time.Millisecond)
			}
			fmt.Println("go-stdout")
			fmt.Fprintln(os.Stderr, "go-stderr")
			emit("emitted")
			if err := tool.Run(ctx, exec.Command("sh", "-c", "echo cmd-stdout; echo cmd-stderr >&2; echo inherited >&1")); err != nil {
				return nil, err
			}
			// A child writing straight to the inherited fd 1.
			c := exec.Command("sh", "-c", "echo raw-fd-1")
			c.Stdout = os.Stdout
			if err := c.Run(); err != nil {
				return nil, err
			}
			fmt.Print(strings.Repeat("x", 100000), "\n")
			fmt.Println("last-line")
			return "done", nil
		}),
		tool.New("tracectx", "Reports the call's trace context and the TRACEPARENT a command sees.", func(ctx context.Context, _ empty, _ tool.Emit) (any, error) {
			var env bytes.Buffer
			cmd := exec.Command("sh", "-c", `printf '%s|%s' "$TRACEPARENT" "$TRACESTATE"`)
			cmd.Stdout = &env
			if err := tool.Run(ctx, cmd); err != nil {
				return nil, err
			}
			return map[string]any{"context": tool.TraceContext(ctx), "env": env.String()}, nil
		}),
		tool.New("span", "Sleeps, reporting when it ran.", func(_ context.Context, in span, _ tool.Emit) (any, error) {
			start := time.Now()
			time.Sleep(time.Duration(in.MS) * time.Millisecond)
			return map[string]any{"start": start.UnixNano(), "end": time.Now().UnixNano(), "pid": os.Getpid()}, nil
		}),
		tool.New("barrier", "Waits until n calls have arrived in dir, then sleeps, reporting when it ran.", func(_ context.Context, in barrier, _ tool.Emit) (any, error) {
			name := filepath.Join(in.Dir, strconv.Itoa(os.Getpid()))
			if err := os.WriteFile(name, nil, 0o600); err != nil {
				return nil, err
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				entries, err := os.ReadDir(in.Dir)
				if err != nil {
					return nil, err
				}
				if len(entries) >= in.N {
					break
				}
				if time.Now().After(deadline) {
					return nil, fmt.Errorf("only %d of %d calls arrived", len(entries), in.N)
				}
				time.Sleep(2 * time.Millisecond)
			}
			start := time.Now()
			time.Sleep(time.Duration(in.MS) * time.Millisecond)
			return map[string]any{"start": start.UnixNano(), "end": time.Now().UnixNano(), "pid": os.Getpid()}, nil
		}),
		tool.New("procinfo", "Reports how the process was started (and its GOMAXPROCS).", func(context.Context, empty, tool.Emit) (any, error) {
			stdin, err := os.Readlink("/proc/self/fd/0")
			if err != nil {
				return nil, err
			}
			return map[string]any{"pid": os.Getpid(), "pgid": unix.Getpgrp(), "stdin": stdin, "pdeathsig": mainThreadPdeathsig,
				"gomaxprocs": runtime.GOMAXPROCS(0), "env_gomaxprocs": os.Getenv("GOMAXPROCS")}, nil
		}),
		tool.New("flood", "Emits n lines of 100 bytes (or writes them to stdout), or lines until stopped when n is 0; returns n.", func(ctx context.Context, in flood, emit tool.Emit) (any, error) {
			line := strings.Repeat("x", 99) + "\n"
			for i := 0; in.N == 0 || i < in.N; i++ {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if in.Stdout {
					fmt.Print(line)
				} else {
					emit(line)
				}
			}
			return in.N, nil
		}),
		tool.New("big", "Returns n characters.", func(_ context.Context, in size, _ tool.Emit) (any, error) {
			return strings.Repeat("a", in.N/2) + strings.Repeat("z", in.N-in.N/2), nil
		}),
		tool.New("image", "Returns text and an image.", func(context.Context, empty, tool.Emit) (any, error) {
			img := pngBytes()
			return tool.Content{tool.Text(strings.Repeat("t", 1000)), tool.Image("image/png", img), {Type: "image", Data: img}}, nil
		}),
		tool.New("badpart", "Returns an invalid part.", func(context.Context, empty, tool.Emit) (any, error) {
			return tool.Content{tool.Text("ok"), {Type: "media", Data: pngBytes()}}, nil
		}),
		tool.New("unserialisable", "Returns a channel.", func(context.Context, empty, tool.Emit) (any, error) {
			return map[string]any{"c": make(chan int)}, nil
		}),
		tool.New("stop", "Stops the loop.", func(context.Context, empty, tool.Emit) (any, error) {
			return tool.Stop("bye"), nil
		}),
		tool.New("host_ask", "Asks its host: elicits (with n overlapping requests when n > 1) or samples, and reports the answers or the error.", askHost),
		tool.New("linger", "Blocks until cancelled, then writes the file path after 100ms (remote work it ends).", func(ctx context.Context, in linger, _ tool.Emit) (any, error) {
			<-ctx.Done()
			time.Sleep(100 * time.Millisecond)
			return nil, os.WriteFile(in.Path, []byte("ended"), 0o644)
		}),
		tool.New("fail", "Returns an error.", func(context.Context, empty, tool.Emit) (any, error) {
			return nil, fmt.Errorf("it went wrong")
		}),
		tool.Raw("raw", "Echoes its raw input.", json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer","minimum":1}},"required":["x"]}`),
			func(_ context.Context, input json.RawMessage, _ tool.Emit) (any, error) {
				return input, nil
			}, tool.ReadOnly(), tool.Idempotent()),
	)
}

type ask struct {
	Kind string `json:"kind"` // "elicit", "sample" or "late" (asks after the call from a goroutine it leaves)
	N    int    `json:"n,omitempty"`
}

func askHost(ctx context.Context, in ask, _ tool.Emit) (any, error) {
	switch in.Kind {
	case "sample":
		r, err := tool.Sample(ctx, &pluginv1.SampleRequest{MaxTokens: 7, Messages: []*pluginv1.SampleMessage{
			{Role: "user", Content: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: "hi"}}}}}})
		if err != nil {
			return "error: " + err.Error(), nil
		}
		return fmt.Sprintf("%s %s %s", r.GetModel(), r.GetStopReason(), r.GetContent()[0].GetText()), nil
	case "late":
		go func() {
			<-ctx.Done() // the call has ended
			_, err := tool.Elicit(ctx, "late", json.RawMessage(`{"type":"object"}`))
			fmt.Fprintln(os.Stderr, "late elicit:", err)
		}()
		return "left", nil
	}
	n := max(in.N, 1)
	out := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e, err := tool.Elicit(ctx, fmt.Sprintf("question %d", i), json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))
			if err != nil {
				out[i] = "error: " + err.Error()
				return
			}
			out[i] = fmt.Sprintf("%s %s", e.Action, e.Content)
		})
	}
	wg.Wait()
	return strings.Join(out, "\n"), nil
}
