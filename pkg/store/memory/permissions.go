package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcore/agentcore/pkg/store"
)

// AskPermission stores a pending permission request.
func (s *Store) AskPermission(ctx context.Context, p *store.Permission) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	r, ok := s.runs[p.RunID]
	if !ok {
		return fmt.Errorf("run %q: %w", p.RunID, store.ErrNotFound)
	}
	for _, q := range r.perms {
		if q.CallID == p.CallID {
			return fmt.Errorf("permission %q of run %q: %w", p.CallID, p.RunID, store.ErrExists)
		}
	}
	c := *p
	c.Asked = time.Now()
	c.Answered, c.Allow, c.Reason = false, false, ""
	r.perms = append(r.perms, &c)
	return nil
}

// AnswerPermission decides a pending permission request.
func (s *Store) AnswerPermission(ctx context.Context, runID, callID string, allow bool, reason string) (*store.Permission, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	r, err := s.runLocked(runID)
	if err != nil {
		return nil, err
	}
	if r.r.Done() {
		return nil, fmt.Errorf("run %q ended (%s): %w", runID, r.r.State, store.ErrConflict)
	}
	for _, p := range r.perms {
		if p.CallID != callID {
			continue
		}
		c := *p
		if p.Answered {
			return &c, fmt.Errorf("permission %q of run %q: answered already: %w", callID, runID, store.ErrConflict)
		}
		p.Answered, p.Allow, p.Reason = true, allow, reason
		c = *p
		return &c, nil
	}
	return nil, fmt.Errorf("permission %q of run %q: %w", callID, runID, store.ErrNotFound)
}

// Permissions returns a run's permission requests in order.
func (s *Store) Permissions(ctx context.Context, runID string) ([]*store.Permission, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	r, err := s.runLocked(runID)
	if err != nil {
		return nil, err
	}
	out := make([]*store.Permission, len(r.perms))
	for i, p := range r.perms {
		c := *p
		out[i] = &c
	}
	return out, nil
}
