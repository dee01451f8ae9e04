package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com/v1"

// APIVersion is the anthropic-version header sent with every request.
const APIVersion = "2023-06-01"

// Model is an Anthropic Messages API chat model.
type Model struct {
	cfg   provider.Config
	tools []*schema.ToolInfo
}

var _ model.ToolCallingChatModel = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg provider.Config) (*Model, error) {
	cfg, err := cfg.WithDefaults(DefaultBaseURL)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	return &Model{cfg: cfg}, nil
}

// WithTools returns a copy of the model that offers tools to the model.
func (m *Model) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	c := *m
	c.tools = tools
	return &c, nil
}

// Generate sends one non-streaming request and returns the whole message.
func (m *Model) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	resp, err := m.post(ctx, input, false, opts)
	if err != nil {
		return nil, err
	}
	return provider.ReadWhole(ctx, resp, decodeResponse)
}

// Stream sends one streaming request and returns its chunks as they arrive.
// The last chunk carries the finish reason and usage; every error, from here
// or from Recv, is a *provider.Error. Close or drain the reader.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	resp, err := m.post(ctx, input, true, opts)
	if err != nil {
		return nil, err
	}
	return provider.ReadStream(ctx, resp, decodeResponse, func(r *sse.Reader, emit func(*schema.Message) bool) error {
		return readStream(ctx, r, emit)
	})
}

// StreamEach implements provider.Streamer: Stream without its goroutine.
func (m *Model) StreamEach(ctx context.Context, input []*schema.Message, emit func(*schema.Message) bool, opts ...model.Option) error {
	resp, err := m.post(ctx, input, true, opts)
	if err != nil {
		return err
	}
	return provider.ReadEach(ctx, resp, decodeResponse, func(r *sse.Reader, emit func(*schema.Message) bool) error {
		return readStream(ctx, r, emit)
	}, emit)
}

// post builds and sends the request.
func (m *Model) post(ctx context.Context, input []*schema.Message, stream bool, opts []model.Option) (*http.Response, error) {
	body, err := buildRequest(m.cfg, provider.ApplyOptions(m.cfg, m.tools, opts...), input, stream)
	if err != nil {
		return nil, err
	}
	header := http.Header{"X-Api-Key": {m.cfg.APIKey}, "Anthropic-Version": {APIVersion}}
	if stream {
		header.Set("Accept", "text/event-stream")
	}
	return provider.PostJSON(ctx, m.cfg, m.cfg.BaseURL+"/messages", header, body)
}

// readStream turns stream events into chunks until message_stop. It returns
// nil when the stream completed or the consumer went away. Each event's
// type is read first; events of other types are skipped undecoded.
func readStream(ctx context.Context, r *sse.Reader, emit func(*schema.Message) bool) error {
	asm := newAssembler()
	for n := 1; ; n++ {
		ev, err := r.Next()
		if err != nil {
			return streamError(ctx, err, "anthropic: the stream ended before message_stop")
		}
		typ, err := provider.Type(ev.Data)
		if err != nil {
			return provider.UnreadableEvent("anthropic: ", n, ev.Type, ev.Data, err)
		}
		if typ == "" {
			typ = ev.Type
		}
		switch typ {
		case "message_start", "content_block_start", "content_block_delta", "content_block_stop",
			"message_delta", "message_stop", "error":
		default:
			continue
		}
		var payload event
		if err := provider.Decode(ev.Data, &payload); err != nil {
			return provider.UnreadableEvent("anthropic: ", n, ev.Type, ev.Data, err)
		}
		var chunks []*schema.Message
		switch typ {
		case "message_start":
			if chunks, err = asm.messageStart(payload.Message); err != nil {
				return err
			}
		case "content_block_start":
			if len(payload.ContentBlock) > 0 {
				chunks = asm.start(payload.Index, decodeBlock(payload.ContentBlock))
			}
		case "content_block_delta":
			if c := asm.delta(payload.Index, payload.Delta); c != nil {
				chunks = []*schema.Message{c}
			}
		case "content_block_stop":
			if c := asm.stopBlock(payload.Index); c != nil {
				chunks = []*schema.Message{c}
			}
		case "message_delta":
			var d delta
			if len(payload.Delta) > 0 && provider.Decode(payload.Delta, &d) == nil && d.StopReason != nil {
				asm.stop = *d.StopReason
			}
			asm.usage.merge(payload.Usage)
		case "message_stop":
			for _, c := range asm.end() {
				if !emit(c) {
					return nil
				}
			}
			return nil
		case "error":
			if payload.Error == nil {
				return provider.FromStreamError("", "")
			}
			return provider.FromStreamError(payload.Error.Type, payload.Error.Message)
		}
		for _, c := range chunks {
			if !emit(c) {
				return nil
			}
		}
	}
}

// streamError classifies a failure to read the next event: a body that ended
// (cleanly or cut) before the terminal event, or an oversized event, is
// unknown; the rest (cancellation, timeouts) goes to FromTransport.
func streamError(ctx context.Context, err error, ended string) error {
	switch {
	case ctx.Err() != nil:
		return provider.FromTransport(ctx, err)
	case provider.IsEOF(err):
		// Not wrapped: a stream error that is io.EOF reads as a clean end.
		return provider.Unknown(ended, nil)
	case errors.Is(err, sse.ErrEventTooLarge):
		return provider.Unknown("anthropic: the stream sent an oversized event", err)
	}
	return provider.FromTransport(ctx, err)
}
