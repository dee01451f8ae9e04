package tests

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// The keys of the two profiles of TestFallbackModel: each must reach its
// own endpoint only, and neither may show in a log.
const (
	fallbackMainKey   = "sk-e2e-fallback-main-5e1c0a"
	fallbackBackupKey = "sk-e2e-fallback-backup-9b7d42"
)

// fallbackModels are the two strict fake models of TestFallbackModel: main
// speaks chat, backup anthropic; what each answers is set per phase.
type fallbackModels struct {
	main, backup *fakemodel.Server
	mu           sync.Mutex
	mainTurn     func(req *fakemodel.Request) fakemodel.Turn
	backupTurn   func(req *fakemodel.Request) fakemodel.Turn
}

func (m *fallbackModels) set(main, backup func(req *fakemodel.Request) fakemodel.Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mainTurn, m.backupTurn = main, backup
}

func startFallbackModels(t *testing.T) *fallbackModels {
	m := &fallbackModels{main: fakemodel.StartTB(t), backup: fakemodel.StartTB(t)}
	m.main.Strict()
	m.backup.Strict()
	m.main.Handle(func(req *fakemodel.Request) fakemodel.Turn {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.mainTurn(req)
	})
	m.backup.Handle(func(req *fakemodel.Request) fakemodel.Turn {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.backupTurn(req)
	})
	return m
}

func down(status int) func(*fakemodel.Request) fakemodel.Turn {
	return func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Status: status} }
}

