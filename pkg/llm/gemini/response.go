package gemini

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// response is a GenerateContentResponse: a whole response, or one stream
// chunk. Error is set when the stream reports an error.
type response struct {
	Candidates     *[]candidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *usageMetadata `json:"usageMetadata"`
	// ModelVersion is the model that answered.
	ModelVersion string `json:"modelVersion"`
	Error        *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

type candidate struct {
	Index        int      `json:"index"`
	Content      *content `json:"content"`
	FinishReason string   `json:"finishReason"`
}

type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
}

// finishReason normalises a Gemini finishReason.
func finishReason(raw string, toolCalls bool) string {
	switch raw {
	case "STOP":
		if toolCalls {
			return provider.FinishToolCalls
		}
		return provider.FinishStop
	case "MAX_TOKENS":
		return provider.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return provider.FinishContentFilter
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MISSING_THOUGHT_SIGNATURE":
		return provider.FinishError
	}
	return provider.FinishOther
}

// pathValue is one assembled partialArgs value.
type pathValue struct {
	path string
	val  any
	more bool // a string that continues in the next partialArgs entry
}

// openCall is a function call whose arguments are still streaming.
type openCall struct {
	index  int
	values []pathValue
}

// assembler turns responses, whole or streamed, into message chunks.
// Generate and Stream both use it, so they produce the same message.
type assembler struct {
	toolCalls int
	open      *openCall
	signature string
	usage     *usageMetadata
	finish    string
	done      bool // a finishReason or a blocked prompt was seen
	model     string
}

func chunk() *schema.Message { return &schema.Message{Role: schema.Assistant} }

// add reads one response; it returns the chunks to emit.
func (a *assembler) add(r *response) []*schema.Message {
	if r.ModelVersion != "" {
		a.model = r.ModelVersion
	}
	if u := r.UsageMetadata; u != nil && (u.TotalTokenCount > 0 || u.PromptTokenCount > 0) {
		a.usage = u
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" && (r.Candidates == nil || len(*r.Candidates) == 0) {
		a.finish, a.done = r.PromptFeedback.BlockReason, true
	}
	cand := r.candidate()
	if cand == nil {
		return nil
	}
	var out []*schema.Message
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if p != nil {
				out = append(out, a.part(p)...)
			}
		}
	}
	if cand.FinishReason != "" {
		a.finish, a.done = cand.FinishReason, true
	}
	return out
}

// candidate is candidate 0, the one this package reads; nil when there is
// none.
func (r *response) candidate() *candidate {
	if r.Candidates == nil {
		return nil
	}
	for i := range *r.Candidates {
		if c := &(*r.Candidates)[i]; c.Index == 0 {
			return c
		}
	}
	return nil
}

// part reads one part: text (thought or not), a function call, a thought
// signature. A part of any other kind (executable code, its result, inline
// data...) holds none of those and gives nothing.
func (a *assembler) part(p *part) []*schema.Message {
	if fc := p.FunctionCall; fc != nil {
		return a.functionCall(fc, p.ThoughtSignature)
	}
	if p.ThoughtSignature != "" {
		a.signature = p.ThoughtSignature
	}
	if p.Text == nil || *p.Text == "" {
		return nil
	}
	c := chunk()
	if p.Thought {
		c.ReasoningContent = *p.Text
	} else {
		c.Content = *p.Text
	}
	return []*schema.Message{c}
}

// functionCall handles a whole call, the start of a streamed one, or a piece
// of a streamed one's arguments.
func (a *assembler) functionCall(fc *functionCall, signature string) []*schema.Message {
	var out []*schema.Message
	if fc.Name == "" {
		if a.open == nil {
			return nil
		}
		a.open.addPartial(fc.PartialArgs)
		if !fc.WillContinue {
			out = append(out, a.closeCall())
		}
		return out
	}
	if a.open != nil {
		out = append(out, a.closeCall())
	}
	i := a.toolCalls
	a.toolCalls++
	id := fc.ID
	if id == "" {
		id = newCallID()
	}
	tc := schema.ToolCall{Index: &i, ID: id, Type: "function", Function: schema.FunctionCall{Name: fc.Name}}
	data := map[string]string{}
	if signature != "" {
		data[signatureKey] = signature
	}
	if fc.ID != "" {
		data[idKey] = fc.ID
	}
	if len(data) > 0 {
		tc.Extra = map[string]any{provider.ExtraToolCallData: data}
	}
	if fc.WillContinue {
		a.open = &openCall{index: i}
		a.open.addPartial(fc.PartialArgs)
	} else {
		tc.Function.Arguments = compactArgs(fc.Args)
	}
	c := chunk()
	c.ToolCalls = []schema.ToolCall{tc}
	return append(out, c)
}

func compactArgs(raw json.RawMessage) string {
	var buf bytes.Buffer
	if len(raw) == 0 || json.Compact(&buf, raw) != nil || buf.String() == "null" {
		return "{}"
	}
	return buf.String()
}

// newCallID makes an id for a call Gemini gave none.
func newCallID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "call_" + hex.EncodeToString(b)
}

