package tests

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/pgtest"
	"github.com/agentcore/agentcore/pkg/agent"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// The crash loop's size: AGENTCORE_CRASH_RUNS runs (default 8) while the
// server is killed AGENTCORE_CRASH_KILLS times (default 5); the issue's
// full size is 50 and 20 (see docs/development.md).
func crashSize(t *testing.T) (runs, kills int) {
	runs, kills = 8, 5
	if v, err := strconv.Atoi(os.Getenv("AGENTCORE_CRASH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	if v, err := strconv.Atoi(os.Getenv("AGENTCORE_CRASH_KILLS")); err == nil && v > 0 {
		kills = v
	}
	return runs, kills
}

// crashFigures are a crash loop's measures.
type crashFigures struct {
	kills, runs, resumes int
	fromKill             []time.Duration // kill to resumption (the RunResumedEvent's time)
}

// runCrashLoop runs the crash loop against nodes: runs runs, each followed
// by clients, while killer kills nodes kills times; it checks every
// outcome, and returns the figures.
func runCrashLoop(t *testing.T, script *crashScript, model *fakemodel.Server, dir string, nodes []*crashNode, runs, kills int,
	killer func(ctx context.Context, c *client.Client) bool) crashFigures {
	// A node that cannot be restarted ends the loop at once: its runs'
	// followers would otherwise retry until the deadline.
	var gaveUp sync.WaitGroup
	defer gaveUp.Wait()
	ctx, giveUp := context.WithCancel(e2e.Context(t, 10*time.Minute))
	defer giveUp()
	for _, n := range nodes {
		gaveUp.Go(func() {
			select {
			case <-n.gaveUp:
				giveUp()
			case <-ctx.Done():
			}
		})
	}
	clients := make([]*client.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = dialCrash(t, n.addr)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var watchers sync.WaitGroup
	for _, n := range nodes {
		n.watch(watchCtx, &watchers)
	}

	all := make([]*crashRun, runs)
	var wg sync.WaitGroup
	// Runs start a few at a time, so that the kills find runs at every point.
	sem := make(chan struct{}, max(4, runs/4))
	for i := range runs {
		r := &crashRun{i: i}
		all[i] = r
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c := clients[i%len(clients)]
			var sent func(*client.Result, error)
			if i%2 == 0 {
				done := make(chan struct{})
				r.sendDone = done
				sent = func(res *client.Result, err error) { r.sendRes, r.sendErr = res, err; close(done) }
			}
			a, run, err := startRun(ctx, c, "crash", i, sent)
			if errors.Is(err, errNotSent) {
				r.sendDone, err = nil, nil // no send follows it: its followers do
			}
			if err != nil {
				t.Errorf("run %d did not start: %v", i, err)
				return
			}
			r.agent, r.runID = a.ID, run
			r.followers, r.afters = make([]*follower, 2), make([]int64, 2)
			var fw sync.WaitGroup
			for k, after := range []int64{0, -1} {
				fc := clients[(i+k)%len(clients)]
				fw.Go(func() {
					if after < 0 { // later: during or after a crash, from a seq seen by then
						time.Sleep(time.Duration(rand.IntN(3000)) * time.Millisecond)
						if got, err := fc.Run(ctx, run); err == nil {
							after = rand.Int64N(got.GetLastSeq() + 1)
						} else {
							after = 0
						}
					}
					r.followers[k], r.afters[k] = follow(ctx, fc, run, after), after
				})
			}
			fw.Wait()
		})
	}
	killed := 0
	for killed < kills {
		time.Sleep(time.Duration(200+rand.IntN(1800)) * time.Millisecond)
		if killer(ctx, clients[0]) {
			killed++
		}
		if ctx.Err() != nil {
			break
		}
	}
	wg.Wait()
	stopWatch()
	watchers.Wait()

	fig := crashFigures{runs: runs}
	for _, n := range nodes {
		fig.kills += len(n.kills)
	}
	base := baseline(t, model, runs)
	var killTimes []time.Time
	for _, n := range nodes {
		killTimes = append(killTimes, n.kills...)
	}
	slices.SortFunc(killTimes, func(a, b time.Time) int { return a.Compare(b) })
	c := clients[0]
	for _, r := range all {
		if r.runID == "" {
			continue
		}
		got, err := c.Run(ctx, r.runID)
		if err != nil || got.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED {
			t.Errorf("run %d (%s): %v, %v", r.i, r.runID, got, err)
			continue
		}
		fig.resumes += int(got.GetAttempts())
		if r.sendDone != nil {
			select {
			case <-r.sendDone:
				if want := base[r.i]; r.sendErr != nil || r.sendRes.Text != textOfMessage(want[len(want)-1]) {
					t.Errorf("run %d: the Send with Reconnect got %+v, %v", r.i, r.sendRes, r.sendErr)
				}
			case <-ctx.Done():
				t.Errorf("run %d: the Send with Reconnect did not return", r.i)
			}
		}
		for k, f := range r.followers {
			who := fmt.Sprintf("run %d follower %d", r.i, k)
			if f.err != nil || f.result == nil {
				t.Errorf("%s: %v", who, f.err)
			}
			checkSeqs(t, who, r.afters[k], f.seqs)
			if k == 0 {
				for _, e := range f.resumed {
					at := e.GetTime().AsTime()
					i, _ := slices.BinarySearchFunc(killTimes, at, func(a, b time.Time) int { return a.Compare(b) })
					if i > 0 {
						fig.fromKill = append(fig.fromKill, at.Sub(killTimes[i-1]))
					}
				}
			}
		}
		h, err := c.Agent(r.agent).History(ctx)
		if err != nil {
			t.Errorf("run %d: history: %v", r.i, err)
			continue
		}
		checkHistory(t, r, h, base[r.i], script, dir)
	}
	checkEffects(t, all, dir)
	return fig
}

