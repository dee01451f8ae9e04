package tool

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func numbered(n int, format string) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(format, i+1)
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestStderrExcerpt(t *testing.T) {
	node, err := os.ReadFile("testdata/stderr/node-module-not-found.txt")
	if err != nil {
		t.Fatal(err)
	}
	python := "starting\n" + numbered(30, "  File \"x.py\", line %d, in f") + "ModuleNotFoundError: No module named 'grpc'\n"
	headlineInside := numbered(10, "log %d") + "TypeError [ERR_INVALID_ARG_TYPE]: bad\n" + numbered(20, "  at f%d")
	tests := []struct {
		name   string
		stderr string
		want   []string // lines the excerpt must have
		lines  int      // how many lines it has
	}{
		{"short: all of it", "a\nb\nc\n", []string{"a", "b", "c"}, 3},
		{"Node.js: the error is near the top of 28 lines", string(node),
			[]string{"Error: Cannot find module '@grpc/grpc-js'", "  … 8 lines …", "Node.js v20.20.2"}, 21},
		{"Python: the exception is the last line", python,
			[]string{"starting", "ModuleNotFoundError: No module named 'grpc'", "  … 12 lines …"}, 21},
		{"a headline between the head and the tail", headlineInside,
			[]string{"log 8", "  … 2 lines …", "TypeError [ERR_INVALID_ARG_TYPE]: bad", "  … 8 lines …", "  at f20"}, 23},
		{"Go: the panic is the first line", "panic: boom\n\n" + numbered(40, "goroutine frame %d"),
			[]string{"panic: boom", "  … 22 lines …", "goroutine frame 40"}, 21},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stderrExcerpt(tt.stderr)
			lines := strings.Split(got, "\n")
			for _, w := range tt.want {
				if !strings.Contains("\n"+got+"\n", "\n"+w+"\n") {
					t.Errorf("no line %q in:\n%s", w, got)
				}
			}
			if len(lines) != tt.lines {
				t.Errorf("%d lines, want %d:\n%s", len(lines), tt.lines, got)
			}
		})
	}
}

func TestTailBufferKeepsTheHeadAndTheTail(t *testing.T) {
	b := &tailBuffer{headMax: 16, max: 16}
	b.Write([]byte("first line\nsec"))
	if got := b.String(); got != "first line\nsec" {
		t.Errorf("nothing dropped: %q", got)
	}
	b.Write([]byte("ond line\n" + strings.Repeat("middle\n", 100) + "almost\nlast line\n"))
	if got, want := b.String(), "first line\n…\nlast line\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
