package texttool

import (
	"regexp"
	"strings"
)

// Call is one tool call read from a model's text.
type Call struct {
	// Name is the tool's name; it may be empty when the call is invalid.
	Name string
	// Arguments is the input as a compact JSON object; "{}" when invalid.
	Arguments string
	// Raw is the call as the model wrote it.
	Raw string
	// Problem says why the call could not be read; empty for a valid call.
	Problem string
}

// Invalid reports whether the call could not be read.
func (c Call) Invalid() bool { return c.Problem != "" }

// Feedback is the tool result that tells the model to rewrite an invalid call.
func (c Call) Feedback() string {
	name := c.Name
	if name == "" {
		name = "tool_name"
	}
	return "Your tool call could not be read: " + c.Problem + ". Write it again as one " +
		"<tool_call> block holding a valid JSON object, for example:\n<tool_call>\n" +
		`{"name": "` + name + `", "arguments": {"parameter": "value"}}` + "\n</tool_call>"
}

// Reply is a model reply split into its text and its calls.
type Reply struct {
	// Text is the reply without the call blocks, cut where a made-up
	// <tool_result> begins.
	Text string
	// Calls are the calls in the order written, invalid ones included.
	Calls []Call
}

// Options tune Parse.
type Options struct {
	// Loose also reads a fenced JSON block (```json {"name": …} ```) as a call
	// when it names a known tool. Off, such a block is an example in prose.
	Loose bool
}

// Parse reads tool calls from a model's text, leniently. It understands:
// several <tool_call> blocks in one reply; arguments given as a JSON string;
// the {"type":"function","function":{…}} wrapper; arguments flattened beside
// the name; Markdown code fences inside or around a block; trailing commas,
// unquoted keys and single quotes; an unclosed last block; and Roo Code style
// XML (<read_file><path>a.js</path></read_file>) for known tools, with values
// converted by the tool's schema. A block whose JSON cannot be read becomes an
// invalid call (see Call.Feedback), never plain text. A <tool_result> the
// model wrote itself, and everything after it, is dropped.
//
// Parse runs in time linear in len(text) for a fixed tool set.
func Parse(text string, tools []Tool, opts Options) Reply {
	p := &parser{
		src:   text,
		tools: make(map[string]Tool, len(tools)),
		find:  newFinder(text),
	}
	for _, t := range tools {
		p.tools[t.Name] = t
	}
	p.scan()
	out := p.out.String()
	if opts.Loose {
		out = p.loose(out)
	}
	if p.changed {
		out = tidy(out)
	}
	return Reply{Text: out, Calls: p.calls}
}

type parser struct {
	src     string
	tools   map[string]Tool
	find    *finder
	out     strings.Builder
	calls   []Call
	changed bool // something was removed from the text
}

const (
	openCall    = "<tool_call"
	closeCall   = "</tool_call>"
	openResult  = "<tool_result"
	maxTagAttrs = 256
)

func (p *parser) scan() {
	src := p.src
	pos := 0
	for pos < len(src) {
		i := strings.IndexByte(src[pos:], '<')
		if i < 0 {
			p.out.WriteString(src[pos:])
			return
		}
		lt := pos + i
		p.out.WriteString(src[pos:lt])
		rest := src[lt:]
		if isTag(rest, openResult) {
			p.changed = true
			return
		}
		if isTag(rest, openCall) {
			pos = p.callBlock(lt)
			continue
		}
		if next, ok := p.rooBlock(lt); ok {
			pos = next
			continue
		}
		p.out.WriteByte('<')
		pos = lt + 1
	}
}