// checkHistory compares a run's history with the same run's without
// crashes: equal but for the results of cut-off note calls, which say that
// they may or may not have run; and every response in it was the last
// request of its round.
func checkHistory(t *testing.T, r *crashRun, got, want []*agentv1.Message, script *crashScript, dir string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("run %d: %d messages, without crashes %d", r.i, len(got), len(want))
		return
	}
	cut := fmt.Sprintf(agent.CutText, "note")
	for i := range got {
		g, w := proto.Clone(got[i]).(*agentv1.Message), proto.Clone(want[i]).(*agentv1.Message)
		nonce := int(g.GetUsage().GetInputTokens())
		for _, m := range []*agentv1.Message{g, w} {
			m.Id, m.CreateTime, m.Usage = "", nil, nil
		}
		for k, p := range g.GetParts() {
			tr := p.GetToolResult()
			if tr.GetToolName() == "note" && tr.GetError() && tr.GetOutput().GetText() == cut && k < len(w.GetParts()) {
				w.GetParts()[k] = p // the documented note on a cut non-idempotent call
			}
		}
		if !proto.Equal(g, w) {
			t.Errorf("run %d: message %d\n%v\nwithout crashes\n%v", r.i, i, g, w)
		}
		if g.GetRole() == agentv1.Role_ROLE_ASSISTANT {
			if script.held(nonce) != i {
				t.Errorf("run %d: the response at %d came from a request holding %d messages", r.i, i, script.held(nonce))
			}
			for _, n := range script.calls(fmt.Sprintf("crash:%d", r.i)) {
				if n > nonce && script.held(n) == i {
					t.Errorf("run %d: the round at %d was asked again (request %d) after its response (request %d) was stored", r.i, i, n, nonce)
				}
			}
		}
	}
}

