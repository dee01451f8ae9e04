package texttool

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, never hangs, and keeps its
// promises on any input: valid calls have a name and a JSON object as
// arguments, and no call block or made-up result is left in the text.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"",
		"plain text",
		"<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>",
		`<tool_call>{"type":"function","function":{"name":"add","arguments":"{\"a\":3}"}}</tool_call>`,
		"<tool_call>\n```json\n{\"name\":\"add\",\"a\":5,\"b\":6,}\n```\n</tool_call>",
		"<tool_call>{name: 'x', arguments: {a: True,}}",
		"<tool_call>{\"name\":\"add\"} oops</tool_call>",
		"<tool_call>{\"name\":\"now\"}\n<tool_result name=\"now\">x</tool_result> after",
		"<read_file>\n<path>a.js</path>\n</read_file><add><a>7</a><b>8</b></add>",
		"<read_file>a.js</read_file><read_file><read_file>",
		"```json\n{\"name\":\"add\",\"arguments\":{}}\n```",
		"<tool_call name=\"now\"></tool_call><tool_call",
		`<tool_call>{"a":"\"}</tool_call>`,
		"<write><content><content>x</content></content></write>",
		strings.Repeat("<tool_call>", 50) + strings.Repeat("</tool_call>", 3),
		strings.Repeat("<add><a>", 40),
		"'\\",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, loose := range []bool{false, true} {
			r := Parse(text, testTools, Options{Loose: loose})
			for _, c := range r.Calls {
				var args map[string]any
				if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
					t.Fatalf("call %+v: arguments are not a JSON object: %v", c, err)
				}
				if !c.Invalid() && c.Name == "" {
					t.Fatalf("valid call without a name: %+v", c)
				}
			}
			for i := strings.Index(r.Text, openResult); i >= 0; i = next(r.Text, openResult, i) {
				if isTag(r.Text[i:], openResult) {
					t.Fatalf("text %q keeps a made-up result", r.Text)
				}
			}
			if !loose && strings.Contains(r.Text, closeCall) && !strings.Contains(text, closeCall) {
				t.Fatalf("text %q gained a closing tag", r.Text)
			}
		}
	})
}

// next returns the index of needle in s after i, or -1.
func next(s, needle string, i int) int {
	j := strings.Index(s[i+1:], needle)
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// BenchmarkParsePathological measures Parse on inputs built to defeat a naive
// scanner (many unclosed tags); it must stay linear.
func BenchmarkParsePathological(b *testing.B) {
	inputs := map[string]string{
		"open-calls":  strings.Repeat("<tool_call>{\"", 20000) + "</tool_call>",
		"open-roo":    strings.Repeat("<add><a>", 20000),
		"open-fences": strings.Repeat("```\n{", 20000),
		"quotes":      strings.Repeat("<tool_call>\"", 20000),
	}
	for name, in := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				Parse(in, testTools, Options{Loose: true})
			}
		})
	}
}
