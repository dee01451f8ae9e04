// Package store keeps what agent-server must not forget across a restart, a
// crash or a move to another replica: agents, their histories, runs, the
// events of each run, the permission requests runs wait on and the token
// vault's sealed credentials.
//
// # What is kept, and how
//
// An Agent is its spec (config, tools, skills) with every secret taken out
// (Secrets names the fields that held one: the client must give them again),
// its usage totals, its history length and a Version that every write bumps,
// so that a process holding the agent in memory knows when another changed
// it. The history is a list of messages appended in batches: AppendHistory
// writes one batch (a step's messages with the usage totals they bring)
// atomically, at the position the caller expects, and fails with
// ErrConflict when the history moved meanwhile. A crash therefore never
// leaves half a step.
//
// A Run is one send (or manual compaction) of an agent: its state, its end
// (result or error), its times, the replica that owns it and its lease.
// StartRun takes the agent's lease for the run: one run per agent, across
// every process sharing the store. The owner renews its leases
// (RenewLeases); a lease that expires belongs to a replica that died, and a
// survivor ends its run as interrupted (FinishRun) before the agent runs
// again.
//
// A run's events are kept in order with their seq (AppendEvents, Events)
// until DeleteEvents sweeps them: the event log is the one source that a
// client reattaching to a run reads, live or finished, here or on another
// replica.
//
// The token vault (pkg/vault) keeps its records here as Credentials: one
// per tenant, subject (a user identity, or none) and MCP server, sealed
// before they reach the store, which holds only the ciphertext, the id of
// the key that sealed it, a version for compare-and-swap writes and the
// time of the last write.
//
// # Notices
//
// Processes sharing a store tell each other what changed through Notify and
// Listen: new events of a run, a run that ended, a lease released, a request
// to stop a run or a permission answered. Notices are wake-ups, never data:
// a listener reads the store after one, so a notice lost (a dropped
// connection, delivered as NoticeResync) costs latency, not correctness.
// The drivers send the notices of their own writes (events, run ended,
// lease released); the caller sends stop and permission notices.
//
// # Drivers
//
// Each driver is a folder beside this one: memory (nothing kept, for tests
// and for users who want none), sqlite (the default: one file, one process)
// and postgres (many replicas on one database). Every driver passes the
// conformance suite in storetest. Drivers apply their versioned schema
// migrations when opened.
package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Errors every driver returns (wrapped: test with errors.Is).
var (
	// ErrNotFound: no such agent, run or permission request.
	ErrNotFound = errors.New("store: not found")
	// ErrExists: an agent with this id exists.
	ErrExists = errors.New("store: already exists")
	// ErrConflict: the write expected a state the store no longer holds (a
	// history of another length, a run that already ended, a permission
	// already answered).
	ErrConflict = errors.New("store: conflict")
	// ErrBusy: the agent's lease is held by another run (see *BusyError).
	ErrBusy = errors.New("store: agent busy")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)

// BusyError is StartRun's error when another run holds the agent's lease.
// It wraps ErrBusy.
type BusyError struct {
	// RunID and Owner name the run holding the lease and its replica.
	RunID, Owner string
	// Expired says the lease expired: its owner stopped renewing it (it
	// died). The run must be ended (FinishRun, interrupted) before the
	// agent runs again.
	Expired bool
}

func (e *BusyError) Error() string {
	if e.Expired {
		return fmt.Sprintf("store: agent busy: run %s of replica %s holds an expired lease", e.RunID, e.Owner)
	}
	return fmt.Sprintf("store: agent busy: run %s of replica %s holds its lease", e.RunID, e.Owner)
}

func (e *BusyError) Unwrap() error { return ErrBusy }

// Agent is a stored agent.
type Agent struct {
	ID string
	// Tenant owns the agent; empty is the single default tenant.
	Tenant string
	// Spec holds the config (without secrets), tools and skills; its other
	// fields are not kept.
	Spec *agentv1.Agent
	// Secrets are the fields whose secret values were removed from the
	// config before it was stored, e.g. "config.api_key",
	// "config.provider.headers.Authorization".
	Secrets []string
	// Usage is summed over every run; HistoryLength counts the messages.
	// Both are kept by the history writes.
	Usage         *agentv1.Usage
	HistoryLength int
	// Version grows with every write to the agent or its history. Set by
	// the store.
	Version int64
	// RunID is the run holding the agent's lease, when the lease is live.
	// Set by the store.
	RunID   string
	Created time.Time
	Updated time.Time
}

