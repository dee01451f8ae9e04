package truncate

import (
	"strings"
	"testing"
	"unicode/utf8"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestText(t *testing.T) {
	for _, tt := range []struct {
		name      string
		in        string
		limit     int
		cut       bool
		head, end string
	}{
		{name: "fits", in: "hello", limit: 5},
		{name: "no limit", in: strings.Repeat("x", 100), limit: 0},
		{name: "bytes over, runes fit", in: strings.Repeat("é", 10), limit: 10},
		{name: "cut", in: strings.Repeat("a", 50) + strings.Repeat("b", 50), limit: 10, cut: true, head: "aaaaa", end: "bbbbb"},
		{name: "cut runes", in: strings.Repeat("é", 50) + strings.Repeat("ü", 50), limit: 10, cut: true, head: "ééééé", end: "üüüüü"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Text(tt.in, tt.limit)
			if !tt.cut {
				if got != tt.in {
					t.Fatalf("Text changed a string that fits: %q", got)
				}
				return
			}
			if !utf8.ValidString(got) || !strings.HasPrefix(got, tt.head) || !strings.HasSuffix(got, tt.end) {
				t.Fatalf("Text = %q, want head %q and tail %q", got, tt.head, tt.end)
			}
			if !strings.Contains(got, "90 of 100 characters cut from the middle") {
				t.Fatalf("Text's notice: %q", got)
			}
			notice := got[len(tt.head) : len(got)-len(tt.end)]
			if strings.ContainsAny(notice[:2]+notice[len(notice)-2:], "abéü") {
				t.Fatalf("Text kept more than the limit: %q", got)
			}
		})
	}
}

func TestOutput(t *testing.T) {
	long := strings.Repeat("a", 60) + strings.Repeat("z", 60)
	json := &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Json{Json: `"` + long + `"`}}
	if got := Output(json, 20); got.GetText() == "" || !strings.HasPrefix(got.GetText(), `"aaaa`) {
		t.Fatalf("a cut JSON output is not text: %v", got)
	}
	content := &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Content{Content: &agentv1.ContentParts{Parts: []*agentv1.Part{
		{Kind: &agentv1.Part_Text{Text: long}},
		{Kind: &agentv1.Part_File{File: &agentv1.FilePart{MediaType: "image/png", Source: &agentv1.FilePart_Data{Data: make([]byte, 5000)}}}},
		{Kind: &agentv1.Part_Text{Text: long}},
	}}}}
	got := Output(content, 40)
	parts := got.GetContent().GetParts()
	if len(parts) != 3 || len(parts[1].GetFile().GetData()) != 5000 {
		t.Fatalf("a file part was cut: %v", got)
	}
	for _, i := range []int{0, 2} {
		if !strings.Contains(parts[i].GetText(), "100 of 120 characters cut") {
			t.Errorf("part %d does not share the limit: %q", i, parts[i].GetText())
		}
	}
	if content.GetContent().GetParts()[0].GetText() != long {
		t.Fatal("Output changed its input")
	}
	small := textOutput("ok")
	if Output(small, 10) != small || Output(nil, 10) != nil {
		t.Fatal("an output that fits was copied")
	}
}

func TestMiddle(t *testing.T) {
	for _, tt := range []struct {
		in   string
		keep int
		want string
	}{
		{in: "abcdef", keep: 6, want: "abcdef"},
		{in: "abcdefgh", keep: 4, want: "ab…gh"},
		{in: "ééééé", keep: 4, want: "é…é"}, // never inside a rune
	} {
		if got := Middle(tt.in, tt.keep, "…"); got != tt.want {
			t.Errorf("Middle(%q, %d) = %q, want %q", tt.in, tt.keep, got, tt.want)
		}
	}
}

func TestBytes(t *testing.T) {
	text := strings.Repeat("é", 5000) // 10,000 bytes
	out := Bytes(textOutput(text), 1000)
	if s := out.GetText(); len(s) > 1000 || !strings.HasPrefix(s, "éé") || !strings.HasSuffix(s, "éé") || !strings.Contains(s, "bytes cut from the middle") {
		t.Fatalf("text: %d bytes %q", len(s), s)
	}
	if out := Bytes(&agentv1.ToolOutput{Value: &agentv1.ToolOutput_Json{Json: `"` + strings.Repeat("a", 5000) + `"`}}, 1000); out.GetText() == "" {
		t.Fatal("cut JSON is not text")
	}
	small := textOutput("ok")
	if Bytes(small, 1000) != small {
		t.Fatal("an output that fits was copied")
	}
	content := &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Content{Content: &agentv1.ContentParts{Parts: []*agentv1.Part{
		{Kind: &agentv1.Part_Text{Text: strings.Repeat("t", 3000)}},
		{Kind: &agentv1.Part_File{File: &agentv1.FilePart{MediaType: "image/png", Source: &agentv1.FilePart_Data{Data: make([]byte, 5000)}}}},
	}}}}
	capped := Bytes(content, 2000)
	if n := len(capped.GetContent().GetParts()); n != 2 || capped.GetContent().GetParts()[1].GetFile() != nil {
		t.Fatalf("content: %v", capped)
	}
	if len(content.GetContent().GetParts()[1].GetFile().GetData()) != 5000 {
		t.Fatal("the original output was changed")
	}
}
