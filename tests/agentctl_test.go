package tests

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// agentctlBin builds cmd/agentctl once for the package's tests.
var agentctlBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(suite.Dir, "agentctl")
	cmd := e2e.Go("build", "-o", bin, "./cmd/agentctl")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

// ctlCmd is agentctl with args, talking to the suite's server unless env
// (KEY=VALUE, after the process's own) says otherwise.
func ctlCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := agentctlBin()
	if err != nil {
		t.Fatalf("building agentctl: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "AGENTCORE_ADDR="+suite.server.Addr)
	for _, k := range []string{"AGENTCORE_AUTH_TOKEN", "AGENTCORE_AUTH_TOKEN_FILE", "AGENTCORE_TLS", "AGENTCORE_TLS_CA",
		"AGENTCORE_TLS_CLIENT_CERT", "AGENTCORE_TLS_CLIENT_KEY", "AGENTCORE_TLS_SERVER_NAME"} {
		cmd.Env = append(cmd.Env, k+"=")
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// ctlResult is how an agentctl command ended.
type ctlResult struct {
	stdout, stderr string
	code           int
}

// ctl runs agentctl to its end, with stdin as its input.
func ctl(t *testing.T, env []string, stdin string, args ...string) ctlResult {
	t.Helper()
	cmd := ctlCmd(t, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("agentctl %v still running after 60s:\n%s\n%s", args, out.String(), errb.String())
	}
	return ctlResult{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// want checks an exit code and that stdout holds each string.
func (r ctlResult) want(t *testing.T, code int, contains ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
		return
	}
	for _, s := range contains {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", s, r.stdout, r.stderr)
		}
	}
}

// ctlEvents parses agentctl's --json lines.
func ctlEvents(t *testing.T, out string) []*agentv1.Event {
	t.Helper()
	var evs []*agentv1.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		e := &agentv1.Event{}
		if err := protojson.Unmarshal([]byte(line), e); err != nil {
			t.Fatalf("not an event: %q: %v", line, err)
		}
		evs = append(evs, e)
	}
	return evs
}

// eachTask runs s afresh for each task an agent is sent: its step counts
// the assistant messages since the last user message, so that one agent
// can be given the same task again.
func eachTask(s e2e.Script) e2e.Script {
	return func(_ int, req *fakemodel.Request) fakemodel.Turn {
		msgs, _ := req.JSON()["messages"].([]any)
		step := 0
		for i := len(msgs) - 1; i >= 0; i-- {
			m, _ := msgs[i].(map[string]any)
			if m["role"] == "user" {
				break
			}
			if m["role"] == "assistant" {
				step++
			}
		}
		return s(step, req)
	}
}

func TestAgentctlSend(t *testing.T) {
	t.Parallel()
	a := newAgent(t, eachTask(e2e.TwoTools), nil)

	r := ctl(t, nil, "", "send", a.ID, "greet Ming and add 2 and 3", "--json")
	r.want(t, 0)
	evs := ctlEvents(t, r.stdout)
	var kinds []string
	results := map[string]string{}
	for i, e := range evs {
		kinds = append(kinds, kindName(e))
		if i > 0 && e.GetSeq() != evs[i-1].GetSeq()+1 {
			t.Errorf("seq %d after %d", e.GetSeq(), evs[i-1].GetSeq())
		}
		if tr := e.GetToolResult(); tr != nil {
			results[tr.GetToolName()] = tr.GetOutput().GetText() + tr.GetOutput().GetJson()
		}
	}
	if kinds[0] != "run_started" || kinds[len(kinds)-1] != "result" {
		t.Errorf("events %v: want run_started first and result last", kinds)
	}
	if results["say_hello"] != "Hello, Ming!" || results["add"] != "5" {
		t.Errorf("tool results %v", results)
	}
	if res := evs[len(evs)-1].GetResult(); res.GetReason() != agentv1.EndReason_END_REASON_NO_TOOL || !strings.Contains(res.GetText(), "Hello, Ming!") {
		t.Errorf("result %v", res)
	}

	// As text, the task from stdin.
	r = ctl(t, nil, "greet Ming and add 2 and 3\n", "send", a.ID, "-")
	r.want(t, 0, "Let me do that.\n", `→ say_hello {"name":"Ming"}`, "← say_hello: Hello, Ming!", "← add: 5", "Done: Hello, Ming! and 5", "[no-tool · 2 steps")

	// Lines piped into chat: two tasks, each with the answer to its
	// permission request, echoed after their prompts.
	r = ctl(t, nil, "greet Ming and add 2 and 3\ny\ngreet Ming and add 2 and 3\nn not today\n", "chat", a.ID, "--ask", "say_hello")
	r.want(t, 0, "> greet Ming and add 2 and 3\n", "? say_hello {\"name\":\"Ming\"}\n", "allow? [y/n] y\n", "allow? [y/n] n not today\n")
	// add runs without asking: its result may come before the prompt.
	first, second, _ := strings.Cut(r.stdout[strings.Index(r.stdout, "> greet")+1:], "> greet")
	if !strings.Contains(first, "← say_hello: Hello, Ming!") || !strings.Contains(second, "✗ say_hello:") ||
		!strings.Contains(second, "Reason: not today") || !strings.Contains(second, "← add: 5") || strings.Count(r.stdout, "[no-tool") != 2 {
		t.Errorf("chat: the call allowed then denied:\n%s", r.stdout)
	}
}

func TestAgentctlCommands(t *testing.T) {
	t.Parallel()
	a := newAgent(t, e2e.TwoTools, nil)
	r := ctl(t, nil, "", "send", a.ID, "greet Ming and add 2 and 3", "--json")
	r.want(t, 0)
	evs := ctlEvents(t, r.stdout)
	run, mid := evs[0].GetRunId(), evs[len(evs)/2].GetSeq()
	other := "ctl-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))

	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"agents", []string{"agents"}, 0, []string{a.ID + " ", "idle"}},
		{"runs of the agent", []string{"runs", "--agent", a.ID}, 0, []string{run, "succeeded", "no-tool, 2 steps"}},
		{"runs in a state", []string{"runs", "--agent", a.ID, "--state", "failed"}, 0, []string{"RUN"}},
		{"run", []string{"run", run}, 0, []string{"succeeded", "no-tool, 2 steps", "Done: Hello, Ming! and 5"}},
		{"history", []string{"history", a.ID}, 0, []string{"user: greet Ming and add 2 and 3", `[call say_hello {"name":"Ming"}]`, "[add result] 5"}},
		{"history, agent-core's labels", []string{"history", a.ID, "--labels", "zh"}, 0, []string{`[调用 say_hello {"name":"Ming"}]`, "[add 返回] 5"}},
		{"history in turns, English labels", []string{"history", a.ID, "--turns", "--labels", "en"}, 0, []string{"── turn 1\nuser: greet", "── turn 2\nassistant:", "[call say_hello"}},
		{"tools", []string{"tools"}, 0, []string{"say_hello", "Greets the given person by name."}},
		{"exec", []string{"exec", "say_hello", `{"name":"Ada"}`}, 0, []string{"Hello, Ada!\n"}},
		{"exec, a tool error", []string{"exec", "read_file", `{"path":"/nonexistent/x"}`}, 1, nil},
		{"attach a finished run", []string{"attach", run}, 0, []string{"Done: Hello, Ming! and 5", "[no-tool · 2 steps"}},
		{"stop an idle agent", []string{"stop", a.ID}, 0, []string{"nothing was running"}},
		{"create", []string{"create", other, "--system", "e2e:none", "--tools", "say_hello"}, 0, []string{other}},
		{"create it again", []string{"create", other}, 8, nil},
		{"delete", []string{"delete", other}, 0, nil},
		{"delete it again", []string{"delete", other}, 3, nil},
		{"send to no agent", []string{"send", "no-such-agent", "hi"}, 3, nil},
		{"attach no run", []string{"attach", "no-such-run"}, 3, nil},
		{"approve no request", []string{"approve", run, "no-such-call"}, 3, nil},
		{"exec no tool", []string{"exec", "no_such_tool", "{}"}, 3, nil},
		{"exec input not an object", []string{"exec", "say_hello", "[1]"}, 2, nil},
		{"no command", nil, 2, nil},
		{"help", []string{"help"}, 0, []string{"Exit codes:"}},
		{"a command's help", []string{"send", "-h"}, 0, []string{"usage: agentctl send", "-ask"}},
		{"unknown command", []string{"bogus"}, 2, nil},
		{"unknown flag", []string{"agents", "--bogus"}, 2, nil},
		{"missing argument", []string{"history"}, 2, nil},
		{"empty task", []string{"send", a.ID, " "}, 2, nil},
		{"bad state", []string{"runs", "--state", "sleeping"}, 2, nil},
	}
	for _, tt := range tests {
		// In order: create, then delete.
		ctl(t, nil, "", tt.args...).want(t, tt.code, tt.contains...)
	}

	// --json: one protojson object a line, of the command's message.
	for _, tt := range []struct {
		args []string
		msg  func() proto.Message
	}{
		{[]string{"agents", "--json"}, func() proto.Message { return &agentv1.Agent{} }},
		{[]string{"runs", "--agent", a.ID, "--json"}, func() proto.Message { return &agentv1.Run{} }},
		{[]string{"run", run, "--json"}, func() proto.Message { return &agentv1.Run{} }},
		{[]string{"history", a.ID, "--json"}, func() proto.Message { return &agentv1.Message{} }},
		{[]string{"tools", "--json"}, func() proto.Message { return &agentv1.ListToolsResponse{} }},
		{[]string{"exec", "count", `{"n":3}`, "--json"}, func() proto.Message { return &agentv1.ExecuteToolResponse{} }},
		{[]string{"attach", run, "--after", "0", "--json"}, func() proto.Message { return &agentv1.Event{} }},
	} {
		r := ctl(t, nil, "", tt.args...)
		r.want(t, 0)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		for _, line := range lines {
			if err := protojson.Unmarshal([]byte(line), tt.msg()); err != nil {
				t.Errorf("%v: %q: %v", tt.args, line, err)
			}
		}
		if tt.args[0] == "history" && len(lines) != 4 {
			t.Errorf("history --json: %d messages, want 4 (the task, the calls, their results, the answer)", len(lines))
		}
		if tt.args[0] == "exec" && (len(lines) != 4 || !strings.Contains(lines[3], `"result"`)) {
			t.Errorf("exec count --json: want 3 output chunks and the result:\n%s", r.stdout)
		}
	}

	// attach --after: exactly the events after that seq.
	r = ctl(t, nil, "", "attach", run, "--after", strconv.FormatInt(mid, 10), "--json")
	r.want(t, 0)
	after := ctlEvents(t, r.stdout)
	if after[0].GetSeq() != mid+1 || after[len(after)-1].GetResult() == nil || len(after) != len(evs)-int(mid) {
		t.Errorf("attach --after %d: seqs %d…%d of %d events", mid, after[0].GetSeq(), after[len(after)-1].GetSeq(), len(evs))
	}
}

