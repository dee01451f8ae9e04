package server

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/apireq"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/interceptor"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// GetHistory reads an agent's history from the store, optionally grouped
// into turns and rendered, in pages: page_size messages at most, and never
// more than fit in one response (-max-message-bytes). With no page_size, a
// history that fits comes whole, as it always did.
func (s *Server) GetHistory(ctx context.Context, req *agentv1.GetHistoryRequest) (*agentv1.GetHistoryResponse, error) {
	rec, err := s.agentRecord(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	if req.GetPageSize() < 0 {
		return nil, apierr.InvalidField("page_size", "must not be negative")
	}
	h, _, err := s.store.History(ctx, rec.ID)
	if err != nil {
		return nil, apierr.Store(err)
	}
	start := 0
	if tok := req.GetPageToken(); tok != "" {
		if start, err = apireq.HistoryPageStart(tok, len(h)); err != nil {
			return nil, err
		}
	}
	resp := &agentv1.GetHistoryResponse{StartIndex: int32(start), HistoryLength: int32(len(h))}
	if req.GetIncludeTurns() {
		for _, t := range history.Turns(h) {
			idx := make([]int32, len(t.Indexes))
			for i, x := range t.Indexes {
				idx[i] = int32(x)
			}
			resp.Turns = append(resp.Turns, &agentv1.Turn{MessageIndexes: idx})
		}
	}
	// What the page's messages may take: the limit less the rest of the
	// response, and room for the rendered text, which grows with them.
	budget := s.cfg.Limits.MaxMessageBytes - interceptor.MessageRoom - proto.Size(resp)
	if req.GetIncludeRendered() {
		budget /= 2
	}
	end := start
	for end < len(h) && (req.GetPageSize() == 0 || end-start < int(req.GetPageSize())) {
		m := h[end]
		size := proto.Size(m) + 8 // its tag and length
		if size > budget {
			if end > start {
				break
			}
			// A message larger than a response on its own: cut to fit.
			m = interceptor.FitMessage(m, budget-8)
			size = budget
		}
		resp.Messages = append(resp.Messages, m)
		budget -= size
		end++
	}
	if end < len(h) {
		resp.NextPageToken = apireq.HistoryPageToken(end, len(h))
	}
	if req.GetIncludeRendered() {
		labels := s.renderLabels(req.GetRenderLabels())
		text := history.RenderWith(resp.Messages, labels)
		if start == 0 && end == len(h) {
			text = history.RenderWith(h, labels) // the whole history, as it always was
		}
		room := s.cfg.Limits.MaxMessageBytes - interceptor.MessageRoom - proto.Size(resp)
		resp.Rendered = interceptor.CutForMessage(text, max(room-interceptor.NoteSize, 0))
	}
	return resp, nil
}

// SetHistory replaces a session's history; FAILED_PRECONDITION while it
// runs, here or on another replica.
func (s *Server) SetHistory(ctx context.Context, req *agentv1.SetHistoryRequest) (*agentv1.SetHistoryResponse, error) {
	sess, err := s.agent(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	defer s.agents.Unpin(sess)
	if err := s.checkHistorySize(len(req.GetMessages()), "messages"); err != nil {
		return nil, err
	}
	if rec, err := s.store.GetAgent(ctx, sess.id); err != nil {
		return nil, apierr.Store(err)
	} else if rec.RunID != "" && !sess.engine.State().Running {
		return nil, apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_RUN_ACTIVE, "the agent is running on another replica (run %s); stop it first or wait", rec.RunID)
	}
	if err := sess.engine.SetHistory(req.GetMessages()); err != nil {
		return nil, apierr.FieldsUnder(err, "", map[string]string{"history": "messages"})
	}
	v, err := s.store.ReplaceHistory(ctx, sess.id, req.GetMessages())
	if err != nil {
		sess.stale()
		return nil, apierr.Store(err)
	}
	sess.wrote(v)
	return &agentv1.SetHistoryResponse{HistoryLength: int32(len(req.GetMessages()))}, nil
}

// PreviewContext shows what the next model request would hold.
func (s *Server) PreviewContext(ctx context.Context, req *agentv1.PreviewContextRequest) (*agentv1.PreviewContextResponse, error) {
	sess, err := s.agent(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	defer s.agents.Unpin(sess)
	if c, err := s.catalog(); err == nil {
		if err := sess.refresh(c); err != nil {
			return nil, err
		}
	}
	p, err := sess.engine.Preview(req.GetInput())
	if err != nil {
		return nil, apierr.FieldsUnder(err, "", map[string]string{"config": "agent.config"})
	}
	return &agentv1.PreviewContextResponse{
		System: p.System, Messages: p.Messages, Tokens: int64(p.Tokens), MaxTokens: int64(p.MaxTokens),
		WouldCompact: p.WouldCompact, HistoryTokens: int64(p.HistoryTokens),
	}, nil
}

// renderLabels are the labels a GetHistory asked for, else the server's
// -render-labels.
func (s *Server) renderLabels(asked agentv1.RenderLabels) history.Labels {
	switch asked {
	case agentv1.RenderLabels_RENDER_LABELS_ENGLISH:
		return history.English()
	case agentv1.RenderLabels_RENDER_LABELS_ORIGINAL:
		return history.Chinese()
	}
	if l, ok := history.LabelsNamed(s.cfg.RenderLabels); ok {
		return l
	}
	return history.English()
}
