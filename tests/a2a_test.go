package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// a2aNode returns the command running tests/a2anode's script with args,
// or ends the test when node or the SDK's node_modules are missing
// (failing under CI).
func a2aNode(t *testing.T, ctx context.Context, script string, args ...string) *exec.Cmd {
	t.Helper()
	dir := filepath.Join(e2e.RepoRoot(), "tests", "a2anode")
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		unavailable(t, "tests/a2anode has no node_modules: run make test-deps (or npm ci there)")
	}
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = dir
	return cmd
}

// a2aScript is the model of the A2A tests' agent: each task's first
// request calls the tool its text names, the next one answers with the
// tool's results.
func a2aScript(_ int, req *fakemodel.Request) fakemodel.Turn {
	if results := e2e.LastToolResults(req); len(results) > 0 {
		return fakemodel.Turn{Text: "I said: " + strings.Join(results, "")}
	}
	call := func(name, args string) fakemodel.Turn {
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: name, Arguments: args}}}
	}
	switch text := e2e.LastUserText(req); {
	case strings.HasPrefix(text, "send:"):
		return call("say_hello", `{"name":"Ming"}`)
	case strings.HasPrefix(text, "stream:"):
		return call("count", `{"n":3,"delay_ms":20}`)
	case strings.HasPrefix(text, "permission:"):
		return call("say_hello", `{"name":"Lan"}`)
	case strings.HasPrefix(text, "cancel:"):
		return call("shell", `{"command":"sleep 300 & echo \"pids $PPID $$ $!\"; wait"}`)
	case strings.HasPrefix(text, "files:"):
		return call("bar_chart", `{"values":[1,2,3]}`)
	case strings.HasPrefix(text, "resubscribe:"):
		return call("count", `{"n":5,"delay_ms":300}`)
	}
	return fakemodel.Turn{Text: "no script for that"}
}

