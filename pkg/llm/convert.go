package llm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/texttool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// This file, with media.go for media parts, is where history
// (agentv1.Message) becomes the eino messages of a request; result.go turns
// a model response back into history.

// summaryPreamble introduces a compaction summary folded into the system prompt.
const summaryPreamble = "Summary of your own earlier work in this conversation (the data in it was confirmed by tools):"

// strippedNote replaces a message left empty by mediaFallback strip.
const strippedNote = "[media removed: this model cannot read it]"

// converter turns history into the eino messages of one request.
type converter struct {
	caps     Capabilities
	fallback MediaFallback
	// text renders tool calls and results with the text tool protocol.
	text  bool
	tools []texttool.Tool
	// protocol is the protocol the request is sent in: provider data of
	// another protocol is left out. Empty: all is kept (a caller's model).
	protocol provider.Protocol
	// cache, when set, keeps conversions between the requests of a run.
	cache *ConversionCache
}

// Bits of the ids map of a request: which tool-call ids have a call and
// which have a result somewhere in the messages sent.
const (
	idCall uint8 = 1 << iota
	idResult
)

// convert builds the request messages: one system message (the system prompt,
// any compaction summary and leading system notices, and in text mode the
// tool instructions), then the conversation.
//
// Tool calls without a result and results without a call are left out (a
// run stopped between a call and its result leaves such a pair, and every
// protocol rejects it). Legacy image, audio and video parts become file
// parts. Media a capability switches off fail the request (mediaFallback
// error) or are dropped (strip).
func (cv *converter) convert(system string, history []*agentv1.Message) ([]*schema.Message, error) {
	settings := conversionSettings{caps: cv.caps, fallback: cv.fallback, text: cv.text, protocol: cv.protocol}
	st, from := &conversation{ids: map[string]uint8{}, leading: true}, 0
	if cv.cache != nil {
		cv.cache.mu.Lock()
		defer cv.cache.mu.Unlock()
		st, from = cv.cache.begin(history, settings)
		defer cv.cache.end(len(history))
	}
	for _, m := range history[from:] {
		for _, p := range m.GetParts() {
			if tc := p.GetToolCall(); tc != nil {
				st.ids[tc.GetId()] |= idCall
			}
			if tr := p.GetToolResult(); tr != nil {
				st.ids[tr.GetToolCallId()] |= idResult
			}
		}
	}
	for i := from; i < len(history); i++ {
		if err := cv.add(st, i, history[i]); err != nil {
			if cv.cache != nil {
				cv.cache.forget()
			}
			return nil, err
		}
	}
	if cv.cache != nil {
		cv.cache.keep(history)
	}

	var sys []string
	if strings.TrimSpace(system) != "" {
		sys = append(sys, system)
	}
	s := strings.Join(append(sys, st.sys...), "\n\n")
	if cv.text && len(cv.tools) > 0 {
		s = texttool.System(s, cv.tools)
	}
	out := make([]*schema.Message, 0, len(st.body)+1)
	if s != "" {
		out = append(out, &schema.Message{Role: schema.System, Content: s})
	}
	out = append(out, st.body...)
	if cv.text {
		out = mergeUsers(out)
	}
	return out, nil
}

// conversation is a request's history converted so far: the system text it
// holds (summaries, leading notices), the conversation after it, and the
// request's tool-call ids.
type conversation struct {
	ids     map[string]uint8
	sys     []string
	body    []*schema.Message
	leading bool // no conversation message yet: a system message is a leading notice
}

// add converts history message i.
func (cv *converter) add(st *conversation, i int, m *agentv1.Message) error {
	if m == nil {
		return nil
	}
	if m.GetCompact() {
		if t := joinText(m.GetParts()); t != "" {
			st.sys = append(st.sys, summaryPreamble+"\n"+t)
		}
		return nil
	}
	switch m.GetRole() {
	case agentv1.Role_ROLE_SYSTEM:
		t := joinText(m.GetParts())
		if t == "" {
			return nil
		}
		if st.leading {
			st.sys = append(st.sys, t)
			return nil
		}
		st.body = append(st.body, &schema.Message{Role: schema.User, Content: "[system notice]\n" + t})
	case agentv1.Role_ROLE_USER, agentv1.Role_ROLE_ASSISTANT, agentv1.Role_ROLE_TOOL:
		st.leading = false
		msgs, err := cv.message(i, m, st.ids)
		if err != nil {
			return err
		}
		st.body = append(st.body, msgs...)
	default:
		return invalidMessage(i, -1, "unknown role %v", m.GetRole())
	}
	return nil
}

