package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agent/secret"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/mcpauth"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// resumeSpec is what a server needs to resume a run after a crash, kept
// with the run (store.Run.Resume): the send as its client gave it, without
// its history replacement or any secret.
type resumeSpec struct {
	// Start is the agentv1.StartRun of the send, so reduced.
	Start []byte `json:"start"`
	// Replaced, when the send replaced the history, is the length of the
	// replacement: where the run's messages begin.
	Replaced *int `json:"replaced,omitempty"`
	// CutCalls is the send's agentv1.CutCalls.
	CutCalls agentv1.CutCalls `json:"cut_calls,omitempty"`
}

// resumeSpecOf returns the resume spec of a send whose config asks for it
// (on_interrupt resume, in the send's override, the agent's config or its
// profile, else the server's -on-interrupt), nil when the run is to end
// interrupted instead.
func (s *Server) resumeSpecOf(sess *session, start *agentv1.StartRun) ([]byte, error) {
	c := agent.MergeConfig(sess.engine.StoredConfig(), start.GetConfig())
	if exp, err := sess.expand(c); err == nil {
		c = exp
	}
	switch c.GetOnInterrupt() {
	case agentv1.OnInterrupt_ON_INTERRUPT_FAIL:
		return nil, nil
	case agentv1.OnInterrupt_ON_INTERRUPT_UNSPECIFIED:
		if s.cfg.OnInterrupt != "resume" {
			return nil, nil
		}
	}
	// The input is kept: a crash may come before the step that stores it.
	kept := proto.Clone(start).(*agentv1.StartRun)
	kept.History, kept.Config = nil, secret.Redact(start.GetConfig())
	b, err := proto.Marshal(kept)
	if err != nil {
		return nil, err
	}
	spec := resumeSpec{Start: b, CutCalls: c.GetCutCalls()}
	if h := start.GetHistory(); h != nil {
		n := len(h.GetMessages())
		spec.Replaced = &n
	}
	return json.Marshal(spec)
}

// resumePoll is how often a run taken over at start waits for the tools to
// be loaded before it resumes.
const resumePoll = 50 * time.Millisecond

// resume runs a run this replica took over after a crash cut it off (the
// replica's Resume), on a goroutine of its own; a run that cannot be resumed
// ends interrupted.
func (s *Server) resume(r *store.Run) {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return // the server stops: the next start resumes it
	}
	s.bgRuns.Add(1)
	go func() {
		defer s.bgRuns.Done()
		defer s.replica.Resumed(r.ID)
		err := s.continueRun(r)
		switch {
		case err == nil, s.bgCtx.Err() != nil, errors.Is(err, errClosing):
			return // ended, or the server stops: the next start resumes it
		case !s.stillMine(r):
			return // taken over again since, or ended
		case errors.Is(err, agent.ErrBusy):
			err = s.replica.GiveUp(context.Background(), r.ID, "a new send took the agent first")
		default:
			err = s.replica.GiveUp(context.Background(), r.ID, s.secrets.Redact(err.Error()))
		}
		if err != nil {
			s.log.Warn("run not ended", "run", r.ID, "error", err)
		}
	}()
}

// stillMine reports whether a run taken over is still running here, at the
// attempt r took it over with.
func (s *Server) stillMine(r *store.Run) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	now, err := s.store.GetRun(ctx, r.ID)
	return err == nil && !now.Done() && now.Owner == s.cfg.ReplicaID && now.Attempts == r.Attempts
}

// errClosing ends a resumed run that had not started when the server began
// to close: it is left for the next start.
var errClosing = errors.New("the server is closing")

// continueRun resumes a run taken over, once the tools are loaded, and
// returns when it has ended (its end stored by the journal), or why it
// could not start.
func (s *Server) continueRun(r *store.Run) error {
	ctx := s.bgCtx
	for s.tools.Get() == nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing:
			return errClosing
		case <-time.After(resumePoll):
		}
	}
	var spec resumeSpec
	start := &agentv1.StartRun{}
	if err := json.Unmarshal(r.Resume, &spec); err != nil {
		return fmt.Errorf("unreadable resume record: %w", err)
	}
	if err := proto.Unmarshal(spec.Start, start); err != nil {
		return fmt.Errorf("unreadable resume record: %w", err)
	}
	t, ok := s.auth.Lookup(r.Tenant)
	if !ok {
		if r.Tenant != auth.DefaultTenant {
			return fmt.Errorf("its tenant %q is no longer known", r.Tenant)
		}
		t = &auth.Tenant{}
	}
	ctx = auth.NewContext(ctx, t)
	input := start.GetInput()
	start.AgentId, start.Resume, start.Input = agentID(r.AgentID), true, nil
	sess, opts, err := s.prepareSend(ctx, start)
	if err != nil {
		return err
	}
	defer s.agents.Unpin(sess) // pinned for the run, as a send's
	from := r.HistoryStart
	if spec.Replaced != nil {
		from = *spec.Replaced
	}
	opts.Busy = agentv1.BusyPolicy_BUSY_POLICY_REJECT // a send waiting here for the agent goes first
	opts.Continue = &agent.Continuation{RunID: r.ID, Attempt: r.Attempts, LastSeq: r.LastSeq, HistoryStart: from,
		Input: input, CutCalls: spec.CutCalls, Replica: s.cfg.ReplicaID}
	// The send's budget, counted afresh, and its permission settings bind
	// the resumed run and its children as they bound the first attempt.
	opts.Budget = rootBudget(start.GetBudget(), sess, t)
	out := &sink{srv: s}
	hook := s.hooks.Target(sess.expand, sess.engine.StoredConfig(), start.GetConfig(), agentID(sess.id))
	opts.OnEvent, opts.OnPermission, opts.OnElicit = out.event, s.hooks.Asking(hook, s.replica.Ask), s.pending.Elicit
	opts.OnCredential = mcpauth.Handler(s.vault, r.Tenant, r.User)
	ctx = withRunOptions(ctx, runOptions{onDisconnect: agentv1.OnDisconnect_ON_DISCONNECT_CONTINUE, resume: r.Resume,
		tree: rootTree(&opts, s.replica.Ask), hook: hook, user: r.User})
	_, err = sess.engine.Send(ctx, opts)
	// Failed once it began, the run's end is stored (resume checks); failed
	// before, it is still running here.
	return err
}
