package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agenttool"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/mcpauth"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// A child run is a send to another stored agent that the server starts on
// behalf of a tool call of a running agent: agents named in an agent's
// agent_tools are offered to its model as in-process tools, and a call runs
// that agent under the calling run. The child run is a run like any (its
// own id, stored, its events in its own log, Attach and Stop work on it);
// what makes it a child is carried in its context (runOptions): its parent,
// root and depth, which its journal stores, and what it inherits from the
// root send (the permission settings and hook, on_disconnect). Its context
// descends from the tool call's, so stopping any ancestor stops it and
// kills its tools; its budget is a child of the caller's, so the tree's
// limits count it.

// treeOptions are what a run passes down to the child runs it starts.
type treeOptions struct {
	// parent, root and toolCall name the run that started this one and the
	// root of the tree (empty for a root run); depth is 0 for a root run.
	parent, root, toolCall string
	depth                  int
	// agents are the store ids of the agents running above and in this run:
	// one of them called again would wait for itself.
	agents []string
	// children counts the child runs running under this run (fan-out).
	children *atomic.Int32
	// perm and ask are the root send's permission settings and hook.
	permMode agentv1.PermissionMode
	askTools []string
	ask      agent.PermissionFunc
}

// rootTree is the tree of a root run: its send's permission settings and
// hook, which its children inherit, and the count of its children.
func rootTree(opts *agent.SendOptions, ask agent.PermissionFunc) treeOptions {
	return treeOptions{children: new(atomic.Int32), permMode: opts.PermissionMode, askTools: opts.AskTools, ask: ask}
}

// agentTools builds the in-process tools of an agent's agent_tools, checking
// them (field is where they sit in the request).
func (s *Server) agentTools(specs []*agentv1.AgentTool, field string) (*tool.Set, error) {
	set, err := agenttool.Build(specs, field, s.callAgent)
	return set, apierr.FromError(err)
}

// statusMessage is the message of an error as a status: what a caller's
// model reads of a child run that could not run.
func statusMessage(err error) string { return status.Convert(err).Message() }

// refusal is a child run that was not started: the call's failed result
// says why, for the model to read.
func refusal(format string, args ...any) (tool.Result, error) {
	return tool.Result{}, fmt.Errorf("child run refused: "+format, args...)
}

