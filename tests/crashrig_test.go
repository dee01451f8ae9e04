package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// crashScript is the model of the crash tests: run i (its agent's system
// prompt "PREFIX:i") takes 3 to 6 steps; each step but the last streams a
// few pieces of text and calls record (idempotent) and, every other step,
// note (not idempotent); the last answers. Every answer is numbered in its
// usage (input tokens): the request that produced a stored response is
// known, so a round asked again after its response was stored shows.
type crashScript struct {
	mu   sync.Mutex
	reqs []modelCall // every request, in order; nonce = index + 1
}

// modelCall is one request the fake model got: the run it belongs to, how
// many messages of the history it held, when.
type modelCall struct {
	system string
	held   int
	at     time.Time
}

func stepsOf(i int) int { return 3 + i%4 }

func (s *crashScript) handle(req *fakemodel.Request) fakemodel.Turn {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	req.Field("messages", &msgs)
	system, steps, held := "", 0, 0
	for k, m := range msgs {
		switch m.Role {
		case "system":
			var c any
			_ = json.Unmarshal(m.Content, &c)
			system = e2e.ContentText(c)
		case "assistant":
			steps++
		}
		// A step's tool results are one message of the history, one each
		// in the request.
		if m.Role != "system" && (m.Role != "tool" || k == 0 || msgs[k-1].Role != "tool") {
			held++
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, modelCall{system: system, held: held, at: time.Now()})
	nonce := len(s.reqs)
	s.mu.Unlock()
	_, num, _ := strings.Cut(system, ":")
	i, _ := strconv.Atoi(num)
	usage := &fakemodel.Usage{Input: nonce, Output: 1}
	chunks := []string{fmt.Sprintf("run %d ", i), fmt.Sprintf("step %d", steps), "."}
	if steps >= stepsOf(i)-1 {
		return fakemodel.Turn{TextChunks: append(chunks, " Done."), ChunkDelay: 40 * time.Millisecond, Usage: usage}
	}
	n := i*100 + steps
	// The calls take 100 to 300 ms, the same in every run of the script.
	calls := []fakemodel.ToolCall{{ID: fmt.Sprintf("r%d_%d", i, steps), Name: "record", Arguments: fmt.Sprintf(`{"n":%d,"ms":%d}`, n, 100+(n*37)%200)}}
	if steps%2 == 0 {
		calls = append(calls, fakemodel.ToolCall{ID: fmt.Sprintf("n%d_%d", i, steps), Name: "note", Arguments: fmt.Sprintf(`{"n":%d,"ms":%d}`, n, 50+(n*53)%150)})
	}
	return fakemodel.Turn{TextChunks: chunks, ChunkDelay: 40 * time.Millisecond, ToolCalls: calls, Usage: usage}
}

// calls returns the requests logged for a system prompt.
func (s *crashScript) calls(system string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for n, r := range s.reqs {
		if r.system == system {
			out = append(out, n+1)
		}
	}
	return out
}

func (s *crashScript) held(nonce int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[nonce-1].held
}

// dialCrash dials a crash test's server: the channel tries again every
// 100 ms at most, so that a client finds a restarted server at once (gRPC's
// default backoff grows to two minutes).
func dialCrash(t *testing.T, addr string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.Dial(addr, append(opts, client.WithDialOptions(grpc.WithConnectParams(grpc.ConnectParams{
		Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.2, MaxDelay: 100 * time.Millisecond}, MinConnectTimeout: time.Second,
	})))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// crashNode is one agent-server of a crash test, killed and restarted on
// the same address, store and replica id.
type crashNode struct {
	t    *testing.T
	args []string
	env  []string
	addr string

	done   chan struct{}  // closed when the test ends: no restart after it
	gaveUp chan struct{}  // closed when a restart failed for good
	once   sync.Once      // closes gaveUp
	bg     sync.WaitGroup // delayed restarts (restartAfter)

	mu       sync.Mutex
	closed   bool // the test's cleanup stopped the node: start starts nothing
	srv      *e2e.Server
	kills    []time.Time // when the test killed it, or it killed itself
	restarts []time.Time // when a new process started after one
	logs     strings.Builder
}

func newCrashNode(t *testing.T, model *fakemodel.Server, dataDir, id string, extra []string, env ...string) *crashNode {
	n := &crashNode{t: t, addr: freeAddr(t), done: make(chan struct{}), gaveUp: make(chan struct{})}
	n.args = append([]string{"-listen", n.addr, "-log-format", "json", "-log-level", "info", "-tool-dir", suite.TestPlugins,
		"-shutdown-grace", "2s", "-replica-id", id, "-on-interrupt", "resume", "-resume-attempts", "1000"}, extra...)
	n.env = append([]string{"AGENTCORE_MODEL_BASE_URL=" + model.URL, "AGENTCORE_MODEL=fake-model", "AGENTCORE_MODEL_API_KEY=" + e2e.TestKey,
		"KEYED_DIR=" + dataDir}, env...)
	n.start()
	t.Cleanup(func() {
		close(n.done)
		n.bg.Wait()
		n.mu.Lock()
		defer n.mu.Unlock()
		n.closed = true
		if n.srv != nil {
			_ = n.srv.Stop()
			n.logs.WriteString(n.srv.Logs())
		}
	})
	return n
}

// start starts the server, again when it dies before it serves (a run it
// resumes at once may crash it: the poison run).
func (n *crashNode) start() {
	for try := 0; ; try++ {
		n.mu.Lock()
		closed := n.closed
		n.mu.Unlock()
		if closed {
			return
		}
		cmd := exec.Command(suite.Bin, n.args...)
		cmd.Env = append(os.Environ(), n.env...)
		srv, err := e2e.Launch(cmd)
		if err == nil {
			n.mu.Lock()
			closed := n.closed
			if !closed {
				n.srv = srv
			}
			n.mu.Unlock()
			if closed { // started as the test ended: nobody else would stop it
				_ = srv.Stop()
			}
			return
		}
		if try == 10 {
			n.t.Errorf("restart: %v", err)
			n.once.Do(func() { close(n.gaveUp) })
			return
		}
		n.mu.Lock()
		n.kills = append(n.kills, time.Now())
		n.restarts = append(n.restarts, time.Now())
		n.mu.Unlock()
	}
}

// kill kills the server (unless it is dead already) and reports whether
// it was running.
func (n *crashNode) kill() bool {
	n.mu.Lock()
	srv := n.srv
	n.srv = nil
	n.mu.Unlock()
	if srv == nil {
		return false
	}
	srv.Kill()
	n.mu.Lock()
	n.kills = append(n.kills, time.Now())
	n.logs.WriteString(srv.Logs())
	n.mu.Unlock()
	return true
}

// watch restarts the server each time it killed itself (a fault hook),
// until ctx ends; after (when set) waits before the restart.
func (n *crashNode) watch(ctx context.Context, wg *sync.WaitGroup) {
	wg.Go(func() {
		for ctx.Err() == nil {
			n.mu.Lock()
			srv := n.srv
			n.mu.Unlock()
			if srv == nil {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			select {
			case <-srv.Exited():
				n.mu.Lock()
				if n.srv == srv { // not the test's kill: the process killed itself
					n.srv = nil
					n.kills = append(n.kills, time.Now())
					n.logs.WriteString(srv.Logs())
					n.mu.Unlock()
					n.restart()
					continue
				}
				n.mu.Unlock()
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// restartAfter restarts the server after d in the background, unless the
// test ends first; the test's cleanup waits for it.
func (n *crashNode) restartAfter(d time.Duration) {
	n.bg.Go(func() {
		select {
		case <-n.done:
		case <-time.After(d):
			n.restart()
		}
	})
}

func (n *crashNode) restart() {
	n.mu.Lock()
	n.restarts = append(n.restarts, time.Now())
	n.mu.Unlock()
	n.start()
}

// follower follows a run by Attach, again after each broken connection,
// and checks that it sees every seq once, in order.
type follower struct {
	seqs    []int64
	resumed []*agentv1.Event
	result  *client.Result
	err     error
}

func follow(ctx context.Context, c *client.Client, run string, after int64) *follower {
	f := &follower{}
	last := after
	for ctx.Err() == nil {
		res, err := c.Attach(ctx, run, last, client.Callbacks{OnEvent: func(e *agentv1.Event) {
			f.seqs = append(f.seqs, e.GetSeq())
			last = e.GetSeq()
			if e.GetRunResumed() != nil {
				f.resumed = append(f.resumed, e)
			}
		}})
		if err == nil {
			f.result = res
			return f
		}
		var ce *client.Error
		if errors.As(err, &ce) && ce.Reason != "" && ce.Reason != client.ReasonShuttingDown {
			f.err = err
			return f
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.err = ctx.Err()
	return f
}

// checkSeqs fails unless seqs go after+1, after+2, … each once.
func checkSeqs(t *testing.T, who string, after int64, seqs []int64) {
	t.Helper()
	for i, s := range seqs {
		if s != after+int64(i)+1 {
			t.Errorf("%s (after %d) saw seqs %v: not each once in order", who, after, seqs)
			return
		}
	}
}

// crashRun is one run of the crash loop, as its clients saw it.
type crashRun struct {
	i         int
	agent     string
	runID     string
	followers []*follower
	afters    []int64
	sendRes   *client.Result // a Send with Reconnect's result
	sendErr   error
	sendDone  chan struct{} // closed once the Send with Reconnect returned; nil: detached
}

// startRun creates run i's agent and sends its task, again while the
// server is down, never twice (busy policy reject: a send that started a
// run before its answer was lost finds it). With sent set, the send
// reconnects (the Go client's Send with Reconnect, followed across the
// restarts) and sent is called with its outcome; else it is detached.
func startRun(ctx context.Context, c *client.Client, prefix string, i int, sent func(*client.Result, error)) (*client.Agent, string, error) {
	var began atomic.Bool // a send saw the run start: it reports
	id := fmt.Sprintf("%s-%d", prefix, i)
	cfg := &agentv1.AgentConfig{System: proto.String(fmt.Sprintf("%s:%d", prefix, i)), OnInterrupt: agentv1.OnInterrupt_ON_INTERRUPT_RESUME}
	for ctx.Err() == nil {
		a, err := c.CreateAgent(ctx, client.AgentOptions{ID: id, Config: cfg})
		var ce *client.Error
		if errors.As(err, &ce) && ce.Reason == client.ReasonAgentExists {
			a, err = c.Agent(id), nil
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if runs, err := a.Runs(ctx); err == nil && len(runs) > 0 {
			if began.Load() {
				return a, runs[0].GetId(), nil
			}
			return a, runs[0].GetId(), errNotSent
		} else if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		started := make(chan string, 1)
		report := sent
		go func() {
			var mine atomic.Bool // this send started the run
			res, err := a.SendWith(ctx, client.SendOptions{Text: "go", Detach: report == nil, Reconnect: report != nil, Busy: agentv1.BusyPolicy_BUSY_POLICY_REJECT,
				Callbacks: client.Callbacks{OnStart: func(id string) { mine.Store(true); began.Store(true); started <- id }}})
			if report != nil && mine.Load() {
				report(res, err)
			}
		}()
		select {
		case id := <-started:
			return a, id, nil
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
		}
	}
	return nil, "", ctx.Err()
}

// errNotSent is startRun's word that it found the run started by an
// earlier try, whose send's answer was lost.
var errNotSent = errors.New("the run was found, not sent")

// baseline runs the same script without crashes and returns each run's
// history, by run number.
func baseline(t *testing.T, model *fakemodel.Server, runs int) map[int][]*agentv1.Message {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	node := newCrashNode(t, model, dir, "baseline", []string{"-store", "memory"})
	c := dialCrash(t, node.addr)
	ctx := e2e.Context(t, 5*time.Minute)
	out := map[int][]*agentv1.Message{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			a, err := c.CreateAgent(ctx, client.AgentOptions{ID: fmt.Sprintf("base-%d", i), Config: &agentv1.AgentConfig{System: proto.String(fmt.Sprintf("base:%d", i))}})
			if err == nil {
				_, err = a.Send(ctx, "go", client.Callbacks{})
			}
			var h []*agentv1.Message
			if err == nil {
				h, err = a.History(ctx)
			}
			if err != nil {
				t.Errorf("baseline run %d: %v", i, err)
				return
			}
			mu.Lock()
			out[i] = h
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}
