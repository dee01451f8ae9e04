package texttool

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var testTools = []Tool{
	{Name: "add", Description: "Add two numbers", Schema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"a": map[string]any{"type": "number"},
			"b": map[string]any{"type": "integer"},
		},
		"required": []any{"a", "b"},
	}},
	{Name: "read_file", Schema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"path": map[string]any{"type": "string"}},
	}},
	{Name: "write", Schema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":    map[string]any{"type": "string"},
			"content": map[string]any{"type": "string"},
			"force":   map[string]any{"type": []any{"boolean", "null"}},
			"meta":    map[string]any{"type": "object"},
			"tags":    map[string]any{"type": "array"},
		},
	}},
	{Name: "run", Schema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"input": map[string]any{"type": "string"}},
	}},
	{Name: "now"},
}

type wantCall struct {
	name    string
	args    string // JSON; compared semantically
	invalid bool
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		loose bool
		want  []wantCall
		text2 string // expected Text
	}{
		{
			name:  "plain answer is kept as written",
			text:  "Hello, the weather is fine.\n",
			text2: "Hello, the weather is fine.\n",
		},
		{
			name:  "standard block",
			text:  "Let me add.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>",
			want:  []wantCall{{name: "add", args: `{"a":1,"b":2}`}},
			text2: "Let me add.",
		},
		{
			name: "several calls in one reply",
			text: `<tool_call>{"name":"add","arguments":{"a":1,"b":2}}</tool_call><tool_call>{"name":"read_file","arguments":{"path":"x"}}</tool_call>`,
			want: []wantCall{{name: "add", args: `{"a":1,"b":2}`}, {name: "read_file", args: `{"path":"x"}`}},
		},
		{
			name: "several objects and an array in one block",
			text: "<tool_call>\n{\"name\":\"now\"}\n{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":1}}\n[{\"name\":\"now\",\"arguments\":{}}]\n</tool_call>",
			want: []wantCall{{name: "now", args: `{}`}, {name: "add", args: `{"a":1,"b":1}`}, {name: "now", args: `{}`}},
		},
		{
			name: "arguments as a string inside the function wrapper",
			text: `<tool_call>{"type":"function","function":{"name":"add","arguments":"{\"a\":3,\"b\":4}"}}</tool_call>`,
			want: []wantCall{{name: "add", args: `{"a":3,"b":4}`}},
		},
		{
			name: "function wrapper without type",
			text: `<tool_call>{"id":"call_1","function":{"name":"read_file","arguments":{"path":"a"}}}</tool_call>`,
			want: []wantCall{{name: "read_file", args: `{"path":"a"}`}},
		},
		{
			name: "flattened arguments, fence and trailing comma",
			text: "<tool_call>\n```json\n{\"name\":\"add\",\"a\":5,\"b\":6,}\n```\n</tool_call>",
			want: []wantCall{{name: "add", args: `{"a":5,"b":6}`}},
		},
		{
			name:  "fence around the whole block is removed from the text",
			text:  "Calling:\n```xml\n<tool_call>\n{\"name\":\"now\"}\n</tool_call>\n```\nDone.",
			want:  []wantCall{{name: "now", args: `{}`}},
			text2: "Calling:\n\nDone.",
		},
		{
			name: "parameter named input is flattened, not taken as the arguments",
			text: `<tool_call>{"name":"run","input":"ls -la"}</tool_call>`,
			want: []wantCall{{name: "run", args: `{"input":"ls -la"}`}},
		},
		{
			name: "parameters and args keys",
			text: `<tool_call>{"name":"add","parameters":{"a":1,"b":2}}</tool_call><tool_call>{"tool":"read_file","args":{"path":"p"}}</tool_call>`,
			want: []wantCall{{name: "add", args: `{"a":1,"b":2}`}, {name: "read_file", args: `{"path":"p"}`}},
		},
		{
			name: "unquoted keys, single quotes and Python literals are repaired",
			text: `<tool_call>{name: 'write', arguments: {path: 'a "b"', force: True, meta: None,}}</tool_call>`,
			want: []wantCall{{name: "write", args: `{"path":"a \"b\"","force":true,"meta":null}`}},
		},
		{
			name:  "unclosed last block",
			text:  "I'll add.\n<tool_call>\n{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":1}}",
			want:  []wantCall{{name: "add", args: `{"a":1,"b":1}`}},
			text2: "I'll add.",
		},
		{
			name: "unclosed block followed by another block",
			text: "<tool_call>{\"name\":\"now\"}\n<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>",
			want: []wantCall{{name: "now", args: `{}`}, {name: "add", args: `{"a":1,"b":2}`}},
		},
		{
			name: "name given as an attribute",
			text: `<tool_call name="read_file">{"path":"a.go"}</tool_call><tool_call name="now"></tool_call>`,
			want: []wantCall{{name: "read_file", args: `{"path":"a.go"}`}, {name: "now", args: `{}`}},
		},
		{
			name: "unreadable JSON is an invalid call, not text",
			text: `<tool_call>{"name":"add"} oops</tool_call>`,
			want: []wantCall{{name: "add", args: `{}`, invalid: true}},
		},
		{
			name: "truncated JSON is an invalid call",
			text: "<tool_call>\n{\"name\":\"write\",\"arguments\":{\"path\":\"a.j",
			want: []wantCall{{name: "write", args: `{}`, invalid: true}},
		},
		{
			name: "missing name is invalid",
			text: `<tool_call>{"arguments":{"a":1}}</tool_call>`,
			want: []wantCall{{args: `{}`, invalid: true}},
		},
		{
			name: "arguments that are not an object are invalid",
			text: `<tool_call>{"name":"add","arguments":[1,2]}</tool_call><tool_call>{"name":"add","arguments":"1, 2"}</tool_call>`,
			want: []wantCall{{name: "add", args: `{}`, invalid: true}, {name: "add", args: `{}`, invalid: true}},
		},
		{
			name: "empty block is invalid",
			text: "<tool_call>\n</tool_call>",
			want: []wantCall{{args: `{}`, invalid: true}},
		},
		{
			name:  "made-up tool_result cuts everything after it",
			text:  "<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>\n<tool_result name=\"add\">3</tool_result>\nThe answer is 3.\n<tool_call>{\"name\":\"now\"}</tool_call>",
			want:  []wantCall{{name: "add", args: `{"a":1,"b":2}`}},
			text2: "",
		},
		{
			name:  "made-up tool_result inside an unclosed block",
			text:  "ok\n<tool_call>{\"name\":\"now\"}\n<tool_result name=\"now\">noon</tool_result> it is noon",
			want:  []wantCall{{name: "now", args: `{}`}},
			text2: "ok",
		},
		{
			name: "a closing tag inside a JSON string is an argument",
			text: `<tool_call>{"name":"write","arguments":{"content":"</tool_call> and <tool_call>"}}</tool_call>`,
			want: []wantCall{{name: "write", args: `{"content":"</tool_call> and <tool_call>"}`}},
		},
		{
			name: "tool_result text inside a JSON string is an argument, not a cut",
			text: `<tool_call>{"name":"write","arguments":{"content":"<tool_result> tag"}}</tool_call>`,
			want: []wantCall{{name: "write", args: `{"content":"<tool_result> tag"}`}},
		},
		{
			name:  "Roo style XML with values coerced by the schema",
			text:  "First read\n<read_file>\n<path>src/main.js</path>\n</read_file>\n<add><a>7</a><b>8</b></add>",
			want:  []wantCall{{name: "read_file", args: `{"path":"src/main.js"}`}, {name: "add", args: `{"a":7,"b":8}`}},
			text2: "First read",
		},
		{
			name: "Roo style with one parameter takes the body as its value",
			text: "<read_file>src/main.js</read_file>",
			want: []wantCall{{name: "read_file", args: `{"path":"src/main.js"}`}},
		},
		{
			name: "Roo style keeps string content, converts bool, object, array",
			text: "<write>\n<path>a.txt</path>\n<content>\nline 1\n  line 2\n</content>\n<force>true</force>\n<meta>{\"k\": 1}</meta>\n<tags>[\"x\"]</tags>\n</write>",
			want: []wantCall{{name: "write", args: `{"path":"a.txt","content":"line 1\n  line 2","force":true,"meta":{"k":1},"tags":["x"]}`}},
		},
		{
			name: "Roo style value that does not fit the schema stays a string",
			text: "<add><a>seven</a><b>8</b></add>",
			want: []wantCall{{name: "add", args: `{"a":"seven","b":8}`}},
		},
		{
			name: "Roo style body without parameters for a tool with several is invalid",
			text: "<add>1 2</add>",
			want: []wantCall{{name: "add", args: `{}`, invalid: true}},
		},
		{
			name:  "unknown tags and unclosed known tags are text",
			text:  "Use <b>bold</b> and <read_file> to read.",
			text2: "Use <b>bold</b> and <read_file> to read.",
		},
		{
			name:  "fenced JSON is prose in strict mode",
			text:  "Example:\n```json\n{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}\n```",
			text2: "Example:\n```json\n{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}\n```",
		},
		{
			name:  "fenced JSON naming a known tool is a call in loose mode",
			text:  "Calling.\n```json\n{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}\n```",
			loose: true,
			want:  []wantCall{{name: "add", args: `{"a":1,"b":2}`}},
			text2: "Calling.",
		},
		{
			name:  "fenced JSON naming an unknown tool stays prose in loose mode",
			text:  "```json\n{\"name\":\"rm_rf\",\"arguments\":{}}\n```",
			loose: true,
			text2: "```json\n{\"name\":\"rm_rf\",\"arguments\":{}}\n```",
		},
		{
			name: "unknown tool in a block is still a call",
			text: `<tool_call>{"name":"fly","arguments":{}}</tool_call>`,
			want: []wantCall{{name: "fly", args: `{}`}},
		},
		{
			name: "large numbers keep their digits",
			text: `<tool_call>{"name":"add","arguments":{"a":12345678901234567890,"b":1.50}}</tool_call>`,
			want: []wantCall{{name: "add", args: `{"a":12345678901234567890,"b":1.50}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse(tt.text, testTools, Options{Loose: tt.loose})
			if len(got.Calls) != len(tt.want) {
				t.Fatalf("got %d calls %+v, want %d", len(got.Calls), got.Calls, len(tt.want))
			}
			for i, w := range tt.want {
				c := got.Calls[i]
				if c.Name != w.name || c.Invalid() != w.invalid {
					t.Errorf("call %d = %+v, want name %q invalid %v", i, c, w.name, w.invalid)
				}
				if !sameJSON(t, c.Arguments, w.args) {
					t.Errorf("call %d arguments = %s, want %s", i, c.Arguments, w.args)
				}
				if c.Raw == "" {
					t.Errorf("call %d has no Raw", i)
				}
				if c.Invalid() && !strings.Contains(c.Feedback(), "<tool_call>") {
					t.Errorf("call %d feedback %q does not show the format", i, c.Feedback())
				}
			}
			if got.Text != tt.text2 {
				t.Errorf("text = %q, want %q", got.Text, tt.text2)
			}
			if strings.Contains(got.Text, "<tool_call") {
				t.Errorf("text still holds a call: %q", got.Text)
			}
		})
	}
}

// sameJSON compares two JSON texts as values, numbers by their spelling.
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	decode := func(s string) (any, bool) {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		return v, dec.Decode(&v) == nil
	}
	x, okA := decode(a)
	y, okB := decode(b)
	return okA && okB && reflect.DeepEqual(x, y)
}

func TestFormatRoundTrip(t *testing.T) {
	tests := []struct{ name, args, want string }{
		{"add", `{"a": 1, "b": 2}`, `{"a":1,"b":2}`},
		{"now", ``, `{}`},
		{"bad", `{not json`, `{}`},
		{"html", `{"q":"<a & b>"}`, `{"q":"<a & b>"}`},
	}
	for _, tt := range tests {
		block := FormatCall(tt.name, tt.args)
		got := Parse("text\n"+block, testTools, Options{})
		if len(got.Calls) != 1 || got.Calls[0].Name != tt.name || !sameJSON(t, got.Calls[0].Arguments, tt.want) {
			t.Errorf("FormatCall(%q, %q) = %q read back as %+v", tt.name, tt.args, block, got.Calls)
		}
		if got.Text != "text" {
			t.Errorf("text = %q", got.Text)
		}
	}
	if got := FormatResult(`a"b`, "3"); got != "<tool_result name=\"a&quot;b\">\n3\n</tool_result>" {
		t.Errorf("FormatResult = %q", got)
	}
}

func TestSystem(t *testing.T) {
	tests := []struct {
		system, prefix string
	}{
		{"You are a helper.", "You are a helper.\n\n# Tools"},
		{"", "# Tools"},
		{"  \n", "# Tools"},
	}
	for _, tt := range tests {
		got := System(tt.system, testTools)
		if !strings.HasPrefix(got, tt.prefix) {
			t.Errorf("System(%q) starts %q, want prefix %q", tt.system, got[:min(len(got), 40)], tt.prefix)
		}
		for _, want := range []string{"<tool_call>", "<tool_result name=", "## add", "Add two numbers", `"required":["a","b"]`, "## now", `{"type":"object","properties":{}}`} {
			if !strings.Contains(got, want) {
				t.Errorf("System(%q) lacks %q", tt.system, want)
			}
		}
	}
}