// TestA2AServer drives agent-server's A2A listener (-a2a-listen) with the
// official A2A JavaScript SDK (tests/a2anode/client.mjs) on a server with
// two tenants: the card (401 without a token, 404 for the other tenant),
// message/send and message/stream of tasks whose runs call tools, a
// permission answered as an input-required turn, a task cancelled with
// its shell's process tree gone, a dropped stream resubscribed from its
// last seq, tasks/get, and a tool's image as the task's files artifact.
func TestA2AServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := a2aNode(t, ctx, "client.mjs") // before the server: it may skip the test
	tokens := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(tokens, []byte("tenants:\n  alice:\n    tokens: ["+aliceToken+"]\n  bob:\n    tokens: ["+bobToken+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := suite.StartServer(suite.Plugins, []string{"-auth-tokens-file", tokens, "-a2a-listen", "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
	})
	addr, _ := srv.WaitLog(t, "a2a listening")["addr"].(string)
	c, err := client.Dial(srv.Addr, client.WithToken(aliceToken))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	system := suite.Router.Add(t, a2aScript)
	if _, err := c.CreateAgent(ctx, client.AgentOptions{ID: "helper", Config: &agentv1.AgentConfig{System: &system},
		Tools: []string{"say_hello", "count", "shell", "bar_chart"}}); err != nil {
		t.Fatal(err)
	}

	cmd.Args = append(cmd.Args, "http://"+addr, "helper", aliceToken, bobToken)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var s mcpSteps
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if s.add(sc.Bytes()) != "pids" {
			continue
		}
		// The client cancels the task now: its shell's tree must go.
		pids, _ := s.steps["pids"]["pids"].([]any)
		deadline := time.Now().Add(10 * time.Second)
		for i, p := range pids {
			for alive(int(p.(float64))) {
				if time.Now().After(deadline) {
					t.Fatalf("process %v (%s) of the cancelled task still runs", p, []string{"plugin", "bash", "sleep"}[i])
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		s.steps["pids"]["gone"] = true
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client: %v\n%s\nstdout:\n%s", err, stderr.String(), s.out.String())
	}
	s.check(t, "unauthorized", `"status":401`)
	s.check(t, "unauthorized", `"wwwAuthenticate":"Bearer`)
	s.check(t, "othertenant", `"status":404`)
	s.check(t, "card", `"name":"helper"`)
	s.check(t, "card", `"url":"http://`+addr+`/a2a/helper"`)
	s.check(t, "card", `"skills":["bar_chart","count","say_hello","shell"]`)
	s.check(t, "card", `"streaming":true`)
	s.check(t, "card", `"security":["bearer"]`)
	s.check(t, "send", `"kind":"task"`)
	s.check(t, "send", `"state":"completed"`)
	s.check(t, "send", `"contextId":"helper"`)
	s.check(t, "send", `"result":"I said: Hello, Ming!"`)
	s.check(t, "pids", `"gone":true`)
	s.check(t, "cancelled", `"state":"canceled"`)
	s.check(t, "cancelled", `"streamState":"canceled"`)
	s.check(t, "cancelled", `TaskNotCancelable`)
	s.check(t, "get", `"state":"completed"`)
	s.check(t, "get", `"result":"I said: Hello, Ming!"`)
	s.check(t, "get", `"artifacts":["result"]`)
	s.check(t, "files", `"artifacts":["result","files"]`)
	s.check(t, "files", `"files":[{"bytes":true,"kind":"file","mimeType":"image/png"}]`)

	checkA2AStream(t, &s)
	checkA2APermission(t, &s)
	checkA2AResubscribe(t, &s)
	for _, tok := range []string{aliceToken, bobToken} {
		if strings.Contains(s.out.String(), tok) || strings.Contains(srv.Logs(), tok) {
			t.Error("a token is echoed back or logged")
		}
	}
}

// a2aEvent is one event as client.mjs summarises it.
type a2aEvent struct {
	Kind     string         `json:"kind"`
	State    string         `json:"state"`
	Final    bool           `json:"final"`
	Text     string         `json:"text"`
	Data     map[string]any `json:"data"`
	Artifact string         `json:"artifact"`
	Seq      *int64         `json:"seq"`
	Task     string         `json:"task"`
}

// a2aEvents reads the events of a step (under key).
func a2aEvents(t *testing.T, s *mcpSteps, step, key string) []a2aEvent {
	t.Helper()
	b, _ := json.Marshal(s.steps[step][key])
	var evs []a2aEvent
	if err := json.Unmarshal(b, &evs); err != nil || len(evs) == 0 {
		t.Fatalf("%s: no events in %s\n%s", step, b, s.out.String())
	}
	return evs
}

// checkA2AStream: the task first, working; count's output live, in order;
// the result artifact; completed, final, last.
func checkA2AStream(t *testing.T, s *mcpSteps) {
	evs := a2aEvents(t, s, "stream", "events")
	if evs[0].Kind != "task" || evs[0].State != "working" {
		t.Errorf("stream: first event %+v, want the task, working", evs[0])
	}
	var outputs []string
	var result string
	for _, e := range evs {
		if strings.HasPrefix(e.Text, "counted to") {
			outputs = append(outputs, strings.TrimSpace(e.Text))
		}
		if e.Artifact == "result" {
			result = e.Text
		}
		if e.Task != evs[0].Task {
			t.Errorf("stream: event of task %s in task %s's stream", e.Task, evs[0].Task)
		}
	}
	if strings.Join(outputs, ",") != "counted to 1,counted to 2,counted to 3" {
		t.Errorf("stream: live output %q", outputs)
	}
	if result != "I said: counted to 3" {
		t.Errorf("stream: result artifact %q", result)
	}
	if last := evs[len(evs)-1]; last.State != "completed" || !last.Final {
		t.Errorf("stream: last event %+v, want completed, final", last)
	}
}

// checkA2APermission: the first stream ends input-required naming the
// call; the answer's stream runs it and completes.
func checkA2APermission(t *testing.T, s *mcpSteps) {
	asked := a2aEvents(t, s, "permission", "asked")
	last := asked[len(asked)-1]
	req, _ := last.Data["permissionRequest"].(map[string]any)
	if last.State != "input-required" || !last.Final || req["toolName"] != "say_hello" {
		t.Errorf("permission: asked ended with %+v, want input-required for say_hello", last)
	}
	answered := a2aEvents(t, s, "permission", "answered")
	var result string
	for _, e := range answered {
		if e.Task != last.Task {
			t.Errorf("permission: the answer's stream has task %s, want %s", e.Task, last.Task)
		}
		if e.Artifact == "result" {
			result = e.Text
		}
	}
	if end := answered[len(answered)-1]; end.State != "completed" || result != "I said: Hello, Lan!" {
		t.Errorf("permission: answered ended with %+v, result %q", end, result)
	}
}

// checkA2AResubscribe: the events after the dropped stream's last seq,
// each once and in order, through the rest of count's output to the
// end; a resubscription without a seq starts with the task as it is.
func checkA2AResubscribe(t *testing.T, s *mcpSteps) {
	before := a2aEvents(t, s, "dropped", "events")
	after := a2aEvents(t, s, "resubscribed", "events")
	lastSeq := *before[len(before)-1].Seq
	var outputs []string
	for _, e := range append(before, after...) {
		if strings.HasPrefix(e.Text, "counted to") {
			outputs = append(outputs, strings.TrimSpace(e.Text))
		}
	}
	for _, e := range after {
		if e.Seq != nil && *e.Seq <= lastSeq {
			t.Errorf("resubscribed: event of seq %d, at or before the last seen (%d)", *e.Seq, lastSeq)
		}
	}
	if strings.Join(outputs, ",") != "counted to 1,counted to 2,counted to 3,counted to 4,counted to 5" {
		t.Errorf("dropped and resubscribed: live output %q, want each once and in order", outputs)
	}
	if end := after[len(after)-1]; end.State != "completed" || !end.Final {
		t.Errorf("resubscribed: ended with %+v", end)
	}
	snap := a2aEvents(t, s, "snapshot", "events")
	if snap[0].Kind != "task" || snap[0].State != "completed" || len(snap) != 1 {
		t.Errorf("snapshot: %+v, want the completed task alone", snap)
	}
}

// TestA2ARemoteAgentTool: a remote agent built with the A2A JavaScript SDK
// (tests/a2anode/agent.mjs), declared by remote.a2a.json with its token in
// headers, is a tool of agent-server: a run calls it, its status messages
// stream as the call's live output, its artifact is the result; a stopped
// run cancels the remote task (tasks/cancel) and the token shows in no log
// and no model request.
func TestA2ARemoteAgentTool(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const remoteToken = "remote-agent-secret-7f3a9c"
	agent := a2aNode(t, ctx, "agent.mjs", remoteToken)
	stdin, err := agent.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := agent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var agentErr bytes.Buffer
	agent.Stderr = &agentErr
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]any, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	defer func() { // before cancel: the agent ends on its own
		stdin.Close()
		if err := agent.Wait(); err != nil {
			t.Errorf("remote agent: %v\n%s", err, agentErr.String())
		}
	}()
	next := func(event string) map[string]any {
		t.Helper()
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("the remote agent ended before %s:\n%s", event, agentErr.String())
				}
				if m["event"] == event {
					return m
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no %s from the remote agent in 30s", event)
			}
		}
	}
	port := int(next("listening")["port"].(float64))

	dir := t.TempDir()
	def := fmt.Sprintf(`{"card": "http://127.0.0.1:%d/.well-known/agent-card.json", "headers": {"Authorization": "Bearer %s"}, "timeout": "1m"}`, port, remoteToken)
	if err := os.WriteFile(filepath.Join(dir, "counter.a2a.json"), []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := suite.StartServer(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
	})
	c, err := client.Dial(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.GetTools()) != 1 || tools.GetTools()[0].GetName() != "counter" || !strings.HasPrefix(tools.GetTools()[0].GetSource(), "a2a:") ||
		!strings.Contains(tools.GetTools()[0].GetDescription(), "Counts out loud.") {
		t.Fatalf("tools %v, want the remote agent counter", tools.GetTools())
	}
	system := suite.Router.Add(t, func(_ int, req *fakemodel.Request) fakemodel.Turn {
		if results := e2e.LastToolResults(req); len(results) > 0 {
			return fakemodel.Turn{Text: "The agent said: " + strings.Join(results, "")}
		}
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: "counter", Arguments: fmt.Sprintf(`{"task":%q}`, e2e.LastUserText(req))}}}
	})
	a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: &system}})
	if err != nil {
		t.Fatal(err)
	}

	var output strings.Builder
	res, err := a.Send(ctx, "count 3", client.Callbacks{OnToolOutput: func(e *agentv1.ToolOutputEvent) { output.WriteString(e.GetData()) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := output.String(); got != "step 1\nstep 2\nstep 3\ncounted 3\n" {
		t.Errorf("live output %q, want the agent's three steps and its artifact", got)
	}
	if res.Text != "The agent said: counted 3" {
		t.Errorf("result %q", res.Text)
	}

	// Stopping the run cancels the remote task.
	stopped := make(chan error, 1)
	go func() {
		_, err := a.Send(ctx, "wait", client.Callbacks{OnToolOutput: func(e *agentv1.ToolOutputEvent) {
			if strings.Contains(e.GetData(), "waiting") {
				go func() { _, _ = a.Stop(ctx) }()
			}
		}})
		stopped <- err
	}()
	if task, _ := next("cancelled")["task"].(string); task == "" {
		t.Error("the remote agent was cancelled without a task id")
	}
	select {
	case err := <-stopped:
		if err == nil {
			t.Error("the stopped send succeeded")
		}
	case <-ctx.Done():
		t.Fatal("the stopped send did not end")
	}
	for _, req := range suite.Model.Requests() {
		if strings.Contains(string(req.Body), remoteToken) {
			t.Fatal("the remote agent's token reached the model")
		}
	}
	if strings.Contains(srv.Logs(), remoteToken) {
		t.Error("the remote agent's token is in the server's logs")
	}
}
