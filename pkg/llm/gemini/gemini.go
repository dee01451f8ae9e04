package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// Model is a Gemini API chat model.
type Model struct {
	cfg   provider.Config
	tools []*schema.ToolInfo
}

var _ model.ToolCallingChatModel = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg provider.Config) (*Model, error) {
	cfg, err := cfg.WithDefaults(DefaultBaseURL)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	return &Model{cfg: cfg}, nil
}

// WithTools returns a copy of the model that offers tools to the model.
func (m *Model) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	c := *m
	c.tools = tools
	return &c, nil
}

// Generate sends one generateContent request and returns the whole message.
func (m *Model) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	resp, err := m.post(ctx, input, false, opts)
	if err != nil {
		return nil, err
	}
	return provider.ReadWhole(ctx, resp, decodeWhole)
}

// decodeWhole turns a whole response body into message chunks, the final
// chunk last. A JSON array of responses (streamGenerateContent without
// alt=sse) is read as the stream it stands for.
func decodeWhole(body []byte) ([]*schema.Message, error) {
	items := []json.RawMessage{body}
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		if err := provider.Decode(trimmed, &items); err != nil {
			return nil, provider.Unknown("gemini: the response is not a GenerateContentResponse", err)
		}
	}
	a := &assembler{}
	var chunks []*schema.Message
	read := false // a response with candidates, feedback or usage was read
	for _, item := range items {
		r, err := decode(item)
		if err != nil {
			return nil, err
		}
		if r.Candidates == nil && r.PromptFeedback == nil && r.UsageMetadata == nil {
			continue
		}
		read = true
		chunks = append(chunks, a.add(r)...)
	}
	if !read {
		return nil, provider.Unknown("gemini: the response has no candidates", nil)
	}
	if !a.done {
		return nil, provider.Unknown("gemini: the response has no finishReason", nil)
	}
	return append(chunks, a.final()), nil
}

// Stream sends one streamGenerateContent request and returns its chunks as
// they arrive. The last chunk carries the finish reason and usage; every
// error, from here or from Recv, is a *provider.Error. Close or drain the
// reader.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	resp, err := m.post(ctx, input, true, opts)
	if err != nil {
		return nil, err
	}
	return provider.ReadStream(ctx, resp, decodeWhole, func(r *sse.Reader, emit func(*schema.Message) bool) error {
		return readStream(ctx, r, emit)
	})
}

// StreamEach implements provider.Streamer: Stream without its goroutine.
func (m *Model) StreamEach(ctx context.Context, input []*schema.Message, emit func(*schema.Message) bool, opts ...model.Option) error {
	resp, err := m.post(ctx, input, true, opts)
	if err != nil {
		return err
	}
	return provider.ReadEach(ctx, resp, decodeWhole, func(r *sse.Reader, emit func(*schema.Message) bool) error {
		return readStream(ctx, r, emit)
	}, emit)
}

// post builds and sends the request.
func (m *Model) post(ctx context.Context, input []*schema.Message, stream bool, opts []model.Option) (*http.Response, error) {
	body, err := buildRequest(m.cfg, provider.ApplyOptions(m.cfg, m.tools, opts...), input)
	if err != nil {
		return nil, err
	}
	name := m.cfg.Model
	if !strings.Contains(name, "/") {
		name = "models/" + name
	}
	url := m.cfg.BaseURL + "/" + name + ":generateContent"
	if stream {
		url = m.cfg.BaseURL + "/" + name + ":streamGenerateContent?alt=sse"
	}
	return provider.PostJSON(ctx, m.cfg, url, http.Header{"X-Goog-Api-Key": {m.cfg.APIKey}}, body)
}

// readStream turns stream chunks into message chunks until the body ends.
// It returns nil when the stream completed or the consumer went away.
func readStream(ctx context.Context, r *sse.Reader, emit func(*schema.Message) bool) error {
	a := &assembler{}
	for n := 1; ; n++ {
		ev, err := r.Next()
		switch {
		case err == nil:
		case ctx.Err() == nil && provider.IsEOF(err):
			// The body ended, cleanly or cut: complete once a finishReason came.
			if !a.done {
				// Not wrapped: a stream error that is io.EOF reads as a clean end.
				return provider.Unknown("gemini: the stream ended without a finishReason", nil)
			}
			emit(a.final())
			return nil
		case errors.Is(err, sse.ErrEventTooLarge):
			return provider.Unknown("gemini: the stream sent an oversized event", err)
		default:
			return provider.FromTransport(ctx, err)
		}
		var resp response
		if err := provider.Decode(ev.Data, &resp); err != nil {
			return provider.UnreadableEvent("gemini: ", n, ev.Type, ev.Data, err)
		}
		if err := resp.apiError(); err != nil {
			return err
		}
		for _, c := range a.add(&resp) {
			if !emit(c) {
				return nil
			}
		}
	}
}