// message converts a user, assistant or tool message, through the cache
// when there is one. A message with a call or result whose other half is
// not in the request converts afresh: what it sends depends on the rest of
// the request then, not on the message alone.
func (cv *converter) message(i int, m *agentv1.Message, ids map[string]uint8) ([]*schema.Message, error) {
	if cv.cache == nil || !paired(m, ids) {
		return cv.convertMessage(i, m, ids)
	}
	settings := conversionSettings{caps: cv.caps, fallback: cv.fallback, text: cv.text, protocol: cv.protocol}
	if msgs, ok := cv.cache.get(m, settings); ok {
		return msgs, nil
	}
	msgs, err := cv.convertMessage(i, m, ids)
	if err == nil {
		cv.cache.put(m, settings, msgs)
	}
	return msgs, err
}

// convertMessage converts a user, assistant or tool message itself, without
// the cache.
func (cv *converter) convertMessage(i int, m *agentv1.Message, ids map[string]uint8) ([]*schema.Message, error) {
	switch m.GetRole() {
	case agentv1.Role_ROLE_USER:
		msg, err := cv.user(i, m.GetParts())
		if err != nil {
			return nil, err
		}
		return []*schema.Message{msg}, nil
	case agentv1.Role_ROLE_ASSISTANT:
		msg, err := cv.assistant(i, m.GetParts(), ids)
		if err != nil || msg == nil {
			return nil, err
		}
		return []*schema.Message{msg}, nil
	default:
		return cv.toolResults(i, m.GetParts(), ids)
	}
}

// paired reports whether every call in m has a result in the request and
// every result in m a call.
func paired(m *agentv1.Message, ids map[string]uint8) bool {
	for _, p := range m.GetParts() {
		if tc := p.GetToolCall(); tc != nil && ids[tc.GetId()]&idResult == 0 {
			return false
		}
		if tr := p.GetToolResult(); tr != nil && ids[tr.GetToolCallId()]&idCall == 0 {
			return false
		}
	}
	return true
}

func (cv *converter) user(i int, parts []*agentv1.Part) (*schema.Message, error) {
	var in []schema.MessageInputPart
	media, stripped := false, false
	for j, p := range parts {
		switch k := p.GetKind().(type) {
		case *agentv1.Part_Text:
			in = append(in, schema.MessageInputPart{Type: schema.ChatMessagePartTypeText, Text: k.Text})
		case *agentv1.Part_Image, *agentv1.Part_Audio, *agentv1.Part_Video, *agentv1.Part_File:
			part, keep, err := cv.media(i, j, p)
			if err != nil {
				return nil, err
			}
			if keep {
				in = append(in, part)
				media = true
			} else {
				stripped = true
			}
		default:
			return nil, invalidMessage(i, j, "a user message cannot hold a %s part", partKind(p))
		}
	}
	if len(in) == 0 && stripped {
		in = append(in, schema.MessageInputPart{Type: schema.ChatMessagePartTypeText, Text: strippedNote})
	}
	if !media {
		texts := make([]string, len(in))
		for k, p := range in {
			texts[k] = p.Text
		}
		return &schema.Message{Role: schema.User, Content: strings.Join(texts, "\n")}, nil
	}
	return &schema.Message{Role: schema.User, UserInputMultiContent: in}, nil
}

