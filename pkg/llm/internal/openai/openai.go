// Package openai holds what the two OpenAI protocol adapters (chat and
// responses) share: data URLs, audio formats, content text, finish reasons,
// headers, and OpenAI's error object.
package openai

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"

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

// Text reads message content sent as a string, as an array of text parts
// (some gateways), or null.
func Text(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] == 'n' {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
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

// Finish normalises an OpenAI finish reason. A stop, or no reason at all
// in a response that otherwise ended properly, is tool_calls when the
// message has tool calls (some gateways say stop) and stop otherwise; an
// unknown reason is other.
func Finish(raw string, hasToolCalls bool) string {
	switch raw {
	case "stop", "":
		if hasToolCalls {
			return provider.FinishToolCalls
		}
		return provider.FinishStop
	case "length", "max_tokens", "max_output_tokens":
		return provider.FinishLength
	case "tool_calls", "function_call":
		return provider.FinishToolCalls
	case "content_filter":
		return provider.FinishContentFilter
	}
	return provider.FinishOther
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
