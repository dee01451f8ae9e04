package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// Bounds of what a tool call shows in text: its arguments, and its result
// (all of it is in --json and in the history).
const (
	maxArgsShown   = 300
	maxResultLines = 12
	maxResultChars = 2000
)

// printer writes a run's events as text for people: the model's text as it
// streams, each tool call, its live output and its result, retries,
// compactions. It is used by one goroutine at a time.
type printer struct {
	w io.Writer
	// hints: print how to answer a permission request (send, attach);
	// chat asks instead.
	hints bool
	col0  bool           // nothing written yet, or the last byte ended a line
	text  map[int32]bool // the steps whose text came as deltas
	out   map[string]bool
}

func newPrinter(w io.Writer, hints bool) *printer {
	return &printer{w: w, hints: hints, col0: true, text: map[int32]bool{}, out: map[string]bool{}}
}

// write writes s as it is.
func (p *printer) write(s string) {
	if s == "" {
		return
	}
	io.WriteString(p.w, s)
	p.col0 = strings.HasSuffix(s, "\n")
}

// line writes s on a line of its own.
func (p *printer) line(format string, args ...any) {
	if !p.col0 {
		p.write("\n")
	}
	p.write(fmt.Sprintf(format, args...) + "\n")
}

// event prints one event.
func (p *printer) event(e *agentv1.Event) {
	switch k := e.GetKind().(type) {
	case *agentv1.Event_ModelDelta:
		if t := k.ModelDelta.GetText(); t != "" {
			p.text[k.ModelDelta.GetStep()] = true
			p.write(t)
		}
	case *agentv1.Event_ModelResponse:
		// A model config without streaming sends no deltas: the text comes whole.
		if r := k.ModelResponse; !p.text[r.GetStep()] && r.GetText() != "" {
			p.write(r.GetText())
		}
		if !p.col0 {
			p.write("\n")
		}
	case *agentv1.Event_ToolCall:
		p.line("→ %s %s", k.ToolCall.GetToolName(), clip(k.ToolCall.GetArguments(), maxArgsShown))
	case *agentv1.Event_ToolOutput:
		p.toolOutput(k.ToolOutput)
	case *agentv1.Event_ToolResult:
		p.toolResult(k.ToolResult)
	case *agentv1.Event_PermissionRequest:
		if p.hints {
			r := k.PermissionRequest
			p.line("? %s %s is waiting for permission:", r.GetToolName(), clip(r.GetArguments(), maxArgsShown))
			p.line("    agentctl approve %s %s", e.GetRunId(), r.GetToolCallId())
			p.line("    agentctl deny %s %s --reason TEXT", e.GetRunId(), r.GetToolCallId())
		}
	case *agentv1.Event_ElicitationRequest:
		if p.hints {
			r := k.ElicitationRequest
			p.line("? %s asks for input: %s", r.GetToolName(), r.GetMessage())
			p.line("    agentctl respond %s %s --accept JSON (or --decline, --cancel)", e.GetRunId(), r.GetElicitationId())
		}
	case *agentv1.Event_ElicitationResult:
		r := k.ElicitationResult
		if r.GetTimedOut() {
			p.line("… no one answered the request for input in time: cancelled")
		} else {
			p.line("… request for input %s", actionName(r.GetAction()))
		}
	case *agentv1.Event_Retry:
		r := k.Retry
		p.line("… retry %d after %s (%s), in %s", r.GetAttempt(), kindName(r.GetKind()), firstLine(r.GetMessage()), r.GetDelay().AsDuration())
	case *agentv1.Event_Fallback:
		f := k.Fallback
		p.line("… %s model %s failed (%s: %s); asking the fallback %s model %s", f.GetFrom().GetProtocol(), f.GetFrom().GetModel(),
			kindName(f.GetKind()), firstLine(f.GetMessage()), f.GetTo().GetProtocol(), f.GetTo().GetModel())
	case *agentv1.Event_CompactStarted:
		p.line("… compacting the history (%d tokens)", k.CompactStarted.GetTokens())
	case *agentv1.Event_CompactFinished:
		p.line("… compacted")
	}
}

