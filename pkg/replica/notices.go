package replica

import (
	"context"
	"time"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/store"
)

// onNotice handles a notice from the store: wake whoever waits for it,
// stop a run here, deliver a permission decision made elsewhere.
func (rp *Replica) onNotice(n store.Notice) {
	switch n.Kind {
	case store.NoticeEvents, store.NoticeRunEnded:
		rp.watch.wake(runKey(n.RunID))
	case store.NoticeLease:
		rp.watch.wake(leaseKey(n.AgentID))
	case store.NoticeResync:
		// Notices sent before now were not heard: whoever waits looks
		// again, and a decision stored elsewhere meanwhile is delivered.
		rp.watch.wakeAll()
		for _, k := range rp.perms.keys() {
			rp.deliverStored(k.run, k.call)
		}
	case store.NoticeStop:
		if r := rp.live.get(n.RunID); r != nil {
			cause := agent.ErrStopped
			if n.Text == CauseReplaced {
				cause = agent.ErrReplaced
			}
			r.stop(cause)
		}
	case store.NoticePermission:
		if rp.live.has(n.RunID) {
			rp.deliverStored(n.RunID, n.Text)
		}
	}
}

// Listen runs the store's notices into onNotice until ctx ends.
func (rp *Replica) Listen(ctx context.Context) {
	for {
		err := rp.opts.Store.Listen(ctx, rp.onNotice)
		if ctx.Err() != nil {
			return
		}
		rp.opts.Log.Warn("store notices interrupted; listening again", "error", err)
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return
		}
	}
}
