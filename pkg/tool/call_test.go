package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/pkg/tool/live"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

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
		if len(c.Data) > live.MaxChunkBytes {
			t.Errorf("chunk %d holds %d bytes, more than %d", i, len(c.Data), live.MaxChunkBytes)
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