// TestAgentctlPermissionAnsweredElsewhere: send --ask waits; run shows the
// request; approve and deny answer it from other processes.
func TestAgentctlPermissionAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	a := newAgent(t, eachTask(e2e.TwoTools), nil)

	cmd := ctlCmd(t, nil, "send", a.ID, "greet Ming and add 2 and 3", "--ask", "say_hello")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var out strings.Builder
	hint := regexp.MustCompile(`agentctl approve (\S+) (\S+)`)
	sc := bufio.NewScanner(stdout)
	var m []string
	for m == nil && sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		m = hint.FindStringSubmatch(sc.Text())
	}
	if m == nil {
		t.Fatalf("no approve hint:\n%s\n%s", out.String(), errb.String())
	}
	run, call := m[1], m[2]
	ctl(t, nil, "", "run", run).want(t, 0, "running", "waiting for permission: say_hello", "agentctl approve "+run+" "+call)
	ctl(t, nil, "", "approve", run, call).want(t, 0, "allowed "+call)
	rest, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("send after the approval: %v\n%s%s\n%s", err, out.String(), rest, errb.String())
	}
	if !strings.Contains(string(rest), "← say_hello: Hello, Ming!") {
		t.Errorf("the approved call did not run:\n%s", rest)
	}
	ctl(t, nil, "", "approve", run, call).want(t, 8) // PERMISSION_ANSWERED

	// Detached: the run waits without any client; deny answers it.
	r := ctl(t, nil, "", "send", a.ID, "greet Ming and add 2 and 3", "--ask", "say_hello", "--detach")
	r.want(t, 0, "started; agentctl attach")
	run = regexp.MustCompile(`run (\S+) started`).FindStringSubmatch(r.stdout)[1]
	// The call's id is the server's: the model's call_hello is in the
	// history already.
	deny := regexp.MustCompile(`agentctl deny (\S+) (\S+) --reason`)
	deadline := time.Now().Add(10 * time.Second)
	for m = nil; m == nil; m = deny.FindStringSubmatch(ctl(t, nil, "", "run", run).stdout) {
		if time.Now().After(deadline) {
			t.Fatal("the detached run never asked for permission")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctl(t, nil, "", "deny", run, m[2], "--reason", "not on a Sunday").want(t, 0, "denied "+m[2])
	ctl(t, nil, "", "attach", run).want(t, 0, "✗ say_hello:", "not on a Sunday", "← add: 5")
}

// TestAgentctlExitCodes: each outcome its code (the unreachable server,
// usage and not-found ones are in TestAgentctlCommands and
// TestAgentctlConnection).
func TestAgentctlExitCodes(t *testing.T) {
	t.Parallel()
	failing := newAgent(t, func(int, *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Status: 400, ErrorBody: `{"error":{"message":"no such model","type":"invalid_request_error"}}`}
	}, nil)
	r := ctl(t, nil, "", "send", failing.ID, "hi")
	r.want(t, 5)
	if !strings.Contains(r.stderr, "REQUEST") {
		t.Errorf("stderr: %s", r.stderr)
	}

	stalling := newAgent(t, func(int, *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: []string{"thinking…", " still"}, StallAfter: 2}
	}, nil)
	start := func(args ...string) (*exec.Cmd, *syncBuffer) {
		cmd := ctlCmd(t, nil, args...)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitRunning(t, stalling.ID)
		return cmd, out
	}
	exitOf := func(cmd *exec.Cmd, out *syncBuffer) int {
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("agentctl %v did not end:\n%s", cmd.Args, out)
		}
		return cmd.ProcessState.ExitCode()
	}

	// A second send with --busy reject while one runs: refused (8); stop
	// ends the first (6).
	cmd, out := start("send", stalling.ID, "first")
	ctl(t, nil, "", "send", stalling.ID, "second", "--busy", "reject").want(t, 8)
	ctl(t, nil, "", "stop", stalling.ID).want(t, 0, "stopped")
	if code := exitOf(cmd, out); code != 6 {
		t.Errorf("the stopped send exited %d, want 6:\n%s", code, out)
	}
	if !strings.Contains(out.String(), "agentctl: stopped\n") {
		t.Errorf("the stopped send did not say so:\n%s", out)
	}

	// Ctrl-C stops the run (6) on the server.
	cmd, out = start("send", stalling.ID, "third")
	_ = cmd.Process.Signal(syscall.SIGINT)
	if code := exitOf(cmd, out); code != 6 || !strings.Contains(out.String(), "agentctl: stopped\n") {
		t.Errorf("send after SIGINT exited %d, want 6:\n%s", code, out)
	}
	waitIdle(t, stalling)
	r = ctl(t, nil, "", "runs", "--agent", stalling.ID, "--state", "stopped")
	r.want(t, 0)
	if n := strings.Count(r.stdout, "ABORTED (stopped)"); n != 2 {
		t.Errorf("runs --state stopped: %d runs stopped, want 2:\n%s", n, r.stdout)
	}

	// Ctrl-C leaves attach (130); the run goes on.
	cmd, out = start("send", stalling.ID, "fourth", "--detach")
	if code := exitOf(cmd, out); code != 0 {
		t.Fatalf("send --detach exited %d:\n%s", code, out)
	}
	run := regexp.MustCompile(`run (\S+) started`).FindStringSubmatch(out.String())[1]
	cmd, out = start("attach", run)
	// Its signal handler is set once it printed the run's first text.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "thinking…"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("attach printed nothing of the run in 20s:\n%s", out)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	if code := exitOf(cmd, out); code != 130 {
		t.Errorf("attach after SIGINT exited %d, want 130:\n%s", code, out)
	}
	ctl(t, nil, "", "run", run).want(t, 0, "running")
	ctl(t, nil, "", "stop", stalling.ID, "--run", run).want(t, 0, "stopped")
}