// toolOutput prints live output, each line after the tool's name.
func (p *printer) toolOutput(o *agentv1.ToolOutputEvent) {
	id, data := o.GetToolCallId(), o.GetData()
	var b strings.Builder
	for data != "" {
		if !p.out[id] {
			if !p.col0 && b.Len() == 0 {
				b.WriteString("\n")
			}
			b.WriteString("  " + o.GetToolName() + "│ ")
			p.out[id] = true
		}
		line, rest, nl := strings.Cut(data, "\n")
		b.WriteString(line)
		if nl {
			b.WriteString("\n")
			p.out[id] = false
		}
		data = rest
	}
	p.write(b.String())
}

// toolResult prints a result, cut to a few lines.
func (p *printer) toolResult(r *agentv1.ToolResultEvent) {
	if p.out[r.GetToolCallId()] {
		p.write("\n")
		delete(p.out, r.GetToolCallId())
	}
	mark := "←"
	if r.GetError() {
		mark = "✗"
	}
	p.line("%s %s: %s", mark, r.GetToolName(), shorten(outputText(r.GetOutput())))
}

// outcome prints how a run ended: its result or its error.
func (p *printer) outcome(res *client.Result, err error) {
	if err != nil {
		var ce *client.Error
		switch {
		case exitCode(err) == exitStopped:
			p.line("[%s]", stoppedText(err))
		case errors.As(err, &ce) && ce.Kind != "":
			p.line("[failed (%s): %s]", ce.Kind, ce.Message)
		default:
			p.line("[failed: %s]", errText(err))
		}
		return
	}
	u := res.Usage
	p.line("[%s · %d steps · %d tokens in, %d out · run %s]", client.ReasonName(res.Reason), res.Steps,
		u.GetInputTokens(), u.GetOutputTokens(), res.RunID)
}

// stoppedText says why a run stopped.
func stoppedText(err error) string {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return "stopped: " + err.Error()
	}
	switch {
	case ce.Reason == client.ReasonRunInterrupted:
		return "interrupted: " + ce.Message
	case ce.Metadata["cause"] == "stopped":
		return "stopped"
	case ce.Metadata["cause"] == "replaced":
		return "stopped: a newer send replaced it"
	case ce.Metadata["cause"] == "closed":
		return "stopped: the agent was deleted or its server stopped"
	}
	return "stopped: " + errText(err)
}

// errText is an error as one line: its reason (or code) and message.
func errText(err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		if c := ce.Metadata["cause"]; c != "" {
			return c + ": " + ce.Message
		}
		return errorName(ce) + ": " + ce.Message
	}
	return err.Error()
}

// kindName is agent-core's name of an error kind: limit, server…
func kindName(k agentv1.ErrorKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "ERROR_KIND_"))
}

// outputText is a tool's output as text.
func outputText(o *agentv1.ToolOutput) string {
	switch v := o.GetValue().(type) {
	case *agentv1.ToolOutput_Text:
		return v.Text
	case *agentv1.ToolOutput_Json:
		return v.Json
	case *agentv1.ToolOutput_Content:
		var parts []string
		for _, part := range v.Content.GetParts() {
			if t, ok := part.GetKind().(*agentv1.Part_Text); ok {
				parts = append(parts, t.Text)
			} else if f := part.GetFile(); f != nil {
				parts = append(parts, "[file "+f.GetFilename()+" "+f.GetMediaType()+"]")
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// shorten keeps the first lines of a tool result, saying what it left out.
func shorten(s string) string {
	s = strings.TrimRight(s, "\n")
	cut := ""
	if lines := strings.Split(s, "\n"); len(lines) > maxResultLines {
		s, cut = strings.Join(lines[:maxResultLines], "\n"), fmt.Sprintf("\n… %d more lines", len(lines)-maxResultLines)
	}
	if r := []rune(s); len(r) > maxResultChars {
		s, cut = string(r[:maxResultChars]), fmt.Sprintf("\n… cut at %d characters", maxResultChars)
	}
	if strings.Contains(s, "\n") {
		s = "\n" + indent(s)
	}
	return s + cut
}

// indent puts two spaces before each line.
func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// clip cuts s to n characters.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// jsonLine writes m as protojson on one line.
func jsonLine(w io.Writer, m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

// jsonArray writes ms as a JSON array of protojson objects, on one line.
func jsonArray[M proto.Message](w io.Writer, ms []M) error {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, m := range ms {
		b, err := protojson.Marshal(m)
		if err != nil {
			return err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := json.Compact(&buf, b); err != nil {
			return err
		}
	}
	buf.WriteString("]\n")
	_, err := w.Write(buf.Bytes())
	return err
}
