package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreFresh fails when docs/errors.md or the Go client's
// constants do not say what errors.proto says.
func TestGeneratedFilesAreFresh(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go run ./proto/internal/reasongen (or make proto)", path)
		}
	}
}

func TestGoName(t *testing.T) {
	for wire, want := range map[string]string{
		"AGENT_BUSY": "ReasonAgentBusy", "API_KEY_REQUIRED": "ReasonAPIKeyRequired", "AUTH": "ReasonAuth",
	} {
		if got := goName(wire); got != want {
			t.Errorf("goName(%q) = %q, want %q", wire, got, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for name, src := range map[string]string{
		"no code":        "enum ErrorReason {\n  // Title\n\n  // sent when busy\n  ERROR_REASON_AGENT_BUSY = 15;\n}\n",
		"not a code":     "enum ErrorReason {\n  // Title\n\n  // BUSY: sent when busy\n  ERROR_REASON_AGENT_BUSY = 15;\n}\n",
		"wrong number":   "enum ErrorReason {\n  // Title\n\n  // ABORTED: sent when busy\n  ERROR_REASON_AGENT_BUSY = 99;\n}\n",
		"missing values": "enum ErrorReason {\n  // Title\n\n  // ABORTED: sent when busy\n  ERROR_REASON_AGENT_BUSY = 15;\n}\n",
		"no section":     "enum ErrorReason {\n  // ABORTED: sent when busy\n  ERROR_REASON_AGENT_BUSY = 15;\n}\n",
	} {
		if _, err := parse([]byte(src)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