// callAgent is the function of an agent tool: it runs the agent as a child
// run of the calling run and returns the child's answer.
func (s *Server) callAgent(at *agentv1.AgentTool) tool.Func {
	return func(ctx context.Context, input json.RawMessage, _ func(string)) (tool.Result, error) {
		call := agent.CallFrom(ctx)
		if call == nil {
			return tool.Result{}, errors.New("an agent tool runs only in a run: send to the agent that names it")
		}
		up := runOptionsFrom(ctx)
		tree := up.tree
		depth := tree.depth + 1
		if max := s.cfg.Limits.MaxRunDepth; depth > max {
			return refusal("agent %s would run at depth %d, deeper than the server allows (%d, -max-run-depth)", at.GetAgentId(), depth, max)
		}
		sess, err := s.agent(ctx, at.GetAgentId())
		if err != nil {
			return refusal("agent %s: %s", at.GetAgentId(), statusMessage(err))
		}
		defer s.agents.Unpin(sess) // held in memory until its run has ended
		caller := callerID(ctx, s, call)
		if sess.id == caller || slices.Contains(tree.agents, sess.id) {
			return refusal("agent %s is running higher in this run tree, and an agent runs one run at a time: it would wait for itself", at.GetAgentId())
		}
		if max := s.cfg.Limits.MaxChildRuns; max > 0 && tree.children != nil {
			if n := tree.children.Add(1); n > int32(max) {
				tree.children.Add(-1)
				return refusal("this run has %d child runs running, the server's limit (-max-child-runs)", max)
			}
			defer tree.children.Add(-1)
		}
		t, err := s.tenant(ctx)
		if err != nil {
			return refusal("%s", statusMessage(err))
		}
		if _, err := s.sendable(sess, nil, nil); err != nil {
			return refusal("agent %s: %s", at.GetAgentId(), statusMessage(err))
		}
		sess.mu.Lock()
		limits := sess.budget
		sess.mu.Unlock()
		budget := agent.NewBudget(limits, call.Budget)
		release, err := s.admitSend(t, nil)
		if err != nil {
			return refusal("%s", statusMessage(err))
		}
		defer release()
		if err := call.Budget.StartChild(); err != nil {
			return refusal("%v", err)
		}

		root := tree.root
		if root == "" {
			root = call.RunID
		}
		child := treeOptions{parent: call.RunID, root: root, toolCall: call.ToolCallID, depth: depth,
			agents: append(slices.Clip(tree.agents), caller), children: new(atomic.Int32),
			permMode: tree.permMode, askTools: tree.askTools, ask: tree.ask}
		hook := s.hooks.Target(sess.expand, sess.engine.StoredConfig(), nil, agentID(sess.id))
		cctx := withRunOptions(ctx, runOptions{onDisconnect: up.onDisconnect, tree: child, hook: hook, user: up.user})
		opts := agent.SendOptions{Input: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: agenttool.Task(at, input)}}},
			Busy: at.GetBusyPolicy(), PermissionMode: tree.permMode, AskTools: tree.askTools, OnPermission: tree.ask, OnElicit: s.pending.Elicit, Budget: budget,
			OnCredential: mcpauth.Handler(s.vault, sess.tenant, up.user)}
		if opts.Busy == agentv1.BusyPolicy_BUSY_POLICY_UNSPECIFIED {
			opts.Busy = agentv1.BusyPolicy_BUSY_POLICY_QUEUE
		}
		if opts.OnPermission == nil {
			opts.OnPermission = s.replica.Ask
		}
		opts.OnPermission = s.hooks.Asking(hook, opts.OnPermission)
		agentName := agentID(sess.id)
		out := &sink{srv: s, send: func(ev *agentv1.Event) error {
			if c := ev.GetChild(); c != nil { // a grandchild's, marked already
				call.Emit(c)
				return nil
			}
			call.Emit(&agentv1.ChildRunEvent{RunId: ev.GetRunId(), AgentId: agentName, ParentRunId: call.RunID, Depth: int32(depth),
				ToolCallId: call.ToolCallID, Event: ev})
			return nil
		}}
		opts.OnEvent = out.event
		// A queued call waits for the agent's run in progress, at most
		// -child-queue-wait: two run trees calling each other's agents
		// would wait for each other forever.
		if wait := s.cfg.Limits.ChildQueueWait; wait > 0 && opts.Busy == agentv1.BusyPolicy_BUSY_POLICY_QUEUE {
			var stopWait context.CancelCauseFunc
			cctx, stopWait = context.WithCancelCause(cctx)
			defer stopWait(nil)
			timer := time.AfterFunc(wait, func() {
				if out.run() == "" { // not begun
					stopWait(errStayedBusy)
				}
			})
			defer timer.Stop()
		}
		res, err := sess.engine.Send(cctx, opts)
		if errors.Is(context.Cause(cctx), errStayedBusy) && out.run() == "" {
			return refusal("agent %s stayed busy with another run for %s (-child-queue-wait); try again later, or call it with busy_policy reject", agentName, s.cfg.Limits.ChildQueueWait)
		}
		if err != nil {
			return tool.Result{}, fmt.Errorf("the run of agent %s failed: %s", agentName, statusMessage(s.sendError(err)))
		}
		return tool.Result{Output: tool.TextOutput(agenttool.Answer(agentName, res))}, nil
	}
}

// errStayedBusy ends a queued child run that did not start within
// -child-queue-wait.
var errStayedBusy = errors.New("the agent stayed busy")

// inTree reports whether run belongs to the tree rooted at root.
func (s *Server) inTree(ctx context.Context, run, root string) bool {
	r, err := s.store.GetRun(ctx, run)
	return err == nil && r.RootRunID == root
}

// callerID is the store id of the calling run's agent.
func callerID(ctx context.Context, s *Server, call *agent.Call) string {
	t, err := s.tenant(ctx)
	if err != nil {
		return call.AgentID
	}
	return storeID(t.ID, call.AgentID)
}
