// Package truncate cuts tool outputs to the limits a history allows: by
// characters for what the model reads, by encoded bytes for what a result
// may add to a history, always from the middle with a notice in its place.
package truncate

import (
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Text cuts s to at most limit characters (runes) from the middle,
// keeping the head and the tail, and puts in their place a notice telling
// the model how much was left out and to narrow the request or read it in
// pages. The notice is not counted in limit. A limit of 0 or less, or a
// string that fits, returns s unchanged.
func Text(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s // len counts bytes, which is at least the rune count
	}
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	head := limit - limit/2
	tail := limit / 2
	hi := byteOffset(s, head)
	ti := byteOffset(s, n-tail)
	notice := fmt.Sprintf("\n\n[… %d of %d characters cut from the middle: the output is longer than the %d-character limit. "+
		"Narrow the request (a filter, a range, a smaller scope) or fetch the rest in pages.]\n\n", n-limit, n, limit)
	return s[:hi] + notice + s[ti:]
}

// byteOffset returns the byte index of the rune at position i in s.
func byteOffset(s string, i int) int {
	for off := range s {
		if i == 0 {
			return off
		}
		i--
	}
	return len(s)
}

// Output applies Text to a tool output: text as it is, JSON as
// text (a cut JSON value is no longer JSON, so it becomes a text output),
// and the text parts of content, sharing the limit in proportion to their
// length. File parts are never cut. The output is not modified; a cut
// output is a copy.
func Output(out *agentv1.ToolOutput, limit int) *agentv1.ToolOutput {
	if limit <= 0 || out == nil {
		return out
	}
	switch v := out.GetValue().(type) {
	case *agentv1.ToolOutput_Text:
		if t := Text(v.Text, limit); t != v.Text {
			return textOutput(t)
		}
	case *agentv1.ToolOutput_Json:
		if t := Text(v.Json, limit); t != v.Json {
			return textOutput(t)
		}
	case *agentv1.ToolOutput_Content:
		total := 0
		for _, p := range v.Content.GetParts() {
			total += utf8.RuneCountInString(p.GetText())
		}
		if total <= limit {
			return out
		}
		cp := proto.Clone(out).(*agentv1.ToolOutput)
		for _, p := range cp.GetContent().GetParts() {
			t, ok := p.GetKind().(*agentv1.Part_Text)
			if !ok {
				continue
			}
			share := limit * utf8.RuneCountInString(t.Text) / total
			t.Text = Text(t.Text, max(share, 1))
		}
		return cp
	}
	return out
}

// Bytes bounds the encoded size of a tool output to about limit bytes
// (what a result may add to a history): over it, file parts are replaced
// by a note, largest first, then the text is cut from the middle by bytes
// with a notice (JSON becoming text). A limit of 0 or less, or an output that
// fits, returns out unchanged; a capped output is a copy.
func Bytes(out *agentv1.ToolOutput, limit int) *agentv1.ToolOutput {
	if limit <= 0 || out == nil || proto.Size(out) <= limit {
		return out
	}
	switch v := out.GetValue().(type) {
	case *agentv1.ToolOutput_Text:
		return textOutput(truncateBytes(v.Text, limit))
	case *agentv1.ToolOutput_Json:
		return textOutput(truncateBytes(v.Json, limit))
	case *agentv1.ToolOutput_Content:
		cp := proto.Clone(out).(*agentv1.ToolOutput)
		parts := cp.GetContent().GetParts()
		notes := map[int]bool{}
		for proto.Size(cp) > limit {
			big, size := -1, 0
			for i, p := range parts {
				if f := p.GetFile(); f != nil && proto.Size(p) > size {
					big, size = i, proto.Size(p)
				}
			}
			if big < 0 {
				break
			}
			f := parts[big].GetFile()
			parts[big] = &agentv1.Part{Kind: &agentv1.Part_Text{Text: fmt.Sprintf(
				"[%s file of %d bytes left out: the result was larger than the %d bytes a tool result may take]",
				f.GetMediaType(), size, limit)}}
			notes[big] = true
		}
		if over := proto.Size(cp) - limit; over > 0 {
			total := 0
			for i, p := range parts {
				if !notes[i] {
					total += len(p.GetText())
				}
			}
			for i, p := range parts {
				if t, ok := p.GetKind().(*agentv1.Part_Text); ok && total > 0 && !notes[i] {
					keep := len(t.Text) - over*len(t.Text)/total - 1
					t.Text = truncateBytes(t.Text, max(keep, 1))
				}
			}
		}
		return cp
	}
	return out
}

// truncateBytes cuts s to about limit bytes from the middle, at UTF-8
// boundaries, with a notice (not counted in limit) in place of the cut.
func truncateBytes(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	notice := fmt.Sprintf("\n\n[… %d of %d bytes cut from the middle: the result was larger than a tool result may take. "+
		"Narrow the request (a filter, a range, a smaller scope) or fetch the rest in pages.]\n\n", len(s)-limit, len(s))
	return Middle(s, max(limit-len(notice), 0), notice)
}

// Middle keeps about keep bytes of s, its head and its tail, cut at
// UTF-8 boundaries, with notice in place of the middle. A string that fits
// is returned as it is.
func Middle(s string, keep int, notice string) string {
	if len(s) <= keep {
		return s
	}
	head, ti := keep-keep/2, len(s)-keep/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for ti < len(s) && !utf8.RuneStart(s[ti]) {
		ti++
	}
	return s[:head] + notice + s[ti:]
}

// textOutput is a text tool output.
func textOutput(s string) *agentv1.ToolOutput {
	return &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Text{Text: s}}
}
