package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// wire reads protocol-specific fields out of a recorded request body.
type wire struct {
	tools, toolChoice, output func(body map[string]any) bool
}

func has(keys ...string) func(map[string]any) bool {
	return func(body map[string]any) bool {
		var cur any = body
		for _, k := range keys {
			m, ok := cur.(map[string]any)
			if !ok {
				return false
			}
			if cur, ok = m[k]; !ok {
				return false
			}
		}
		return true
	}
}

var wires = map[provider.Protocol]wire{
	provider.ProtocolChat:      {tools: has("tools"), toolChoice: has("tool_choice"), output: has("response_format")},
	provider.ProtocolResponses: {tools: has("tools"), toolChoice: has("tool_choice"), output: has("text", "format")},
	provider.ProtocolAnthropic: {tools: has("tools"), toolChoice: has("tool_choice"), output: has("output_config", "format")},
	provider.ProtocolGemini:    {tools: has("tools"), toolChoice: has("toolConfig"), output: has("generationConfig", "responseJsonSchema")},
}

func TestCapabilitiesOnTheWire(t *testing.T) {
	objectOut := &OutputFormat{Kind: provider.OutputObject, Schema: map[string]any{"type": "object"}}
	tests := []struct {
		name                        string
		tools                       []Tool
		configure                   func(*Config)
		wantTools, wantChoice, wOut bool
	}{
		{"defaults with tools", []Tool{addTool}, nil, true, true, false},
		{"no tools, no tool choice", nil, nil, false, false, false},
		{"capabilities.tools false", []Tool{addTool}, func(c *Config) { c.Capabilities.Tools = false }, false, false, false},
		{"capabilities.toolChoice false", []Tool{addTool}, func(c *Config) { c.Capabilities.ToolChoice = false }, true, false, false},
		{"structured output sent", nil, func(c *Config) { c.Output = objectOut }, false, false, true},
		{"capabilities.structuredOutput false", nil, func(c *Config) { c.Output = objectOut; c.Capabilities.StructuredOutput = false }, false, false, false},
	}
	for _, p := range protocols {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				srv := fakemodel.StartTB(t)
				srv.Push(fakemodel.Turn{Text: `{}`})
				c, _ := newTestClient(t)
				cfg := testConfig(srv, p)
				if tt.configure != nil {
					tt.configure(cfg)
				}
				if _, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Tools: tt.tools}); err != nil {
					t.Fatal(err)
				}
				body := srv.Requests()[0].JSON()
				w := wires[p]
				if w.tools(body) != tt.wantTools || w.toolChoice(body) != tt.wantChoice || w.output(body) != tt.wOut {
					t.Errorf("tools %v choice %v output %v; want %v %v %v\n%s", w.tools(body), w.toolChoice(body), w.output(body),
						tt.wantTools, tt.wantChoice, tt.wOut, srv.Requests()[0].Body)
				}
			})
		}
	}
}

func TestMediaFallbackOnTheWire(t *testing.T) {
	history := []*agentv1.Message{userMsg(text("what is this?"), imageURL("data:image/png;base64,iVBORw0KGgo="))}
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(fakemodel.Turn{Text: "a picture"})
			c, _ := newTestClient(t)
			cfg := testConfig(srv, p)
			cfg.Capabilities.Image = false
			_, err := c.Chat(context.Background(), Request{Config: cfg, Messages: history})
			var pe *Error
			if !errors.As(err, &pe) || pe.Code != "unsupported_media" || len(srv.Requests()) != 0 {
				t.Fatalf("err %v, %d requests", err, len(srv.Requests()))
			}
			cfg.MediaFallback = MediaFallbackStrip
			if _, err := c.Chat(context.Background(), Request{Config: cfg, Messages: history}); err != nil {
				t.Fatal(err)
			}
			body := string(srv.Requests()[0].Body)
			if !strings.Contains(body, "what is this?") || strings.Contains(body, "iVBORw0KGgo") {
				t.Errorf("stripped request = %s", body)
			}
		})
	}
}

