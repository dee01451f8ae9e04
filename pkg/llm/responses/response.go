package responses

import (
	"encoding/json"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/internal/openai"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// response is a response object: a whole body, or the one in a terminal
// event. Its output items are decoded one by one, by type.
type response struct {
	Status            string              `json:"status"`
	Model             string              `json:"model"`
	Output            []json.RawMessage   `json:"output"`
	Usage             *usage              `json:"usage"`
	Error             *openai.ErrorObject `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

type usage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	TotalTokens        int `json:"total_tokens"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// The output item types this package reads. Every other item (hosted tool
// calls such as web_search_call or tool_search_call, and whatever comes
// next) is skipped without its fields being decoded.
const (
	itemMessage   = "message"
	itemReasoning = "reasoning"
	itemFunction  = "function_call"
	itemCustom    = "custom_tool_call"
)

// outPart is a content or summary part of an output item.
type outPart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

// messageText is a message content part's text: output_text (text, as some
// gateways name it) and refusal parts have one; other parts have none.
func (p outPart) messageText() (string, bool) {
	switch p.Type {
	case "output_text", "text", "":
		return p.Text, true
	case "refusal":
		return p.Refusal, true
	}
	return "", false
}

// reasoningText is a reasoning item's summary_text or reasoning_text part's
// text.
func (p outPart) reasoningText() (string, bool) {
	switch p.Type {
	case "summary_text", "reasoning_text", "":
		return p.Text, true
	}
	return "", false
}

// outItem is an output item of one of the types this package reads.
type outItem struct {
	Type             string            `json:"type"`
	ID               string            `json:"id"`
	Status           string            `json:"status"`
	CallID           string            `json:"call_id"`
	Name             string            `json:"name"`
	Arguments        provider.JSONText `json:"arguments"`
	Input            string            `json:"input"`
	Content          []outPart         `json:"content"`
	Summary          []outPart         `json:"summary"`
	EncryptedContent string            `json:"encrypted_content"`
}

// decodeItem reads an output item's type and then, when it is one this
// package reads, the item; ok is false for every other item.
func decodeItem(raw json.RawMessage) (*outItem, bool) {
	typ, err := provider.Type(raw)
	if err != nil {
		return nil, false
	}
	switch typ {
	case itemMessage, itemReasoning, itemFunction, itemCustom:
	default:
		return nil, false
	}
	var it outItem
	if provider.Decode(raw, &it) != nil {
		return nil, false
	}
	return &it, true
}

func (it *outItem) isCall() bool { return it.Type == itemFunction || it.Type == itemCustom }

// callID is the id results refer to: call_id, else the item id.
func (it *outItem) callID() string {
	if it.CallID != "" {
		return it.CallID
	}
	return it.ID
}

// finish maps a finished response's status to the normalised and raw
// finish reasons; err is set for a failed or unfinished response.
func (r *response) finish(hasToolCalls bool) (norm, raw string, err error) {
	switch r.Status {
	case "completed":
		if hasToolCalls {
			return provider.FinishToolCalls, r.Status, nil
		}
		return provider.FinishStop, r.Status, nil
	case "incomplete":
		raw = r.Status
		if r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
			raw = r.IncompleteDetails.Reason
		}
		switch raw {
		case "max_output_tokens":
			return provider.FinishLength, raw, nil
		case "content_filter":
			return provider.FinishContentFilter, raw, nil
		}
		return provider.FinishOther, raw, nil
	case "failed":
		if r.Error != nil {
			return "", "", r.Error.Err()
		}
		return "", "", provider.FromStreamError("", "the response failed without saying why")
	}
	return "", "", provider.Unknown("the response is not finished (status "+r.Status+")", nil)
}

// finalChunk carries the finish reason, usage and reasoning item data.
func finalChunk(norm, raw string, u *usage, items []reasoningItem) *schema.Message {
	msg := &schema.Message{
		Role:         schema.Assistant,
		ResponseMeta: &schema.ResponseMeta{FinishReason: norm, Usage: &schema.TokenUsage{}},
		Extra:        map[string]any{provider.ExtraRawFinishReason: raw},
	}
	if u != nil {
		tu := msg.ResponseMeta.Usage
		tu.PromptTokens, tu.CompletionTokens, tu.TotalTokens = u.InputTokens, u.OutputTokens, u.TotalTokens
		if tu.TotalTokens == 0 {
			tu.TotalTokens = u.InputTokens + u.OutputTokens
		}
		if d := u.InputTokensDetails; d != nil {
			tu.PromptTokenDetails.CachedTokens = d.CachedTokens
		}
		if d := u.OutputTokensDetails; d != nil {
			tu.CompletionTokensDetails.ReasoningTokens = d.ReasoningTokens
		}
	}
	if len(items) > 0 {
		b, _ := json.Marshal(items)
		msg.Extra[provider.ExtraReasoningData] = map[string]string{ReasoningKey: string(b)}
	}
	return msg
}

// reasoningData returns the reasoning items' provider data of an output.
func reasoningData(output []json.RawMessage) []reasoningItem {
	var out []reasoningItem
	for _, raw := range output {
		if it, ok := decodeItem(raw); ok && it.Type == itemReasoning && it.ID != "" {
			out = append(out, reasoningItem{ID: it.ID, EncryptedContent: it.EncryptedContent})
		}
	}
	return out
}

// decodeWhole turns a non-streaming body into the chunks a stream of the
// same answer gives: its output items are played through the stream's own
// state as if each had just finished, then the final chunk. custom names
// the custom tools the request offered (see stream.providers).
func decodeWhole(body []byte, custom map[string]bool) ([]*schema.Message, error) {
	var r response
	if err := provider.Decode(body, &r); err != nil {
		return nil, provider.Unknown("the response is not a Responses API response", err)
	}
	if r.Status == "" && r.Error != nil {
		return nil, r.Error.Err()
	}
	var chunks []*schema.Message
	s := newStream(func(m *schema.Message) bool { chunks = append(chunks, m); return true }, custom)
	if err := s.finish(&r); err != nil {
		return nil, err
	}
	return chunks, nil
}
