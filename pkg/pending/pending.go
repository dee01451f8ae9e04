// Package pending keeps what a run asks the people behind it while it
// waits for their answer (a permission request, an elicitation request) in
// the store, so that an answer from any connection or replica finds it and
// reaches the run. Each kind is kept as a permission request of the store
// whose id tells its kind (hostreq's markers); adding a kind is one more
// case in Keep, Fill and the kind's answer.
package pending

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentcore/agentcore/pkg/agent/hostreq"
	"github.com/agentcore/agentcore/pkg/replica"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// storeTimeout bounds keeping one request (the run's event waits for it).
const storeTimeout = 30 * time.Second

// Requests keeps the requests of the runs, for the AgentService handlers
// and the runs of one replica.
type Requests struct {
	store   store.Store
	replica *replica.Replica
	log     hclog.Logger
}

// New returns the requests kept in st, answered to the runs of rp.
func New(st store.Store, rp *replica.Replica, log hclog.Logger) *Requests {
	return &Requests{store: st, replica: rp, log: log}
}

// Keep stores the request an event of a run carries, if it carries one,
// before the event goes out: an answer to it can then find it.
func (r *Requests) Keep(ev *agentv1.Event) {
	var p *store.Permission
	what := "permission request not stored: only this run's stream can answer it"
	switch {
	case ev.GetPermissionRequest() != nil:
		e := ev.GetPermissionRequest()
		p = &store.Permission{CallID: e.GetToolCallId(), ToolName: e.GetToolName(), Arguments: e.GetArguments()}
	case ev.GetElicitationRequest() != nil:
		e := ev.GetElicitationRequest()
		b, err := protojson.Marshal(e)
		if err != nil {
			r.log.Warn("elicitation request not stored: no one can answer it", "run", ev.GetRunId(), "error", err)
			return
		}
		p = &store.Permission{CallID: e.GetElicitationId(), ToolName: e.GetToolName(), Arguments: string(b)}
		what = "elicitation request not stored: no one can answer it"
	default:
		return
	}
	p.RunID = ev.GetRunId()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := r.store.AskPermission(ctx, p); err != nil && !errors.Is(err, store.ErrExists) {
		r.log.Warn(what, "run", p.RunID, "error", err)
	}
}

// Fill lists in out the requests of its run still waiting for an answer
// (GetRun). A store that cannot be read lists none.
func (r *Requests) Fill(ctx context.Context, out *agentv1.Run) {
	ps, err := r.store.Permissions(ctx, out.GetId())
	if err != nil {
		return
	}
	for _, p := range ps {
		switch {
		case p.Answered:
		case hostreq.IsElicitation(p.CallID):
			if e := storedElicitation(p); e != nil {
				out.PendingElicitations = append(out.PendingElicitations, e)
			}
		default:
			out.PendingPermissions = append(out.PendingPermissions, &agentv1.PermissionRequestEvent{
				ToolCallId: p.CallID, ToolName: p.ToolName, Arguments: p.Arguments})
		}
	}
}

// find returns the stored request id of run, store.ErrNotFound when it has
// none, store.ErrConflict when it was answered.
func (r *Requests) find(ctx context.Context, run, id string) (*store.Permission, error) {
	ps, err := r.store.Permissions(ctx, run)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.CallID == id {
			if p.Answered {
				return nil, store.ErrConflict
			}
			return p, nil
		}
	}
	return nil, store.ErrNotFound
}
