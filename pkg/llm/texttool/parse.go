package texttool

import (
	"encoding/json"
	"errors"
	"io"
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

// rooBlock reads a Roo Code style call <tool><param>v</param></tool> opening
// at lt, when the tag names a known tool and is closed.
func (p *parser) rooBlock(lt int) (int, bool) {
	src := p.src
	j := lt + 1
	for j < len(src) && isNameByte(src[j]) {
		j++
	}
	if j == lt+1 || j >= len(src) || src[j] != '>' {
		return 0, false
	}
	name := src[lt+1 : j]
	tool, ok := p.tools[name]
	if !ok {
		return 0, false
	}
	closeTag := "</" + name + ">"
	c := p.find.next(closeTag, j+1)
	if c < 0 {
		return 0, false
	}
	p.changed = true
	resume := c + len(closeTag)
	p.calls = append(p.calls, rooCall(tool, src[j+1:c], src[lt:resume]))
	return resume, true
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// rooCall reads the parameters of a Roo Code style call.
func rooCall(tool Tool, body, raw string) Call {
	propSchemas, _ := tool.Schema["properties"].(map[string]any)
	names := properties(tool.Schema)
	params := map[string]any{}
	f := newFinder(body)
	pos, children := 0, 0
	for pos < len(body) {
		i := strings.IndexByte(body[pos:], '<')
		if i < 0 {
			break
		}
		lt := pos + i
		j := lt + 1
		for j < len(body) && isNameByte(body[j]) {
			j++
		}
		if j == lt+1 || j >= len(body) || body[j] != '>' {
			pos = lt + 1
			continue
		}
		key := body[lt+1 : j]
		c := f.next("</"+key+">", j+1)
		if c < 0 {
			pos = lt + 1
			continue
		}
		params[key] = coerce(body[j+1:c], propSchemas[key])
		children++
		pos = c + len(key) + 3
	}
	if children == 0 {
		value := trimNewlines(body)
		switch {
		case strings.TrimSpace(value) == "":
		case len(names) == 1:
			params[names[0]] = coerce(value, propSchemas[names[0]])
		default:
			return invalid(raw, tool.Name, "write each parameter as <parameter_name>value</parameter_name> inside <"+tool.Name+">")
		}
	}
	text, err := marshal(params)
	if err != nil {
		return invalid(raw, tool.Name, "the parameters cannot be encoded")
	}
	return Call{Name: tool.Name, Arguments: text, Raw: raw}
}

// coerce converts an XML parameter value to the type its schema declares.
func coerce(value string, schema any) any {
	s, _ := schema.(map[string]any)
	typ := schemaType(s)
	v := trimNewlines(value)
	t := strings.TrimSpace(v)
	switch typ {
	case "integer", "number":
		var n json.Number
		if json.Unmarshal([]byte(t), &n) == nil {
			return n
		}
	case "boolean":
		switch strings.ToLower(t) {
		case "true":
			return true
		case "false":
			return false
		}
	case "object", "array":
		if vals, err := decodeLenient(stripFence(t)); err == nil && len(vals) == 1 {
			_, isObject := vals[0].(map[string]any)
			_, isArray := vals[0].([]any)
			if typ == "object" && isObject || typ == "array" && isArray {
				return vals[0]
			}
		}
	case "null":
		if t == "null" || t == "" {
			return nil
		}
	}
	return v
}

// schemaType returns the first non-null type a schema declares.
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if name, ok := x.(string); ok && name != "null" {
				return name
			}
		}
	}
	return ""
}

// trimNewlines removes the line breaks that surround a tag's content.
func trimNewlines(s string) string {
	s = strings.TrimLeft(s, " \t")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "\r"), "\n")
	s = strings.TrimRight(s, " \t")
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
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

// loose reads fenced JSON blocks that name a known tool from text and removes them.
func (p *parser) loose(text string) string {
	var out strings.Builder
	f := newFinder(text)
	pos := 0
	for pos < len(text) {
		open := f.next("```", pos)
		if open < 0 {
			break
		}
		nl := strings.IndexByte(text[open:], '\n')
		if nl < 0 {
			break
		}
		closeAt := f.next("```", open+nl+1)
		if closeAt < 0 {
			break
		}
		body := strings.TrimSpace(text[open+nl+1 : closeAt])
		end := closeAt + 3
		calls := p.looseCalls(body, text[open:end])
		if calls == nil {
			out.WriteString(text[pos:end])
			pos = end
			continue
		}
		out.WriteString(text[pos:open])
		p.calls = append(p.calls, calls...)
		p.changed = true
		pos = end
	}
	out.WriteString(text[pos:])
	return out.String()
}

// looseCalls returns the calls in a fenced block when every value in it is a
// valid call to a known tool, else nil.
func (p *parser) looseCalls(body, raw string) []Call {
	if !strings.HasPrefix(body, "{") && !strings.HasPrefix(body, "[") {
		return nil
	}
	values, err := decodeLenient(body)
	if err != nil {
		return nil
	}
	var calls []Call
	for _, v := range values {
		items := []any{v}
		if arr, ok := v.([]any); ok {
			items = arr
		}
		for _, item := range items {
			c := p.toCall(item, "", raw)
			if _, known := p.tools[c.Name]; c.Invalid() || !known {
				return nil
			}
			calls = append(calls, c)
		}
	}
	return calls
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

// decodeLenient decodes one or more JSON values from s, repairing common
// mistakes (see repair) when s is not valid as written.
func decodeLenient(s string) ([]any, error) {
	vals, err := decodeAll(s)
	if err == nil {
		return vals, nil
	}
	if fixed := repair(s); fixed != s {
		if vals, err2 := decodeAll(fixed); err2 == nil {
			return vals, nil
		}
	}
	return nil, err
}

// decodeAll decodes a sequence of JSON values separated by white space.
func decodeAll(s string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
			}
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("no JSON value")
	}
	return out, nil
}

// finder finds the next occurrence of a needle at or after a position,
// remembering answers so that a left-to-right scan stays linear.
type finder struct {
	src  string
	last map[string][2]int // needle -> {from, index}; index -1: none at or after from
}

func newFinder(src string) *finder {
	return &finder{src: src, last: map[string][2]int{}}
}

func (f *finder) next(needle string, from int) int {
	if from > len(f.src) {
		return -1
	}
	if l, ok := f.last[needle]; ok && from >= l[0] {
		if l[1] < 0 {
			return -1
		}
		if l[1] >= from {
			return l[1]
		}
	}
	i := strings.Index(f.src[from:], needle)
	if i >= 0 {
		i += from
	}
	f.last[needle] = [2]int{from, i}
	return i
}
