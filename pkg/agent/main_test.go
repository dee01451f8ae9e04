package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tokens"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Shared by every test: real plugin binaries in a tool host, one model
// client, one set of token encoders.
var (
	tools     *tool.Set
	client    *llm.Client
	transport *http.Transport
	encoders  = tokens.NewEncoders()
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "agent-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// One go build for every plugin: the real binaries, built from source.
	// No symbol tables: linking is most of the build's time.
	cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", dir+string(filepath.Separator),
		"../../plugins/finish", "../../plugins/math", "../../plugins/shell", "./testdata/plugins/agenttest")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building plugins:", err)
		return 1
	}
	host := tool.NewHost(tool.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	tools, err = host.Scan(ctx, dir)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "scanning plugins:", err)
		host.Close()
		return 1
	}
	transport = http.DefaultTransport.(*http.Transport).Clone()
	client = llm.NewClient(llm.Options{HTTPClient: &http.Client{Transport: transport}})

	code := m.Run()
	host.Close()
	transport.CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			return 1
		}
	}
	return code
}

// pick returns the shared tools named.
func pick(t testing.TB, names ...string) *tool.Set {
	t.Helper()
	s, err := tools.Select(names...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// baseConfig talks to srv with the chat protocol, never retrying.
func baseConfig(srv *fakemodel.Server) *agentv1.AgentConfig {
	return &agentv1.AgentConfig{
		BaseUrl:         proto.String(srv.URL),
		ApiKey:          proto.String("sk-test"),
		Model:           proto.String("test-model"),
		Protocol:        agentv1.Protocol_PROTOCOL_CHAT,
		System:          proto.String("You are a test agent."),
		RetryMaxElapsed: durationpb.New(0), // never retry: a failure shows at once
	}
}

// newSession makes a session on a fresh fake model server; change edits
// the options first.
func newSession(t testing.TB, change func(*agent.Options)) (*agent.Session, *fakemodel.Server) {
	t.Helper()
	srv := fakemodel.StartTB(t)
	o := agent.Options{Config: baseConfig(srv), LLM: client, Encoders: encoders}
	if change != nil {
		change(&o)
	}
	s, err := agent.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s, srv
}

// recorder keeps a run's events.
type recorder struct {
	mu     sync.Mutex
	events []*agentv1.Event
	notify chan struct{}
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{}, 1)} }

func (r *recorder) add(e *agentv1.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *recorder) all() []*agentv1.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*agentv1.Event(nil), r.events...)
}

// kinds names the events' kinds, e.g. "model_request".
func (r *recorder) kinds() []string {
	var out []string
	for _, e := range r.all() {
		out = append(out, kindOf(e))
	}
	return out
}

func kindOf(e *agentv1.Event) string {
	return string(e.ProtoReflect().WhichOneof(e.ProtoReflect().Descriptor().Oneofs().ByName("kind")).Name())
}

// wait waits until some event satisfies ok and returns it.
func (r *recorder) wait(t testing.TB, ok func(*agentv1.Event) bool) *agentv1.Event {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, e := range r.all() {
			if ok(e) {
				return e
			}
		}
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("no such event; got %v", r.kinds())
			return nil
		}
	}
}

// text returns the text of a request message's content (a string or parts).
func text(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// messages returns a chat request's messages.
func messages(r *fakemodel.Request) []map[string]any {
	var out []map[string]any
	list, _ := r.JSON()["messages"].([]any)
	for _, m := range list {
		out = append(out, m.(map[string]any))
	}
	return out
}

// system returns a chat request's system prompt.
func system(r *fakemodel.Request) string {
	var parts []string
	for _, m := range messages(r) {
		if m["role"] == "system" {
			parts = append(parts, text(m["content"]))
		}
	}
	return strings.Join(parts, "\n")
}

// toolNames returns the names of the tools a chat request offers.
func toolNames(r *fakemodel.Request) []string {
	var out []string
	list, _ := r.JSON()["tools"].([]any)
	for _, t := range list {
		out = append(out, t.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	return out
}

// input is a text input.
func input(s string) []*agentv1.Part {
	return []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: s}}}
}

// outcome is what a send returned.
type outcome struct {
	res *agent.Result
	err error
}

// sendAsync starts a send and returns where its outcome arrives.
func sendAsync(s *agent.Session, o agent.SendOptions) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		res, err := s.Send(context.Background(), o)
		ch <- outcome{res, err}
	}()
	return ch
}

// receive waits for a send's outcome.
func receive(t *testing.T, ch <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(20 * time.Second):
		t.Fatal("the send did not return")
		return outcome{}
	}
}

// isAborted reports whether err is the model layer's aborted kind wrapping cause.
func isAborted(err, cause error) bool {
	var le *llm.Error
	return errors.As(err, &le) && le.Kind == llm.KindAborted && errors.Is(err, cause)
}
