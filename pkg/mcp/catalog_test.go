package mcp

import (
	"strings"
	"testing"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

func TestToolName(t *testing.T) {
	cases := []struct {
		prefix, name, want string
	}{
		{"", "echo", "echo"},
		{"web_", "get-page", "web_get-page"},
		{"", "files.read/all", "files_read_all"},
		{"p_", "naïve", "p_na_ve"},
		{"", "", "_"},
		{"x_", strings.Repeat("a", 70), "x_" + strings.Repeat("a", 62)},
	}
	for _, c := range cases {
		if got := toolName(c.prefix, c.name); got != c.want {
			t.Errorf("toolName(%q, %q) = %q, want %q", c.prefix, c.name, got, c.want)
		}
	}
}

func TestCatalogRejectsClashingNames(t *testing.T) {
	var cat catalog
	if err := cat.add(entry{kind: kindTool, target: "a.b", spec: &pluginv1.ToolSpec{Name: "a_b"}}); err != nil {
		t.Fatal(err)
	}
	err := cat.add(entry{kind: kindPrompt, target: "a/b", spec: &pluginv1.ToolSpec{Name: "a_b"}})
	if want := `tool "a.b" and prompt "a/b" both become the tool "a_b"`; err == nil || err.Error() != want {
		t.Errorf("clash: %v, want %q", err, want)
	}
}
