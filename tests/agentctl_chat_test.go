package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// chatScript greets whom a task names, or, for a task saying "slow", runs a
// shell that prints its pids (the plugin's, bash's and a sleep's) and waits;
// then it answers with the results.
var chatScript = eachTask(func(step int, req *fakemodel.Request) fakemodel.Turn {
	task := e2e.LastUserText(req)
	switch {
	case step > 0:
		return fakemodel.Turn{TextChunks: []string{"Done: ", strings.Join(e2e.LastToolResults(req), " and ")}}
	case strings.Contains(task, "slow"):
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_slow", Name: "shell",
			Arguments: `{"command":"sleep 300 & echo \"pids $PPID $$ $!\"; wait"}`}}}
	}
	name := task[strings.LastIndexByte(task, ' ')+1:]
	return fakemodel.Turn{TextChunks: []string{"Sure, ", "greeting " + name + "."},
		ToolCalls: []fakemodel.ToolCall{{ID: "call_hello", Name: "say_hello", Arguments: `{"name":"` + name + `"}`}}}
})

// TestAgentctlChatInATerminal drives agentctl chat in a pseudo-terminal as
// a person would: a task whose call is approved, one whose call is denied
// with a reason, a long tool stopped by Ctrl-C (its processes gone, the run
// stopped on the server, the chat going on), Ctrl-D to quit; then a second
// session that finds the history on the server and quits by two Ctrl-Cs.
func TestAgentctlChatInATerminal(t *testing.T) {
	t.Parallel()
	a := newAgent(t, chatScript, nil)

	term := startTerminal(t, "chat", a.ID)
	term.expect(`agent \S+, 0 messages in its history\. Ctrl-C stops a run; Ctrl-D quits\.`)
	term.expect(`> `)
	term.typ("greet Ming\r")
	term.expect(`Sure, greeting Ming\.`)
	term.expect(`\? say_hello \{"name":"Ming"\}`)
	term.expect(`allow\? \[y/n\] `)
	term.typ("y\r")
	term.expect(`← say_hello: Hello, Ming!`)
	term.expect(`Done: Hello, Ming!`)
	term.expect(`\[no-tool · 2 steps · \d+ tokens in, \d+ out · run run_\w+\]`)

	term.expect(`> `)
	term.typ("greet Ada\r")
	term.expect(`allow\? \[y/n\] `)
	term.typ("maybe\r")
	term.expect(`answer y or n`)
	term.typ("n\r")
	term.expect(`reason \(enter for none\): `)
	term.typ("not before lunch\r")
	term.expect(`✗ say_hello: Permission denied: .*Reason: not before lunch`)
	term.expect(`\[no-tool · 2 steps`)

	// Ctrl-C during a long tool: the run stops, its processes end.
	term.expect(`> `)
	term.typ("something slow\r")
	term.expect(`\? shell `)
	term.expect(`allow\? \[y/n\] `)
	term.typ("y\r")
	pids := pidsOf(t, term.expect(`shell│ pids (\d+) (\d+) (\d+)`)[1:])
	term.typ("\x03")
	term.expect(`\^C stopping the run \(Ctrl-C again quits\)`)
	term.expect(`\[stopped\]`)
	waitGone(t, "a process of the stopped tool (plugin, bash, sleep)", pids...)
	runs, err := suite.client.Runs(e2e.Context(t, 10*time.Second), client.RunFilter{AgentID: a.ID, State: agentv1.RunState_RUN_STATE_STOPPED})
	if err != nil || len(runs) != 1 || runs[0].GetError().GetMetadata()["cause"] != "stopped" {
		t.Fatalf("the stopped run on the server: %v %v", runs, err)
	}

	// The chat goes on, then Ctrl-D at the prompt quits.
	term.expect(`> `)
	term.typ("greet Lin\r")
	term.expect(`allow\? \[y/n\] `)
	term.typ("yes\r")
	term.expect(`← say_hello: Hello, Lin!`)
	term.expect(`> `)
	term.typ("\x04")
	if code := term.wait(); code != 0 {
		t.Fatalf("chat exited %d after Ctrl-D:\n%s", code, term)
	}

	// A new session picks up the history the server kept; two Ctrl-Cs
	// during a run stop it and quit.
	info, err := a.Get(e2e.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	term = startTerminal(t, "chat", a.ID)
	term.expect(fmt.Sprintf(`agent \S+, %d messages in its history`, info.GetHistoryLength()))
	if info.GetHistoryLength() < 10 {
		t.Errorf("the history holds %d messages after four tasks", info.GetHistoryLength())
	}
	term.expect(`> `)
	term.typ("slow again\r")
	term.expect(`allow\? \[y/n\] `)
	term.typ("y\r")
	pids = pidsOf(t, term.expect(`shell│ pids (\d+) (\d+) (\d+)`)[1:])
	term.typ("\x03")
	term.expect(`stopping the run`)
	term.typ("\x03")
	if code := term.wait(); code != 0 {
		t.Fatalf("chat exited %d after two Ctrl-Cs:\n%s", code, term)
	}
	waitGone(t, "a process of the stopped tool (plugin, bash, sleep)", pids...)
	waitIdle(t, a)
}

// pidsOf reads the pids the slow task's shell prints.
func pidsOf(t *testing.T, m []string) []int {
	t.Helper()
	var pids []int
	for _, p := range m {
		pid, _ := strconv.Atoi(p)
		if !alive(pid) {
			t.Fatalf("process %d of the running tool is not running", pid)
		}
		pids = append(pids, pid)
	}
	return pids
}

// terminal is agentctl running in a pseudo-terminal: what it wrote, and
// how far the test has read it.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	done chan struct{} // closed when the output ended

	mu   sync.Mutex
	out  []byte
	read int
}

// startTerminal starts agentctl with args on a new pseudo-terminal.
func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	cmd := ctlCmd(t, []string{"TERM=xterm"}, args...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, cmd: cmd, pty: f, done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			term.mu.Lock()
			term.out = append(term.out, buf[:n]...)
			term.mu.Unlock()
			if err != nil {
				return // EIO once the process closed its end
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		f.Close()
		<-term.done
	})
	return term
}

// expect waits for the output after what was read so far to match re,
// reads up to the match's end and returns the match and its groups.
func (p *terminal) expect(re string) []string {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(30 * time.Second)
	for {
		p.mu.Lock()
		// The editor's escape codes may come between a prompt and the text.
		rest := p.out[p.read:]
		loc := rx.FindSubmatchIndex(rest)
		var m []string
		if loc != nil {
			for i := 0; i < len(loc); i += 2 {
				m = append(m, string(rest[loc[i]:loc[i+1]]))
			}
			p.read += loc[1]
		}
		p.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-p.done:
			p.t.Fatalf("agentctl ended without writing %q:\n%s", re, p)
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("agentctl did not write %q in 30s:\n%s", re, p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// typ types s.
func (p *terminal) typ(s string) {
	p.t.Helper()
	if _, err := p.pty.WriteString(s); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits for agentctl to end and returns its exit code.
func (p *terminal) wait() int {
	p.t.Helper()
	ended := make(chan error, 1)
	go func() { ended <- p.cmd.Wait() }()
	select {
	case err := <-ended:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			p.t.Fatal(err)
		}
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		<-ended
		p.t.Fatalf("agentctl still running 20s after it was told to quit:\n%s", p)
	}
	return -1
}

// String is the output so far, escape codes shown.
func (p *terminal) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strconv.Quote(string(p.out))
}
