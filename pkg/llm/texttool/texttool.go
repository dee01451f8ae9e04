// Package texttool is the text tool protocol: it lets a model without native
// tool calling use tools by reading and writing plain text.
//
// The protocol (after Roo Code and Cline): the tool descriptions are appended
// to the system prompt; the model calls a tool by writing
//
//	<tool_call>
//	{"name": "add", "arguments": {"a": 1, "b": 2}}
//	</tool_call>
//
// and each result comes back in a user message as
// <tool_result name="add">…</tool_result>. Parse reads calls back leniently
// (see Parse); history keeps the standard tool-call shape, so this package only
// converts at the edges of one request.
package texttool

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Tool is what the protocol needs to know about one tool.
type Tool struct {
	// Name is the tool's name, as the model calls it.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Schema is the JSON Schema of the tool's input; nil means an object with
	// no declared properties.
	Schema map[string]any
}

// Instructions returns the text appended to the system prompt in text mode:
// how to call a tool, how results come back, and every tool with its schema.
func Instructions(tools []Tool) string {
	var b strings.Builder
	b.WriteString("# Tools\n\n")
	b.WriteString("You can call the tools listed below. To call a tool, write a block like this in your reply:\n\n")
	b.WriteString("<tool_call>\n{\"name\": \"tool_name\", \"arguments\": {\"parameter\": \"value\"}}\n</tool_call>\n\n")
	b.WriteString("Rules:\n")
	b.WriteString("- The block holds one JSON object with \"name\" and \"arguments\"; the arguments follow the tool's input schema.\n")
	b.WriteString("- To call several tools, write several blocks. After your calls, stop and wait.\n")
	b.WriteString("- Each result comes back in the next user message as <tool_result name=\"tool_name\">…</tool_result>. Never write <tool_result> yourself.\n")
	b.WriteString("- When you need no tool, answer normally, without any <tool_call> block.\n\n")
	b.WriteString("Available tools:\n")
	for _, t := range tools {
		b.WriteString("\n## ")
		b.WriteString(t.Name)
		b.WriteString("\n")
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString(d)
			b.WriteString("\n")
		}
		b.WriteString("Input schema: ")
		b.WriteString(schemaText(t.Schema))
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// System returns system with the tool instructions appended after a blank
// line, or the instructions alone when system is empty.
func System(system string, tools []Tool) string {
	ins := Instructions(tools)
	if strings.TrimSpace(system) == "" {
		return ins
	}
	return system + "\n\n" + ins
}

// FormatCall renders one call as a <tool_call> block. arguments is JSON text;
// anything else is sent as an empty object.
func FormatCall(name, arguments string) string {
	args := json.RawMessage(strings.TrimSpace(arguments))
	if len(args) == 0 || !json.Valid(args) {
		args = json.RawMessage("{}")
	}
	body, err := marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{name, args})
	if err != nil {
		// Unreachable: both fields are valid JSON by construction.
		body = fmt.Sprintf(`{"name": %q, "arguments": {}}`, name)
	}
	return "<tool_call>\n" + body + "\n</tool_call>"
}

// FormatResult renders one tool result as a <tool_result> block.
func FormatResult(name, content string) string {
	return "<tool_result name=\"" + escapeAttr(name) + "\">\n" + content + "\n</tool_result>"
}

// schemaText renders a tool schema compactly with sorted keys.
func schemaText(s map[string]any) string {
	if s == nil {
		return `{"type":"object","properties":{}}`
	}
	out, err := marshal(s)
	if err != nil {
		return `{"type":"object"}`
	}
	return out
}

// marshal encodes v as compact JSON without HTML escaping.
func marshal(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func escapeAttr(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;").Replace(s)
}

// properties returns the declared property names of a tool schema, sorted.
func properties(s map[string]any) []string {
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