// checkEffects checks the tools' effects: each record call of the final
// histories had its effect once (its key's file), and no other had one;
// each note call ran at most once.
func checkEffects(t *testing.T, runs []*crashRun, dir string) {
	t.Helper()
	want := map[string]bool{}
	for _, r := range runs {
		for i := range stepsOf(r.i) - 1 {
			want[strings.ReplaceAll(fmt.Sprintf("%s/r%d_%d", r.runID, r.i, i), "/", "_")] = true
		}
	}
	keys, err := os.ReadDir(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, k := range keys {
		have[k.Name()] = true
		if !want[k.Name()] {
			t.Errorf("an effect of a call not in any history: %s", k.Name())
		}
	}
	for k := range want {
		if !have[k] {
			t.Errorf("the call %s had no effect", k)
		}
	}
	notes, _ := os.ReadFile(filepath.Join(dir, "notes"))
	seen := map[string]bool{}
	for _, line := range strings.Fields(string(notes)) {
		if seen[line] {
			t.Errorf("the note call %s ran twice", line)
		}
		seen[line] = true
	}
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func (f crashFigures) report(t *testing.T, what string) {
	t.Logf("%s: %d kills, %d runs succeeded, %d resumptions; kill to resumption p50 %v, p99 %v (%d measured)",
		what, f.kills, f.runs, f.resumes, percentile(f.fromKill, 0.5).Round(time.Millisecond), percentile(f.fromKill, 0.99).Round(time.Millisecond), len(f.fromKill))
}

// crashDir is a folder for the keyed plugin's records.
func crashDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCrashLoopSQLite kills agent-server (SIGKILL) at random points of its
// runs, and at the test-only point between a step's end and its journal
// write, and restarts it on the same SQLite store: every run resumes and
// ends as it would have without the crashes.
func TestCrashLoopSQLite(t *testing.T) {
	runs, kills := crashSize(t)
	script := &crashScript{}
	model := fakemodel.StartTB(t)
	model.Handle(script.handle)
	dir := crashDir(t)
	node := newCrashNode(t, model, dir, "crash-sqlite", []string{"-store", "sqlite:" + filepath.Join(t.TempDir(), "agentcore.db")},
		"AGENTCORE_TEST_KILL_BEFORE_STEP_WRITE=0.02")
	fig := runCrashLoop(t, script, model, dir, []*crashNode{node}, runs, kills, func(ctx context.Context, _ *client.Client) bool {
		if !node.kill() {
			return false
		}
		node.restart()
		return true
	})
	fig.report(t, "SQLite")
}

// TestCrashLoopPostgresReplicas runs the crash loop on two replicas sharing
// a PostgreSQL store, killing the replica that owns the most running runs
// and restarting it only after its leases expired: the other replica
// resumes its runs.
func TestCrashLoopPostgresReplicas(t *testing.T) {
	runs, kills := crashSize(t)
	dsn := pgtest.Schema(t)
	script := &crashScript{}
	model := fakemodel.StartTB(t)
	model.Handle(script.handle)
	dir := crashDir(t)
	args := []string{"-store", dsn, "-lease-ttl", "2s"}
	nodes := []*crashNode{
		newCrashNode(t, model, dir, "crash-a", args),
		newCrashNode(t, model, dir, "crash-b", args),
	}
	fig := runCrashLoop(t, script, model, dir, nodes, runs, kills, func(ctx context.Context, c *client.Client) bool {
		owners := map[string]int{}
		for _, n := range nodes {
			nc, err := client.Dial(n.addr)
			if err != nil {
				continue
			}
			running, err := nc.Runs(ctx, client.RunFilter{State: agentv1.RunState_RUN_STATE_RUNNING})
			nc.Close()
			if err != nil {
				continue
			}
			for _, r := range running {
				owners[r.GetReplica()]++
			}
			break
		}
		victim := nodes[0]
		if owners["crash-b"] > owners["crash-a"] {
			victim = nodes[1]
		}
		if !victim.kill() {
			return false
		}
		victim.restartAfter(4 * time.Second) // past the lease: the survivor resumes the runs
		return true
	})
	fig.report(t, "PostgreSQL, two replicas")
}

// TestPoisonRun: a run whose tool call crashes its server at each attempt
// is resumed -resume-attempts times, then ends failed (RESUME_LIMIT); the
// server stays up and the agent works.
func TestPoisonRun(t *testing.T) {
	script := &crashScript{}
	model := fakemodel.StartTB(t)
	model.Handle(script.handle)
	dir := crashDir(t)
	node := newCrashNode(t, model, dir, "poison", []string{"-store", "sqlite:" + filepath.Join(t.TempDir(), "agentcore.db"), "-resume-attempts", "3",
		"-http-listen", freeAddr(t)}, "AGENTCORE_TEST_KILL_ON_TOOL=record", "AGENTCORE_AUTH_TOKEN="+e2e.HTTPToken)
	ctx := e2e.Context(t, 2*time.Minute)
	watchCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	node.watch(watchCtx, &wg)
	defer func() { stop(); wg.Wait() }()
	c := dialCrash(t, node.addr, client.WithToken(e2e.HTTPToken))
	_, run, err := startRun(ctx, c, "crash", 0, nil)
	if err != nil && !errors.Is(err, errNotSent) {
		t.Fatal(err)
	}
	f := follow(ctx, c, run, 0)
	var ce *client.Error
	if !errors.As(f.err, &ce) || ce.Reason != "RESUME_LIMIT" {
		t.Fatalf("following the poison run: %v", f.err)
	}
	got, err := c.Run(ctx, run)
	if err != nil || got.GetState() != agentv1.RunState_RUN_STATE_FAILED || got.GetAttempts() != 3 {
		t.Fatalf("the poison run: %v, %v", got, err)
	}
	checkSeqs(t, "the poison run's follower", 0, f.seqs)
	if len(f.resumed) != 3 {
		t.Errorf("%d resumptions seen, want 3", len(f.resumed))
	}
	node.mu.Lock()
	crashes := len(node.kills)
	node.mu.Unlock()
	if crashes != 4 {
		t.Errorf("the server crashed %d times, want 4 (the run and its 3 resumptions)", crashes)
	}
	a := c.Agent("crash-0")
	h, err := a.History(ctx)
	if err != nil || len(h) != 3 || !strings.Contains(h[2].GetParts()[0].GetToolResult().GetOutput().GetText(), "may or may not have run") {
		t.Fatalf("the poison run's history: %v, %v", h, err)
	}

	// The web console says the run was resumed after a crash.
	dir = consoleModules(t)
	http := ""
	for i, a := range node.args {
		if a == "-http-listen" {
			http = node.args[i+1]
		}
	}
	cmd := exec.CommandContext(ctx, "node", "resumed.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CONSOLE_URL=http://"+http, "CONSOLE_TOKEN="+e2e.HTTPToken, "CONSOLE_RUN="+run,
		"CONSOLE_RESUMED=resumed after a crash (3 times)", "CHROMIUM="+chromiumPath())
	if out, err := cmd.CombinedOutput(); err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("node resumed.mjs: %v\n%s", err, out)
	}
}

// textOfMessage joins the text parts of a message.
func textOfMessage(m *agentv1.Message) string {
	var b strings.Builder
	for _, p := range m.GetParts() {
		b.WriteString(p.GetText())
	}
	return b.String()
}
