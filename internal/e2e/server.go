package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Server is a running agent-server.
type Server struct {
	Cmd  *exec.Cmd
	Addr string

	mu     sync.Mutex
	log    bytes.Buffer
	exited chan struct{}
	err    error
}

// StartServer starts agent-server on a free port with the plugins in
// toolDir and the fake model as its default profile; extra adds flags.
// Unless extra names a store, the server gets the default store (SQLite) in
// a data folder of its own, never the developer's home.
func (s *Suite) StartServer(toolDir string, extra []string, env ...string) (*Server, error) {
	return Launch(s.ServerCmd(toolDir, extra, env...))
}

// ServerCmd is the command StartServer runs: agent-server on 127.0.0.1:0
// with the plugins in toolDir and the fake model as its default profile.
// Unless extra names a store, the server gets the default store (SQLite) in
// a data folder of its own, never the developer's home.
func (s *Suite) ServerCmd(toolDir string, extra []string, env ...string) *exec.Cmd {
	args := []string{"-listen", "127.0.0.1:0", "-log-format", "json", "-log-level", "debug",
		"-tool-dir", toolDir, "-shutdown-grace", "2s"}
	if !slices.Contains(extra, "-store") && !slices.Contains(extra, "-data-dir") {
		// Open to all: some tests run the server as another user.
		if data, err := os.MkdirTemp(s.Dir, "data-"); err == nil && os.Chmod(data, 0o777) == nil {
			args = append(args, "-data-dir", data)
		} else {
			args = append(args, "-store", "memory")
		}
	}
	args = append(args, extra...)
	cmd := exec.Command(s.Bin, args...)
	cmd.Env = append(os.Environ(),
		"AGENTCORE_MODEL_BASE_URL="+s.Model.URL,
		"AGENTCORE_MODEL=fake-model",
		"AGENTCORE_MODEL_API_KEY="+TestKey,
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// StartServerUnder is StartServer with agent-server run by the command
// wrap (e.g. unshare), which execs it with its arguments.
func (s *Suite) StartServerUnder(wrap []string, toolDir string, extra []string, env ...string) (*Server, error) {
	cmd := s.ServerCmd(toolDir, extra, env...)
	wrapped := exec.Command(wrap[0], append(append([]string{}, wrap[1:]...), cmd.Args...)...)
	wrapped.Env, wrapped.SysProcAttr = cmd.Env, cmd.SysProcAttr
	return Launch(wrapped)
}

// Launch starts an agent-server command and waits until it listens and its
// health service says SERVING (asked over a connection made with dial;
// plaintext by default). The address is the one of the "listening" log
// line, or the command's last -listen when it names a port (the line is
// missing at -log-level warn).
func Launch(cmd *exec.Cmd, dial ...grpc.DialOption) (*Server, error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Server{Cmd: cmd, exited: make(chan struct{})}
	addrCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			var rec struct {
				Message string `json:"@message"`
				Addr    string `json:"addr"`
			}
			// Only lines that may say it are decoded: under the benchmarks'
			// load this process reads thousands of lines a second.
			if strings.Contains(line, `"listening"`) && json.Unmarshal([]byte(line), &rec) == nil && rec.Message == "listening" {
				select {
				case addrCh <- rec.Addr:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	known := ""
	for i, a := range cmd.Args[:len(cmd.Args)-1] {
		if a == "-listen" && !strings.HasSuffix(cmd.Args[i+1], ":0") {
			known = cmd.Args[i+1]
		}
	}
	if known != "" {
		addrCh <- known
	}
	select {
	case p.Addr = <-addrCh:
	case <-p.exited:
		return nil, fmt.Errorf("exited early: %w\n%s", p.err, p.Logs())
	case <-time.After(30 * time.Second):
		p.Kill()
		return nil, fmt.Errorf("no listening line in 30s:\n%s", p.Logs())
	}
	if err := p.WaitServing(30*time.Second, dial...); err != nil {
		p.Kill()
		return nil, fmt.Errorf("%w\n%s", err, p.Logs())
	}
	return p, nil
}

// Logs returns what the server wrote to stderr so far.
func (p *Server) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// WaitLog waits for the server's first JSON log line with message msg.
func (p *Server) WaitLog(t testing.TB, msg string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if lines := p.LogLines(msg); len(lines) > 0 {
			return lines[0]
		}
	}
	t.Fatalf("no %q line in the logs:\n%s", msg, p.Logs())
	return nil
}

// LogLines returns the server's JSON log lines with message msg.
func (p *Server) LogLines(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(p.Logs(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["@message"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// WaitServing waits until the health service says SERVING.
func (p *Server) WaitServing(d time.Duration, dial ...grpc.DialOption) error {
	if len(dial) == 0 {
		dial = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(p.Addr, dial...)
	if err != nil {
		return err
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not SERVING after %s (last: %v %v)", d, resp.GetStatus(), err)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exited before it was SERVING: %v", p.err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Exited is closed when the server's process has exited.
func (p *Server) Exited() <-chan struct{} { return p.exited }

// Err is how the server's process exited (nil: status 0), once Exited is closed.
func (p *Server) Err() error { return p.err }

// Stop sends SIGTERM and waits for a clean exit.
func (p *Server) Stop() error {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(30 * time.Second):
		p.Kill()
		return fmt.Errorf("still running 30s after SIGTERM")
	}
}

// Kill kills the server's process and waits for it.
func (p *Server) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.exited
}