// AgentQuery selects agents for ListAgents, ordered by id.
type AgentQuery struct {
	// Tenant selects one tenant's agents; AnyTenant lists every tenant's.
	Tenant    string
	AnyTenant bool
	// After lists ids greater than this one.
	After string
	// Limit bounds the result; 0 means 100.
	Limit int
}

// Run is a stored run.
type Run struct {
	ID      string
	AgentID string
	Tenant  string
	// Compaction marks a manual compaction (Compact) rather than a send.
	Compaction   bool
	OnDisconnect agentv1.OnDisconnect
	State        agentv1.RunState
	// Result is set when the run succeeded; Error when it failed, was
	// stopped or interrupted.
	Result *agentv1.RunResultEvent
	Error  *agentv1.RunError
	// Owner is the replica running it; LeaseExpires when its lease ends
	// unless renewed. LeaseExpired is set by the store (by its clock).
	Owner        string
	LeaseExpires time.Time
	LeaseExpired bool
	Started      time.Time
	Ended        time.Time
	// LastSeq is the seq of the last stored event. Set by the store.
	LastSeq int64
	// Purged says the run's events were swept (DeleteEvents, TrimEvents).
	// Set by the store.
	Purged bool
	// EventBytes is the size of the run's stored events (their encoded
	// form), 0 once they were swept. Set by the store.
	EventBytes int64
	// ParentRunID, RootRunID and Depth place a child run (started by a
	// tool call of another run, ToolCallID) in its tree; empty and 0 for a
	// root run.
	ParentRunID, RootRunID, ToolCallID string
	Depth                              int
	// User is the user identity the run acts for, as its caller gave it
	// (x-agentcore-user); "" for none. Its tool calls' credentials are the
	// user's (pkg/vault). A child run has its root's.
	User string
	// AgentVersion is the agent's version when StartRun took its lease, set
	// by StartRun on the run it was given (not kept): the caller knows
	// without another read whether the agent changed since it last saw it.
	AgentVersion int64
	// HistoryStart is the agent's history length when StartRun took its
	// lease: where the run's messages begin. Set by the store.
	HistoryStart int
	// Resume is what a server needs to resume the run after a crash (the
	// server's encoding); nil when the run is not to be resumed.
	Resume []byte
	// Attempts counts the times the run was taken over (TakeOverRun) to
	// resume it.
	Attempts int
}

// Done reports whether the run ended.
func (r *Run) Done() bool { return r.State != agentv1.RunState_RUN_STATE_RUNNING }

// RunQuery selects runs for ListRuns, newest first.
type RunQuery struct {
	// AgentID selects one agent's runs; empty lists every agent's.
	AgentID string
	// Tenant selects one tenant's runs; AnyTenant lists every tenant's.
	Tenant    string
	AnyTenant bool
	// State selects runs in that state; UNSPECIFIED means any.
	State agentv1.RunState
	// RootRunID selects one run tree: that run and its descendants.
	RootRunID string
	// Before lists runs older than this cursor (the last run of the previous page).
	Before *Cursor
	// Limit bounds the result; 0 means 100.
	Limit int
}

// RunEnd is how a run ended, for AppendEvents.
type RunEnd struct {
	RunID  string
	State  agentv1.RunState
	Result *agentv1.RunResultEvent
	Error  *agentv1.RunError
}

// EventsError is AppendEvents' error when it left runs out: Runs holds
// why for each (wrapping ErrConflict: the events do not follow the stored
// ones; ErrNotFound: no such run). errors.Is sees through to them.
type EventsError struct {
	Runs map[string]error
}

func (e *EventsError) Error() string {
	ids := make([]string, 0, len(e.Runs))
	for id := range e.Runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = e.Runs[id].Error()
	}
	return "store: events left out: " + strings.Join(parts, "; ")
}

func (e *EventsError) Unwrap() []error {
	out := make([]error, 0, len(e.Runs))
	for _, err := range e.Runs {
		out = append(out, err)
	}
	return out
}

