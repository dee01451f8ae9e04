package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/eventlog"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// storeTimeout bounds the store writes that must happen even when the
// request that caused them is gone (a run's end, a recovery).
const storeTimeout = 30 * time.Second

// errLeaseLost is the cause of a run stopped because its lease was taken
// over by another replica (this one failed to renew it in time).
var errLeaseLost = errors.New("the run lost its lease: another replica ended it as interrupted")

// storeStatus maps a store error to a status.
func storeStatus(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_AGENT_NOT_FOUND, "the agent was deleted")
	case errors.Is(err, store.ErrConflict):
		return failure(codes.Aborted, agentv1.ErrorReason_ERROR_REASON_HISTORY_CONFLICT, "the agent's history was changed elsewhere (another replica or a SetHistory) while this run went on; send again")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return toStatus(err)
	}
	return failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_STORE_UNAVAILABLE, "the store is unavailable: %v", err)
}

// secretPaths names the fields of c that hold secrets: API keys and header
// values. They are never written to the store.
func secretPaths(c *agentv1.AgentConfig) []string {
	var out []string
	if c.GetApiKey() != "" {
		out = append(out, "config.api_key")
	}
	if c.GetCompact().GetApiKey() != "" {
		out = append(out, "config.compact.api_key")
	}
	headers := func(prefix string, h map[string]string) {
		keys := make([]string, 0, len(h))
		for k, v := range h {
			if v != "" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, prefix+k)
		}
	}
	headers("config.provider.headers.", c.GetProvider().GetHeaders())
	headers("config.compact.provider.headers.", c.GetCompact().GetProvider().GetHeaders())
	return out
}

// secretValue returns the value of a secret field of c ("" when unset).
func secretValue(c *agentv1.AgentConfig, path string) string {
	switch {
	case path == "config.api_key":
		return c.GetApiKey()
	case path == "config.compact.api_key":
		return c.GetCompact().GetApiKey()
	case strings.HasPrefix(path, "config.provider.headers."):
		return c.GetProvider().GetHeaders()[strings.TrimPrefix(path, "config.provider.headers.")]
	case strings.HasPrefix(path, "config.compact.provider.headers."):
		return c.GetCompact().GetProvider().GetHeaders()[strings.TrimPrefix(path, "config.compact.provider.headers.")]
	}
	return ""
}

// setSecret sets a secret field of c.
func setSecret(c *agentv1.AgentConfig, path, v string) {
	switch {
	case path == "config.api_key":
		c.ApiKey = &v
	case path == "config.compact.api_key":
		if c.Compact == nil {
			c.Compact = &agentv1.CompactConfig{}
		}
		c.Compact.ApiKey = &v
	case strings.HasPrefix(path, "config.provider.headers."):
		if c.Provider != nil && c.Provider.Headers != nil {
			c.Provider.Headers[strings.TrimPrefix(path, "config.provider.headers.")] = v
		}
	case strings.HasPrefix(path, "config.compact.provider.headers."):
		if p := c.GetCompact().GetProvider(); p != nil && p.Headers != nil {
			p.Headers[strings.TrimPrefix(path, "config.compact.provider.headers.")] = v
		}
	}
}

// coveredBy reports whether a send's config override supplies the secret
// field path: it sets the key, or replaces the provider options holding
// the header.
func coveredBy(path string, o *agentv1.AgentConfig) bool {
	switch {
	case strings.HasPrefix(path, "config.provider.headers."):
		return o.GetProvider() != nil
	case strings.HasPrefix(path, "config.compact.provider.headers."):
		return o.GetCompact().GetProvider() != nil
	}
	return secretValue(o, path) != ""
}

// withSecrets returns stored (a config without secrets) with the values
// of paths copied from held, and the paths held has no value for.
func withSecrets(stored, held *agentv1.AgentConfig, paths []string) (*agentv1.AgentConfig, []string) {
	out := proto.Clone(stored).(*agentv1.AgentConfig)
	var missing []string
	for _, p := range paths {
		if v := secretValue(held, p); v != "" {
			setSecret(out, p, v)
		} else {
			missing = append(missing, p)
		}
	}
	return out, missing
}

