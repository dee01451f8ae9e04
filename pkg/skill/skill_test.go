package skill

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/pkg/tool"
)

// writeSkills makes dir/<folder>/SKILL.md for each entry.
func writeSkills(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for folder, content := range files {
		if err := os.MkdirAll(filepath.Join(dir, folder), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, folder, FileName), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, folder, file string
		desc, body         string
		err                string
	}{
		{"plain", "review-pr", "---\nname: review-pr\ndescription: Use when reviewing a PR.\n---\n# Review\n1. Run tests\n",
			"Use when reviewing a PR.", "# Review\n1. Run tests\n", ""},
		{"literal block", "a", "---\nname: a\ndescription: |\n  Line one.\n  Line two.\n---\nbody", "Line one.\nLine two.", "body", ""},
		{"folded block", "a", "---\nname: a\ndescription: >\n  Folded\n  text.\n---\n\n\nbody", "Folded text.", "body", ""},
		{"CRLF and BOM", "a", "\uFEFF---\r\nname: a\r\ndescription: d\r\n---\r\nbody\r\n", "d", "body\n", ""},
		{"no body", "a", "---\nname: a\ndescription: d\n---", "d", "", ""},
		{"no frontmatter", "a", "# just text", "", "", "no frontmatter"},
		{"unclosed", "a", "---\nname: a\ndescription: d\n", "", "", "not closed"},
		{"bad yaml", "a", "---\nname: [a\n---\n", "", "", "frontmatter:"},
		{"no name", "a", "---\ndescription: d\n---\n", "", "", "no name (want name: a)"},
		{"name differs from folder", "review-pr", "---\nname: review\ndescription: d\n---\n", "", "",
			`name "review" does not match its folder "review-pr"`},
		{"no description", "a", "---\nname: a\n---\nbody", "", "", "no description"},
		{"empty frontmatter", "a", "---\n---\nbody", "", "", "no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.folder, []byte(tt.file))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tt.folder || s.Description != tt.desc || s.Body != tt.body {
				t.Errorf("Parse = %+v, want name %q description %q body %q", s, tt.folder, tt.desc, tt.body)
			}
		})
	}
}

func TestScan(t *testing.T) {
	ctx := context.Background()
	builtin := writeSkills(t, t.TempDir(), map[string]string{
		"review-pr":         "---\nname: review-pr\ndescription: builtin review\n---\nbuiltin body",
		"create-mcp-server": "---\nname: create-mcp-server\ndescription: |\n  Use when writing\n  an MCP server.\n---\nmcp body",
	})
	if err := os.MkdirAll(filepath.Join(builtin, "notes"), 0o755); err != nil { // a folder without SKILL.md
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(builtin, "README.md"), []byte("not a skill"), 0o644); err != nil {
		t.Fatal(err)
	}
	user := writeSkills(t, t.TempDir(), map[string]string{
		"review-pr": "---\nname: review-pr\ndescription: user review\n---\nuser body",
	})

	s, err := Scan(ctx, builtin, user)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Names(); !slices.Equal(got, []string{"create-mcp-server", "review-pr"}) {
		t.Fatalf("Names = %v", got)
	}
	r, ok := s.Get("review-pr")
	if !ok || r.Body != "user body" || r.Path != filepath.Join(user, "review-pr", FileName) {
		t.Errorf("review-pr = %+v: the later directory should win", r)
	}
	if len(s.List()) != 2 || s.Len() != 2 {
		t.Errorf("List = %v", s.List())
	}

	bad := writeSkills(t, t.TempDir(), map[string]string{"x": "---\nname: y\ndescription: d\n---\n"})
	_, err = Scan(ctx, builtin, bad)
	if want := filepath.Join(bad, "x", FileName); err == nil || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), `does not match its folder "x"`) {
		t.Errorf("Scan(bad) = %v, want an error naming %s", err, want)
	}
	if _, err := Scan(ctx, filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Scan(missing) = %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Scan(cancelled, builtin); err == nil {
		t.Error("Scan with a cancelled context succeeded")
	}
	empty, err := Scan(ctx, t.TempDir())
	if err != nil || empty.Len() != 0 {
		t.Errorf("Scan(empty) = %v, %v", empty, err)
	}
}

