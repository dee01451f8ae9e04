package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// The bare relay is the benchmarks' floor for a send: the least a gRPC
// service written in Go with the same libraries can do for one model round.
// It serves AgentService.Send only (grpc-go, a bidi stream over a real
// socket); per stream it makes one streamed chat request with net/http to
// the fake model, reads the SSE lines, sends each text delta back as an
// event and ends with a result event. No engine, no store, no tools, no
// config, no logs. It runs in a process of its own, as agent-server does:
// this test binary started again with relayEnv set.
const (
	relayEnv      = "AGENTCORE_BENCH_RELAY" // set: the process is the relay; the model's base URL
	relayMaxConns = 1000                    // idle model connections kept, as agent-server's -max-runs
)

// relayMain runs the relay when this process was started as one, and
// reports whether it was: it prints its address on stdout, serves until
// SIGTERM or its stdin closes (the benchmark process went away), then stops.
func relayMain() (int, bool) {
	model := os.Getenv(relayEnv)
	if model == "" {
		return 0, false
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1, true
	}
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, &relay{model: model, hc: &http.Client{
		Transport: &http.Transport{MaxIdleConns: relayMaxConns, MaxIdleConnsPerHost: relayMaxConns},
	}})
	fmt.Println(lis.Addr().String())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	go func() {
		<-ctx.Done()
		srv.Stop()
	}()
	if err := srv.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1, true
	}
	return 0, true
}

// relay is the bare relay's AgentService: Send, nothing else.
type relay struct {
	agentv1.UnimplementedAgentServiceServer
	model string
	hc    *http.Client
}

// relayChunk is the part of a chat completion chunk the relay reads.
type relayChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
}

// Send relays one model round: the start's agent id is the system prompt
// (which the fake model's router answers by), its first part the user's text.
func (r *relay) Send(stream agentv1.AgentService_SendServer) error {
	req, err := stream.Recv()
	if err != nil {
		return err
	}
	start := req.GetStart()
	if start == nil || len(start.GetInput()) == 0 {
		return status.Error(codes.InvalidArgument, "relay: the first message must start a run with input")
	}
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	body, err := json.Marshal(struct {
		Model    string    `json:"model"`
		Stream   bool      `json:"stream"`
		Messages []message `json:"messages"`
	}{"fake-model", true, []message{{"system", start.GetAgentId()}, {"user", start.GetInput()[0].GetText()}}})
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	hreq, err := http.NewRequestWithContext(stream.Context(), http.MethodPost, r.model+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	resp, err := r.hc.Do(hreq)
	if err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return status.Errorf(codes.Unavailable, "relay: model answered %s", resp.Status)
	}
	var (
		text strings.Builder
		seq  int64
	)
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		if data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: ")); ok {
			if string(data) == "[DONE]" {
				break
			}
			var c relayChunk
			if err := json.Unmarshal(data, &c); err != nil {
				return status.Error(codes.Unavailable, err.Error())
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content == "" {
					continue
				}
				text.WriteString(ch.Delta.Content)
				seq++
				if err := stream.Send(&agentv1.SendResponse{Event: &agentv1.Event{Seq: seq, Kind: &agentv1.Event_ModelDelta{
					ModelDelta: &agentv1.ModelDeltaEvent{Step: 1, Delta: &agentv1.ModelDeltaEvent_Text{Text: ch.Delta.Content}},
				}}}); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return status.Error(codes.Unavailable, err.Error())
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body) // to its end, so that the connection is kept
	seq++
	return stream.Send(&agentv1.SendResponse{Event: &agentv1.Event{Seq: seq, Kind: &agentv1.Event_Result{
		Result: &agentv1.RunResultEvent{Text: text.String(), Steps: 1, Reason: agentv1.EndReason_END_REASON_NO_TOOL},
	}}})
}

// relayProc is the running relay the benchmarks share, started on first use.
type relayProc struct {
	once   sync.Once
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	done   chan error
	client *client.Client
	err    error
}

// benchRelay is the bare relay of the benchmarks; stopBench stops it.
var benchRelay relayProc

// get starts the relay on first use and returns a client of it.
func (p *relayProc) get(b *testing.B) *client.Client {
	b.Helper()
	p.once.Do(func() { p.err = p.start() })
	if p.err != nil {
		b.Fatal(p.err)
	}
	return p.client
}

func (p *relayProc) start() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), relayEnv+"="+suite.Model.URL)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	p.cmd, p.stdin, p.done = cmd, stdin, make(chan error, 1)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			addr <- sc.Text()
		}
		close(addr)
		_, _ = io.Copy(io.Discard, stdout)
		p.done <- cmd.Wait()
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			return fmt.Errorf("relay: exited before listening: %w", p.stop())
		}
		p.client, err = client.Dial(a)
		return err
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return errors.Join(errors.New("relay: no address in 30s"), p.stop())
	}
}

// stop ends the relay, if it was started, and waits for it.
func (p *relayProc) stop() error {
	if p.cmd == nil {
		return nil
	}
	if p.client != nil {
		p.client.Close()
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.stdin.Close()
	select {
	case err := <-p.done:
		p.cmd = nil
		return err
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("relay: still running 30s after SIGTERM: %w", <-p.done)
	}
}

// relaySend sends text through the relay as the agent with this system prompt.
func relaySend(ctx context.Context, c *client.Client, system, text string) error {
	_, err := c.Agent(system).Send(ctx, text, client.Callbacks{})
	return err
}