func TestCacheOnTheWire(t *testing.T) {
	tests := []struct {
		name      string
		cache     CacheConfig
		body      map[string]any
		wantField map[string]any // top-level fields expected (nil value: absent)
	}{
		{"off", CacheConfig{Enabled: false, Body: map[string]any{"ns": "x"}}, nil, map[string]any{"ns": nil}},
		{"on with body", CacheConfig{Enabled: true, Body: map[string]any{"ns": "x"}}, nil, map[string]any{"ns": "x"}},
		{"provider body wins", CacheConfig{Enabled: true, Body: map[string]any{"ns": "x"}}, map[string]any{"ns": "mine"}, map[string]any{"ns": "mine"}},
	}
	for _, p := range protocols {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				srv := fakemodel.StartTB(t)
				srv.Push(fakemodel.Turn{Text: "ok"})
				c, _ := newTestClient(t)
				cfg := testConfig(srv, p)
				cfg.System = "be brief"
				cfg.Cache = tt.cache
				cfg.Provider.Body = tt.body
				if _, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello()}); err != nil {
					t.Fatal(err)
				}
				req := srv.Requests()[0]
				for k, want := range tt.wantField {
					got, ok := req.JSON()[k]
					if want == nil && ok || want != nil && got != want {
						t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
					}
				}
				marks := strings.Count(string(req.Body), "cache_control")
				wantMarks := 0
				if p == provider.ProtocolAnthropic && tt.cache.Enabled {
					wantMarks = 2 // system and the last message
				}
				if marks != wantMarks {
					t.Errorf("%d cache_control marks, want %d", marks, wantMarks)
				}
				key, hasKey := req.JSON()["prompt_cache_key"]
				wantKey := tt.cache.Enabled && (p == provider.ProtocolChat || p == provider.ProtocolResponses)
				if hasKey != wantKey || wantKey && key != DefaultCacheKey(cfg.BaseURL, cfg.Model, cfg.System) {
					t.Errorf("prompt_cache_key = %v (present %v), want present %v", key, hasKey, wantKey)
				}
			})
		}
	}
}

// textModel is a chat-only endpoint: a request carrying native tools is
// refused; otherwise it calls add once in text, then answers.
func textModel(r *fakemodel.Request) fakemodel.Turn {
	if _, ok := r.JSON()["tools"]; ok {
		return fakemodel.Turn{Status: 400, ErrorBody: `{"error":{"type":"invalid_request_error","message":"tools is not supported for this model"}}`}
	}
	if strings.Contains(string(r.Body), `tool_result name=\"add\"`) {
		return fakemodel.Turn{Text: "The sum is 3."}
	}
	return fakemodel.Turn{TextChunks: []string{"I will add.\n<tool_call>\n", `{"name": "add", "arguments": {"a": 1, "b": 2}}`, "\n</tool_call>"}}
}

func TestTextMode(t *testing.T) {
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Handle(textModel)
			c, _ := newTestClient(t)
			cfg := testConfig(srv, p)
			cfg.System = "You are terse."
			cfg.ToolMode = ToolModeText
			var streamed strings.Builder
			res, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Tools: []Tool{addTool},
				OnDelta: func(d Delta) { streamed.WriteString(d.Text) }})
			if err != nil {
				t.Fatal(err)
			}
			req := srv.Requests()[0]
			if wires[p].tools(req.JSON()) || !strings.Contains(string(req.Body), "You are terse.") || !strings.Contains(string(req.Body), "## add") {
				t.Errorf("text mode request = %s", req.Body)
			}
			if !res.TextProtocol || res.Text != "I will add." || len(res.ToolCalls) != 1 || res.ToolCalls[0].GetName() != "add" ||
				!sameJSON(res.ToolCalls[0].GetArguments(), `{"a":1,"b":2}`) || res.FinishReason != provider.FinishToolCalls {
				t.Fatalf("result = %+v", res)
			}
			if !strings.Contains(streamed.String(), "<tool_call>") {
				t.Errorf("deltas %q do not carry the raw call", streamed.String())
			}
			id := res.ToolCalls[0].GetId()
			parts := res.Message.GetParts()
			if len(parts) != 2 || parts[0].GetText() != "I will add." || parts[1].GetToolCall().GetId() != id {
				t.Errorf("history message = %v", res.Message)
			}

			history := append(hello(), res.Message, toolMsg(resultText(id, "add", "3")))
			res2, err := c.Chat(context.Background(), Request{Config: cfg, Messages: history, Tools: []Tool{addTool}})
			if err != nil {
				t.Fatal(err)
			}
			body := string(srv.Requests()[1].Body)
			if res2.Text != "The sum is 3." || len(res2.ToolCalls) != 0 || strings.Contains(body, id) || wires[p].tools(srv.Requests()[1].JSON()) {
				t.Errorf("second round: %+v\n%s", res2, body)
			}
			if !strings.Contains(body, `<tool_result name=\"add\">\n3\n</tool_result>`) || !strings.Contains(body, `\u003ctool_call\u003e`) && !strings.Contains(body, `<tool_call>`) {
				t.Errorf("second request does not carry the call and result as text: %s", body)
			}
		})
	}
}

