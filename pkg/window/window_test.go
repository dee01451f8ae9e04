package window

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/tokens"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// The encoder takes a good part of a second to build: the tests share one.
var sharedEncoder = sync.OnceValues(func() (*tokens.Encoder, error) { return tokens.NewEncoder(tokens.O200kBase) })

func newCounter(t testing.TB) *tokens.Counter {
	t.Helper()
	enc, err := sharedEncoder()
	if err != nil {
		t.Fatal(err)
	}
	return tokens.NewCounter(enc)
}

func call(id string) *agentv1.Message {
	return history.Assistant(history.ToolCall(id, "read", `{"path":"a.json"}`))
}

func result(id string) *agentv1.Message { return history.ToolText(id, "read", "ok "+id) }

// render prints what a context sends, for compact assertions.
func render(c *Context) string { return history.RenderWith(c.Messages, history.English()) }

func build(t *testing.T, h []*agentv1.Message, o Options) *Context {
	t.Helper()
	c, err := Build(h, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBuildTurns(t *testing.T) {
	tests := []struct {
		name     string
		h        []*agentv1.Message
		o        Options
		want     []string
		repaired []string
	}{
		{"in order", []*agentv1.Message{history.User("a"), call("1"), result("1"), history.AssistantText("done")}, Options{},
			[]string{"user: a", `assistant: [call read {"path":"a.json"}]`, "tool: [read result] ok 1", "assistant: done"}, nil},
		{"restored with the result before its call", []*agentv1.Message{history.User("a"), result("1"), call("1"), history.User("b")}, Options{},
			[]string{"user: a", `assistant: [call read {"path":"a.json"}]`, "tool: [read result] ok 1", "user: b"}, nil},
		{"orphan result is not sent", []*agentv1.Message{history.User("a"), result("9"), history.AssistantText("b")}, Options{},
			[]string{"user: a", "assistant: b"}, nil},
		{"a stopped run's call gets a stand-in result", []*agentv1.Message{history.User("a"),
			history.Assistant(history.Text("reading both"), history.ToolCall("1", "read", "{}"), history.ToolCall("2", "ls", "")),
			result("1")}, Options{},
			[]string{"user: a", "assistant: reading both [call read {}] [call ls]", "tool: [read result] ok 1",
				"tool: [ls error] " + MissingResult}, []string{"2"}},
		{"duplicate and foreign results are left out", []*agentv1.Message{call("1"), result("1"), result("1"), call("2"),
			history.Tool(history.ToolResult("2", "read", history.TextOutput("two"), false), history.ToolResult("1", "read", history.TextOutput("again"), false))},
			Options{},
			[]string{`assistant: [call read {"path":"a.json"}]`, "tool: [read result] ok 1",
				`assistant: [call read {"path":"a.json"}]`, "tool: [read result] two"}, nil},
		{"reasoning is dropped by default", []*agentv1.Message{history.User("a"),
			history.Assistant(history.Reasoning("hmm"), history.Text("b")), history.Assistant(history.Reasoning("only thinking"))}, Options{},
			[]string{"user: a", "assistant: b"}, nil},
		{"reasoning is sent with capabilities.reasoning", []*agentv1.Message{history.User("a"),
			history.Assistant(history.Reasoning("hmm"), history.Text("b"))}, Options{Reasoning: true},
			[]string{"user: a", "assistant: [thinking] hmm b"}, nil},
		{"empty messages are not sent", []*agentv1.Message{history.User("a"), {Role: agentv1.Role_ROLE_ASSISTANT},
			{Role: agentv1.Role_ROLE_USER}}, Options{}, []string{"user: a"}, nil},
		{"system notices are sent", []*agentv1.Message{history.User("a"), history.System("user went offline")}, Options{},
			[]string{"user: a", "system: user went offline"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := build(t, tt.h, tt.o)
			if got := render(c); got != strings.Join(tt.want, "\n") {
				t.Errorf("sent:\n%s\nwant:\n%s", got, strings.Join(tt.want, "\n"))
			}
			if !slices.Equal(c.Repaired, tt.repaired) {
				t.Errorf("Repaired = %v, want %v", c.Repaired, tt.repaired)
			}
			if c.Summary != -1 || c.Compact || c.Tokens != (Tokens{}) {
				t.Errorf("Summary %d Compact %v Tokens %+v, want none", c.Summary, c.Compact, c.Tokens)
			}
		})
	}
}

func TestBuildLeavesHistoryAlone(t *testing.T) {
	h := []*agentv1.Message{history.User("a"), history.Assistant(history.Reasoning("r"), history.ToolCall("1", "x", "")), result("2")}
	before := history.Render(h)
	build(t, h, Options{})
	if history.Render(h) != before || len(h[1].GetParts()) != 2 {
		t.Errorf("history changed:\n%s", history.Render(h))
	}
}

func TestSystem(t *testing.T) {
	h := []*agentv1.Message{history.User("goal"), history.Compact("old summary"), history.User("b"),
		history.Compact("new summary"), history.User("c")}
	tests := []struct {
		name string
		h    []*agentv1.Message
		o    Options
		want string
	}{
		{"nothing", []*agentv1.Message{history.User("a")}, Options{}, ""},
		{"system only", []*agentv1.Message{history.User("a")}, Options{System: "be brief"}, "be brief"},
		{"skills", nil, Options{System: "be brief", Skills: "Available skills:\n- a: b"}, "be brief\n\nAvailable skills:\n- a: b"},
		{"latest summary, framed", h, Options{System: "be brief", Skills: "skills"},
			"be brief\n\nskills\n\n" + DefaultSummaryPreamble + "\n\n<summary>\nnew summary\n</summary>"},
		{"own preamble, no system", h, Options{SummaryPreamble: "Earlier:"}, "Earlier:\n\n<summary>\nnew summary\n</summary>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := build(t, tt.h, tt.o).System; got != tt.want {
				t.Errorf("System =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	c := build(t, h, Options{})
	if c.Summary != 3 {
		t.Errorf("Summary = %d, want 3", c.Summary)
	}
	// The older summary is never sent, even when the turns around it are kept.
	if got := render(c); got != "user: goal\nuser: b\nuser: c" {
		t.Errorf("sent:\n%s", got)
	}
}

// sized returns a user message of exactly n tokens in c's encoding.
func sized(t *testing.T, c *tokens.Counter, label string, n int) *agentv1.Message {
	t.Helper()
	text := label + strings.Repeat(" x", n)
	for c.Text(text)+tokens.MessageOverhead > n {
		text = text[:len(text)-2]
	}
	m := history.User(text)
	if got := c.Message(m, false); got != n {
		t.Fatalf("sized(%s, %d) = %d tokens", label, n, got)
	}
	return m
}

func TestRetentionByBudget(t *testing.T) {
	c := newCounter(t)
	// MaxTokens 1000: the first turns may take 200, the turns before the
	// summary 300.
	tests := []struct {
		name   string
		before []int // token sizes of the turns before the summary
		after  []int
		kept   string // labels of the turns sent
	}{
		{"head and tail by budget", []int{80, 80, 80, 100, 100, 100, 100, 100}, []int{50},
			"t0 t1 t5 t6 t7 a0"},
		{"a huge first message does not block the rest", []int{5000, 80, 100, 100, 100}, []int{50},
			"t2 t3 t4 a0"},
		{"turns after the summary are kept whatever their size", []int{100, 100}, []int{900, 900},
			"t0 t1 a0 a1"},
		{"head and tail never overlap", []int{100, 100, 100}, nil, "t0 t1 t2"},
		{"nothing before the summary", nil, []int{10}, "a0"},
		{"right after a compaction the latest turn is kept whatever its size", []int{5000, 80, 900}, nil,
			"t2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h []*agentv1.Message
			for i, n := range tt.before {
				h = append(h, sized(t, c, fmt.Sprintf("t%d", i), n))
			}
			h = append(h, history.Compact("summary"))
			for i, n := range tt.after {
				h = append(h, sized(t, c, fmt.Sprintf("a%d", i), n))
			}
			ctx := build(t, h, Options{Counter: c, MaxTokens: 1000})
			var got []string
			for _, m := range ctx.Messages {
				got = append(got, strings.Fields(m.GetParts()[0].GetText())[0])
			}
			if strings.Join(got, " ") != tt.kept {
				t.Errorf("kept %v, want %s", got, tt.kept)
			}
			if want := len(tt.before) + len(tt.after) - len(got); ctx.Dropped != want {
				t.Errorf("Dropped = %d, want %d", ctx.Dropped, want)
			}
		})
	}
}

func TestRetentionByCountWithoutBudget(t *testing.T) {
	var h []*agentv1.Message
	for i := range 10 {
		h = append(h, history.User(fmt.Sprintf("t%d", i)))
	}
	h = append(h, history.Compact("s"), history.User("a0"))
	c := build(t, h, Options{})
	if got := render(c); got != "user: t0\nuser: t1\nuser: t2\nuser: t7\nuser: t8\nuser: t9\nuser: a0" {
		t.Errorf("sent:\n%s", got)
	}
	if c.Dropped != 4 {
		t.Errorf("Dropped = %d, want 4", c.Dropped)
	}
}

func TestTokensAndCompact(t *testing.T) {
	c := newCounter(t)
	tools := []*pluginv1.ToolSpec{{Name: "read", Description: "Read a file.", InputSchemaJson: `{"type":"object"}`}}
	h := []*agentv1.Message{sized(t, c, "goal", 100), history.Assistant(history.Reasoning("thinking hard"), history.Text("ok")),
		sized(t, c, "more", 200)}
	ctx := build(t, h, Options{System: "be brief", Tools: tools, Counter: c, MaxTokens: 10_000})
	want := Tokens{System: c.System("be brief"), Tools: c.Tools(tools), Messages: 100 + c.Message(h[1], false) + 200}
	want.Total = want.System + want.Tools + want.Messages
	if ctx.Tokens != want {
		t.Errorf("Tokens = %+v, want %+v", ctx.Tokens, want)
	}
	if ctx.HistoryTokens != c.Messages(h, false) {
		t.Errorf("HistoryTokens = %d, want %d", ctx.HistoryTokens, c.Messages(h, false))
	}
	if r := build(t, h, Options{Counter: c, Reasoning: true}); r.Tokens.Messages != want.Messages+c.Text("thinking hard") {
		t.Errorf("with reasoning Messages = %d", r.Tokens.Messages)
	}
	total := want.Total

	summarised := append(slices.Clone(h), history.Compact("summary"))
	tests := []struct {
		name      string
		h         []*agentv1.Message
		max       int
		threshold float64
		compact   bool
	}{
		{"below the threshold", h, total * 2, 0, false},
		{"at the threshold", h, total * 5 / 4, 0, true},
		{"own threshold", h, total * 2, 0.5, true},
		{"over the budget", h, total / 2, 0, true},
		{"nothing after the latest summary", summarised, 10, 0, false},
		{"only an orphan after the latest summary", append(slices.Clone(summarised), result("zz")), 10, 0, false},
		{"new turns after the summary", append(slices.Clone(summarised), history.User("next")), 10, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := build(t, tt.h, Options{System: "be brief", Tools: tools, Counter: c, MaxTokens: tt.max, Threshold: tt.threshold})
			if ctx.Compact != tt.compact {
				t.Errorf("Compact = %v (total %d, max %d), want %v", ctx.Compact, ctx.Tokens.Total, tt.max, tt.compact)
			}
		})
	}
}

func TestStandInResultIsCounted(t *testing.T) {
	c := newCounter(t)
	h := []*agentv1.Message{history.User("a"), call("1")}
	ctx := build(t, h, Options{Counter: c})
	stand := ctx.Messages[2]
	if want := c.Messages(h, false) + c.Fresh(stand, false); ctx.Tokens.Messages != want {
		t.Errorf("Messages tokens = %d, want %d", ctx.Tokens.Messages, want)
	}
	if c.Cached() != 2 {
		t.Errorf("the stand-in was cached: %d counts", c.Cached())
	}
}

func TestBuildErrors(t *testing.T) {
	c := newCounter(t)
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"budget without counter", Options{MaxTokens: 100}, "needs a token counter"},
		{"negative budget", Options{MaxTokens: -1, Counter: c}, "negative"},
		{"threshold above 1", Options{MaxTokens: 100, Counter: c, Threshold: 1.5}, "threshold"},
		{"negative threshold", Options{MaxTokens: 100, Counter: c, Threshold: -0.1}, "threshold"},
	}
	for _, tt := range tests {
		if _, err := Build(nil, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}