// TestZeroInjection: without skills, nothing reaches the model.
func TestZeroInjection(t *testing.T) {
	empty, err := Scan(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Set{"nil": nil, "empty scan": empty, "New()": New()} {
		if got := s.SystemText(); got != "" {
			t.Errorf("%s: SystemText = %q, want empty", name, got)
		}
		if spec := s.ToolSpec(); spec != nil {
			t.Errorf("%s: ToolSpec = %v, want nil", name, spec)
		}
		if s.Len() != 0 || s.List() != nil && len(s.List()) != 0 {
			t.Errorf("%s: Len = %d", name, s.Len())
		}
		if _, err := s.Call(context.Background(), `{"name":"x"}`); err == nil || !strings.Contains(err.Error(), "no skills") {
			t.Errorf("%s: Call = %v", name, err)
		}
		if ts, err := s.Tool(); ts != nil || err != nil {
			t.Errorf("%s: Tool = %v, %v", name, ts, err)
		}
	}
}

func TestInjectionAndTool(t *testing.T) {
	s := New(
		Skill{Name: "review-pr", Description: "Use when reviewing\na pull request.", Body: "# Review\n1. Run tests"},
		Skill{Name: "create-mcp-server", Description: "Use when writing an MCP server.", Body: "mcp body"},
	)
	want := SystemHeader + "\n- create-mcp-server: Use when writing an MCP server.\n- review-pr: Use when reviewing a pull request."
	if got := s.SystemText(); got != want {
		t.Errorf("SystemText =\n%s\nwant\n%s", got, want)
	}

	spec := s.ToolSpec()
	if spec.GetName() != ToolName || spec.GetDescription() == "" || !spec.GetHints().GetReadOnly() {
		t.Errorf("ToolSpec = %v", spec)
	}
	var schema struct {
		Type       string
		Required   []string
		Properties struct {
			Name struct {
				Type string
				Enum []string
			}
		}
		AdditionalProperties bool
	}
	if err := json.Unmarshal([]byte(spec.GetInputSchemaJson()), &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || !slices.Equal(schema.Required, []string{"name"}) ||
		!slices.Equal(schema.Properties.Name.Enum, []string{"create-mcp-server", "review-pr"}) {
		t.Errorf("schema = %s", spec.GetInputSchemaJson())
	}

	ctx := context.Background()
	tests := []struct {
		args, want, err string
	}{
		{`{"name":"review-pr"}`, "# Review\n1. Run tests", ""},
		{`{"name":"deploy"}`, "", `unknown skill "deploy"; available: create-mcp-server, review-pr`},
		{`{}`, "", `unknown skill ""`},
		{`not json`, "", "arguments must be"},
	}
	for _, tt := range tests {
		got, err := s.Call(ctx, tt.args)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Call(%s) err = %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Call(%s) = %q, %v; want %q", tt.args, got, err, tt.want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Call(cancelled, `{"name":"review-pr"}`); err == nil {
		t.Error("Call with a cancelled context succeeded")
	}

	ts, err := s.Tool()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Tool(); again != ts {
		t.Error("Tool made the skill tool twice")
	}
	if spec, ok := ts.Lookup(ToolName); !ok || spec.Source != "builtin:skill" || !spec.ReadOnly || spec.Description != s.ToolSpec().GetDescription() {
		t.Errorf("the skill tool's spec = %+v", spec)
	}
	res := ts.Execute(ctx, ToolName, json.RawMessage(`{"name":"create-mcp-server"}`), tool.Options{})
	if res.Error || tool.OutputText(res.Output) != "mcp body" {
		t.Errorf("calling the skill tool = %+v", res)
	}
	if res := ts.Execute(ctx, ToolName, json.RawMessage(`{"name":"deploy"}`), tool.Options{}); !res.Error {
		t.Errorf("an unknown skill through the tool = %+v", res)
	}

	sub, err := s.Select("review-pr")
	if err != nil || !slices.Equal(sub.Names(), []string{"review-pr"}) {
		t.Errorf("Select = %v, %v", sub.Names(), err)
	}
	if _, err := s.Select("nope"); err == nil || !strings.Contains(err.Error(), "available: create-mcp-server, review-pr") {
		t.Errorf("Select(nope) = %v", err)
	}
}
