package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestKindMatch(t *testing.T) {
	dir := t.TempDir()
	kind := Kind(testBinary(t))
	for _, name := range []string{"a.mcp.json", "b.mcp.yaml", "c.mcp.yml", "a.json", "mcp.json", ".mcp.json", "a.mcp.json.bak"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d.mcp.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	var matched []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if kind.Match(path, info) {
			matched = append(matched, e.Name())
		}
	}
	if want := []string{"a.mcp.json", "b.mcp.yaml", "c.mcp.yml"}; !slices.Equal(matched, want) {
		t.Errorf("matched %v, want %v (a directory is not a definition)", matched, want)
	}
}

func TestKindCommand(t *testing.T) {
	toolhost := testBinary(t)
	write := func(name, content string) string {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	url := `{"transport": {"type": "http", "url": "http://127.0.0.1:1/mcp"}`
	tests := []struct {
		name     string
		toolhost string
		file     string
		describe time.Duration // the Command's DescribeTimeout
		err      string        // a part of the error
	}{
		{"default discovery timeout", toolhost, write("a.mcp.json", url+`}`), DefaultDiscoveryTimeout + describeMargin, ""},
		{"discovery timeout", toolhost, write("b.mcp.yaml", "transport: {type: sse, url: 'http://x.test/sse'}\ndiscoveryTimeout: 2s\n"), 2*time.Second + describeMargin, ""},
		{"bad definition", toolhost, write("c.mcp.json", url+`, "reuse": "yes"}`), 0, "reuse: want true or false"},
		{"not json", toolhost, write("d.mcp.json", `{`), 0, "unexpected EOF"},
		{"no toolhost", filepath.Join(t.TempDir(), "toolhost"), write("e.mcp.json", url+`}`), 0, "finding toolhost, which serves it: exec: "},
		{"toolhost not in PATH", "no-such-toolhost", write("f.mcp.json", url+`}`), 0, `finding toolhost, which serves it: exec: "no-such-toolhost": executable file not found in $PATH`},
		{"toolhost in PATH", filepath.Base(toolhost), write("g.mcp.json", url+`}`), DefaultDiscoveryTimeout + describeMargin, ""},
	}
	t.Setenv("PATH", filepath.Dir(toolhost))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := Kind(tt.toolhost).Command(tt.file)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), tt.file) {
					t.Fatalf("error %v, want one naming %s with %q", err, tt.file, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cmd.Path != toolhost || !slices.Equal(cmd.Args, []string{ServeSubcommand, tt.file}) || cmd.Source != "mcp:"+tt.file ||
				!slices.Equal(cmd.Files, []string{tt.file}) || cmd.DescribeTimeout != tt.describe {
				t.Errorf("command %+v", cmd)
			}
		})
	}
}