// LeftOut collects the runs AppendEvents leaves out into an *EventsError
// (nil when none).
type LeftOut map[string]error

// Err is the *EventsError naming the runs left out, or nil.
func (l LeftOut) Err() error {
	if len(l) == 0 {
		return nil
	}
	return &EventsError{Runs: l}
}

// Cursor is a position in the runs, newest first.
type Cursor struct {
	Started time.Time
	ID      string
}

// Permission is a tool call waiting for (or given) a person's approval.
type Permission struct {
	RunID     string
	CallID    string
	ToolName  string
	Arguments string
	Asked     time.Time
	// Answered says a decision was made: Allow, with Reason.
	Answered bool
	Allow    bool
	Reason   string
}

// NoticeKind says what a notice is about.
type NoticeKind string

// Kinds of notices.
const (
	// NoticeEvents: RunID's events up to Seq are stored.
	NoticeEvents NoticeKind = "events"
	// NoticeRunEnded: RunID ended.
	NoticeRunEnded NoticeKind = "run"
	// NoticeLease: AgentID's lease was released.
	NoticeLease NoticeKind = "lease"
	// NoticeStop: the owner of RunID should stop it; Text is the cause
	// ("stopped", "replaced").
	NoticeStop NoticeKind = "stop"
	// NoticePermission: the permission request Text (a call id) of RunID
	// was answered.
	NoticePermission NoticeKind = "permission"
	// NoticeAgent: AgentID changed or was deleted.
	NoticeAgent NoticeKind = "agent"
	// NoticeResync: notices may have been lost (the listener reconnected);
	// re-read whatever is being waited for.
	NoticeResync NoticeKind = "resync"
)

// Notice tells processes sharing a store that something changed.
type Notice struct {
	Kind    NoticeKind `json:"k"`
	AgentID string     `json:"a,omitempty"`
	RunID   string     `json:"r,omitempty"`
	Seq     int64      `json:"s,omitempty"`
	Text    string     `json:"t,omitempty"`
}

// Agents keeps agents and their histories.
type Agents interface {
	// CreateAgent stores a new agent with its initial history (ErrExists
	// when the id is taken). It sets a.Version.
	CreateAgent(ctx context.Context, a *Agent, history []*agentv1.Message) error
	// GetAgent returns an agent (ErrNotFound).
	GetAgent(ctx context.Context, id string) (*Agent, error)
	// AgentVersion returns an agent's Version, as GetAgent would, without
	// reading the rest of it (ErrNotFound).
	AgentVersion(ctx context.Context, id string) (int64, error)
	// ListAgents pages through agents ordered by id.
	ListAgents(ctx context.Context, q AgentQuery) ([]*Agent, error)
	// CountAgents counts every agent.
	CountAgents(ctx context.Context) (int, error)
	// UpdateAgent writes an agent's Spec, Secrets, Tenant and Updated and
	// returns the new version (ErrNotFound).
	UpdateAgent(ctx context.Context, a *Agent) (int64, error)
	// DeleteAgent removes an agent with its history, runs, events and
	// permission requests (ErrNotFound).
	DeleteAgent(ctx context.Context, id string) error

	// History returns an agent's history and the agent's version.
	History(ctx context.Context, agentID string) ([]*agentv1.Message, int64, error)
	// AppendHistory appends msgs at position at, which must be the
	// history's length (else ErrConflict), and sets the usage totals when
	// usage is not nil, atomically. It returns the new version. With sync
	// it returns once the write is on disk; without, the write is durable
	// with the next synchronous one (a crash of the database server may
	// lose it, never part of it). Drivers that never wait for the disk
	// (memory; SQLite in WAL mode, synchronous NORMAL) ignore sync.
	AppendHistory(ctx context.Context, agentID string, at int, msgs []*agentv1.Message, usage *agentv1.Usage, sync bool) (int64, error)
	// ReplaceHistory replaces an agent's whole history and returns the new
	// version.
	ReplaceHistory(ctx context.Context, agentID string, msgs []*agentv1.Message) (int64, error)
}