func TestAutoMode(t *testing.T) {
	for _, p := range protocols {
		t.Run(string(p)+"/falls back and remembers", func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Handle(textModel)
			c, _ := newTestClient(t)
			cfg := testConfig(srv, p)
			cfg.ToolMode = ToolModeAuto
			res, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Tools: []Tool{addTool}})
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || !wires[p].tools(reqs[0].JSON()) || wires[p].tools(reqs[1].JSON()) {
				t.Fatalf("%d requests", len(reqs))
			}
			if !res.TextProtocol || len(res.ToolCalls) != 1 || !c.TextProtocol(cfg) {
				t.Errorf("result %+v, remembered %v", res, c.TextProtocol(cfg))
			}
			if _, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Tools: []Tool{addTool}}); err != nil {
				t.Fatal(err)
			}
			if reqs := srv.Requests(); len(reqs) != 3 || wires[p].tools(reqs[2].JSON()) {
				t.Errorf("the remembered model was asked with native tools again (%d requests)", len(reqs))
			}
			other := *cfg
			other.Model = "other-model"
			if c.TextProtocol(&other) {
				t.Error("another model was switched to text too")
			}
		})
		t.Run(string(p)+"/an unrelated 400 does not switch", func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(fakemodel.Turn{Status: 400, ErrorBody: `{"error":{"type":"invalid_request_error","message":"context length exceeded"}}`})
			c, _ := newTestClient(t)
			cfg := testConfig(srv, p)
			cfg.ToolMode = ToolModeAuto
			_, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Tools: []Tool{addTool}})
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindRequest || len(srv.Requests()) != 1 || c.TextProtocol(cfg) {
				t.Fatalf("err %v, %d requests, switched %v", err, len(srv.Requests()), c.TextProtocol(cfg))
			}
		})
		t.Run(string(p)+"/a call written as text is read", func(t *testing.T) {
			leaky := fakemodel.Turn{Text: `<tool_call>{"name":"add","arguments":{"a":4,"b":5}}</tool_call>`}
			for _, mode := range []ToolMode{ToolModeAuto, ToolModeNative} {
				srv := fakemodel.StartTB(t)
				srv.Push(leaky)
				c, _ := newTestClient(t)
				cfg := testConfig(srv, p)
				cfg.ToolMode = mode
				res, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Tools: []Tool{addTool}})
				if err != nil {
					t.Fatal(err)
				}
				if !wires[p].tools(srv.Requests()[0].JSON()) {
					t.Errorf("%s: native tools not sent", mode)
				}
				read := len(res.ToolCalls) == 1 && res.Text == ""
				if read != (mode == ToolModeAuto) {
					t.Errorf("%s: calls %v text %q", mode, res.ToolCalls, res.Text)
				}
			}
		})
	}
	t.Run("tools capability off goes straight to text", func(t *testing.T) {
		srv := fakemodel.StartTB(t)
		srv.Handle(textModel)
		c, _ := newTestClient(t)
		cfg := testConfig(srv, provider.ProtocolAnthropic)
		cfg.ToolMode = ToolModeAuto
		cfg.Capabilities.Tools = false
		res, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Tools: []Tool{addTool}})
		if err != nil || len(srv.Requests()) != 1 || len(res.ToolCalls) != 1 {
			t.Fatalf("res %+v err %v requests %d", res, err, len(srv.Requests()))
		}
	})
}

func TestInvalidToolCalls(t *testing.T) {
	t.Run("unreadable text call", func(t *testing.T) {
		srv := fakemodel.StartTB(t)
		srv.Push(fakemodel.Turn{Text: "Adding.\n<tool_call>{\"name\":\"add\", \"arguments\": {\"a\": 1,, }}} oops</tool_call>"})
		c, _ := newTestClient(t)
		cfg := testConfig(srv, provider.ProtocolAnthropic)
		cfg.ToolMode = ToolModeText
		res, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Tools: []Tool{addTool}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ToolCalls) != 0 || len(res.InvalidToolCalls) != 1 || res.Text != "Adding." {
			t.Fatalf("result %+v", res)
		}
		bad := res.InvalidToolCalls[0]
		if bad.Name != "add" || !strings.Contains(bad.Feedback, "<tool_call>") || !strings.Contains(bad.Arguments, "oops") {
			t.Errorf("invalid call %+v", bad)
		}
		if tc := res.Message.GetParts()[1].GetToolCall(); tc.GetId() != bad.ID || tc.GetName() != "add" {
			t.Errorf("history holds %v for the invalid call %s", tc, bad.ID)
		}
	})
	t.Run("native arguments that are not an object", func(t *testing.T) {
		srv := fakemodel.StartTB(t)
		srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "add", Arguments: `{"a":1`}, {ID: "c2", Name: "add", Arguments: `{"a":1,"b":2}`}}})
		c, _ := newTestClient(t)
		res, err := c.Chat(context.Background(), Request{Config: testConfig(srv, provider.ProtocolAnthropic), Messages: hello(), Tools: []Tool{addTool}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ToolCalls) != 1 || res.ToolCalls[0].GetId() != "c2" || len(res.InvalidToolCalls) != 1 || res.InvalidToolCalls[0].ID != "c1" {
			t.Fatalf("calls %v invalid %+v", res.ToolCalls, res.InvalidToolCalls)
		}
		if n := len(res.Message.GetParts()); n != 2 {
			t.Errorf("history holds %d parts, want both calls", n)
		}
	})
}
