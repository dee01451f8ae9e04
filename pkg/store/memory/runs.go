package memory

import (
	"context"
	"fmt"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func cloneRun(r *store.Run) *store.Run {
	c := *r
	c.Resume = append([]byte(nil), r.Resume...)
	if r.Resume == nil {
		c.Resume = nil
	}
	if r.Result != nil {
		c.Result = proto.Clone(r.Result).(*agentv1.RunResultEvent)
	}
	if r.Error != nil {
		c.Error = proto.Clone(r.Error).(*agentv1.RunError)
	}
	return &c
}

// StartRun stores r as running and takes its agent's lease.
func (s *Store) StartRun(ctx context.Context, r *store.Run, ttl time.Duration) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	a, ok := s.agents[r.AgentID]
	if !ok {
		return fmt.Errorf("agent %q: %w", r.AgentID, store.ErrNotFound)
	}
	if _, dup := s.runs[r.ID]; dup {
		return fmt.Errorf("run %q: %w", r.ID, store.ErrExists)
	}
	now := time.Now()
	if a.leaseRun != "" {
		holder := s.runs[a.leaseRun]
		held := holder != nil && !holder.r.Done()
		switch {
		case held && now.Before(a.leaseExpires):
			return &store.BusyError{RunID: a.leaseRun, Owner: a.leaseOwner}
		case held:
			return &store.BusyError{RunID: a.leaseRun, Owner: a.leaseOwner, Expired: true}
		}
	}
	c := cloneRun(r)
	c.State = agentv1.RunState_RUN_STATE_RUNNING
	c.Started = now
	c.LeaseExpires = now.Add(ttl)
	c.Tenant = a.a.Tenant
	c.HistoryStart = len(a.history)
	a.leaseRun, a.leaseOwner, a.leaseExpires = r.ID, r.Owner, c.LeaseExpires
	s.runs[r.ID] = &run{r: c}
	r.State, r.Started, r.LeaseExpires, r.Tenant, r.HistoryStart = c.State, c.Started, c.LeaseExpires, c.Tenant, c.HistoryStart
	r.AgentVersion = a.a.Version
	return nil
}

// RenewLeases extends the leases of owner's running runs.
func (s *Store) RenewLeases(ctx context.Context, owner string, ttl time.Duration) ([]string, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	until := time.Now().Add(ttl)
	var ids []string
	for _, a := range s.agents {
		if a.leaseRun == "" || a.leaseOwner != owner {
			continue
		}
		if r := s.runs[a.leaseRun]; r != nil && !r.r.Done() {
			a.leaseExpires, r.r.LeaseExpires = until, until
			ids = append(ids, r.r.ID)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// TakeOverRun makes owner the owner of a running run, to resume it.
func (s *Store) TakeOverRun(ctx context.Context, runID, owner string, attempts int, ttl time.Duration) (*store.Run, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	r, ok := s.runs[runID]
	switch {
	case !ok:
		return nil, fmt.Errorf("run %q: %w", runID, store.ErrNotFound)
	case r.r.Done():
		return nil, fmt.Errorf("run %q ended already (%s): %w", runID, r.r.State, store.ErrConflict)
	case r.r.Attempts != attempts:
		return nil, fmt.Errorf("run %q was taken over already (attempt %d): %w", runID, r.r.Attempts, store.ErrConflict)
	}
	until := time.Now().Add(ttl)
	r.r.Owner, r.r.LeaseExpires = owner, until
	r.r.Attempts++
	if a := s.agents[r.r.AgentID]; a != nil && a.leaseRun == runID {
		a.leaseOwner, a.leaseExpires = owner, until
	}
	return s.runOut(r), nil
}

// FinishRun ends a running run and releases its lease.
func (s *Store) FinishRun(ctx context.Context, runID string, state agentv1.RunState, result *agentv1.RunResultEvent, runErr *agentv1.RunError) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	ns, err := s.finishLocked(store.RunEnd{RunID: runID, State: state, Result: result, Error: runErr})
	s.mu.Unlock()
	for _, n := range ns {
		_ = s.hub.Notify(ctx, n)
	}
	return err
}

// finishLocked ends a running run, releases its lease and returns the
// notices to send.
func (s *Store) finishLocked(e store.RunEnd) ([]store.Notice, error) {
	r, ok := s.runs[e.RunID]
	if !ok {
		return nil, fmt.Errorf("run %q: %w", e.RunID, store.ErrNotFound)
	}
	if r.r.Done() {
		return nil, fmt.Errorf("run %q ended already (%s): %w", e.RunID, r.r.State, store.ErrConflict)
	}
	r.r.State, r.r.Ended = e.State, time.Now()
	if e.Result != nil {
		r.r.Result = proto.Clone(e.Result).(*agentv1.RunResultEvent)
	}
	if e.Error != nil {
		r.r.Error = proto.Clone(e.Error).(*agentv1.RunError)
	}
	agentID := r.r.AgentID
	ns := []store.Notice{{Kind: store.NoticeRunEnded, RunID: e.RunID, AgentID: agentID}}
	if a := s.agents[agentID]; a != nil && a.leaseRun == e.RunID {
		a.leaseRun, a.leaseOwner, a.leaseExpires = "", "", time.Time{}
		ns = append(ns, store.Notice{Kind: store.NoticeLease, AgentID: agentID, RunID: e.RunID})
	}
	return ns, nil
}

func (s *Store) runOut(r *run) *store.Run {
	c := cloneRun(r.r)
	if !c.Done() {
		c.LeaseExpired = !time.Now().Before(c.LeaseExpires)
	}
	return c
}

// GetRun returns a run.
func (s *Store) GetRun(ctx context.Context, id string) (*store.Run, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	r, err := s.runLocked(id)
	if err != nil {
		return nil, err
	}
	return s.runOut(r), nil
}

// newer orders runs newest first: by start time, then by id, descending.
func newer(a, b *store.Run) bool {
	if !a.Started.Equal(b.Started) {
		return a.Started.After(b.Started)
	}
	return a.ID > b.ID
}

// ListRuns pages through runs, newest first.
func (s *Store) ListRuns(ctx context.Context, q store.RunQuery) ([]*store.Run, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []*store.Run
	for _, r := range s.runs {
		switch {
		case q.AgentID != "" && r.r.AgentID != q.AgentID,
			!q.AnyTenant && r.r.Tenant != q.Tenant,
			q.State != agentv1.RunState_RUN_STATE_UNSPECIFIED && r.r.State != q.State,
			q.RootRunID != "" && r.r.ID != q.RootRunID && r.r.RootRunID != q.RootRunID,
			q.Before != nil && !newer(&store.Run{Started: q.Before.Started, ID: q.Before.ID}, r.r):
			continue
		}
		out = append(out, s.runOut(r))
	}
	sort.Slice(out, func(i, j int) bool { return newer(out[i], out[j]) })
	if n := limit(q.Limit); len(out) > n {
		out = out[:n]
	}
	return out, nil
}