// Runs keeps runs and the agents' leases.
type Runs interface {
	// StartRun stores r as running, owned by r.Owner, and takes its agent's
	// lease for ttl. When another run holds the lease it fails with a
	// *BusyError; an expired lease whose run has ended (or is not stored)
	// is taken over. ErrNotFound when the agent is gone.
	StartRun(ctx context.Context, r *Run, ttl time.Duration) error
	// RenewLeases extends by ttl the leases of owner's running runs and
	// returns their ids: a run of owner's missing from them lost its lease
	// (another replica ended it) and must stop.
	RenewLeases(ctx context.Context, owner string, ttl time.Duration) ([]string, error)
	// FinishRun ends a running run in state (succeeded, failed, stopped or
	// interrupted) with its result or error, and releases its agent's lease
	// if the run holds it. ErrConflict when the run already ended.
	FinishRun(ctx context.Context, runID string, state agentv1.RunState, result *agentv1.RunResultEvent, runErr *agentv1.RunError) error
	// TakeOverRun makes owner the owner of a running run cut off by a
	// crash, to resume it: it takes the run's lease (and its agent's, when
	// the run holds it) for ttl and counts one more attempt, provided the
	// run still has attempts attempts; two processes taking the same run
	// over cannot both succeed. It returns the run as taken over;
	// ErrConflict when the run ended or another process took it over first.
	TakeOverRun(ctx context.Context, runID, owner string, attempts int, ttl time.Duration) (*Run, error)
	// GetRun returns a run (ErrNotFound).
	GetRun(ctx context.Context, id string) (*Run, error)
	// ListRuns pages through runs, newest first.
	ListRuns(ctx context.Context, q RunQuery) ([]*Run, error)
}

// Events keeps the events of runs.
type Events interface {
	// AppendEvents stores events (each names its run and seq; a run's
	// events come in seq order) and sends a NoticeEvents per run, then
	// ends the runs of ends as FinishRun does (an end whose run ended
	// already is skipped), in one transaction: a run's last events and its
	// end cost one write. A run whose events cannot be stored (they do not
	// follow its stored ones, or it is gone) is left out with its end and
	// named in an *EventsError; the other runs' events and ends are stored.
	AppendEvents(ctx context.Context, events []*agentv1.Event, ends ...RunEnd) error
	// Events returns up to limit events of a run with seq > after, in order.
	Events(ctx context.Context, runID string, after int64, limit int) ([]*agentv1.Event, error)
	// DeleteEvents deletes the events of runs that ended before t and
	// returns how many it deleted.
	DeleteEvents(ctx context.Context, t time.Time) (int64, error)
	// TrimEvents deletes the events of ended runs by size: those of each
	// run whose events hold more than perRun bytes, then those of the runs
	// that ended first until the events of every run, running ones
	// included, hold at most total bytes (or no ended run's are left). A
	// bound of 0 is no bound. The runs stay, Purged. It returns how many
	// events it deleted.
	TrimEvents(ctx context.Context, perRun, total int64) (int64, error)
}

// Permissions keeps permission requests.
type Permissions interface {
	// AskPermission stores a pending request.
	AskPermission(ctx context.Context, p *Permission) error
	// AnswerPermission decides a pending request and returns it:
	// ErrNotFound when there is none, ErrConflict when its run ended or it
	// was already answered (then with the earlier decision).
	AnswerPermission(ctx context.Context, runID, callID string, allow bool, reason string) (*Permission, error)
	// Permissions returns a run's requests in the order they were asked.
	Permissions(ctx context.Context, runID string) ([]*Permission, error)
}

// Notifier carries notices between processes sharing the store.
type Notifier interface {
	// Notify sends n to every listener of every process sharing the store.
	Notify(ctx context.Context, n Notice) error
	// Listen calls fn with every notice, one at a time, until ctx ends or
	// the store closes. fn must not block for long.
	Listen(ctx context.Context, fn func(Notice)) error
}

// Store is one store driver.
type Store interface {
	Agents
	Runs
	Events
	Permissions
	Credentials
	Notifier
	// Shared reports whether other processes may use the store at the same
	// time (PostgreSQL). A store that is not shared knows at start that
	// every run still marked running was cut off.
	Shared() bool
	// Close releases the store; its Listen calls return.
	Close() error
}
