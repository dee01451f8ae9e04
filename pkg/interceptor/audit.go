package interceptor

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/pkg/auth"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// audited are the state-changing methods, each of which writes an audit
// line: tenant, agent, run, outcome and duration, never a secret or content.
var audited = map[string]bool{
	"CreateAgent": true, "UpdateAgent": true, "DeleteAgent": true, "SetHistory": true,
	"Send": true, "Stop": true, "Compact": true, "ExecuteTool": true, "ReloadTools": true,
	"Connect": true, "Disconnect": true,
}

// auditRecord collects one audited call's line. Its methods do nothing on
// a nil record.
type auditRecord struct {
	log    hclog.Logger
	method string
	start  time.Time
	peer   string

	mu      sync.Mutex
	tenant  string
	agent   string
	run     string
	tool    string
	started bool // a send's "started" line is written
}

// record starts the audit record of a call, or returns nil when the method is not audited.
func (g *guard) record(ctx context.Context, fullMethod string, start time.Time) *auditRecord {
	name, ok := strings.CutPrefix(fullMethod, servicePrefix)
	if !ok || !audited[name] {
		return nil
	}
	r := &auditRecord{log: g.opts.Audit, method: name, start: start, tenant: "-"}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		r.peer = p.Addr.String()
	}
	return r
}

func (r *auditRecord) tenantFrom(ctx context.Context) {
	if r == nil {
		return
	}
	if t, ok := auth.FromContext(ctx); ok {
		r.mu.Lock()
		r.tenant = t.Name()
		r.mu.Unlock()
	}
}

// request notes the agent (and tool) a request names.
func (r *auditRecord) request(m any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.agent != "" || r.tool != "" {
		return
	}
	switch req := m.(type) {
	case *agentv1.SendRequest:
		r.agent = req.GetStart().GetAgentId()
	case *agentv1.UpdateAgentRequest:
		r.agent = req.GetAgent().GetId()
	case *agentv1.CreateAgentRequest:
		r.agent = req.GetAgentId()
		if r.agent == "" {
			r.agent = req.GetAgent().GetId()
		}
	case *agentv1.ExecuteToolRequest:
		r.tool = req.GetName()
	case interface{ GetAgentId() string }:
		r.agent = req.GetAgentId()
	}
}

// response notes the agent a CreateAgent made and the run a send started,
// writing the send's "started" line.
func (r *auditRecord) response(m any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch resp := m.(type) {
	case *agentv1.CreateAgentResponse:
		if id := resp.GetAgent().GetId(); id != "" {
			r.agent = id
		}
	case *agentv1.SendResponse:
		if r.started {
			return
		}
		if resp.GetEvent().GetRunId() != "" {
			r.run = resp.GetEvent().GetRunId()
			r.started = true
			r.log.Info("audit", "call", r.method, "phase", "started", "tenant", r.tenant, "agent", r.agent, "run", r.run, "peer", r.peer)
		}
	}
}

// auditArgs is the most key/value items a call's line holds.
const auditArgs = 20

// done writes the call's line with its outcome.
func (r *auditRecord) done(phase string, err error) {
	if r == nil {
		return
	}
	code, reason := codes.OK, ""
	if err != nil { // a call that succeeded needs no status made
		st := status.Convert(err)
		code = st.Code()
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				reason = info.GetReason()
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	args := make([]any, 0, auditArgs) // one allocation, not one per growth
	args = append(args, "call", r.method)
	if phase != "" {
		args = append(args, "phase", phase)
	}
	args = append(args, "tenant", r.tenant, "agent", r.agent, "run", r.run)
	if r.tool != "" {
		args = append(args, "tool", r.tool)
	}
	args = append(args, "outcome", code.String())
	if reason != "" {
		args = append(args, "reason", reason)
	}
	args = append(args, "duration", time.Since(r.start), "peer", r.peer)
	r.log.Info("audit", args...)
}
