package replica

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/memory"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// At start, every cut-off run is recovered, however many pages of running
// runs the store holds.
func TestStartupRecoversMorePagesOfRunsThanOne(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	const n = recoverPage + 7
	for i := range n {
		id := fmt.Sprint("a", i)
		if err := st.CreateAgent(ctx, &store.Agent{ID: id, Spec: &agentv1.Agent{Config: &agentv1.AgentConfig{}}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := st.StartRun(ctx, &store.Run{ID: "run_" + id, AgentID: id, Owner: "agent-server"}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	// What the server does as it starts, as replica "agent-server" (the
	// default -replica-id).
	New(Options{Store: st, ID: "agent-server", LeaseTTL: 10 * time.Second, Log: hclog.NewNullLogger()}).RecoverStale(ctx, true)
	running, err := st.ListRuns(ctx, store.RunQuery{AnyTenant: true, State: agentv1.RunState_RUN_STATE_RUNNING, Limit: n})
	if err != nil || len(running) != 0 {
		t.Fatalf("%d runs still running after the start, %v", len(running), err)
	}
	interrupted, _ := st.ListRuns(ctx, store.RunQuery{AnyTenant: true, State: agentv1.RunState_RUN_STATE_INTERRUPTED, Limit: n + 1})
	if len(interrupted) != n {
		t.Fatalf("%d runs interrupted, want %d", len(interrupted), n)
	}
}
