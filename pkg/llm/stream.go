package llm

import (
	"context"
	"errors"
	"io"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// streamOnce makes one streaming request, hands each delta to onDelta and
// returns the whole message. delivered says whether any delta reached onDelta.
func streamOnce(ctx context.Context, m model.ToolCallingChatModel, msgs []*schema.Message, opts []model.Option, onDelta func(Delta)) (*schema.Message, bool, error) {
	if s, ok := m.(provider.Streamer); ok {
		return streamEach(ctx, s, msgs, opts, onDelta)
	}
	sr, err := m.Stream(ctx, msgs, opts...)
	if err != nil {
		return nil, false, err
	}
	defer sr.Close()
	var chunks []*schema.Message
	delivered := false
	for {
		chunk, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, delivered, err
		}
		if chunk == nil {
			continue
		}
		chunks = append(chunks, chunk)
		if onDelta != nil && emit(chunk, onDelta) {
			delivered = true
		}
	}
	if len(chunks) == 0 {
		return nil, delivered, provider.Unknown("the stream ended without a response", nil)
	}
	msg, err := concat(chunks)
	return msg, delivered, err
}

// streamEach is streamOnce for a model that streams to a callback, which
// spares a goroutine and a channel handoff per chunk.
func streamEach(ctx context.Context, s provider.Streamer, msgs []*schema.Message, opts []model.Option, onDelta func(Delta)) (*schema.Message, bool, error) {
	var chunks []*schema.Message
	delivered := false
	err := s.StreamEach(ctx, msgs, func(chunk *schema.Message) bool {
		if chunk == nil {
			return true
		}
		chunks = append(chunks, chunk)
		if onDelta != nil && emit(chunk, onDelta) {
			delivered = true
		}
		return true
	}, opts...)
	if err != nil {
		return nil, delivered, err
	}
	if len(chunks) == 0 {
		return nil, delivered, provider.Unknown("the stream ended without a response", nil)
	}
	msg, err := concat(chunks)
	return msg, delivered, err
}

// emit hands a chunk's deltas to onDelta and reports whether there were any.
func emit(chunk *schema.Message, onDelta func(Delta)) bool {
	sent := false
	if chunk.ReasoningContent != "" {
		onDelta(Delta{Reasoning: chunk.ReasoningContent})
		sent = true
	}
	if chunk.Content != "" {
		onDelta(Delta{Text: chunk.Content})
		sent = true
	}
	for i, tc := range chunk.ToolCalls {
		idx := i
		if tc.Index != nil {
			idx = *tc.Index
		}
		onDelta(Delta{ToolCall: &ToolCallDelta{Index: idx, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		sent = true
	}
	return sent
}

// concat joins streamed chunks into one message. Extra maps are merged here
// (last value wins, reasoning data maps merged) because eino's concatenation
// cannot join every value type adapters put there; usage comes from the
// chunk that reports it, reasoning tokens included.
func concat(chunks []*schema.Message) (*schema.Message, error) {
	plain := make([]*schema.Message, len(chunks))
	extra := map[string]any{}
	reasoningData := map[string]string{}
	var usage *schema.TokenUsage
	for i, ch := range chunks {
		cp := *ch
		for k, v := range ch.Extra {
			if k == provider.ExtraReasoningData {
				for dk, dv := range provider.StringMap(v) {
					reasoningData[dk] += dv
				}
				continue
			}
			extra[k] = v
		}
		cp.Extra = nil
		if ch.ResponseMeta != nil && ch.ResponseMeta.Usage != nil {
			usage = ch.ResponseMeta.Usage
		}
		plain[i] = &cp
	}
	msg, err := schema.ConcatMessages(plain)
	if err != nil {
		return nil, provider.Unknown("cannot join the streamed response: "+err.Error(), err)
	}
	if len(reasoningData) > 0 {
		extra[provider.ExtraReasoningData] = reasoningData
	}
	if len(extra) > 0 {
		msg.Extra = extra
	}
	if usage != nil {
		if msg.ResponseMeta == nil {
			msg.ResponseMeta = &schema.ResponseMeta{}
		}
		u := *usage
		msg.ResponseMeta.Usage = &u
	}
	return msg, nil
}
