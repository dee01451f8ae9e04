package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/sessions"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// evictServer is a Server (on a SQLite store unless args name another), served over gRPC on
// 127.0.0.1 with its interceptors, with the fake model as its default
// profile, and a client of it.
type evictServer struct {
	*Server
	c     *client.Client
	model *fakemodel.Server
}

func startEvictServer(t *testing.T, args ...string) *evictServer {
	t.Helper()
	model := fakemodel.StartTB(t)
	s := newServer(t, append([]string{"-store", "sqlite:" + t.TempDir() + "/a.db", "-model-base-url", model.URL, "-model", "m"}, args...)...) // a later -store wins
	gs := grpc.NewServer(s.Interceptors(false)...)
	agentv1.RegisterAgentServiceServer(gs, s)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	c, err := client.Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); gs.Stop() }) // before the server closes
	return &evictServer{Server: s, c: c, model: model}
}

// loaded reports whether the agent id (default tenant) is in memory.
func (s *evictServer) loaded(id string) bool { return s.inMemory(id) != nil }

// metric reads a counter or gauge of the server's registry, the series
// whose first label is label (any when empty); -1 when there is none.
func (s *evictServer) metric(name, label string) float64 {
	families, err := s.tel.Registry().Gather()
	if err != nil {
		return -1
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label != "" && (len(m.GetLabel()) == 0 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}

// within receives from ch, failing the test after 10 s.
func within[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing came in 10s")
		panic("unreachable")
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 10s", what)
		}
	}
}

func (s *evictServer) create(t *testing.T, id string, h []*agentv1.Message, cfg *agentv1.AgentConfig) *client.Agent {
	t.Helper()
	a, err := s.c.CreateAgent(context.Background(), client.AgentOptions{ID: id, History: h, Config: cfg, Tools: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestEvictionByCount: beyond -max-loaded-agents the least recently used
// agent is dropped from memory; a send to it loads it again, its history
// whole, and drops the one now least recently used; the metrics count it.
// The memory store, which keeps the histories in the process too, is
// loaded from in the same way.
func TestEvictionByCount(t *testing.T) {
	for _, st := range []string{"sqlite", "memory"} {
		t.Run(st, func(t *testing.T) {
			args := []string{"-max-loaded-agents", "2"}
			if st == "memory" {
				args = append(args, "-store", "memory")
			}
			s := startEvictServer(t, args...)
			if got := fmt.Sprint(s.store); !strings.HasPrefix(got, st) {
				t.Fatalf("store %s, want %s", got, st)
			}
			testEvictionByCount(t, s)
		})
	}
}

func testEvictionByCount(t *testing.T, s *evictServer) {
	s.model.Handle(func(r *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "answered"} })
	ctx := context.Background()
	a1 := s.create(t, "a1", textMessages(4, 50), nil)
	s.create(t, "a2", textMessages(2, 50), nil)
	s.create(t, "a3", textMessages(2, 50), nil)
	if s.loaded("a1") || !s.loaded("a2") || !s.loaded("a3") {
		t.Fatalf("loaded: a1 %v, a2 %v, a3 %v; want a1 dropped", s.loaded("a1"), s.loaded("a2"), s.loaded("a3"))
	}
	if got := s.metric("agentcore_agent_evictions_total", "count"); got != 1 {
		t.Fatalf("evictions by count: %v", got)
	}
	if got := s.metric("agentcore_agents_loaded", ""); got != 2 {
		t.Fatalf("agents loaded: %v", got)
	}
	if _, err := a1.Send(ctx, "again", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	reqs := s.model.Requests()
	if msgs, _ := reqs[len(reqs)-1].JSON()["messages"].([]any); len(msgs) != 5 {
		t.Fatalf("the model got %d messages after the reload, want the 4 of the history and the input", len(msgs))
	}
	if !s.loaded("a1") || s.loaded("a2") || !s.loaded("a3") {
		t.Fatalf("loaded: a1 %v, a2 %v, a3 %v; want a2 dropped", s.loaded("a1"), s.loaded("a2"), s.loaded("a3"))
	}
	h, err := a1.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := history.Render(append(textMessages(4, 50), &agentv1.Message{Role: agentv1.Role_ROLE_USER, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "again"}}}},
		&agentv1.Message{Role: agentv1.Role_ROLE_ASSISTANT, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "answered"}}}}))
	if got := history.Render(h); got != want {
		t.Fatalf("history after the reload:\n%s\nwant:\n%s", got, want)
	}
	if got := s.metric("agentcore_agent_reloads_total", ""); got != 1 {
		t.Fatalf("reloads: %v", got)
	}
	if got := s.metric("agentcore_agent_evictions_total", "count"); got != 2 {
		t.Fatalf("evictions by count: %v", got)
	}
}

