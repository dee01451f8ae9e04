package history

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

var update = flag.Bool("update", false, "rewrite golden files")

func kinds(m *agentv1.Message) []string {
	var out []string
	for _, p := range m.GetParts() {
		out = append(out, PartKind(p))
	}
	return out
}

func TestConstructors(t *testing.T) {
	out, err := JSONOutput(map[string]int{"port": 8080})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		msg     *agentv1.Message
		role    agentv1.Role
		kinds   []string
		compact bool
	}{
		{"user text", User("hi"), agentv1.Role_ROLE_USER, []string{"text"}, false},
		{"user parts", UserParts(Text("what is this"), Image(URL("https://x/a.png")), Audio(Bytes("audio/wav", []byte{1})),
			Video(URL("https://x/v.mp4")), File(Bytes("application/pdf", []byte("%PDF")))),
			agentv1.Role_ROLE_USER, []string{"text", "image", "audio", "video", "file"}, false},
		{"assistant", Assistant(Reasoning("let me read"), Text("reading"), ToolCall("c1", "read", `{"path":"a.json"}`)),
			agentv1.Role_ROLE_ASSISTANT, []string{"reasoning", "text", "tool_call"}, false},
		{"assistant text", AssistantText("done"), agentv1.Role_ROLE_ASSISTANT, []string{"text"}, false},
		{"tool text", ToolText("c1", "read", "ok"), agentv1.Role_ROLE_TOOL, []string{"tool_result"}, false},
		{"tool json", Tool(ToolResult("c1", "read", out, false)), agentv1.Role_ROLE_TOOL, []string{"tool_result"}, false},
		{"tool content", Tool(ToolResult("c1", "shot", ContentOutput(Text("screen:"), File(Bytes("image/png", []byte{1}))), false)),
			agentv1.Role_ROLE_TOOL, []string{"tool_result"}, false},
		{"compact", Compact("so far"), agentv1.Role_ROLE_ASSISTANT, []string{"text"}, true},
		{"system", System("user switched to mobile"), agentv1.Role_ROLE_SYSTEM, []string{"text"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.msg.GetRole() != tt.role {
				t.Errorf("role = %v, want %v", tt.msg.GetRole(), tt.role)
			}
			if got := kinds(tt.msg); !slices.Equal(got, tt.kinds) {
				t.Errorf("parts = %v, want %v", got, tt.kinds)
			}
			if tt.msg.GetCompact() != tt.compact || IsSummary(tt.msg) != tt.compact {
				t.Errorf("compact = %v, want %v", tt.msg.GetCompact(), tt.compact)
			}
			h := []*agentv1.Message{tt.msg}
			if tt.msg.GetRole() == agentv1.Role_ROLE_TOOL {
				h = []*agentv1.Message{Assistant(ToolCall("c1", tt.msg.GetParts()[0].GetToolResult().GetToolName(), "")), tt.msg}
			}
			if err := Validate(h); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
	if got := ToolError("c1", "read", "boom").GetParts()[0].GetToolResult(); !got.GetError() || got.GetOutput().GetText() != "boom" {
		t.Errorf("ToolError = %v", got)
	}
	if got := out.GetJson(); got != `{"port":8080}` {
		t.Errorf("JSONOutput = %s", got)
	}
	if SummaryText(Compact("a")) != "a" {
		t.Error("SummaryText")
	}
}

func TestJSONOutput(t *testing.T) {
	tests := []struct {
		in      any
		want    string
		wantErr bool
	}{
		{json.RawMessage(`{"a":1}`), `{"a":1}`, false},
		{[]byte(`[1,2]`), `[1,2]`, false},
		{json.RawMessage(`{oops`), "", true},
		{"text", `"text"`, false},
		{make(chan int), "", true},
	}
	for _, tt := range tests {
		out, err := JSONOutput(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("JSONOutput(%v) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && out.GetJson() != tt.want {
			t.Errorf("JSONOutput(%v) = %s, want %s", tt.in, out.GetJson(), tt.want)
		}
	}
}

func TestParseDataURL(t *testing.T) {
	tests := []struct {
		in      string
		mt      string
		data    string
		wantErr bool
	}{
		{"data:image/png;base64,aGVsbG8=", "image/png", "hello", false},
		{"data:image/png;base64,aGVsbG8", "image/png", "hello", false},
		{"DATA:Image/PNG;base64,aGVsbG8=", "image/png", "hello", false},
		{"data:text/plain;charset=utf-8,hi%20there", "text/plain", "hi there", false},
		{"data:,plain", "", "plain", false},
		{"data:image/png;base64,@@@", "", "", true},
		{"data:image/png;base64", "", "", true},
		{"https://example.com/a.png", "", "", true},
	}
	for _, tt := range tests {
		d, err := ParseDataURL(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseDataURL(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && (d.MediaType != tt.mt || string(d.Data) != tt.data) {
			t.Errorf("ParseDataURL(%q) = %q %q, want %q %q", tt.in, d.MediaType, d.Data, tt.mt, tt.data)
		}
	}
	if got := URL("data:image/jpeg;base64,/9j/").GetMediaType(); got != "image/jpeg" {
		t.Errorf("URL(data URL) media type = %q", got)
	}
}

func TestTurns(t *testing.T) {
	call := func(ids ...string) *agentv1.Message {
		var parts []*agentv1.Part
		for _, id := range ids {
			parts = append(parts, ToolCall(id, "read", "{}"))
		}
		return Assistant(parts...)
	}
	res := func(ids ...string) *agentv1.Message {
		var parts []*agentv1.Part
		for _, id := range ids {
			parts = append(parts, ToolResult(id, "read", TextOutput("ok"), false))
		}
		return Tool(parts...)
	}
	tests := []struct {
		name string
		h    []*agentv1.Message
		want []Turn
	}{
		{"empty", nil, []Turn{}},
		{"agent-core example", []*agentv1.Message{User("a"), call("1"), res("1"), User("b")},
			[]Turn{{Indexes: []int{0}}, {Indexes: []int{1, 2}}, {Indexes: []int{3}}}},
		{"result before its call", []*agentv1.Message{User("a"), res("1"), call("1"), User("b")},
			[]Turn{{Indexes: []int{0}}, {Indexes: []int{2, 1}}, {Indexes: []int{3}}}},
		{"results split and out of order", []*agentv1.Message{call("1", "2"), res("2"), User("x"), res("1")},
			[]Turn{{Indexes: []int{0, 1, 3}}, {Indexes: []int{2}}}},
		{"call without result", []*agentv1.Message{User("a"), call("1", "2"), res("2")},
			[]Turn{{Indexes: []int{0}}, {Indexes: []int{1, 2}, Missing: []string{"1"}}}},
		{"orphan result", []*agentv1.Message{User("a"), res("9"), AssistantText("b")},
			[]Turn{{Indexes: []int{0}}, {Indexes: []int{1}, Orphan: true}, {Indexes: []int{2}}}},
		{"summary and notice stand alone", []*agentv1.Message{User("a"), Compact("s"), System("n"), AssistantText("b")},
			[]Turn{{Indexes: []int{0}}, {Indexes: []int{1}}, {Indexes: []int{2}}, {Indexes: []int{3}}}},
		{"tool message joins the call of its first result", []*agentv1.Message{call("1"), call("2"), res("2", "1")},
			[]Turn{{Indexes: []int{0}, Missing: []string{"1"}}, {Indexes: []int{1, 2}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Turns(tt.h)
			if len(got) != len(tt.want) {
				t.Fatalf("Turns = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if !slices.Equal(g.Indexes, w.Indexes) || g.Orphan != w.Orphan || !slices.Equal(g.Missing, w.Missing) {
					t.Errorf("turn %d = %+v, want %+v", i, g, w)
				}
				if g.Complete() != (!w.Orphan && len(w.Missing) == 0) {
					t.Errorf("turn %d Complete = %v", i, g.Complete())
				}
			}
		})
	}
	h := []*agentv1.Message{User("a"), res("1"), call("1")}
	if got := Turns(h)[1].Messages(h); got[0] != h[2] || got[1] != h[1] {
		t.Errorf("Messages = %v", got)
	}
}

func renderHistory() []*agentv1.Message {
	shot, _ := JSONOutput(json.RawMessage(`{"port":8080}`))
	named := Bytes("application/pdf", []byte("%PDF"))
	named.Filename = "a.pdf"
	return []*agentv1.Message{
		User("帮我读一下配置"),
		Assistant(Reasoning("我来读"), ToolCall("c1", "read", `{"path":"a.json"}`)),
		Tool(ToolResult("c1", "read", shot, false)),
		UserParts(Text("这张图呢"), Image(URL("data:image/png;base64,iVBORw0KGgo="))),
		Assistant(ToolCall("c2", "shot", ""), ToolCall("c3", "rm", `{"path":"/"}`)),
		Tool(ToolResult("c2", "shot", ContentOutput(Text("屏幕:"), File(Bytes("image/png", []byte{1}))), false)),
		ToolError("c3", "rm", "denied"),
		UserParts(File(named), Audio(URL("https://x/a.mp3")), Video(URL("https://x/v.mp4"))),
		Compact("用户要读配置；端口 8080。"),
		System("用户切到了手机"),
		AssistantText("好的"),
	}
}

func TestRender(t *testing.T) {
	for _, tt := range []struct {
		golden string
		render func([]*agentv1.Message) string
	}{
		{"render.zh.golden", func(h []*agentv1.Message) string { return RenderWith(h, Chinese()) }},
		{"render.en.golden", Render},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			got := tt.render(renderHistory()) + "\n"
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("Render:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	// agent-core's README example of History.render, line for line (docs/api.md,
	// "History as text", shows it too).
	shot, _ := JSONOutput(json.RawMessage(`{"port":8080}`))
	ref := []*agentv1.Message{
		User("帮我读一下配置"),
		Assistant(Reasoning("我来读"), ToolCall("c1", "read", `{"path":"a.json"}`)),
		Tool(ToolResult("c1", "read", shot, false)),
		UserParts(Text("这张图呢"), Image(URL("https://x/a.png"))),
	}
	want := strings.Join([]string{
		`user: 帮我读一下配置`,
		`assistant: [思考] 我来读 [调用 read {"path":"a.json"}]`,
		`tool: [read 返回] {"port":8080}`,
		`user: 这张图呢 [图片]`,
	}, "\n")
	if got := RenderWith(ref, Chinese()); got != want {
		t.Errorf("Render(agent-core example) =\n%s\nwant\n%s", got, want)
	}
}