// TestFallbackModel: a profile whose model answers 5xx falls back, after
// its retries, on the profile it names, in another protocol (chat to
// anthropic); the history (an earlier tool call and reasoning) is accepted
// by the second protocol, the fallback is said by an event, usage is
// priced on the model that answered, each key goes to its own endpoint
// only, and the next send works on the main model again. A kind the
// profile does not name does not fall back, and when the fallback fails
// too the error names both.
func TestFallbackModel(t *testing.T) {
	t.Parallel()
	models := startFallbackModels(t)
	cfg := filepath.Join(t.TempDir(), "agent-server.yaml")
	if err := os.WriteFile(cfg, []byte(`default_profile: main
profiles:
  main:
    base_url: `+models.main.URL+`
    model: gpt-main
    protocol: chat
    api_key_env: E2E_FALLBACK_MAIN_KEY
    fallbacks: [backup]
    fallback_on: [server]
    prices: {gpt-main: {input: 1000, output: 0}}
    defaults: {retryMaxDelay: 0.02s, retryMaxElapsed: 0.1s, capabilities: {reasoning: true}}
  backup:
    base_url: `+models.backup.URL+`
    model: claude-backup
    protocol: anthropic
    api_key_env: E2E_FALLBACK_BACKUP_KEY
    prices: {claude-backup: {input: 2000, output: 0}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := suite.StartServer(suite.Plugins, []string{"-config", cfg, "-store", "memory"},
		"E2E_FALLBACK_MAIN_KEY="+fallbackMainKey, "E2E_FALLBACK_BACKUP_KEY="+fallbackBackupKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
		for _, key := range []string{fallbackMainKey, fallbackBackupKey} {
			if strings.Contains(p.Logs(), key) {
				t.Errorf("a profile's key is in the server's logs")
			}
		}
	})
	ctx := e2e.Context(t, 60*time.Second)
	a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("You add.")}, Tools: []string{"add"}})
	if err != nil {
		t.Fatal(err)
	}

	// The first round answers on main with reasoning and a call; the
	// second fails there (503, retried) and goes to backup.
	models.set(func(req *fakemodel.Request) fakemodel.Turn {
		if strings.Contains(string(req.Body), `"role":"tool"`) {
			return fakemodel.Turn{Status: 503}
		}
		return fakemodel.Turn{Reasoning: "2 and 3: call add", ToolCalls: []fakemodel.ToolCall{{ID: "call_add_1", Name: "add", Arguments: `{"a":2,"b":3}`}},
			Usage: &fakemodel.Usage{Input: 10, Output: 1}}
	}, func(req *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Text: "2 + 3 = 5", Reasoning: "the tool said 5", ReasoningSignature: "sig-backup-1", Usage: &fakemodel.Usage{Input: 20, Output: 3}}
	})
	var fallbacks []*agentv1.FallbackEvent
	var events []string
	res, err := a.Send(ctx, "add 2 and 3", client.Callbacks{
		OnRetry:    func(*agentv1.RetryEvent) { events = append(events, "retry") },
		OnFallback: func(f *agentv1.FallbackEvent) { fallbacks, events = append(fallbacks, f), append(events, "fallback") },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "2 + 3 = 5" || res.Steps != 2 {
		t.Errorf("result %q after %d steps", res.Text, res.Steps)
	}
	if len(fallbacks) != 1 || !strings.HasPrefix(strings.Join(events, ","), "retry") || events[len(events)-1] != "fallback" {
		t.Fatalf("events %v, fallbacks %v", events, fallbacks)
	}
	f := fallbacks[0]
	if f.GetStep() != 2 || f.GetIndex() != 1 || f.GetKind() != agentv1.ErrorKind_ERROR_KIND_SERVER || f.GetStatus() != 503 ||
		f.GetFrom().GetProfile() != "main" || f.GetFrom().GetModel() != "gpt-main" || f.GetFrom().GetProtocol() != "chat" ||
		f.GetTo().GetProfile() != "backup" || f.GetTo().GetModel() != "claude-backup" || f.GetTo().GetProtocol() != "anthropic" ||
		"http://"+f.GetTo().GetBaseUrlHost() != models.backup.URL {
		t.Errorf("fallback event %v", f)
	}
	// Usage on the model that answered: 10 input tokens at 1000 per
	// million on main, 20 at 2000 on backup.
	if got := res.RunUsage.GetCost(); math.Abs(got-0.05) > 1e-9 || res.Usage.GetInputTokens() != 30 {
		t.Errorf("cost %v, usage %v; want 0.05 and 30 input tokens", got, res.Usage)
	}
	breq := models.backup.Requests()
	if len(breq) != 1 || breq[0].Header.Get("X-Api-Key") != fallbackBackupKey || strings.Contains(string(breq[0].Body), fallbackMainKey) {
		t.Fatalf("backup got %d requests, the first with x-api-key %q", len(breq), breq[0].Header.Get("X-Api-Key"))
	}
	body := string(breq[0].Body)
	for _, want := range []string{`"tool_use"`, `"id":"call_add_1"`, `"tool_result"`, `"tool_use_id":"call_add_1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the anthropic request lacks %s: %s", want, body)
		}
	}
	for _, r := range models.main.Requests() {
		if r.Header.Get("Authorization") != "Bearer "+fallbackMainKey {
			t.Errorf("main got Authorization %q", r.Header.Get("Authorization"))
		}
	}

	// The next send starts on main, with the whole history, the backup's
	// signed reasoning left out, its own kept.
	models.set(func(req *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "still here"} }, down(500))
	fallbacks = nil
	res, err = a.Send(ctx, "and now?", client.Callbacks{OnFallback: func(f *agentv1.FallbackEvent) { fallbacks = append(fallbacks, f) }})
	if err != nil || res.Text != "still here" || len(fallbacks) != 0 || len(models.backup.Requests()) != 1 {
		t.Fatalf("a later send: %v, %v, fallbacks %v", res, err, fallbacks)
	}
	last := models.main.Requests()[len(models.main.Requests())-1]
	if b := string(last.Body); !strings.Contains(b, "2 + 3 = 5") || !strings.Contains(b, "call_add_1") ||
		!strings.Contains(b, "2 and 3: call add") || strings.Contains(b, "the tool said 5") {
		t.Errorf("main's request after the fallback: %s", b)
	}

	// A kind the profile does not name (limit) does not fall back.
	models.set(down(429), down(500))
	_, err = a.Send(ctx, "again", client.Callbacks{OnFallback: func(f *agentv1.FallbackEvent) { fallbacks = append(fallbacks, f) }})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Kind != client.KindLimit || strings.Contains(err.Error(), "fallback") || len(fallbacks) != 0 ||
		len(models.backup.Requests()) != 1 {
		t.Errorf("a limit error with fallback_on [server]: %v, fallbacks %v", err, fallbacks)
	}

	// The fallback fails too: the error names both models and errors.
	models.set(down(502), func(*fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Status: 529, ErrorBody: `{"type":"error","error":{"type":"overloaded_error","message":"backup overloaded"}}`}
	})
	_, err = a.Send(ctx, "once more", client.Callbacks{})
	if !errors.As(err, &ce) || ce.Kind != client.KindServer {
		t.Fatalf("both down: %v", err)
	}
	for _, want := range []string{"every model failed", "chat model gpt-main (profile main)", "HTTP 502",
		"fallback 1, anthropic model claude-backup (profile backup)", "HTTP 529", "backup overloaded"} {
		if !strings.Contains(ce.Message, want) {
			t.Errorf("error %q does not say %q", ce.Message, want)
		}
	}
	if strings.Contains(ce.Message, fallbackMainKey) || strings.Contains(ce.Message, fallbackBackupKey) {
		t.Error("a key in the error")
	}
	if r := append(models.main.Rejected(), models.backup.Rejected()...); len(r) > 0 {
		t.Errorf("requests the APIs would refuse: %v", r)
	}
}
