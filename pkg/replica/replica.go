// Package replica is this replica's part in running agents over a store
// that other replicas may share (PostgreSQL). A run holds its agent's lease
// in the store for as long as it executes here (a live run); the lease is
// renewed (Maintain), and a run whose lease expired, its replica dead, is
// ended as interrupted with its history repaired (Recover). Replicas talk
// through the store's notices (Listen): a stop, a permission answered
// elsewhere, new events or a released lease, which wake the requests
// waiting here (Watch). A run's permission requests wait here for an
// answer from its stream, from RespondPermission on any replica, or for
// the permission timeout (Ask).
package replica

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/pkg/store"
)

// Options configure a Replica.
type Options struct {
	// Store holds the agents, runs, events and permission requests.
	Store store.Store
	// ID names this replica, the owner of its runs' leases (-replica-id).
	ID string
	// LeaseTTL is how long a lease lasts unless renewed (-lease-ttl).
	LeaseTTL time.Duration
	// PermissionTimeout denies a permission request no one answered
	// (-permission-timeout).
	PermissionTimeout time.Duration
	// EventRetention is how long the events of an ended run are kept
	// (-event-retention).
	EventRetention time.Duration
	// EventRetentionRunBytes and EventRetentionBytes bound the stored
	// events by size, per ended run and in all (store.TrimEvents; 0: no
	// bound).
	EventRetentionRunBytes, EventRetentionBytes int64
	// Log gets what goes wrong with the store.
	Log hclog.Logger
	// Resume, when set, resumes a run cut off by a crash whose record asks
	// for it (store.Run.Resume): this replica took it over (a fresh lease,
	// Attempts one more) and Resume must run it to its end or end it.
	Resume func(r *store.Run)
	// ResumeAttempts bounds how many times a run is taken over: cut off
	// once more, it ends failed (RESUME_LIMIT) (-resume-attempts).
	ResumeAttempts int
}

// Replica holds the runs executing here, the requests waiting for the
// store to change and the permission requests waiting for an answer.
type Replica struct {
	opts  Options
	live  liveRuns
	watch watchers
	perms permWaiters
	// resuming are the runs taken over here to be resumed, until their
	// goroutine is done with them (Resumed).
	resuming idSet
}

// New returns a replica with nothing running yet.
func New(o Options) *Replica { return &Replica{opts: o} }

// storeTimeout bounds the store writes that must happen even when the
// request that caused them is gone (a recovery, a decision).
const storeTimeout = 30 * time.Second

// Stop causes sent through the store.
const (
	CauseStopped  = "stopped"
	CauseReplaced = "replaced"
)

// ErrLeaseLost is the cause of a run stopped because its lease was taken
// over by another replica (this one failed to renew it in time).
var ErrLeaseLost = errors.New("the run lost its lease: another replica ended it as interrupted")

// Maintain renews this replica's leases, ends the runs of replicas that
// died and sweeps old events, until ctx ends.
func (rp *Replica) Maintain(ctx context.Context) {
	renew := time.NewTicker(rp.opts.LeaseTTL / 3)
	defer renew.Stop()
	sweep := time.NewTicker(rp.opts.LeaseTTL / 2)
	defer sweep.Stop()
	// Each minute at least: the bounds by size must follow a burst of runs.
	retention := time.NewTicker(min(max(rp.opts.EventRetention/4, time.Second), time.Minute))
	defer retention.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			rp.renewLeases(ctx)
		case <-sweep.C:
			rp.RecoverStale(ctx, false)
		case <-retention.C:
			rp.sweepEvents(ctx)
		}
	}
}

// renewLeases extends this replica's leases; a local run whose lease was
// not renewed lost it (another replica ended it) and stops.
func (rp *Replica) renewLeases(ctx context.Context) {
	before := time.Now()
	ids, err := rp.opts.Store.RenewLeases(ctx, rp.opts.ID, rp.opts.LeaseTTL)
	if err != nil {
		if ctx.Err() == nil {
			rp.opts.Log.Warn("renewing leases", "error", err)
		}
		return
	}
	for _, r := range rp.live.all() {
		if r.started.Before(before) && !containsSorted(ids, r.id) {
			rp.opts.Log.Warn("run lost its lease", "run", r.id, "agent", r.agentID)
			r.stop(ErrLeaseLost)
		}
	}
}

func containsSorted(ids []string, id string) bool {
	i := sort.SearchStrings(ids, id)
	return i < len(ids) && ids[i] == id
}

// sweepEvents deletes the events of runs that ended before the retention,
// then those the bounds by size leave out.
func (rp *Replica) sweepEvents(ctx context.Context) {
	n, err := rp.opts.Store.DeleteEvents(ctx, time.Now().Add(-rp.opts.EventRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		rp.opts.Log.Warn("sweeping old events", "error", err)
	case n > 0:
		rp.opts.Log.Debug("old events swept", "events", n)
	}
	n, err = rp.opts.Store.TrimEvents(ctx, rp.opts.EventRetentionRunBytes, rp.opts.EventRetentionBytes)
	switch {
	case err != nil && ctx.Err() == nil:
		rp.opts.Log.Warn("sweeping events over the size bounds", "error", err)
	case n > 0:
		rp.opts.Log.Info("events over the size bounds swept", "events", n,
			"run_bound", rp.opts.EventRetentionRunBytes, "total_bound", rp.opts.EventRetentionBytes)
	}
}