// storedAgent is the store's record of a session: its config without
// secrets, its selections and the secret fields the client gave.
func storedAgent(id, tenant string, cfg *agentv1.AgentConfig, tools *agentv1.ToolSelection, skills *agentv1.SkillSelection, missing []string) *store.Agent {
	paths := secretPaths(cfg)
	for _, m := range missing {
		if !contains(paths, m) {
			paths = append(paths, m)
		}
	}
	now := time.Now()
	return &store.Agent{
		ID: id, Tenant: tenant,
		Spec:    &agentv1.Agent{Config: agent.Redact(cfg), Tools: tools, Skills: skills},
		Secrets: paths, Created: now, Updated: now,
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkSecrets fails a send (or compaction) of an agent restored without
// the secrets its client gave, unless override supplies them.
func (s *Server) checkSecrets(e *session, override *agentv1.AgentConfig) error {
	e.mu.Lock()
	missing := e.missing
	e.mu.Unlock()
	var still []string
	for _, p := range missing {
		if !coveredBy(p, override) {
			still = append(still, p)
		}
	}
	if len(still) == 0 {
		return nil
	}
	return failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_API_KEY_REQUIRED,
		"this agent was restored from the store without %s: API keys and header values a client gives are never stored, only kept in the memory of the server that got them. "+
			"Give them again with UpdateAgent (e.g. config.api_key) or in this send's config, or use a server profile (config.profile) that holds the key",
		strings.Join(still, ", "))
}

// runOptions are what a send tells the journal beside the engine's JournalRun.
type runOptions struct {
	onDisconnect agentv1.OnDisconnect
}

type runOptionsKey struct{}

func withRunOptions(ctx context.Context, o runOptions) context.Context {
	return context.WithValue(ctx, runOptionsKey{}, o)
}

func runOptionsFrom(ctx context.Context) runOptions {
	o, _ := ctx.Value(runOptionsKey{}).(runOptions)
	return o
}

// leasePoll bounds how long a send waiting for another replica's run
// sleeps between looks at the lease (notices usually wake it sooner).
const leasePoll = 250 * time.Millisecond

// journal is a session's agent.Journal: the store, the lease across
// replicas, this replica's table of live runs.
type journal struct {
	srv *Server
	e   *session
	// w holds the history writes that need not be durable yet and keeps
	// them in order (writes.go).
	w historyWrites
}

var (
	_ agent.Journal         = (*journal)(nil)
	_ agent.JournalReleaser = (*journal)(nil)
)

// Begin takes the agent's lease for the run, waiting, stopping the holder
// or refusing as the busy policy says, and hands back the stored state when
// it changed since this replica saw it.
func (j *journal) Begin(ctx context.Context, info agent.JournalRun) (*agent.Snapshot, error) {
	s, e := j.srv, j.e
	run := &store.Run{ID: info.ID, AgentID: e.id, Owner: s.cfg.ReplicaID, Compaction: info.Compaction,
		OnDisconnect: runOptionsFrom(ctx).onDisconnect}
	w := s.watch.watch(leaseKey(e.id))
	defer w.close()
	stopped := ""
	for {
		err := s.store.StartRun(ctx, run, s.cfg.LeaseTTL)
		if err == nil {
			break
		}
		var be *store.BusyError
		if !errors.As(err, &be) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		switch {
		case be.Expired:
			if err := s.recoverRun(ctx, be.RunID); err != nil {
				return nil, err
			}
			continue
		case info.Busy == agentv1.BusyPolicy_BUSY_POLICY_REJECT:
			return nil, agent.ErrBusy
		case info.Busy == agentv1.BusyPolicy_BUSY_POLICY_QUEUE:
		default: // replace: the latest instruction wins, on any replica
			if stopped != be.RunID {
				if err := s.store.Notify(ctx, store.Notice{Kind: store.NoticeStop, RunID: be.RunID, Text: causeReplaced}); err != nil {
					return nil, err
				}
				stopped = be.RunID
			}
		}
		select {
		case <-w.ch:
		case <-time.After(leasePoll):
			stopped = "" // the notice may have been lost: say it again (see stopRemote)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s.live.add(&liveRun{id: info.ID, agentID: e.id, stop: info.Stop, started: time.Now()})
	snap, err := j.sync(ctx, run.AgentVersion)
	if err != nil {
		s.live.remove(info.ID)
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		defer cancel()
		_ = s.store.FinishRun(fctx, info.ID, agentv1.RunState_RUN_STATE_FAILED, nil, &agentv1.RunError{
			Code: int32(codes.Unavailable), Reason: agentv1.ErrorReason_ERROR_REASON_STORE_UNAVAILABLE.Wire(), Message: err.Error()})
		return nil, err
	}
	return snap, nil
}

// sync returns the stored history and usage when another process changed
// the agent since this one last wrote or read it: when the agent's version
// as StartRun saw it is not the session's.
func (j *journal) sync(ctx context.Context, version int64) (*agent.Snapshot, error) {
	e := j.e
	e.mu.Lock()
	same := e.version == version
	e.mu.Unlock()
	if same {
		return nil, nil
	}
	rec, err := j.srv.store.GetAgent(ctx, e.id)
	if err != nil {
		return nil, err
	}
	h, v, err := j.srv.store.History(ctx, e.id)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.version = v
	e.mu.Unlock()
	return &agent.Snapshot{History: h, Usage: rec.Usage}, nil
}

// Append writes a step's messages and the usage totals. A write that
// need not be durable (the input, a response with tool calls) is held a
// moment (holdWrite) so that the step's next write takes it along, one
// statement for the step, and otherwise goes on in the background while
// the run goes on (the model request, the tool calls); the durable write
// ending a step waits for what went before it, in order. A failed write
// fails the run at the journal's next call; the session then reloads from
// the store when idle.
func (j *journal) Append(ctx context.Context, runID string, at int, msgs []*agentv1.Message, usage *agentv1.Usage, durable bool) error {
	return j.w.append(j.write, at, msgs, usage, durable)
}

// Release sends the write held back, before the run's tools run.
func (j *journal) Release() { j.w.release(j.write) }

// write stores messages at position at, durably or not.
func (j *journal) write(at int, msgs []*agentv1.Message, usage *agentv1.Usage, durable bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	v, err := j.srv.store.AppendHistory(ctx, j.e.id, at, msgs, usage, durable)
	if err != nil {
		j.e.stale() // the session's memory took the messages: reload it
		return err
	}
	j.e.wrote(v)
	return nil
}

// Replace writes a history a send replaced.
func (j *journal) Replace(ctx context.Context, runID string, msgs []*agentv1.Message) error {
	if err := j.w.flush(j.write); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	v, err := j.srv.store.ReplaceHistory(ctx, j.e.id, msgs)
	if err != nil {
		return err
	}
	j.e.wrote(v)
	return nil
}

// End stores the run's end with its last events, in one write, and so
// releases the agent's lease. A run whose events the store could not keep
// ends failed (EVENTS_LOST).
func (j *journal) End(info agent.JournalRun, res *agent.Result, err error) {
	s := j.srv
	if werr := j.w.flush(j.write); werr != nil {
		s.log.Error("the run's last history write failed", "run", info.ID, "agent", j.e.id, "error", werr)
	}
	lr := s.live.remove(info.ID)
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	state, result, rerr := s.outcome(res, err)
	end := store.RunEnd{RunID: info.ID, State: state, Result: result, Error: rerr}
	if eerr := s.events.End(ctx, end); eerr != nil {
		if errors.Is(eerr, eventlog.ErrEventsLost) {
			end = store.RunEnd{RunID: info.ID, State: agentv1.RunState_RUN_STATE_FAILED, Error: eventsLostError(eerr)}
		}
		if ferr := s.store.FinishRun(ctx, end.RunID, end.State, end.Result, end.Error); ferr != nil &&
			!errors.Is(ferr, store.ErrConflict) && !errors.Is(ferr, store.ErrNotFound) {
			s.log.Error("run end not stored", "run", info.ID, "agent", j.e.id, "error", ferr)
		}
	}
	if lr != nil {
		close(lr.done)
	}
}

// eventsLostStatus is the status of a run that lost events.
func eventsLostStatus(err error) error {
	return failure(codes.DataLoss, agentv1.ErrorReason_ERROR_REASON_EVENTS_LOST,
		"%v: the run was stopped, since Attach could not follow it without a gap; the agent's history holds what it did", err)
}

// eventsLostError is the stored error of a run that lost events.
func eventsLostError(err error) *agentv1.RunError { return runError(eventsLostStatus(err)) }

// eventsLost stops a run here whose events the store could not keep.
func (s *Server) eventsLost(runID string, err error) {
	if r := s.live.get(runID); r != nil {
		r.stop(err)
	}
}

// wrote records that this process wrote the agent, which is now at version
// v: the session's memory matches it unless another process wrote between.
func (e *session) wrote(v int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v == e.version+1 {
		e.version = v
	} else {
		e.version = 0 // stale: reload when idle
	}
}

// stale marks the session's memory as not matching the store: it is
// reloaded when next used idle.
func (e *session) stale() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.version = 0
}

// Stop causes sent through the store.
const (
	causeStopped  = "stopped"
	causeReplaced = "replaced"
)

// outcome is the stored end of a run that returned res or err.
func (s *Server) outcome(res *agent.Result, err error) (agentv1.RunState, *agentv1.RunResultEvent, *agentv1.RunError) {
	if err == nil {
		if res == nil {
			return agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil
		}
		return agentv1.RunState_RUN_STATE_SUCCEEDED, res.Proto(), nil
	}
	rerr := runError(s.secrets.RedactStatus(s.sendError(err)))
	var me *llm.Error
	switch {
	case errors.Is(err, eventlog.ErrEventsLost):
		return agentv1.RunState_RUN_STATE_FAILED, nil, rerr
	case s.agents.shuttingDown() && (errors.Is(err, agent.ErrStopped) || errors.Is(err, agent.ErrClosed)):
		return agentv1.RunState_RUN_STATE_INTERRUPTED, nil, rerr
	case errors.As(err, &me) && me.Kind == llm.KindAborted:
		return agentv1.RunState_RUN_STATE_STOPPED, nil, rerr
	}
	return agentv1.RunState_RUN_STATE_FAILED, nil, rerr
}

// runError is a status error as a RunError.
func runError(err error) *agentv1.RunError {
	st := status.Convert(err)
	re := &agentv1.RunError{Code: int32(st.Code()), Message: st.Message()}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			re.Reason, re.Metadata = info.GetReason(), info.GetMetadata()
		}
	}
	return re
}

