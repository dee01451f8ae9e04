package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/pkg/tool/limits"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// crashGrace is how long a call whose stream broke waits for the plugin to
// exit on its own, so that the result reports the real exit status.
const crashGrace = 2 * time.Second

// warmUpTimeout bounds a process's warm-up call (see proc.warmUp).
const warmUpTimeout = 2 * time.Second

var handshake = plugin.HandshakeConfig{
	ProtocolVersion:  pluginv1.ProtocolVersion,
	MagicCookieKey:   pluginv1.MagicCookieKey,
	MagicCookieValue: pluginv1.MagicCookieValue,
}

// dialOptions fix the HTTP/2 flow-control windows, which turns off gRPC's
// bandwidth-delay estimation: its pings are pure overhead on a local socket.
var dialOptions = []grpc.DialOption{
	grpc.WithInitialWindowSize(4 << 20),
	grpc.WithInitialConnWindowSize(4 << 20),
}

// grpcPlugin is the client half of the plugin for go-plugin.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
}

func (grpcPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("pkg/tool calls tools; plugins serve them with sdk/tool")
}

func (grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginv1.NewToolPluginServiceClient(c), nil
}

// pool holds the idle processes of one plugin. A process serves one call
// at a time; a call that finds no idle process starts a new one.
type pool struct {
	host  *Host
	cmd   Command
	stamp []fileStamp
	name  string // the plugin's name for the host's ProcessObserver

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

// proc is one plugin process and its connection.
type proc struct {
	pool  *pool
	group *limits.Group // the process tree's limits; nil without a limits controller

	mu      sync.Mutex
	p       *process
	killed  bool
	dead    bool // killed, and its tree known dead (waitDead): no more kills needed
	started bool // reported to the host's ProcessObserver

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

// runner is go-plugin's RunnerFunc: it builds the command from the pool's
// Command, with the host's environment less HideEnv, then GOMAXPROCS
// (PluginProcs), go-plugin's variables (base.Env: the handshake cookie,
// protocol versions, socket directory), then the Command's Env.
func (pr *proc) runner(_ hclog.Logger, base *exec.Cmd, socketDir string) (runner.Runner, error) {
	c := pr.pool.cmd
	h := pr.pool.host
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env = pluginEnv(os.Environ(), h.cfg.HideEnv)
	if h.cfg.PluginProcs > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(h.cfg.PluginProcs))
	}
	cmd.Env = append(append(cmd.Env, base.Env...), c.Env...)
	if h.cfg.MaxResultBytes > 0 {
		cmd.Env = append(cmd.Env, pluginv1.MaxResultBytesEnv+"="+strconv.Itoa(h.cfg.MaxResultBytes))
	}
	cmd.Dir = c.Dir
	if cred := h.cfg.Credential; cred != nil {
		// The plugin, as its own user, makes its socket there; the host, root, may connect to it.
		if err := os.Chown(socketDir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("give the plugin's socket directory to uid %d: %w", cred.Uid, err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	p := newProcess(cmd, h.sp, h.log.Named(filepath.Base(c.Path)), pr.group)
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.killed {
		return nil, errors.New("start cancelled")
	}
	pr.p = p
	return p, nil
}

// pluginEnv returns env without the variables named in hide.
func pluginEnv(env, hide []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(hide, name) {
			out = append(out, kv)
		}
	}
	return out
}

func (pr *proc) connect() error {
	if _, err := pr.client.Start(); err != nil {
		return err
	}
	cp, err := pr.client.Client()
	if err != nil {
		return err
	}
	raw, err := cp.Dispense(pluginv1.PluginName)
	if err != nil {
		return err
	}
	pr.rpc = raw.(pluginv1.ToolPluginServiceClient)
	return nil
}

// startError explains a failed start with the plugin's exit and stderr.
// An executable that wrote something else than the handshake line, or
// ended successfully without writing it, is not a plugin at all.
func (pr *proc) startError(err error) error {
	p := pr.process()
	if p == nil {
		return err
	}
	msg := err.Error()
	line, unrecognized := strings.CutPrefix(msg, "Unrecognized remote plugin message: ")
	line, _, _ = strings.Cut(line, "\n")
	if unrecognized && strings.TrimSpace(line) != "" {
		return &NotPluginError{Path: pr.pool.cmd.source(), Printed: line}
	}
	select {
	case <-p.done:
		// It ended well without a handshake and without a word on stderr:
		// a program, not a plugin (a plugin that fails says why there).
		if p.state != nil && p.state.Success() && (unrecognized || strings.Contains(msg, "exited before we could connect")) && pr.stderrTail() == "" {
			return &NotPluginError{Path: pr.pool.cmd.source()}
		}
		msg += "; the process " + p.status()
	case <-time.After(crashGrace):
	}
	if tail := pr.stderrTail(); tail != "" {
		msg += "; its stderr says:\n" + tail
	}
	return errors.New(msg)
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
	_, err := pr.call(&pluginv1.ExecuteRequest{}, &chunkDecoder{}, nil)
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

// errNoSession says the plugin does not implement Session.
var errNoSession = errors.New("plugin has no Session")

// call runs one call on the process: on its Session stream, or through
// Execute when the plugin has no Session. It returns the plugin's result,
// or an error when the stream failed before a result came.
// started, if not nil, is called once, when the request is sent.
func (pr *proc) call(req *pluginv1.ExecuteRequest, dec *chunkDecoder, started func()) (*pluginv1.ToolResult, error) {
	if !pr.noSession {
		res, err := pr.callSession(req, dec, started)
		if !errors.Is(err, errNoSession) {
			return res, err
		}
		pr.noSession = true
		started = nil // called already: the call goes on through Execute
	}
	return pr.callExecute(req, dec, started)
}

func (pr *proc) callSession(req *pluginv1.ExecuteRequest, dec *chunkDecoder, started func()) (*pluginv1.ToolResult, error) {
	if pr.sess == nil {
		s, err := pr.rpc.Session(pr.sessCtx)
		if err != nil {
			return nil, err
		}
		pr.sess = s
	}
	// On a stream the plugin ended, Send says io.EOF and Recv has the status.
	if err := pr.sess.Send(sessionRequest(req)); err != nil && err != io.EOF {
		return nil, err
	}
	if started != nil {
		started()
	}
	first := true
	for {
		msg, err := pr.sess.Recv()
		if err != nil {
			if first && status.Code(err) == codes.Unimplemented {
				pr.sess = nil
				return nil, errNoSession
			}
			if err == io.EOF {
				err = errors.New("the plugin ended its session")
			}
			return nil, err
		}
		first = false
		if res := handle(msg.GetExecute(), dec); res != nil {
			return res, nil
		}
	}
}

// sessionRequest wraps req for the Session stream, the message and its
// oneof wrapper in one allocation.
func sessionRequest(req *pluginv1.ExecuteRequest) *pluginv1.SessionRequest {
	m := &struct {
		msg  pluginv1.SessionRequest
		kind pluginv1.SessionRequest_Execute
	}{kind: pluginv1.SessionRequest_Execute{Execute: req}}
	m.msg.Kind = &m.kind
	return &m.msg
}

func (pr *proc) callExecute(req *pluginv1.ExecuteRequest, dec *chunkDecoder, started func()) (*pluginv1.ToolResult, error) {
	stream, err := pr.rpc.Execute(pr.sessCtx, req)
	if err != nil {
		return nil, err
	}
	if started != nil {
		started()
	}
	var res *pluginv1.ToolResult
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			if res == nil {
				return nil, errors.New("the plugin ended the call without a result")
			}
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = handle(msg, dec)
		}
	}
}

// handle passes an output chunk on, or returns the result.
func handle(msg *pluginv1.ExecuteResponse, dec *chunkDecoder) *pluginv1.ToolResult {
	switch ev := msg.GetEvent().(type) {
	case *pluginv1.ExecuteResponse_Output:
		dec.write(ev.Output.GetStream(), ev.Output.GetData())
	case *pluginv1.ExecuteResponse_Result:
		dec.flush()
		if ev.Result == nil {
			return &pluginv1.ToolResult{}
		}
		return ev.Result
	}
	return nil
}

// errTimeout is the cause of a call's context when its tool's timeout passed.
var errTimeout = errors.New("tool timeout")

// callContext is the context of one call: it ends, with errTimeout as its
// cause, when the tool's declared timeout passes.
func callContext(ctx context.Context, spec Spec) (context.Context, context.CancelFunc) {
	if spec.Timeout > 0 {
		return context.WithTimeoutCause(ctx, spec.Timeout, errTimeout)
	}
	return context.WithCancel(ctx)
}

// run executes one call of a plugin tool with the host's semantics.
func (pl *pool) run(ctx context.Context, e *entry, input []byte, opts Options) Result {
	name := e.spec.Name
	if e.spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = callContext(ctx, e.spec)
		defer cancel()
	}

	pr, err := pl.get(ctx, e.spec.Limits)
	if err != nil {
		if ctx.Err() != nil {
			return stoppedResult(ctx, e)
		}
		return errorResult(fmt.Sprintf("tool %q could not start its plugin %s: %v", name, pl.cmd.source(), err))
	}
	stopCPU := func() {}
	if cpu := e.spec.Limits.CPUTime; cpu > 0 && pr.group != nil {
		stopCPU = pr.group.WatchCPU(cpu)
		defer stopCPU()
	}
	// The hard stop, on a timeout or a cancel, kills the process group at
	// once (a context that cannot end needs none).
	stop := noStop
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, pr.stop)
	}
	dec := &chunkDecoder{onOutput: opts.OnOutput}
	var oom *oomScanner
	if pr.group != nil && !pr.group.Cgroup() {
		// Without a cgroup, an out-of-memory line is the sign of a memory
		// breach; a Go plugin's begins in the call's captured stderr.
		oom = &oomScanner{}
		dec.onStderr = oom.write
	}
	req := &pluginv1.ExecuteRequest{Tool: name, InputJson: string(input), CallId: opts.CallID, TraceContext: traceContext(ctx)}
	res, err := pr.call(req, dec, opts.OnStart)
	// The watch's last look, before Check: a call over its CPU time since
	// the last one is a breach too.
	stopCPU()
	if !stop() || ctx.Err() != nil {
		// Stopped for the context (gRPC may notice the context before the
		// AfterFunc runs): kill, wait until the tree is dead (not for the
		// reap), report the stop.
		pr.kill()
		pr.waitDead()
		if o := pl.host.cfg.Observer; o != nil {
			o.ProcessKilled(pl.name)
		}
		pl.lost(pr)
		return stoppedResult(ctx, e)
	}
	if err != nil {
		return pl.crashResult(pr, name, err, oom.line())
	}
	if pr.group != nil {
		// A tool's child killed at the limit, the tool answering at once:
		// the breach wins over the answer, and the tree goes.
		if b, ok := pr.group.Check(); ok {
			pr.kill()
			pr.waitDead()
			pl.lost(pr)
			pl.host.log.Warn("tool over its limit: killed", "path", pl.cmd.Path, "tool", name, "limit", b.String(), "detail", b.Detail)
			return outcome(errorResult(breachText(name, b)), OutcomeLimit)
		}
	}
	pl.put(pr)
	return fromPlugin(name, res)
}

