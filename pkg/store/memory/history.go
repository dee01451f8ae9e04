package memory

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func cloneMessages(msgs []*agentv1.Message) []*agentv1.Message {
	out := make([]*agentv1.Message, len(msgs))
	for i, m := range msgs {
		out[i] = proto.Clone(m).(*agentv1.Message)
	}
	return out
}

// History returns an agent's history and version.
func (s *Store) History(ctx context.Context, agentID string) ([]*agentv1.Message, int64, error) {
	if err := s.lock(ctx); err != nil {
		return nil, 0, err
	}
	defer s.mu.Unlock()
	a, err := s.agentLocked(agentID)
	if err != nil {
		return nil, 0, err
	}
	return cloneMessages(a.history), a.a.Version, nil
}

// AppendHistory appends msgs at position at, with the usage totals.
func (s *Store) AppendHistory(ctx context.Context, agentID string, at int, msgs []*agentv1.Message, usage *agentv1.Usage, _ bool) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	a, err := s.agentLocked(agentID)
	if err != nil {
		return 0, err
	}
	if len(a.history) != at {
		return 0, fmt.Errorf("agent %q: append at %d to a history of %d: %w", agentID, at, len(a.history), store.ErrConflict)
	}
	a.history = append(a.history, cloneMessages(msgs)...)
	if usage != nil {
		a.a.Usage = proto.Clone(usage).(*agentv1.Usage)
	}
	a.a.Version++
	return a.a.Version, nil
}

// ReplaceHistory replaces an agent's history.
func (s *Store) ReplaceHistory(ctx context.Context, agentID string, msgs []*agentv1.Message) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	a, err := s.agentLocked(agentID)
	if err != nil {
		return 0, err
	}
	a.history = cloneMessages(msgs)
	a.a.Version++
	return a.a.Version, nil
}
