// Package memory is the store driver that keeps nothing: agents, histories,
// runs and events live in this process's memory and are gone when it
// exits. It is agent-server's `-store memory`, for tests and for users who
// want no persistence; it passes the same conformance suite as the drivers
// that keep things.
package memory

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Store is the memory driver. It is safe for concurrent use.
type Store struct {
	hub store.Hub

	mu     sync.Mutex
	closed bool
	agents map[string]*agent // by id
	runs   map[string]*run   // by id
}

// agent is a stored agent with its history and lease. Guarded by Store.mu.
type agent struct {
	a       *store.Agent
	history []*agentv1.Message
	// lease: the run holding the agent, and until when.
	leaseRun, leaseOwner string
	leaseExpires         time.Time
}

// run is a stored run with its events and permission requests. Guarded by Store.mu.
type run struct {
	r      *store.Run
	events []storedEvent
	perms  []*store.Permission
}

// storedEvent is an event as the store keeps it: its wire form, which
// costs less to take in than a deep copy and holds no pointer for the
// garbage collector to follow (a server keeps every event of its runs
// until -event-retention); or, for an event that cannot be encoded (a
// string that is not UTF-8), a copy.
type storedEvent struct {
	seq  int64
	data []byte
	msg  *agentv1.Event
}

func keepEvent(ev *agentv1.Event) storedEvent {
	if data, err := proto.Marshal(ev); err == nil {
		return storedEvent{seq: ev.GetSeq(), data: data}
	}
	return storedEvent{seq: ev.GetSeq(), msg: proto.Clone(ev).(*agentv1.Event)}
}

// event returns a copy of the stored event.
func (e storedEvent) event() (*agentv1.Event, error) {
	if e.msg != nil {
		return proto.Clone(e.msg).(*agentv1.Event), nil
	}
	ev := &agentv1.Event{}
	if err := proto.Unmarshal(e.data, ev); err != nil {
		return nil, fmt.Errorf("event %d: %w", e.seq, err)
	}
	return ev, nil
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{agents: map[string]*agent{}, runs: map[string]*run{}}
}

// Shared is false: no other process sees this memory.
func (s *Store) Shared() bool { return false }

// Close empties the store and ends Listen calls.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.agents, s.runs = map[string]*agent{}, map[string]*run{}
	s.mu.Unlock()
	s.hub.Close()
	return nil
}

// lock takes the lock unless the store is closed.
func (s *Store) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	return nil
}

func cloneAgent(a *store.Agent) *store.Agent {
	c := *a
	c.Spec = proto.Clone(a.Spec).(*agentv1.Agent)
	c.Usage = proto.Clone(a.Usage).(*agentv1.Usage)
	c.Secrets = slices.Clone(a.Secrets)
	return &c
}

func cloneRun(r *store.Run) *store.Run {
	c := *r
	if r.Result != nil {
		c.Result = proto.Clone(r.Result).(*agentv1.RunResultEvent)
	}
	if r.Error != nil {
		c.Error = proto.Clone(r.Error).(*agentv1.RunError)
	}
	return &c
}

func cloneMessages(msgs []*agentv1.Message) []*agentv1.Message {
	out := make([]*agentv1.Message, len(msgs))
	for i, m := range msgs {
		out[i] = proto.Clone(m).(*agentv1.Message)
	}
	return out
}

// live returns the agent's lease run when the lease has not expired.
func (a *agent) live(now time.Time) string {
	if a.leaseRun != "" && now.Before(a.leaseExpires) {
		return a.leaseRun
	}
	return ""
}

// agentLocked returns the agent of that id; s.mu is held.
func (s *Store) agentLocked(id string) (*agent, error) {
	a, ok := s.agents[id]
	if !ok {
		return nil, fmt.Errorf("agent %q: %w", id, store.ErrNotFound)
	}
	return a, nil
}

// runLocked returns the run of that id; s.mu is held.
func (s *Store) runLocked(id string) (*run, error) {
	r, ok := s.runs[id]
	if !ok {
		return nil, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	return r, nil
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
	a.leaseRun, a.leaseOwner, a.leaseExpires = r.ID, r.Owner, c.LeaseExpires
	s.runs[r.ID] = &run{r: c}
	r.State, r.Started, r.LeaseExpires, r.Tenant = c.State, c.Started, c.LeaseExpires, c.Tenant
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

// AppendEvents stores events, then ends runs, and tells listeners. Each
// run's events are checked before any is stored.
func (s *Store) AppendEvents(ctx context.Context, events []*agentv1.Event, ends ...store.RunEnd) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	byRun := map[string][]*agentv1.Event{}
	var order []string
	for _, ev := range events {
		id := ev.GetRunId()
		if _, seen := byRun[id]; !seen {
			order = append(order, id)
		}
		byRun[id] = append(byRun[id], ev)
	}
	left := store.LeftOut{}
	var ns []store.Notice
	for _, id := range order {
		evs := byRun[id]
		r, ok := s.runs[id]
		if !ok {
			left[id] = fmt.Errorf("events of run %q: %w", id, store.ErrNotFound)
			continue
		}
		last := r.r.LastSeq
		for _, ev := range evs {
			if ev.GetSeq() <= last {
				left[id] = fmt.Errorf("event %d of run %q after %d: %w", ev.GetSeq(), id, last, store.ErrConflict)
				break
			}
			last = ev.GetSeq()
		}
		if left[id] != nil {
			continue
		}
		for _, ev := range evs {
			r.events = append(r.events, keepEvent(ev))
		}
		r.r.LastSeq = last
		ns = append(ns, store.Notice{Kind: store.NoticeEvents, RunID: id, Seq: last})
	}
	for _, e := range ends {
		if left[e.RunID] != nil {
			continue
		}
		if more, err := s.finishLocked(e); err == nil {
			ns = append(ns, more...)
		}
	}
	s.mu.Unlock()
	for _, n := range ns {
		_ = s.hub.Notify(ctx, n)
	}
	return left.Err()
}

// Events returns up to limit events of a run after seq after.
func (s *Store) Events(ctx context.Context, runID string, after int64, n int) ([]*agentv1.Event, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	r, err := s.runLocked(runID)
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].seq > after })
	end := min(len(r.events), i+limit(n))
	out := make([]*agentv1.Event, 0, end-i)
	for _, e := range r.events[i:end] {
		ev, err := e.event()
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// DeleteEvents deletes the events of runs that ended before t.
func (s *Store) DeleteEvents(ctx context.Context, t time.Time) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	var n int64
	for _, r := range s.runs {
		if r.r.Done() && r.r.Ended.Before(t) && len(r.events) > 0 {
			n += int64(len(r.events))
			r.events = nil
			r.r.Purged = true
		}
	}
	return n, nil
}

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

// Notify hands n to this process's listeners.
func (s *Store) Notify(ctx context.Context, n store.Notice) error { return s.hub.Notify(ctx, n) }

// Listen calls fn with every notice until ctx ends or the store closes.
func (s *Store) Listen(ctx context.Context, fn func(store.Notice)) error {
	return s.hub.Listen(ctx, fn)
}

// String names the driver.
func (s *Store) String() string { return "memory" }
