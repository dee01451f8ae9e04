package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSamplingProfile: a definition's sampling profile is checked against
// the host's profiles at scan, and found again from its tools' Source.
func TestSamplingProfile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const stdio = `{"transport": {"type": "stdio", "command": "/bin/true"}`
	named := write("named.mcp.json", stdio+`, "sampling": {"profile": "cheap"}}`)
	plain := write("plain.mcp.json", stdio+`}`)
	toolhost := testBinary(t)
	tests := []struct {
		name     string
		file     string
		profiles []string // nil: not checked
		source   string   // the tools' Source; "": the scan fails
		profile  string   // SamplingProfile of source
		err      string   // a part of the scan's error
	}{
		{"known profile", named, []string{"cheap", "main"}, "mcp:" + named, "cheap", ""},
		{"not checked", named, nil, "mcp:" + named, "cheap", ""},
		{"unknown profile", named, []string{"main", "other"}, "", "", `sampling.profile: no profile "cheap" on this server (it has main, other)`},
		{"no profiles at all", named, []string{}, "", "", `sampling.profile: no profile "cheap" on this server`},
		{"no sampling block", plain, []string{}, "mcp:" + plain, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := KindWithProfiles(toolhost, tt.profiles).Command(tt.file)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), tt.file) {
					t.Fatalf("scan error %v, want one naming %s with %q", err, tt.file, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cmd.Source != tt.source {
				t.Fatalf("source %q, want %q", cmd.Source, tt.source)
			}
			got, err := SamplingProfile(cmd.Source)
			if err != nil || got != tt.profile {
				t.Errorf("SamplingProfile(%q) = %q, %v; want %q", cmd.Source, got, err, tt.profile)
			}
		})
	}
	// Another kind of source names no profile; a definition gone is an error.
	if p, err := SamplingProfile(filepath.Join(dir, "plugin")); p != "" || err != nil {
		t.Errorf("a plugin's source: %q, %v", p, err)
	}
	if _, err := SamplingProfile("mcp:" + filepath.Join(dir, "gone.mcp.json")); err == nil {
		t.Error("a definition gone: no error")
	}
}