// runStatus is the status a run that ended with re reports.
func runStatus(re *agentv1.RunError) error {
	md := re.GetMetadata()
	return withDetails(codes.Code(re.GetCode()), re.GetMessage(), &errdetails.ErrorInfo{Domain: agentv1.ErrorDomain, Reason: re.GetReason(), Metadata: md})
}

// interruptedText answers, in the repaired history, a call cut off by a
// server that stopped.
const interruptedText = "The server stopped (restart or crash) before this call of %s finished: it may or may not have run, and its result is lost."

// recoverRun ends a run whose server is gone: its history is repaired (every
// call of the last model response without a result gets an error result)
// and it becomes interrupted, which releases the agent's lease. Two replicas
// may try at once: the store lets one of each write through.
func (s *Server) recoverRun(ctx context.Context, runID string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	r, err := s.store.GetRun(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.Done() {
		return nil
	}
	h, _, err := s.store.History(ctx, r.AgentID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if n := len(h); n > 0 && h[n-1].GetRole() == agentv1.Role_ROLE_ASSISTANT {
		var results []*agentv1.Part
		for _, p := range h[n-1].GetParts() {
			if c := p.GetToolCall(); c != nil {
				results = append(results, history.ToolResult(c.GetId(), c.GetName(),
					history.TextOutput(fmt.Sprintf(interruptedText, c.GetName())), true))
			}
		}
		if len(results) > 0 {
			if _, err := s.store.AppendHistory(ctx, r.AgentID, n, []*agentv1.Message{history.Tool(results...)}, nil, true); err != nil &&
				!errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	err = s.store.FinishRun(ctx, runID, agentv1.RunState_RUN_STATE_INTERRUPTED, nil, &agentv1.RunError{
		Code: int32(codes.Unavailable), Reason: agentv1.ErrorReason_ERROR_REASON_RUN_INTERRUPTED.Wire(),
		Message: "the server running it (replica " + r.Owner + ") stopped before the run ended; its history was repaired: send again, or send with resume to go on",
	})
	if err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err == nil {
		s.log.Info("run interrupted", "run", runID, "agent", r.AgentID, "replica", r.Owner)
	}
	return nil
}

// recoverPage is how many running runs recoverStale reads at a time.
const recoverPage = 1000

// recoverStale ends the runs cut off by a server that stopped: at start
// (startup) every run this replica owned, and on a store no other process
// uses every running run; always those whose lease expired. It goes
// through every running run, a page at a time.
func (s *Server) recoverStale(ctx context.Context, startup bool) {
	q := store.RunQuery{AnyTenant: true, State: agentv1.RunState_RUN_STATE_RUNNING, Limit: recoverPage}
	for {
		runs, err := s.store.ListRuns(ctx, q)
		if err != nil {
			s.log.Warn("listing running runs", "error", err)
			return
		}
		for _, r := range runs {
			stale := r.LeaseExpired && !s.live.has(r.ID)
			if startup && (!s.store.Shared() || r.Owner == s.cfg.ReplicaID) {
				stale = true
			}
			if stale {
				if err := s.recoverRun(ctx, r.ID); err != nil {
					s.log.Warn("recovering a run", "run", r.ID, "error", err)
				}
			}
		}
		if len(runs) < q.Limit || ctx.Err() != nil {
			return
		}
		last := runs[len(runs)-1]
		q.Before = &store.Cursor{Started: last.Started, ID: last.ID}
	}
}
