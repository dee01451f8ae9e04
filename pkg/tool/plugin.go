package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

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