func (o *openCall) addPartial(args []partialArg) {
	for _, pa := range args {
		var v any
		switch {
		case pa.StringValue != nil:
			if n := len(o.values); n > 0 && o.values[n-1].more && o.values[n-1].path == pa.JSONPath {
				o.values[n-1].val = o.values[n-1].val.(string) + *pa.StringValue
				o.values[n-1].more = pa.WillContinue
				continue
			}
			v = *pa.StringValue
		case pa.NumberValue != nil:
			v = *pa.NumberValue
		case pa.BoolValue != nil:
			v = *pa.BoolValue
		}
		o.values = append(o.values, pathValue{path: pa.JSONPath, val: v, more: pa.StringValue != nil && pa.WillContinue})
	}
}

// closeCall ends the streamed call and emits its whole arguments.
func (a *assembler) closeCall() *schema.Message {
	o := a.open
	a.open = nil
	var root any = map[string]any{}
	for _, pv := range o.values {
		root = setPath(root, pathSteps(pv.path), pv.val)
	}
	args, _ := json.Marshal(root)
	i := o.index
	c := chunk()
	c.ToolCalls = []schema.ToolCall{{Index: &i, Function: schema.FunctionCall{Arguments: string(args)}}}
	return c
}

// pathSteps splits a JSON path ($.a.b[0]['c d']) into keys (string) and
// indexes (int).
func pathSteps(p string) []any {
	p = strings.TrimPrefix(p, "$")
	var steps []any
	for p != "" {
		switch {
		case strings.HasPrefix(p, "."):
			p = p[1:]
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			steps = append(steps, p[:end])
			p = p[end:]
		case strings.HasPrefix(p, "['") || strings.HasPrefix(p, `["`):
			q := p[1:2]
			end := strings.Index(p[2:], q+"]")
			if end < 0 {
				return append(steps, p)
			}
			steps = append(steps, p[2:2+end])
			p = p[2+end+2:]
		case strings.HasPrefix(p, "["):
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return append(steps, p)
			}
			n, err := strconv.Atoi(p[1:end])
			if err != nil || n < 0 {
				steps = append(steps, p[1:end])
			} else {
				steps = append(steps, n)
			}
			p = p[end+1:]
		default:
			return append(steps, p)
		}
	}
	return steps
}

// setPath sets v at steps below node and returns the updated node.
func setPath(node any, steps []any, v any) any {
	if len(steps) == 0 {
		return v
	}
	switch s := steps[0].(type) {
	case int:
		arr, _ := node.([]any)
		for len(arr) <= s {
			arr = append(arr, nil)
		}
		arr[s] = setPath(arr[s], steps[1:], v)
		return arr
	default:
		obj, ok := node.(map[string]any)
		if !ok {
			obj = map[string]any{}
		}
		key := s.(string)
		obj[key] = setPath(obj[key], steps[1:], v)
		return obj
	}
}

// final is the last chunk: finish reason, usage and provider data.
func (a *assembler) final() *schema.Message {
	var out []*schema.Message
	if a.open != nil {
		out = append(out, a.closeCall())
	}
	c := chunk()
	if len(out) > 0 {
		c.ToolCalls = out[0].ToolCalls
	}
	u := a.usage
	if u == nil {
		u = &usageMetadata{}
	}
	input := u.PromptTokenCount + u.ToolUsePromptTokenCount
	output := u.CandidatesTokenCount + u.ThoughtsTokenCount
	total := u.TotalTokenCount
	if total == 0 {
		total = input + output
	}
	c.ResponseMeta = &schema.ResponseMeta{
		FinishReason: finishReason(a.finish, a.toolCalls > 0),
		Usage: &schema.TokenUsage{
			PromptTokens:            input,
			PromptTokenDetails:      schema.PromptTokenDetails{CachedTokens: u.CachedContentTokenCount},
			CompletionTokens:        output,
			TotalTokens:             total,
			CompletionTokensDetails: schema.CompletionTokensDetails{ReasoningTokens: u.ThoughtsTokenCount},
		},
	}
	c.Extra = map[string]any{provider.ExtraRawFinishReason: a.finish}
	if a.model != "" {
		c.Extra[provider.ExtraResponseModel] = a.model
	}
	if a.signature != "" {
		c.Extra[provider.ExtraReasoningData] = map[string]string{signatureKey: a.signature}
	}
	return c
}

// decode parses one response or stream chunk. A chunk holding none of the
// members this package reads is not an error: decodeWhole requires them of
// a whole response, and a stream needs a finishReason in the end.
func decode(data []byte) (*response, error) {
	var r response
	if err := provider.Decode(data, &r); err != nil {
		return nil, provider.Unknown("gemini: the response is not a GenerateContentResponse", err)
	}
	if err := r.apiError(); err != nil {
		return nil, err
	}
	return &r, nil
}

// apiError is the error a response or chunk reports in its error member.
func (r *response) apiError() error {
	if r.Error == nil {
		return nil
	}
	code := r.Error.Status
	if code == "" && r.Error.Code != 0 {
		code = strconv.Itoa(r.Error.Code)
	}
	return provider.FromStreamError(code, r.Error.Message)
}