func (cv *converter) assistant(i int, parts []*agentv1.Part, ids map[string]uint8) (*schema.Message, error) {
	msg := &schema.Message{Role: schema.Assistant}
	var text, reasoning strings.Builder
	var reasoningData map[string]string
	var calls []string
	for j, p := range parts {
		switch k := p.GetKind().(type) {
		case *agentv1.Part_Text:
			text.WriteString(k.Text)
		case *agentv1.Part_Reasoning:
			if !cv.caps.Reasoning || foreign(k.Reasoning.GetProviderData(), cv.protocol) {
				continue
			}
			reasoning.WriteString(k.Reasoning.GetText())
			for key, val := range k.Reasoning.GetProviderData() {
				if reasoningData == nil {
					reasoningData = map[string]string{}
				}
				reasoningData[key] = val
			}
		case *agentv1.Part_ToolCall:
			tc := k.ToolCall
			if tc.GetId() == "" || tc.GetName() == "" {
				return nil, invalidMessage(i, j, "a tool call needs an id and a name")
			}
			if ids[tc.GetId()]&idResult == 0 {
				continue
			}
			if cv.text {
				calls = append(calls, texttool.FormatCall(tc.GetName(), tc.GetArguments()))
				continue
			}
			call := schema.ToolCall{ID: tc.GetId(), Type: "function", Function: schema.FunctionCall{Name: tc.GetName(), Arguments: tc.GetArguments()}}
			if data := ownData(tc.GetProviderData(), cv.protocol); len(data) > 0 {
				call.Extra = map[string]any{provider.ExtraToolCallData: data}
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
		default:
			return nil, invalidMessage(i, j, "an assistant message cannot hold a %s part", partKind(p))
		}
	}
	msg.Content = text.String()
	if len(calls) > 0 {
		msg.Content = strings.TrimSpace(strings.Join(append([]string{msg.Content}, calls...), "\n\n"))
	}
	msg.ReasoningContent = reasoning.String()
	if reasoningData != nil {
		msg.Extra = map[string]any{provider.ExtraReasoningData: reasoningData}
	}
	if msg.Content == "" && len(msg.ToolCalls) == 0 && msg.ReasoningContent == "" && reasoningData == nil {
		return nil, nil
	}
	return msg, nil
}

func (cv *converter) toolResults(i int, parts []*agentv1.Part, ids map[string]uint8) ([]*schema.Message, error) {
	var out []*schema.Message
	for j, p := range parts {
		tr := p.GetToolResult()
		if tr == nil {
			return nil, invalidMessage(i, j, "a tool message can only hold tool results, not a %s part", partKind(p))
		}
		if ids[tr.GetToolCallId()]&idCall == 0 {
			continue
		}
		text, media, err := cv.toolOutput(i, j, tr.GetOutput())
		if err != nil {
			return nil, err
		}
		if cv.text {
			in := []schema.MessageInputPart{{Type: schema.ChatMessagePartTypeText, Text: texttool.FormatResult(tr.GetToolName(), text)}}
			out = append(out, &schema.Message{Role: schema.User, UserInputMultiContent: append(in, media...)})
			continue
		}
		msg := &schema.Message{Role: schema.Tool, ToolCallID: tr.GetToolCallId(), ToolName: tr.GetToolName()}
		if tr.GetError() {
			msg.Extra = map[string]any{provider.ExtraToolError: true}
		}
		if len(media) == 0 {
			msg.Content = text
		} else {
			msg.UserInputMultiContent = media
			if text != "" {
				msg.UserInputMultiContent = append([]schema.MessageInputPart{{Type: schema.ChatMessagePartTypeText, Text: text}}, media...)
			}
		}
		out = append(out, msg)
	}
	return out, nil
}

// toolOutput returns a tool output's text (JSON as text, content parts'
// text joined) and its media parts.
func (cv *converter) toolOutput(i, j int, o *agentv1.ToolOutput) (string, []schema.MessageInputPart, error) {
	switch v := o.GetValue().(type) {
	case *agentv1.ToolOutput_Text:
		return v.Text, nil, nil
	case *agentv1.ToolOutput_Json:
		return v.Json, nil, nil
	case *agentv1.ToolOutput_Content:
		var texts []string
		var media []schema.MessageInputPart
		stripped := false
		for _, p := range v.Content.GetParts() {
			switch k := p.GetKind().(type) {
			case *agentv1.Part_Text:
				texts = append(texts, k.Text)
			case *agentv1.Part_Image, *agentv1.Part_Audio, *agentv1.Part_Video, *agentv1.Part_File:
				part, keep, err := cv.media(i, j, p)
				if err != nil {
					return "", nil, err
				}
				if keep {
					media = append(media, part)
				} else {
					stripped = true
				}
			default:
				return "", nil, invalidMessage(i, j, "tool output content cannot hold a %s part", partKind(p))
			}
		}
		if stripped {
			texts = append(texts, strippedNote)
		}
		return strings.Join(texts, "\n"), media, nil
	}
	return "", nil, nil
}

// mergeUsers joins adjacent user messages (text mode sends tool results as
// user messages; some chat-only endpoints reject two in a row).
func mergeUsers(msgs []*schema.Message) []*schema.Message {
	var out []*schema.Message
	for _, m := range msgs {
		if n := len(out); n > 0 && m.Role == schema.User && out[n-1].Role == schema.User {
			// A new slice: the parts may belong to messages kept in a cache.
			out[n-1] = &schema.Message{Role: schema.User, UserInputMultiContent: slices.Concat(inputParts(out[n-1]), inputParts(m))}
			continue
		}
		out = append(out, m)
	}
	for i, m := range out {
		if m.Role == schema.User && len(m.UserInputMultiContent) > 0 {
			out[i] = collapseText(m)
		}
	}
	return out
}

func inputParts(m *schema.Message) []schema.MessageInputPart {
	if len(m.UserInputMultiContent) > 0 {
		return m.UserInputMultiContent
	}
	return []schema.MessageInputPart{{Type: schema.ChatMessagePartTypeText, Text: m.Content}}
}

// collapseText turns a text-only multi-part user message into plain content.
func collapseText(m *schema.Message) *schema.Message {
	texts := make([]string, 0, len(m.UserInputMultiContent))
	for _, p := range m.UserInputMultiContent {
		if p.Type != schema.ChatMessagePartTypeText {
			return m
		}
		texts = append(texts, p.Text)
	}
	return &schema.Message{Role: schema.User, Content: strings.Join(texts, "\n\n")}
}

func joinText(parts []*agentv1.Part) string {
	var texts []string
	for _, p := range parts {
		if t, ok := p.GetKind().(*agentv1.Part_Text); ok && t.Text != "" {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func invalidMessage(i, j int, format string, args ...any) *Error {
	where := fmt.Sprintf("message %d", i)
	if j >= 0 {
		where += fmt.Sprintf(" part %d", j)
	}
	return &Error{Kind: provider.KindRequest, Code: "invalid_message", Message: where + ": " + fmt.Sprintf(format, args...)}
}

// The adapters keep provider data under keys named for their protocol's
// vendor ("anthropic.thinking", "gemini.thought_signature", "openai.type").
// A history written by one protocol may be sent in another: a fallback
// model's, or a config changed between sends. Reasoning whose data is all
// another vendor's is left out of the request (its text is that model's
// own thinking, which no other model can verify or continue), and so are a
// tool call's data keys of another vendor; the calls, their results and
// the text stay. Keys of no known vendor are kept.

// vendorPrefix is the key prefix of a protocol's provider data.
func vendorPrefix(p provider.Protocol) string {
	switch p {
	case provider.ProtocolChat, provider.ProtocolResponses:
		return "openai."
	case provider.ProtocolAnthropic:
		return "anthropic."
	case provider.ProtocolGemini:
		return "gemini."
	}
	return ""
}

// otherVendor reports whether key belongs to a vendor other than p's.
func otherVendor(key string, p provider.Protocol) bool {
	own := vendorPrefix(p)
	if own == "" || strings.HasPrefix(key, own) {
		return false
	}
	for _, q := range []provider.Protocol{provider.ProtocolChat, provider.ProtocolAnthropic, provider.ProtocolGemini} {
		if strings.HasPrefix(key, vendorPrefix(q)) {
			return true
		}
	}
	return false
}

// foreign reports whether reasoning data is all another protocol's.
func foreign(data map[string]string, p provider.Protocol) bool {
	if len(data) == 0 {
		return false
	}
	for k := range data {
		if !otherVendor(k, p) {
			return false
		}
	}
	return true
}

// ownData returns a copy of a tool call's data without another protocol's keys.
func ownData(data map[string]string, p provider.Protocol) map[string]string {
	if len(data) == 0 {
		return nil
	}
	out := make(map[string]string, len(data))
	for k, v := range data {
		if !otherVendor(k, p) {
			out[k] = v
		}
	}
	return out
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// partKind names a part's kind for error messages ("empty" when unset).
func partKind(p *agentv1.Part) string {
	if k := history.PartKind(p); k != "" {
		return k
	}
	return "empty"
}
