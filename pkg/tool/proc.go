package tool

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/agentcore/agentcore/pkg/tool/limits"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// warmUpTimeout bounds a process's warm-up call (see proc.warmUp).
const warmUpTimeout = 2 * time.Second

// proc is one plugin process and its connection.
type proc struct {
	// Set by start before the proc is shared, never changed: read without a lock.
	pool  *pool
	group *limits.Group // the process tree's limits; nil without a limits controller

	// mu guards killed, dead and started, and p until start returns the
	// proc: a kill (a stopped call, the host closing) may race the start
	// that sets p. After that p never changes, and is read without it.
	mu      sync.Mutex
	p       *process
	killed  bool
	dead    bool // killed, and its tree known dead (waitDead): no more kills needed
	started bool // reported to the host's ProcessObserver

	// cleaned runs cleanup once. client is set by start before the proc
	// is shared and rpc by connect, before start returns it: read without
	// a lock.
	cleaned sync.Once
	client  *plugin.Client
	rpc     pluginv1.ToolPluginServiceClient

	// The context of the process's RPCs, cancelled when a call is stopped
	// (see stop) or the process is cleaned up. It carries no deadline: the
	// host enforces timeouts by killing, and a deadline sent along would let
	// the plugin end the stream first.
	sessCtx    context.Context
	sessCancel context.CancelFunc
	// The Session stream, opened at the first call; one call at a time uses
	// a proc, so these need no lock. noSession: the plugin lacks Session.
	sess      grpc.BidiStreamingClient[pluginv1.SessionRequest, pluginv1.SessionResponse]
	noSession bool
}

// start starts a process, in a limits group of its own with lim, and
// connects to it. Cancelling ctx kills it.
func (pl *pool) start(ctx context.Context, lim limits.Limits) (*proc, error) {
	h := pl.host
	if !h.begin() {
		return nil, ErrClosed
	}
	defer h.end()
	pr := &proc{pool: pl}
	// The session's context exists before the process is known to the
	// host, so that a cleanup racing the start (the host closing) reads it
	// without a lock.
	pr.sessCtx, pr.sessCancel = context.WithCancel(context.Background())
	if h.cfg.Limits != nil {
		g, err := pl.group(lim)
		if err != nil {
			pr.sessCancel()
			return nil, fmt.Errorf("setting up its resource limits (%s): %w", h.cfg.Limits.Mechanism(), err)
		}
		pr.group = g
	}
	pr.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  handshake,
		Plugins:          plugin.PluginSet{pluginv1.PluginName: grpcPlugin{}},
		RunnerFunc:       pr.runner,
		SkipHostEnv:      true, // runner adds the host's environment, without HideEnv
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
		StartTimeout:     h.cfg.StartTimeout,
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: h.sockets},
		GRPCDialOptions:  append(dialOptions[:len(dialOptions):len(dialOptions)], grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(h.cfg.MaxReceiveBytes))),
	})
	h.mu.Lock()
	h.procs[pr] = struct{}{}
	h.mu.Unlock()

	stop := context.AfterFunc(ctx, pr.killProcessGroup)
	err := pr.connect()
	stopped := !stop()
	if err == nil && stopped {
		err = context.Cause(ctx)
	}
	if err == nil {
		h.mu.Lock()
		if h.closed {
			err = ErrClosed
		}
		h.mu.Unlock()
	}
	if err != nil {
		pr.killProcessGroup()
		err = pr.startError(err)
		pr.cleanup()
		return nil, err
	}
	h.log.Debug("plugin started", "path", pl.cmd.Path, "pid", pr.p.pid)
	if o := h.cfg.Observer; o != nil {
		pr.mu.Lock()
		pr.started = true
		pr.mu.Unlock()
		o.ProcessStarted(pl.name)
	}
	return pr, nil
}

func (pr *proc) process() *process {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.p
}

// stderrTail waits (briefly) for the stderr pipe of a dead process to be
// read to its end and returns the lines of it that an error shows
// (stderrExcerpt).
func (pr *proc) stderrTail() string {
	p := pr.process()
	if p == nil {
		return ""
	}
	if p.exited() {
		select {
		case <-p.stderrDone:
		case <-time.After(drainAfterExit + 50*time.Millisecond):
		}
	}
	return stderrExcerpt(p.tail.String())
}

func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// warmUp makes one call that names no tool, which a plugin answers at once
// with an error result (an unknown tool), so that the first real call on a
// process started ahead finds its Session open and the code paths of a call
// run once in both processes: without it, that call costs about twice a warm
// one. It fails when the plugin does not answer within warmUpTimeout (the
// process is then killed) or breaks the stream.
func (pr *proc) warmUp() error {
	ctx, cancel := context.WithTimeout(context.Background(), warmUpTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, pr.stop)
	_, err := pr.call(ctx, &pluginv1.ExecuteRequest{}, &chunkDecoder{}, nil, nil)
	if !stop() {
		return fmt.Errorf("no answer to a warm-up call within %s", warmUpTimeout)
	}
	if err != nil {
		return fmt.Errorf("warm-up call: %w", err)
	}
	return nil
}