// syncBuffer is a bytes.Buffer that a process writes while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitRunning waits until the agent runs.
func waitRunning(t *testing.T, agent string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, err := suite.client.Agent(agent).Get(e2e.Context(t, 5*time.Second))
		if err == nil && a.GetState() == agentv1.AgentState_AGENT_STATE_RUNNING {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %s not running after 10s (%v)", agent, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAgentctlConnection: a unix socket with a token, TLS with a client
// certificate, from flags and from the variables; a server that cannot be
// reached; a token refused.
func TestAgentctlConnection(t *testing.T) {
	t.Parallel()
	const token = "ctl-token-0123456789"
	sock := filepath.Join(t.TempDir(), "agent.sock")
	p, err := suite.StartServer(suite.Plugins, []string{"-listen", "unix:" + sock, "-store", "memory"}, "AGENTCORE_AUTH_TOKEN="+token)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unix := "AGENTCORE_ADDR=unix:" + sock
	ctl(t, []string{unix, "AGENTCORE_AUTH_TOKEN=" + token}, "", "tools").want(t, 0, "say_hello")
	ctl(t, nil, "", "--addr", "unix:"+sock, "--token-file", tokenFile, "tools").want(t, 0, "say_hello")
	ctl(t, []string{unix, "AGENTCORE_AUTH_TOKEN_FILE=" + tokenFile}, "", "tools").want(t, 0, "say_hello")
	ctl(t, []string{unix}, "", "tools").want(t, 4)
	ctl(t, []string{unix, "AGENTCORE_AUTH_TOKEN=wrong-token-0123456789"}, "", "agents").want(t, 4)
	ctl(t, []string{unix, "AGENTCORE_AUTH_TOKEN_FILE=/nonexistent"}, "", "agents").want(t, 2)
	r := ctl(t, []string{"AGENTCORE_ADDR=unix:" + sock + ".gone"}, "", "agents")
	r.want(t, 7)
	if !strings.Contains(r.stderr, "cannot reach agent-server") {
		t.Errorf("stderr: %s", r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, token) {
		t.Error("the token was echoed")
	}

	pki := newPKI(t)
	cert := pki.issue(t, 20, pkix.Name{CommonName: "agentctl"}, nil, x509.ExtKeyUsageClientAuth)
	certFile := pki.write(t, "client.pem", "CERTIFICATE", cert.Certificate[0])
	keyDER, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	keyFile := pki.write(t, "client.key", "EC PRIVATE KEY", keyDER)
	addr := freeAddr(t)
	cmd := suite.ServerCmd(suite.Plugins, []string{"-listen", addr, "-store", "memory", "-log-level", "warn",
		"-tls-cert", pki.certFile, "-tls-key", pki.keyFile, "-tls-client-ca", pki.caFile})
	tp, err := e2e.Launch(cmd, grpc.WithTransportCredentials(pki.creds(cert)))
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Kill()
	ctl(t, nil, "", "--addr", addr, "--tls-ca", pki.caFile, "--tls-cert", certFile, "--tls-key", keyFile, "tools").want(t, 0, "say_hello")
	ctl(t, []string{"AGENTCORE_ADDR=" + addr, "AGENTCORE_TLS_CA=" + pki.caFile, "AGENTCORE_TLS_CLIENT_CERT=" + certFile,
		"AGENTCORE_TLS_CLIENT_KEY=" + keyFile}, "", "agents").want(t, 0, "AGENT")
	ctl(t, nil, "", "--addr", addr, "--tls-ca", pki.caFile, "agents").want(t, 7)                         // no client certificate
	ctl(t, nil, "", "--addr", addr, "agents").want(t, 7)                                                 // plaintext to a TLS server
	ctl(t, nil, "", "--addr", addr, "--tls-ca", pki.caFile, "--tls-cert", certFile, "agents").want(t, 2) // no key
}