// TestEvictionByMemory: the agents in memory cost at most -agent-memory;
// those dropped for it are counted by cause memory, and one set anew is
// loaded again.
func TestEvictionByMemory(t *testing.T) {
	h := textMessages(100, 1000)
	// What one agent costs: its footprint and the server's share, with the
	// garbage collector's room; the budget holds two.
	one := int64(float64(100*(1000+6+136+88)+1<<10+sessionBytes) * sessions.GCRoom())
	budget := one * 5 / 2
	s := startEvictServer(t, "-agent-memory", itoa(budget))
	for i := range 5 {
		s.create(t, "m"+itoa(int64(i)), h, nil)
		if b := s.metric("agentcore_agents_loaded_bytes", ""); b > float64(budget) {
			t.Fatalf("after %d agents, loaded bytes %v over the budget %d", i+1, b, budget)
		}
	}
	if n := s.metric("agentcore_agents_loaded", ""); n != 2 {
		t.Fatalf("agents loaded: %v, want 2 (each costs about %d of %d)", n, one, budget)
	}
	if got := s.metric("agentcore_agent_evictions_total", "memory"); got != 3 {
		t.Fatalf("evictions by memory: %v", got)
	}
	if err := s.c.Agent("m0").SetHistory(context.Background(), textMessages(3, 10)); err != nil {
		t.Fatal(err)
	}
	if !s.loaded("m0") || s.metric("agentcore_agent_reloads_total", "") != 1 {
		t.Fatalf("m0 loaded %v, reloads %v", s.loaded("m0"), s.metric("agentcore_agent_reloads_total", ""))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestEvictionSparesAgentsInUse: an agent with a run in flight (its client
// gone, on_disconnect CONTINUE), a send queued behind it, or a permission
// request pending is never dropped, however far over -max-loaded-agents;
// once they end, the idle ones are dropped and a later send loads the
// agent with what the runs wrote.
func TestEvictionSparesAgentsInUse(t *testing.T) {
	s := startEvictServer(t, "-max-loaded-agents", "1")
	s.model.Handle(func(r *fakemodel.Request) fakemodel.Turn {
		msgs, _ := r.JSON()["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)
		switch text, _ := last["content"].(string); {
		case strings.HasPrefix(text, "hold"):
			return fakemodel.Turn{Text: "held", StallAfter: 1}
		case strings.HasPrefix(text, "clean"):
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "rm_everything", Arguments: `{}`}}}
		}
		return fakemodel.Turn{Text: "answered"}
	})
	ctx := context.Background()
	busy := s.create(t, "busy", nil, nil)
	asking := s.create(t, "asking", nil, nil)

	// busy: a run held by the model, and a send queued behind it.
	held, queued := make(chan string, 1), make(chan error, 1)
	go func() {
		_, _ = busy.SendWith(ctx, client.SendOptions{Text: "hold", Detach: true, Callbacks: client.Callbacks{OnStart: func(id string) { held <- id }}})
	}()
	heldID := within(t, held)
	go func() {
		_, err := busy.SendWith(ctx, client.SendOptions{Text: "after", Busy: agentv1.BusyPolicy_BUSY_POLICY_QUEUE})
		queued <- err
	}()
	waitFor(t, "queued", func() bool {
		sess := s.inMemory("busy")
		return sess != nil && sess.engine.State().Waiting == 1
	})
	// asking: a run waiting for a permission answer, its client gone.
	asked := make(chan string, 1)
	leave, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = asking.SendWith(leave, client.SendOptions{Text: "clean up", Detach: true, Callbacks: client.Callbacks{
			OnStart: func(id string) { asked <- id },
			OnPermission: func(ctx context.Context, _ *agentv1.PermissionRequestEvent) client.Decision {
				cancel()
				<-ctx.Done()
				return client.Deny("gone")
			},
		}})
	}()
	askedID := within(t, asked)
	waitFor(t, "asking", func() bool { r, err := s.c.Run(ctx, askedID); return err == nil && len(r.GetPendingPermissions()) == 1 })

	for i := range 3 {
		s.create(t, "idle"+itoa(int64(i)), textMessages(2, 10), nil)
	}
	if !s.loaded("busy") || !s.loaded("asking") {
		t.Fatalf("an agent in use was dropped: busy %v, asking %v", s.loaded("busy"), s.loaded("asking"))
	}
	if s.loaded("idle0") || s.loaded("idle1") || s.loaded("idle2") {
		t.Fatal("idle agents were kept beyond the limit")
	}

	if err := s.c.RespondPermission(ctx, askedID, "c1", client.Deny("not today")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.Attach(ctx, askedID, 0, client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	if _, err := busy.StopRun(ctx, heldID); err != nil {
		t.Fatal(err)
	}
	if err := within(t, queued); err != nil {
		t.Fatalf("the queued send: %v", err)
	}
	waitFor(t, "back within the limit", func() bool { n, _ := s.agents.Loaded(); return n <= 1 })

	if _, err := s.c.Agent("asking").Send(ctx, "and now?", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	h, err := s.c.Agent("asking").History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if text := history.Render(h); !strings.Contains(text, "not today") || !strings.HasSuffix(text, "assistant: answered") {
		t.Fatalf("history after the reload:\n%s", text)
	}
	if h, _ := busy.History(ctx); !strings.Contains(history.Render(h), "user: after\nassistant: answered") {
		t.Fatalf("busy's history:\n%s", history.Render(h))
	}
}

// TestEvictionKeepsClientSecrets: an agent whose client gave an API key
// (never stored) keeps it when dropped from memory: loaded again, it sends
// with it; deleted, the server forgets it; one of the same id created anew
// (elsewhere, in the store) gets nothing of it.
func TestEvictionKeepsClientSecrets(t *testing.T) {
	const key = "sk-client-secret-evicted-0123456789"
	s := startEvictServer(t, "-max-loaded-agents", "1")
	s.model.Handle(func(r *fakemodel.Request) fakemodel.Turn {
		if r.Header.Get("Authorization") != "Bearer "+key {
			return fakemodel.Turn{Status: 401}
		}
		return fakemodel.Turn{Text: "answered"}
	})
	ctx := context.Background()
	cfg := &agentv1.AgentConfig{BaseUrl: proto.String(s.model.URL), Model: proto.String("m"), ApiKey: proto.String(key)}
	keeper := s.create(t, "keeper", nil, cfg)
	s.create(t, "other", nil, nil)
	if s.loaded("keeper") {
		t.Fatal("keeper was not dropped")
	}
	if s.secrets.Redact(key) == key {
		t.Fatal("the key of an agent dropped from memory is no longer redacted")
	}
	if _, err := keeper.Send(ctx, "hi", client.Callbacks{}); err != nil {
		t.Fatalf("a send after the reload: %v", err)
	}
	if got, err := keeper.Get(ctx); err != nil || got.GetApiKeyRequired() {
		t.Fatalf("after the reload: %v, %v", got, err)
	}
	s.create(t, "third", nil, nil)
	if err := keeper.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if s.secrets.Redact(key) != key {
		t.Fatal("the key of a deleted agent is still held")
	}

	// An agent of the same id made anew in the store (as another replica
	// would) while this server held the old one's key.
	s.create(t, "twin", nil, cfg)
	s.create(t, "fourth", nil, nil)
	if err := s.store.DeleteAgent(ctx, "twin"); err != nil {
		t.Fatal(err)
	}
	rec := storedAgent("twin", "", cfg, nil, nil)
	rec.Created = rec.Created.Add(time.Second)
	if err := s.store.CreateAgent(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.Agent("twin").Send(ctx, "hi", client.Callbacks{}); reasonOfErr(err) != "API_KEY_REQUIRED" {
		t.Fatalf("the new twin sent with the old one's key: %v", err)
	}
}

// Two agents holding the same key: deleting one, here or on another
// replica while it is dropped from memory, leaves the key redacted for the
// other; once both are gone, it is not held.
func TestEvictionSharedKeyCountedOnce(t *testing.T) {
	const key = "sk-client-secret-shared-0123456789"
	s := startEvictServer(t, "-max-loaded-agents", "1")
	ctx := context.Background()
	cfg := &agentv1.AgentConfig{BaseUrl: proto.String(s.model.URL), Model: proto.String("m"), ApiKey: proto.String(key)}
	one := s.create(t, "one", nil, cfg)
	s.create(t, "two", nil, cfg)
	if err := one.Delete(ctx); err != nil { // dropped from memory, then deleted here
		t.Fatal(err)
	}
	if s.secrets.Redact(key) == key {
		t.Fatal("deleting one agent released the key the other holds")
	}
	s.create(t, "filler", nil, nil)                         // drops two
	if err := s.store.DeleteAgent(ctx, "two"); err != nil { // as another replica would
		t.Fatal(err)
	}
	if _, err := s.c.Agent("two").Get(ctx); reasonOfErr(err) != "AGENT_NOT_FOUND" {
		t.Fatalf("get of the agent deleted elsewhere: %v", err)
	}
	if s.secrets.Redact(key) != key {
		t.Fatal("the key of agents deleted here and elsewhere is still held")
	}
}

func reasonOfErr(err error) client.Reason {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// TestAgentCostMatchesHeap holds what the registry counts for an agent
// (its engine's footprint and sessionBytes, before the garbage collector's
// room) to the heap: agents created in-process, with empty histories and
// with 200 messages decoded as from the wire, add live heap within 15 % of
// the sum.
func TestAgentCostMatchesHeap(t *testing.T) {
	s := newServer(t, "-store", "sqlite:"+t.TempDir()+"/a.db", "-max-loaded-agents", "0", "-agent-memory", "0")
	ctx := context.Background()
	live := func() int64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	wire, err := proto.Marshal(&agentv1.CreateAgentRequest{History: textMessages(200, 200)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		n        int
		messages bool
	}{{"empty", 1000, false}, {"200 messages", 100, true}} {
		t.Run(tt.name, func(t *testing.T) {
			before := live()
			for i := range tt.n {
				req := &agentv1.CreateAgentRequest{}
				if tt.messages {
					if err := proto.Unmarshal(wire, req); err != nil {
						t.Fatal(err)
					}
				}
				req.AgentId = strings.ReplaceAll(tt.name, " ", "-") + itoa(int64(i))
				if _, err := s.CreateAgent(ctx, req); err != nil {
					t.Fatal(err)
				}
			}
			measured := live() - before
			var counted int64
			for _, sess := range s.agents.All() {
				if strings.HasPrefix(sess.id, strings.ReplaceAll(tt.name, " ", "-")) {
					counted += sess.engine.Footprint() + sessionBytes
				}
			}
			t.Logf("%s: %d B/agent measured, %d counted", tt.name, measured/int64(tt.n), counted/int64(tt.n))
			if r := float64(counted) / float64(measured); r < 0.85 || r > 1.15 {
				t.Errorf("counted %d, measured %d: off by more than 15 %%", counted, measured)
			}
		})
	}
}
