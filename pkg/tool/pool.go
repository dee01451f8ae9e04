package tool

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/agentcore/agentcore/pkg/tool/limits"
)

// pool holds the idle processes of one plugin. A process serves one call
// at a time; a call that finds no idle process starts a new one.
type pool struct {
	// Set when the pool is made, never changed: read without a lock.
	host  *Host
	cmd   Command
	stamp []fileStamp
	name  string // the plugin's name for the host's ProcessObserver

	// mu guards the fields below it.
	mu       sync.Mutex
	idle     []*proc
	starting int          // processes being started ahead
	waiting  []chan *proc // calls waiting for them: each gets one, or nil if its start failed
	retired  bool
	// spare is a limits group made ahead, in the background, for the next
	// process this pool starts: making one (cgroup directories, limit
	// files, the OOM notification) is off the cold start's path.
	spare *limits.Group
}

// get returns, its limits set to lim, an idle live process, the next
// process being started ahead when no call waits for it yet, or a process
// it starts.
func (pl *pool) get(ctx context.Context, lim limits.Limits) (*proc, error) {
	for {
		pl.mu.Lock()
		var pr *proc
		switch n := len(pl.idle); {
		case n > 0:
			pr = pl.idle[n-1]
			pl.idle = pl.idle[:n-1]
			pl.mu.Unlock()
		case pl.starting > len(pl.waiting):
			var err error
			if pr, err = pl.wait(ctx); err != nil {
				return nil, err
			}
			if pr == nil { // that start failed: start one, which reports why
				return pl.start(ctx, lim)
			}
		default:
			pl.mu.Unlock()
			return pl.start(ctx, lim)
		}
		if pr.p.exited() {
			pl.lost(pr) // died while idle
			continue
		}
		if pr.group != nil {
			// The tools of a plugin may ask for different limits: its process
			// takes those of the call it serves (a write only when they differ).
			if err := pr.group.Set(lim); err != nil {
				if !errors.Is(err, limits.ErrRegroup) {
					pl.host.log.Warn("could not change a plugin process's limits; starting another", "path", pl.cmd.Path, "error", err)
				}
				pl.discard(pr)
				continue
			}
		}
		if o := pl.host.cfg.Observer; o != nil {
			o.ProcessReused(pl.name)
		}
		return pr, nil
	}
}

// wait waits, with pl.mu held (and released), for the next process being
// started ahead: nil when its start failed.
func (pl *pool) wait(ctx context.Context) (*proc, error) {
	ch := make(chan *proc, 1)
	pl.waiting = append(pl.waiting, ch)
	pl.mu.Unlock()
	select {
	case pr := <-ch:
		return pr, nil
	case <-ctx.Done():
		pl.mu.Lock()
		i := slices.Index(pl.waiting, ch)
		if i >= 0 {
			pl.waiting = slices.Delete(pl.waiting, i, i+1)
		}
		pl.mu.Unlock()
		if i < 0 { // handed a process (or nil) already: give it back
			if pr := <-ch; pr != nil {
				pl.put(pr)
			}
		}
		return nil, context.Cause(ctx)
	}
}

// refill starts processes ahead, in the background, until the idle ones
// and those being started reach Config.MinIdle.
func (pl *pool) refill() {
	h := pl.host
	for {
		pl.mu.Lock()
		need := !pl.retired && len(pl.idle)+pl.starting-len(pl.waiting) < h.cfg.MinIdle
		if need {
			pl.starting++
		}
		pl.mu.Unlock()
		if !need {
			return
		}
		if !h.begin() { // not under pl.mu: Close takes h.mu, then pl.mu
			pl.started(nil, ErrClosed)
			return
		}
		go func() {
			defer h.end()
			pr, err := pl.start(context.Background(), h.limitsFor(pl.cmd, "", limits.Limits{}))
			if err == nil {
				if err = pr.warmUp(); err != nil {
					pl.discard(pr)
					pr = nil
				}
			}
			pl.started(pr, err)
		}()
	}
}

// started takes a process started ahead: it goes to the first waiting
// call, or idle. When the start failed, every waiting call is told so.
func (pl *pool) started(pr *proc, err error) {
	pl.mu.Lock()
	pl.starting--
	if err != nil {
		waiting := pl.waiting
		pl.waiting = nil
		for _, ch := range waiting {
			ch <- nil
		}
		pl.mu.Unlock()
		if !errors.Is(err, ErrClosed) {
			pl.host.log.Warn("starting a plugin ahead failed", "path", pl.cmd.Path, "error", err)
		}
		return
	}
	if len(pl.waiting) > 0 {
		ch := pl.waiting[0]
		pl.waiting = pl.waiting[1:]
		ch <- pr
		pl.mu.Unlock()
		return
	}
	if !pl.retired && len(pl.idle) < pl.host.cfg.MaxIdle {
		pl.idle = append(pl.idle, pr)
		pl.mu.Unlock()
		return
	}
	pl.mu.Unlock()
	pl.discard(pr)
}

// put returns a process after a clean call: idle if there is room, else killed.
func (pl *pool) put(pr *proc) {
	pl.mu.Lock()
	if !pl.retired && len(pl.idle) < pl.host.cfg.MaxIdle && !pr.p.exited() {
		pl.idle = append(pl.idle, pr)
		pl.mu.Unlock()
		return
	}
	pl.mu.Unlock()
	pl.discard(pr)
}

// lost discards a process that was killed or died, and starts another ahead.
func (pl *pool) lost(pr *proc) {
	pl.discard(pr)
	pl.refill()
}

// discard kills a process and cleans up after it in the background. It
// kills its process group; the rest of the tree dies after the reap.
func (pl *pool) discard(pr *proc) {
	pr.killProcessGroup()
	h := pl.host
	if h.begin() {
		go func() {
			defer h.end()
			pr.cleanup()
		}()
		return
	}
	pr.cleanup()
}

// retire kills the idle processes; busy ones are killed when they come back.
func (pl *pool) retire() {
	pl.mu.Lock()
	idle, spare := pl.idle, pl.spare
	pl.idle, pl.retired, pl.spare = nil, true, nil
	pl.mu.Unlock()
	for _, pr := range idle {
		pl.discard(pr)
	}
	if spare != nil {
		_ = spare.Close()
	}
}

// group returns a limits group with lim for a new process: the spare,
// when there is one, and another is made in the background.
func (pl *pool) group(lim limits.Limits) (*limits.Group, error) {
	h := pl.host
	pl.mu.Lock()
	g := pl.spare
	pl.spare = nil
	pl.mu.Unlock()
	if g != nil && g.Set(lim) != nil {
		_ = g.Close()
		g = nil
	}
	if h.cfg.Limits.Mechanism() == limits.Cgroup1 || h.cfg.Limits.Mechanism() == limits.Cgroup2 {
		pl.makeSpare(lim)
	}
	if g != nil {
		return g, nil
	}
	return h.cfg.Limits.NewGroup(lim)
}

// makeSpare makes the pool's spare group in the background.
func (pl *pool) makeSpare(lim limits.Limits) {
	h := pl.host
	if !h.begin() {
		return
	}
	go func() {
		defer h.end()
		g, err := h.cfg.Limits.NewGroup(lim)
		if err != nil {
			return // the next start makes its own, and says why if it fails
		}
		pl.mu.Lock()
		if pl.spare == nil && !pl.retired {
			pl.spare, g = g, nil
		}
		pl.mu.Unlock()
		if g != nil {
			_ = g.Close()
		}
	}()
}
