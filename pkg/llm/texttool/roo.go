package texttool

import (
	"encoding/json"
	"strings"
)

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