// noStop is the stop of a hard stop never armed: there is nothing to stop.
func noStop() bool { return true }

// breachText says which limit a call exceeded.
func breachText(name string, b limits.Breach) string {
	msg := fmt.Sprintf("tool %q exceeded its %s and was killed", name, b)
	if b.Detail != "" {
		msg += " (" + b.Detail + ")"
	}
	return msg + ". It may succeed with less input or a smaller task; the operator sets the limits."
}

// NotPluginError is a tool file that is executable but is no plugin: it did
// not write go-plugin's handshake line on stdout.
type NotPluginError struct {
	// Path is the file.
	Path string
	// Printed is the first line it wrote instead, if any.
	Printed string
}

func (e *NotPluginError) Error() string {
	msg := fmt.Sprintf("not an agentcore plugin (no handshake line on stdout): %s; remove it or clear its executable bit", e.Path)
	if p := strings.TrimSpace(e.Printed); p != "" {
		msg += fmt.Sprintf(" (it printed %q)", lastLines(p, 1))
	}
	return msg
}

func stoppedResult(ctx context.Context, e *entry) Result {
	if errors.Is(context.Cause(ctx), errTimeout) {
		return outcome(errorResult(fmt.Sprintf("tool %q timed out after %s and was killed", e.spec.Name, e.spec.Timeout)), OutcomeTimeout)
	}
	return outcome(errorResult(fmt.Sprintf("tool %q was stopped: %v", e.spec.Name, context.Cause(ctx))), OutcomeKilled)
}

