package texttool

import "strings"

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