// stop ends a call: it kills the process group and cancels its RPCs, so
// that the call returns even should its connection outlive the process.
func (pr *proc) stop() {
	pr.kill()
	pr.sessCancel()
}

// stopWithin stops the call at once, or with a grace first ends its context
// in the plugin and kills the tree once the process exited or grace passed.
func (pr *proc) stopWithin(grace time.Duration) {
	if p := pr.process(); grace > 0 && p != nil {
		pr.sessCancel()
		select {
		case <-p.exit:
		case <-time.After(grace):
		}
	}
	pr.stop()
}

// kill SIGKILLs the process's whole tree at once. It never waits.
func (pr *proc) kill() {
	if p := pr.killable(); p != nil {
		p.kill()
	}
}

// killProcessGroup SIGKILLs the process group at once (process's
// killProcessGroup). It never waits.
func (pr *proc) killProcessGroup() {
	if p := pr.killable(); p != nil {
		p.killProcessGroup()
	}
}

// killable marks the proc killed (a start in progress gives up) and
// returns its process unless there is none or its tree is known dead.
func (pr *proc) killable() *process {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.killed = true
	if pr.dead {
		return nil
	}
	return pr.p
}

// cleanup waits for a killed or dead process to be reaped and the rest of
// its tree to die, then releases go-plugin's connection, goroutines and
// socket directory, and the tree's limits group. go-plugin's Client.Kill
// is only called here, on a dead process: on a live one it asks for a
// graceful shutdown that can hang.
func (pr *proc) cleanup() {
	pr.cleaned.Do(func() {
		if p := pr.process(); p != nil {
			<-p.done
		}
		if g := pr.group; g != nil {
			pr.closeGroup(g)
		}
		pr.sessCancel()
		pr.client.Kill()
		if p := pr.process(); p != nil {
			p.outR.Close()
			p.errR.Close()
		}
		h := pr.pool.host
		h.mu.Lock()
		delete(h.procs, pr)
		h.mu.Unlock()
		pr.mu.Lock()
		started := pr.started
		pr.mu.Unlock()
		if o := h.cfg.Observer; o != nil && started {
			o.ProcessEnded(pr.pool.name)
		}
	})
}

// treeGrace bounds how long cleanup waits for a killed tree to die before
// it gives up on removing its group (a process stuck in the kernel).
const treeGrace = 5 * time.Second

// closeGroup waits for the tree to be dead, killing it again if need be,
// and removes its group.
func (pr *proc) closeGroup(g *limits.Group) {
	ctx, cancel := context.WithTimeout(context.Background(), treeGrace)
	defer cancel()
	g.Kill()
	if err := g.Wait(ctx); err != nil {
		pr.pool.host.log.Warn("a tool's process tree did not die after SIGKILL; its group stays", "path", pr.pool.cmd.Path, "error", err)
		return
	}
	if err := g.Close(); err != nil {
		pr.pool.host.log.Warn("could not remove a tool's limits group", "path", pr.pool.cmd.Path, "error", err)
	}
}

// waitDead waits until the killed process tree is known dead. With a
// cgroup, that is the plugin process's exit (the reaper says so, woken by
// its pidfd; the reap follows in the background) and the cgroup empty: a
// daemon that left the process group included. Without one, the tree is
// the plugin's process group: its zombie pins the group's id, and the
// kernel counts it a member, until the reap, which waitDead does itself
// at once (rather than wait for the reaper to); then the group is dead
// once no member is left, or those left are zombies
// (limits.WaitProcessGroup). It gives up after treeGrace (a process stuck
// in the kernel), saying so.
func (pr *proc) waitDead() {
	var err error
	<-pr.p.exit // as long as a killed process takes to die
	if g := pr.group; g != nil && g.Cgroup() {
		if !g.Empty() {
			ctx, cancel := context.WithTimeout(context.Background(), treeGrace)
			g.Kill() // what a process forked since the first kill
			err = g.Wait(ctx)
			cancel()
		}
	} else {
		pr.p.finish()
		ctx, cancel := context.WithTimeout(context.Background(), treeGrace)
		err = limits.WaitProcessGroup(ctx, "", pr.p.pid)
		cancel()
	}
	if err != nil {
		pr.pool.host.log.Warn("a tool's process tree did not die after SIGKILL", "path", pr.pool.cmd.Path, "error", err)
		return
	}
	pr.mu.Lock()
	pr.dead = true
	pr.mu.Unlock()
}