// isTag reports whether s starts with the opening tag name (e.g. "<tool_call")
// followed by '>' or white space.
func isTag(s, name string) bool {
	if !strings.HasPrefix(s, name) {
		return false
	}
	if len(s) == len(name) {
		return true
	}
	switch s[len(name)] {
	case '>', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

var nameAttr = regexp.MustCompile(`name\s*=\s*["']([^"'<>]{1,128})["']`)

// callBlock reads the <tool_call> block opening at lt and returns where
// scanning resumes.
func (p *parser) callBlock(lt int) int {
	src := p.src
	p.changed = true
	start := lt + len(openCall)
	attrName := ""
	// The opening tag ends at '>' unless the model left it open and went on
	// with the body: then the body starts right after the tag name.
	if gt := strings.IndexAny(src[start:min(len(src), start+maxTagAttrs)], "><{"); gt >= 0 && src[start+gt] == '>' {
		if m := nameAttr.FindStringSubmatch(src[start : start+gt]); m != nil {
			attrName = strings.TrimSpace(m[1])
		}
		start += gt + 1
	}
	end, resume := blockEnd(src, start)
	p.block(src[start:end], attrName, src[lt:resume])
	return resume
}

// blockEnd finds where the block body starting at start ends: at
// </tool_call>, or, for a block the model forgot to close, where the next
// block or a made-up result begins. Tags inside JSON strings do not count.
// resume is where scanning goes on.
func blockEnd(src string, start int) (end, resume int) {
	inString := false
	for i := start; i < len(src); i++ {
		c := src[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '<':
			rest := src[i:]
			if strings.HasPrefix(rest, closeCall) {
				return i, i + len(closeCall)
			}
			if isTag(rest, openCall) || isTag(rest, openResult) {
				return i, i
			}
		}
	}
	return len(src), len(src)
}

// block reads the body of one <tool_call> block: one or more calls.
func (p *parser) block(body, attrName, raw string) {
	body = stripFence(strings.TrimSpace(body))
	if body == "" {
		if attrName != "" {
			p.calls = append(p.calls, Call{Name: attrName, Arguments: "{}", Raw: raw})
			return
		}
		p.calls = append(p.calls, invalid(raw, "", "the <tool_call> block is empty"))
		return
	}
	values, err := decodeLenient(body)
	if err != nil {
		p.calls = append(p.calls, invalid(raw, guessName(body, attrName), "the JSON is not valid ("+err.Error()+")"))
		return
	}
	for _, v := range values {
		items := []any{v}
		if arr, ok := v.([]any); ok {
			items = arr
		}
		for _, item := range items {
			p.calls = append(p.calls, p.toCall(item, attrName, raw))
		}
	}
}

func invalid(raw, name, problem string) Call {
	return Call{Name: name, Arguments: "{}", Raw: raw, Problem: problem}
}

var nameField = regexp.MustCompile(`"name"\s*:\s*"([^"\\]{1,128})"`)

// guessName finds a tool name in unreadable JSON so the feedback can use it.
func guessName(body, attrName string) string {
	if m := nameField.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return attrName
}

// argumentKeys are the keys under which models put a call's input.
var argumentKeys = []string{"arguments", "parameters", "args", "input"}

// toCall turns one decoded JSON value into a call.
func (p *parser) toCall(v any, attrName, raw string) Call {
	obj, ok := v.(map[string]any)
	if !ok {
		return invalid(raw, attrName, "the block must hold a JSON object with \"name\" and \"arguments\"")
	}
	if fn, ok := obj["function"].(map[string]any); ok {
		if _, hasName := obj["name"]; !hasName || obj["type"] == "function" {
			obj = fn
		}
	}
	name := attrName
	nameKey := ""
	for _, k := range []string{"name", "tool", "tool_name"} {
		if x, ok := obj[k]; ok {
			s, isString := x.(string)
			if !isString {
				return invalid(raw, attrName, "\""+k+"\" must be a string")
			}
			name, nameKey = strings.TrimSpace(s), k
			break
		}
	}
	if name == "" {
		return invalid(raw, "", "the call has no \"name\"")
	}
	props := map[string]bool{}
	for _, k := range properties(p.tools[name].Schema) {
		props[k] = true
	}
	var args any
	found := false
	for _, k := range argumentKeys {
		x, ok := obj[k]
		if !ok {
			continue
		}
		if _, isObject := x.(map[string]any); !isObject && props[k] {
			// A parameter that happens to be called "input" or "args".
			continue
		}
		args, found = x, true
		break
	}
	if !found {
		flat := map[string]any{}
		for k, x := range obj {
			switch k {
			case nameKey, "type", "id", "function":
				continue
			}
			flat[k] = x
		}
		args = flat
	}
	switch a := args.(type) {
	case nil:
		args = map[string]any{}
	case string:
		if strings.TrimSpace(a) == "" {
			args = map[string]any{}
			break
		}
		vals, err := decodeLenient(stripFence(strings.TrimSpace(a)))
		if err != nil || len(vals) != 1 {
			return invalid(raw, name, "the arguments string is not a JSON object")
		}
		if _, ok := vals[0].(map[string]any); !ok {
			return invalid(raw, name, "the arguments must be a JSON object")
		}
		args = vals[0]
	case map[string]any:
	default:
		return invalid(raw, name, "the arguments must be a JSON object")
	}
	text, err := marshal(args)
	if err != nil {
		return invalid(raw, name, "the arguments cannot be encoded")
	}
	return Call{Name: name, Arguments: text, Raw: raw}
}

// stripFence removes a Markdown code fence around s.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") {
		return s
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return strings.TrimSpace(strings.Trim(s, "`"))
	}
	s = s[nl+1:]
	s = strings.TrimSpace(s)
	return strings.TrimSpace(strings.TrimSuffix(s, "```"))
}

var (
	emptyFence = regexp.MustCompile("```[A-Za-z0-9_+-]*[ \t]*\r?\n[ \t\r\n]*```")
	manyBreaks = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)
)

// tidy cleans the text left after removing calls: empty fences that wrapped
// them and runs of blank lines.
func tidy(s string) string {
	s = emptyFence.ReplaceAllString(s, "")
	s = manyBreaks.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}
