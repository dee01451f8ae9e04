package responses

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"
	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const dir = "openai/responses/"

func newTestModel(t testing.TB, url string) *Model {
	t.Helper()
	m, err := New(provider.Config{BaseURL: url, APIKey: "sk-test", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newCustomModel is newTestModel offering custom (freeform) tools of these
// names, the way a user does: a tools list in provider.Body.
func newCustomModel(t testing.TB, url string, names ...string) *Model {
	t.Helper()
	var tools []any
	for _, n := range names {
		tools = append(tools, map[string]any{"type": "custom", "name": n, "description": "takes free text"})
	}
	m, err := New(provider.Config{BaseURL: url, APIKey: "sk-test", Model: "gpt-test", Body: map[string]any{"tools": tools}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var hello = []*schema.Message{schema.UserMessage("hello")}

// recorded is what a recorded stream says, read from its events directly
// (not through the adapter): the whole texts of the ".done" events, the
// calls of the finished items and the terminal response.
type recorded struct {
	events    []fakemodel.Event
	text      []string
	reasoning []string
	calls     []adaptertest.Call
	response  response
}

// readRecording splits a *.chunks.txt into its responses (a recording may
// hold several, each starting with response.created).
func readRecording(t *testing.T, name string) []*recorded {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(adaptertest.Fixtures, dir+name))
	if err != nil {
		t.Fatal(err)
	}
	events, err := fakemodel.ChunkEvents(data, true)
	if err != nil {
		t.Fatal(err)
	}
	var out []*recorded
	for _, e := range events {
		if e.Name == "response.created" || len(out) == 0 {
			out = append(out, &recorded{})
		}
		r := out[len(out)-1]
		r.events = append(r.events, e)
		var p struct {
			Text     string          `json:"text"`
			Item     json.RawMessage `json:"item"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal([]byte(e.Data), &p); err != nil {
			t.Fatal(err)
		}
		switch e.Name {
		case "response.output_text.done":
			r.text = append(r.text, p.Text)
		case "response.reasoning_summary_text.done":
			r.reasoning = append(r.reasoning, p.Text)
		case "response.output_item.done":
			var it struct{ Type, CallID, Name, Arguments, Input string }
			_ = json.Unmarshal(p.Item, &it)
			var item map[string]any
			_ = json.Unmarshal(p.Item, &item)
			switch item["type"] {
			case "function_call":
				var args any
				_ = json.Unmarshal([]byte(item["arguments"].(string)), &args)
				r.calls = append(r.calls, adaptertest.Call{ID: item["call_id"].(string), Name: item["name"].(string), Args: args})
			case "custom_tool_call":
				r.calls = append(r.calls, adaptertest.Call{ID: item["call_id"].(string), Name: item["name"].(string), Args: item["input"]})
			}
		case "response.completed", "response.incomplete", "response.failed":
			if err := json.Unmarshal(p.Response, &r.response); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

func (r *recorded) want() adaptertest.Want {
	u := r.response.Usage
	w := adaptertest.Want{
		Text: strings.Join(r.text, "\n\n"), Reasoning: strings.Join(r.reasoning, "\n\n"), Calls: r.calls,
		Finish: "stop", Raw: "completed",
		Input: u.InputTokens, Output: u.OutputTokens, Total: u.TotalTokens,
		CacheRead: u.InputTokensDetails.CachedTokens, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens,
	}
	if len(r.calls) > 0 {
		w.Finish = "tool_calls"
	}
	return w
}

// reasoningItems reads the reasoning provider data of a message.
func reasoningItemsOf(t *testing.T, msg *schema.Message) []reasoningItem {
	t.Helper()
	data := provider.StringMap(msg.Extra[provider.ExtraReasoningData])
	if data == nil {
		return nil
	}
	var items []reasoningItem
	if err := json.Unmarshal([]byte(data[ReasoningKey]), &items); err != nil {
		t.Fatalf("reasoning data %v: %v", data, err)
	}
	return items
}

func TestStreamFixtures(t *testing.T) {
	for _, name := range []string{"openai-phase.1.chunks.txt", "openai-custom-tool.1.chunks.txt", "openai-reasoning-encrypted-content.1.chunks.txt"} {
		for i, rec := range readRecording(t, name) {
			t.Run(name+"/"+string(rune('1'+i)), func(t *testing.T) {
				srv := fakemodel.StartTB(t)
				srv.Push(fakemodel.Turn{Events: rec.events})
				msg := adaptertest.Stream(t, newCustomModel(t, srv.URL, "write_sql"), hello)
				adaptertest.Check(t, msg, rec.want())
				checkReasoningData(t, msg, reasoningData(rec.response.Output))
				checkCustom(t, msg)
			})
		}
	}
}

func checkReasoningData(t *testing.T, msg *schema.Message, want []reasoningItem) {
	t.Helper()
	got := reasoningItemsOf(t, msg)
	if len(got) != len(want) {
		t.Fatalf("reasoning items %+v, want %+v", got, want)
	}
	for i := range got {
		if got[i] != want[i] || got[i].EncryptedContent == "" {
			t.Errorf("reasoning item %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// checkCustom checks that custom tool calls, and only they, are marked.
func checkCustom(t *testing.T, msg *schema.Message) {
	t.Helper()
	for _, tc := range msg.ToolCalls {
		custom := provider.StringMap(tc.Extra[provider.ExtraToolCallData])[CallTypeKey] == "custom"
		if custom != (tc.Function.Name == "write_sql") {
			t.Errorf("call %s custom mark = %v", tc.Function.Name, custom)
		}
	}
}

func TestWholeFixtures(t *testing.T) {
	tests := []struct {
		name      string
		want      adaptertest.Want
		reasoning []reasoningItem
	}{
		{
			name: "openai-custom-tool.1.json",
			want: adaptertest.Want{Finish: "tool_calls", Raw: "completed", Input: 50, Output: 20,
				Calls: []adaptertest.Call{{ID: "call_custom_sql_001", Name: "write_sql", Args: "SELECT * FROM users WHERE age > 25"}}},
		},
		{
			name: "openai-phase.1.json",
			want: adaptertest.Want{
				Text: "I\u2019ll quickly check reliable, up-to-date sources (major tech/news outlets and company blogs) to pull the most recent AI headlines for today, then summarize them for you with links." +
					"\n\n" + "Here are some **latest AI updates for today (Wednesday, February 25, 2026)**",
				Finish: "stop", Raw: "completed", Input: 7243, Output: 423, CacheRead: 3072, ReasoningTokens: 58},
		},
		{
			name: "openai-reasoning-encrypted-content.1.json",
			want: adaptertest.Want{Text: "12 + 7 = 19\n19 × 3 = 57\n57 × 10 = 570\n\nFinal result: 570",
				Reasoning: "**Reporting final result**\n\nThe tool returned 570",
				Finish:    "stop", Raw: "completed", Input: 865, Output: 163, ReasoningTokens: 128},
			reasoning: []reasoningItem{{ID: "rs_0f35ed53160b395301693cc95817ac8190b978637daea4987e", EncryptedContent: "gAAAAABpPMlcH0HHEv5_"}},
		},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} { // true: a gateway answering a stream request with JSON
			t.Run(tt.name, func(t *testing.T) {
				srv := fakemodel.StartTB(t)
				turn, _ := adaptertest.FixtureTurn(t, dir+tt.name, false)
				srv.Push(turn)
				msg := adaptertest.Run(t, newCustomModel(t, srv.URL, "write_sql"), stream, hello)
				// Long recorded texts are checked by their start.
				want := tt.want
				if strings.HasPrefix(msg.Content, want.Text) {
					want.Text = msg.Content
				}
				if strings.HasPrefix(msg.ReasoningContent, want.Reasoning) {
					want.Reasoning = msg.ReasoningContent
				}
				adaptertest.Check(t, msg, want)
				got := reasoningItemsOf(t, msg)
				if len(got) != len(tt.reasoning) {
					t.Fatalf("reasoning items %+v", got)
				}
				for i := range got {
					if got[i].ID != tt.reasoning[i].ID || !strings.HasPrefix(got[i].EncryptedContent, tt.reasoning[i].EncryptedContent) {
						t.Errorf("reasoning item %+v", got[i])
					}
				}
				checkCustom(t, msg)
			})
		}
	}
}

func TestFixtureErrors(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(adaptertest.Fixtures, dir+name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	streamErr := readRecording(t, "openai-error.1.chunks.txt")[0]
	tests := []struct {
		name   string
		turn   fakemodel.Turn
		stream bool
		kind   provider.Kind
		status int
		code   string
	}{
		{"in-stream error and response.failed", fakemodel.Turn{Events: streamErr.events}, true, provider.KindLimit, 0, "insufficient_quota"},
		{"429 insufficient quota", fakemodel.Turn{Status: 429, ErrorBody: read("openai-error.1.json")}, false, provider.KindLimit, 429, "insufficient_quota"},
		{"400 unsupported temperature", fakemodel.Turn{Status: 400, ErrorBody: read("reasoning-model-temperature-error.json")}, true, provider.KindRequest, 400, "invalid_request_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(tt.turn)
			err := adaptertest.RunErr(context.Background(), newTestModel(t, srv.URL), tt.stream, hello)
			pe := adaptertest.ErrorKind(t, err, tt.kind)
			if pe.Retryable || pe.Status != tt.status || pe.Code != tt.code || pe.Message == "" {
				t.Errorf("error %+v", pe)
			}
		})
	}
}
