// Package openai holds what the two OpenAI protocol adapters (chat and
// responses) share: data URLs, audio formats, content text, finish reasons,
// headers, and OpenAI's error object.
package openai

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// DataURL is the media as a URL: its own URL, or a data URL of its base64
// data (application/octet-stream when it has no MIME type).
func DataURL(m provider.Media) string {
	if m.URL != "" {
		return m.URL
	}
	mime := m.MIMEType
	if mime == "" {
		mime = "application/octet-stream"
	}
	return "data:" + mime + ";base64," + m.Data
}

// AudioFormat is OpenAI's input_audio format for a MIME type: wav or mp3
// (the two the APIs take), else the MIME subtype.
func AudioFormat(mime string) string {
	switch mime {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return "wav"
	case "audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg-3":
		return "mp3"
	}
	_, sub, _ := strings.Cut(mime, "/")
	return sub
}

// ErrorObject is OpenAI's error object, as sent in a 2xx body, a stream
// chunk, a Responses "error" event or a failed response.
type ErrorObject struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// Err classifies the error by its code, or its type when it has no code.
func (e *ErrorObject) Err() *provider.Error {
	code := strings.Trim(string(e.Code), `"`)
	if code == "" || code == "null" {
		code = e.Type
	}
	return provider.FromStreamError(code, e.Message)
}

// Header is an OpenAI request's headers: the bearer key and the accepted
// type (provider.PostJSON adds Config.Headers).
func Header(cfg provider.Config, stream bool) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return h
}

// NewCallID makes an id for a tool call the server sent without one.
func NewCallID() string {
	return "call_" + rand.Text()[:16]
}

// FormatName makes a structured output name OpenAI accepts (letters,
// digits, _ and -, at most 64) from name; empty means "response".
func FormatName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, name)
	if name == "" {
		name = "response"
	}
	return name[:min(len(name), 64)]
}

// PlainText is a message's text: Content, else its text parts joined with
// newlines.
func PlainText(m *schema.Message) string {
	if m.Content != "" || len(m.UserInputMultiContent) == 0 {
		return m.Content
	}
	var texts []string
	for _, p := range m.UserInputMultiContent {
		if p.Type == schema.ChatMessagePartTypeText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Parts maps a message's content to a protocol's parts: Content as a text
// part (when set, or when there are no parts), then each part, text parts
// with text and the others with media.
func Parts[T any](m *schema.Message, text func(string) T, media func(schema.MessageInputPart) (T, error)) ([]T, error) {
	parts := make([]T, 0, len(m.UserInputMultiContent)+1)
	if m.Content != "" || len(m.UserInputMultiContent) == 0 {
		parts = append(parts, text(m.Content))
	}
	for _, p := range m.UserInputMultiContent {
		if p.Type == schema.ChatMessagePartTypeText {
			parts = append(parts, text(p.Text))
			continue
		}
		mp, err := media(p)
		if err != nil {
			return nil, err
		}
		parts = append(parts, mp)
	}
	return parts, nil
}

// SDKOptions are the AI SDK's OpenAI options that switch the SDK's own
// behaviour rather than name request fields.
type SDKOptions struct {
	// StrictJSONSchema (strictJsonSchema) sets strict on the structured
	// output schema.
	StrictJSONSchema bool
	// NoStructuredOutputs (structuredOutputs: false) asks for json_object
	// instead of json_schema.
	NoStructuredOutputs bool
	// SystemMessageMode (systemMessageMode) is "system" (default),
	// "developer" or "remove".
	SystemMessageMode string
}

// SplitVendor returns the vendor options as request fields, named in
// snake_case, and the AI SDK switches taken out of them (forceReasoning,
// which only steers the SDK, is dropped).
func SplitVendor(opts map[string]any) (map[string]any, SDKOptions) {
	fields := make(map[string]any, len(opts))
	var sdk SDKOptions
	for k, v := range opts {
		switch k = provider.SnakeKey(k); k {
		case "strict_json_schema":
			sdk.StrictJSONSchema, _ = v.(bool)
		case "structured_outputs":
			if b, ok := v.(bool); ok && !b {
				sdk.NoStructuredOutputs = true
			}
		case "system_message_mode":
			sdk.SystemMessageMode, _ = v.(string)
		case "force_reasoning":
		default:
			fields[k] = v
		}
	}
	return fields, sdk
}