// crashResult reports a call whose stream broke: the plugin's exit status
// and the tail of its stderr when it died, else the error; or the limit it
// went over (oom: an out-of-memory line of the call's stderr output).
func (pl *pool) crashResult(pr *proc, name string, err error, oom string) Result {
	p := pr.p
	select {
	case <-p.done:
	case <-time.After(crashGrace):
	}
	if !p.finished() {
		pl.lost(pr)
		if status.Code(err) == codes.ResourceExhausted {
			return errorResult(fmt.Sprintf("tool %q sent a message larger than the host accepts (%d bytes), so its call was ended: %s. "+
				"A tool should return less at once (a page, a summary, or a file to read in parts).", name, pl.host.cfg.MaxReceiveBytes, status.Convert(err).Message()))
		}
		return errorResult(fmt.Sprintf("tool %q failed: %v", name, err))
	}
	if pl.host.isClosed() {
		pl.lost(pr)
		return outcome(errorResult(fmt.Sprintf("tool %q was stopped: %v", name, ErrClosed)), OutcomeKilled)
	}
	tail := pr.stderrTail()
	if pr.group != nil {
		if b, ok := pr.group.Breach(p.state, oom+"\n"+p.oom.line()+"\n"+tail); ok {
			pl.lost(pr)
			pl.host.log.Warn("tool over its limit: killed", "path", pl.cmd.Path, "tool", name, "limit", b.String(), "detail", b.Detail)
			return outcome(errorResult(breachText(name, b)), OutcomeLimit)
		}
	}
	msg := fmt.Sprintf("tool %q crashed: its plugin process %s", name, p.status())
	if tail != "" {
		msg += ". Its stderr says:\n" + tail
	}
	pl.lost(pr)
	pl.host.log.Warn("plugin crashed", "path", pl.cmd.Path, "tool", name, "status", p.status())
	return outcome(errorResult(msg), OutcomeCrash)
}
