package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

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

func TestScanAFileAndOtherKinds(t *testing.T) {
	plug := filepath.Join(dirs.good, "testplug")
	dir := t.TempDir()
	def := filepath.Join(dir, "x.def.json")
	if err := os.WriteFile(def, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A kind like the MCP server definitions: a data file served by a plugin
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

func TestNotAPluginAndSkipBadPlugins(t *testing.T) {
	dir := shortTempDir(t)
	copyFile(t, filepath.Join(dirs.notplugin, "notplugin"), filepath.Join(dir, "stray"), 0o755)
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(dir, "testplug"), 0o755)
	quiet := filepath.Join(dir, "quiet.sh")
	if err := os.WriteFile(quiet, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Run("fails the scan", func(t *testing.T) {
		h := newHost(t, Config{})
		_, err := h.Scan(context.Background(), dir)
		for _, p := range []string{filepath.Join(dir, "stray"), quiet} {
			want := "not an agentcore plugin (no handshake line on stdout): " + p + "; remove it or clear its executable bit"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Scan error does not say %q:\n%v", want, err)
			}
		}
	})
	var log strings.Builder
	skip := newHost(t, Config{SkipBadPlugins: true, Logger: hclog.New(&hclog.LoggerOptions{Output: &log})})
	set, err := skip.Scan(context.Background(), dir)
	if err != nil {
		t.Fatalf("Scan with SkipBadPlugins: %v", err)
	}
	if _, ok := set.Lookup("echo"); !ok {
		t.Fatal("the good plugin's tools are missing")
	}
	if !strings.Contains(log.String(), "[WARN]") || !strings.Contains(log.String(), filepath.Join(dir, "stray")) {
		t.Errorf("no warning naming the skipped file:\n%s", log.String())
	}
}

// TestStopGrace: a cancelled call of a plugin whose Command has a
// StopGrace ends in the plugin first, which finishes its work (writes its
// file 100ms after the cancel) before its group is killed; without one,
// the plugin is killed at once and never writes it.
func TestStopGrace(t *testing.T) {
	plug := filepath.Join(dirs.good, "testplug")
	for _, c := range []struct {
		name  string
		grace time.Duration
		wrote bool
	}{
		{"soft stop", 2 * time.Second, true},
		{"hard stop", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, Config{})
			set, err := h.Load(context.Background(), Command{Path: plug, StopGrace: c.grace})
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "ended")
			ctx, cancel := context.WithCancel(context.Background())
			res := set.Execute(ctx, "linger", json.RawMessage(`{"path":"`+file+`"}`), Options{OnStart: func() {
				time.AfterFunc(50*time.Millisecond, cancel)
			}})
			cancel()
			if !res.Error {
				t.Errorf("result %+v, want a stopped call", res)
			}
			time.Sleep(300 * time.Millisecond) // what a killed plugin would have had to write it
			if _, err := os.Stat(file); (err == nil) != c.wrote {
				t.Errorf("the plugin wrote its file: %v, want %v", err == nil, c.wrote)
			}
		})
	}
}
