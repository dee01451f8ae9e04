package compact_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/compact"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// setup returns a client that never sleeps between retries, a fake model
// server and the agent's config pointing at it.
func setup(t *testing.T, change func(*agentv1.AgentConfig)) (*llm.Client, *fakemodel.Server, *llm.Config) {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c := llm.NewClient(llm.Options{
		HTTPClient: &http.Client{Transport: tr},
		Sleep:      func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	srv := fakemodel.StartTB(t)
	schema, _ := structpb.NewStruct(map[string]any{"type": "object", "properties": map[string]any{"total": map[string]any{"type": "number"}}})
	pc := &agentv1.AgentConfig{
		BaseUrl: proto.String(srv.URL), ApiKey: proto.String("sk-main"), Model: proto.String("main-model"),
		System: proto.String("You rename files."),
		Output: &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_OBJECT, Schema: schema},
	}
	if change != nil {
		change(pc)
	}
	cfg, err := llm.ResolveConfig(pc)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv, cfg
}

var conversation = []*agentv1.Message{
	history.User("Rename every file under src/ to snake_case."),
	history.Assistant(history.Text("Listing."), history.ToolCall("c1", "ls", `{"dir":"src"}`)),
	history.ToolText("c1", "ls", "FooBar.go\nBazQux.go"),
}

func TestRun(t *testing.T) {
	c, srv, cfg := setup(t, func(pc *agentv1.AgentConfig) {
		pc.Compact = &agentv1.CompactConfig{Model: proto.String("cheap"), ApiKey: proto.String("sk-cheap")}
	})
	srv.Push(fakemodel.Turn{TextChunks: []string{"  Goal: rename ", "src/ files.\n"}, Usage: &fakemodel.Usage{Input: 300, Output: 20, CacheRead: 100}})
	var deltas []string
	res, err := compact.Run(context.Background(), c, compact.Request{
		Config: cfg, System: "You rename files.", Messages: conversation,
		OnDelta: func(s string) { deltas = append(deltas, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary != "Goal: rename src/ files." || strings.Join(deltas, "") != "  Goal: rename src/ files.\n" {
		t.Fatalf("summary %q, deltas %q", res.Summary, deltas)
	}
	if res.Usage.GetInputTokens() != 300 || res.Usage.GetCacheReadTokens() != 100 {
		t.Fatalf("usage %v", res.Usage)
	}

	req := srv.Requests()[0]
	j := req.JSON()
	if j["model"] != "cheap" || req.Header.Get("Authorization") != "Bearer sk-cheap" {
		t.Fatalf("model %v, auth %q", j["model"], req.Header.Get("Authorization"))
	}
	if j["tools"] != nil || j["response_format"] != nil {
		t.Fatalf("the compaction request carries tools or an output format: %v", j)
	}
	msgs := j["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["content"] != compact.Instructions {
		t.Fatalf("messages %v", msgs)
	}
	want := "<system_prompt>\nYou rename files.\n</system_prompt>\n\n<conversation>\n" +
		"user: Rename every file under src/ to snake_case.\n" +
		"assistant: Listing. [call ls {\"dir\":\"src\"}]\n" +
		"tool: [ls result] FooBar.go\nBazQux.go\n</conversation>\n\n" + compact.Ask
	if got := msgs[1].(map[string]any)["content"]; got != want {
		t.Fatalf("transcript:\n%s\nwant:\n%s", got, want)
	}
	for _, keep := range []string{"original goal", "confirmed by tools", "What is done", "What is left"} {
		if !strings.Contains(compact.Instructions, keep) {
			t.Errorf("the instructions do not ask to keep %q", keep)
		}
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name  string
		turns []fakemodel.Turn
		kind  llm.Kind
		code  string
		tries int
	}{
		{"empty summary", []fakemodel.Turn{{Text: " \n"}}, llm.KindUnknown, "empty_summary", 0},
		{"auth", []fakemodel.Turn{{Status: 401}}, llm.KindAuth, "", 0},
		{"retried, then fine", []fakemodel.Turn{{Status: 503}, {Text: "ok"}}, "", "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, srv, cfg := setup(t, nil)
			srv.Push(tc.turns...)
			var retries []llm.Retry
			res, err := compact.Run(context.Background(), c, compact.Request{
				Config: cfg, Messages: conversation, OnRetry: func(r llm.Retry) { retries = append(retries, r) },
			})
			if len(retries) != tc.tries {
				t.Errorf("%d retries, want %d", len(retries), tc.tries)
			}
			if tc.kind == "" {
				if err != nil || res.Summary != "ok" {
					t.Fatalf("%v, %v", res, err)
				}
				return
			}
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind != tc.kind || tc.code != "" && le.Code != tc.code {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestRunNeedsConfig(t *testing.T) {
	c, _, _ := setup(t, nil)
	var ce *llm.ConfigError
	if _, err := compact.Run(context.Background(), c, compact.Request{}); !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
}
