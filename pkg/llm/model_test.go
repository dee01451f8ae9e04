package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/anthropic"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// suppliedModel builds an Anthropic adapter the way a Go program would, and
// hands it to Chat as the caller's own model.
func suppliedModel(t *testing.T, srv *fakemodel.Server, headers map[string]string) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New(provider.Config{BaseURL: srv.URL, APIKey: "sk-own", Model: "own-model", Headers: headers})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// headerModel is a caller's model that can take headers (llm.HeaderModel).
type headerModel struct {
	*anthropic.Model
	t   *testing.T
	srv *fakemodel.Server
}

func (h headerModel) WithHeaders(hd map[string]string) (model.ToolCallingChatModel, error) {
	return suppliedModel(h.t, h.srv, hd), nil
}

func TestSuppliedModel(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv := fakemodel.StartTB(t)
		srv.Push(fakemodel.Turn{TextChunks: []string{"from ", "mine"}, ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "add", Arguments: `{"a":1,"b":2}`}}})
		c, _ := newTestClient(t)
		cfg := DefaultConfig() // no base URL, no model: the instance has them
		cfg.Stream = stream
		temp := 0.25
		cfg.Provider.Params.Temperature = &temp
		var deltas int
		res, err := c.Chat(context.Background(), Request{Config: cfg, Model: suppliedModel(t, srv, nil), Messages: hello(), Tools: []Tool{addTool},
			OnDelta: func(Delta) { deltas++ }})
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "from mine" || len(res.ToolCalls) != 1 || stream != (deltas > 0) {
			t.Errorf("stream %v: result %+v, %d deltas", stream, res, deltas)
		}
		req := srv.Requests()[0]
		if req.JSON()["model"] != "own-model" || req.JSON()["temperature"] != 0.25 || req.JSON()["tool_choice"] == nil || req.JSON()["tools"] == nil {
			t.Errorf("request = %s", req.Body)
		}
		if strings.Contains(string(req.Body), "cache_control") {
			t.Error("the default cache was applied to a supplied model")
		}
	}
}

func TestSuppliedModelHeaders(t *testing.T) {
	srv := fakemodel.StartTB(t)
	srv.Push(fakemodel.Turn{Text: "ok"})
	c, _ := newTestClient(t)
	cfg := DefaultConfig()
	cfg.Provider.Headers = map[string]string{"X-Session": "abc"}
	m := headerModel{Model: suppliedModel(t, srv, nil), t: t, srv: srv}
	if _, err := c.Chat(context.Background(), Request{Config: cfg, Model: m, Messages: hello()}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("X-Session"); got != "abc" {
		t.Errorf("X-Session = %q", got)
	}
}

func TestSuppliedModelConflicts(t *testing.T) {
	seed := int64(1)
	tests := []struct {
		name      string
		configure func(*Config)
		field     string
	}{
		{"provider.body", func(c *Config) { c.Provider.Body = map[string]any{"x": 1} }, "config.provider.body"},
		{"custom cache", func(c *Config) { c.Cache.Key = "k" }, "config.cache"},
		{"vendor options", func(c *Config) { c.Provider.VendorOptions = map[string]map[string]any{"openai": {}} }, "config.provider.provider_options"},
		{"seed", func(c *Config) { c.Provider.Params.Seed = &seed }, "config.provider.seed"},
		{"headers without HeaderModel", func(c *Config) { c.Provider.Headers = map[string]string{"X": "1"} }, "config.provider.headers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			c, _ := newTestClient(t)
			cfg := DefaultConfig()
			tt.configure(cfg)
			_, err := c.Chat(context.Background(), Request{Config: cfg, Model: suppliedModel(t, srv, nil), Messages: hello()})
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Violations) != 1 || ce.Violations[0].Field != tt.field {
				t.Fatalf("err = %v, want a violation of %s", err, tt.field)
			}
			if len(srv.Requests()) != 0 {
				t.Error("a request was sent")
			}
		})
	}
	t.Run("no endpoint and no model", func(t *testing.T) {
		c, _ := newTestClient(t)
		_, err := c.Chat(context.Background(), Request{Config: DefaultConfig(), Messages: hello()})
		var ce *ConfigError
		if !errors.As(err, &ce) || len(ce.Violations) != 2 {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no config", func(t *testing.T) {
		c, _ := newTestClient(t)
		if _, err := c.Chat(context.Background(), Request{Messages: hello()}); err == nil {
			t.Fatal("no error")
		}
	})
}

// brokenModel is a caller's model whose errors are not *Error.
type brokenModel struct{ err error }

func (b brokenModel) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	return nil, b.err
}

func (b brokenModel) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return nil, b.err
}

func (b brokenModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return b, nil }

func TestSuppliedModelForeignErrors(t *testing.T) {
	c, clock := newTestClient(t)
	cfg := DefaultConfig()
	_, err := c.Chat(context.Background(), Request{Config: cfg, Model: brokenModel{errors.New("quota gone")}, Messages: hello()})
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindUnknown || pe.Retryable || !strings.Contains(pe.Message, "quota gone") || len(clock.Sleeps()) != 0 {
		t.Fatalf("err = %#v", err)
	}
}
