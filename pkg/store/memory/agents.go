package memory

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func cloneAgent(a *store.Agent) *store.Agent {
	c := *a
	c.Spec = proto.Clone(a.Spec).(*agentv1.Agent)
	c.Usage = proto.Clone(a.Usage).(*agentv1.Usage)
	c.Secrets = slices.Clone(a.Secrets)
	return &c
}

// live returns the agent's lease run when the lease has not expired.
func (a *agent) live(now time.Time) string {
	if a.leaseRun != "" && now.Before(a.leaseExpires) {
		return a.leaseRun
	}
	return ""
}

func (s *Store) agentOut(a *agent) *store.Agent {
	c := cloneAgent(a.a)
	c.HistoryLength = len(a.history)
	c.RunID = a.live(time.Now())
	return c
}

// CreateAgent stores a new agent with its initial history.
func (s *Store) CreateAgent(ctx context.Context, a *store.Agent, history []*agentv1.Message) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.agents[a.ID]; ok {
		return fmt.Errorf("agent %q: %w", a.ID, store.ErrExists)
	}
	c := cloneAgent(a)
	if c.Usage == nil {
		c.Usage = &agentv1.Usage{}
	}
	c.Version = 1
	a.Version = 1
	s.agents[a.ID] = &agent{a: c, history: cloneMessages(history)}
	return nil
}

// GetAgent returns an agent.
func (s *Store) GetAgent(ctx context.Context, id string) (*store.Agent, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	a, err := s.agentLocked(id)
	if err != nil {
		return nil, err
	}
	return s.agentOut(a), nil
}

// AgentVersion returns an agent's version.
func (s *Store) AgentVersion(ctx context.Context, id string) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	a, err := s.agentLocked(id)
	if err != nil {
		return 0, err
	}
	return a.a.Version, nil
}

func limit(n int) int {
	if n <= 0 {
		return 100
	}
	return n
}

// ListAgents pages through agents ordered by id.
func (s *Store) ListAgents(ctx context.Context, q store.AgentQuery) ([]*store.Agent, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var ids []string
	for id, a := range s.agents {
		if id > q.After && (q.AnyTenant || a.a.Tenant == q.Tenant) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if n := limit(q.Limit); len(ids) > n {
		ids = ids[:n]
	}
	out := make([]*store.Agent, len(ids))
	for i, id := range ids {
		out[i] = s.agentOut(s.agents[id])
	}
	return out, nil
}

// CountAgents counts every agent.
func (s *Store) CountAgents(ctx context.Context) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	return len(s.agents), nil
}

// UpdateAgent writes an agent's spec, secrets, tenant and update time.
func (s *Store) UpdateAgent(ctx context.Context, a *store.Agent) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	cur, ok := s.agents[a.ID]
	if !ok {
		return 0, fmt.Errorf("agent %q: %w", a.ID, store.ErrNotFound)
	}
	c := cloneAgent(a)
	cur.a.Spec, cur.a.Secrets, cur.a.Tenant, cur.a.Updated = c.Spec, c.Secrets, c.Tenant, c.Updated
	cur.a.Version++
	return cur.a.Version, nil
}

// DeleteAgent removes an agent and everything of it.
func (s *Store) DeleteAgent(ctx context.Context, id string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.agents[id]; !ok {
		return fmt.Errorf("agent %q: %w", id, store.ErrNotFound)
	}
	delete(s.agents, id)
	for rid, r := range s.runs {
		if r.r.AgentID == id {
			delete(s.runs, rid)
		}
	}
	return nil
}
