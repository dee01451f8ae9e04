package openai

import (
	"strings"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

func TestText(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{`"plain"`, "plain", false},
		{`"esc\n\"q\" \u00e9"`, "esc\n\"q\" é", false},
		{`null`, "", false},
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "ab", false},
		{`{"x":1}`, "", true},
		{`12`, "", true},
	}
	for _, tt := range tests {
		var v struct {
			C Text `json:"c"`
		}
		err := Unmarshal([]byte(`{"c":`+tt.in+`}`), &v)
		if (err != nil) != tt.wantErr || string(v.C) != tt.want {
			t.Errorf("%s: %q, %v; want %q, error %v", tt.in, v.C, err, tt.want, tt.wantErr)
		}
	}
}

// TestUnmarshalCopiesStrings guards the reason for sonic's standard config:
// decoded strings must not alias the buffer, which the SSE reader reuses.
func TestUnmarshalCopiesStrings(t *testing.T) {
	buf := []byte(`{"c":"hello"}`)
	var v struct {
		C string `json:"c"`
	}
	if err := Unmarshal(buf, &v); err != nil {
		t.Fatal(err)
	}
	copy(buf, strings.Repeat("x", len(buf)))
	if v.C != "hello" {
		t.Fatalf("decoded string changed with its buffer: %q", v.C)
	}
}

func TestErrorObject(t *testing.T) {
	tests := []struct {
		obj  ErrorObject
		kind provider.Kind
		code string
	}{
		{ErrorObject{Type: "invalid_request_error", Code: []byte(`"context_length_exceeded"`), Message: "too long"}, provider.KindRequest, "context_length_exceeded"},
		{ErrorObject{Type: "server_error", Code: []byte(`null`)}, provider.KindServer, "server_error"},
		{ErrorObject{Type: "rate_limit_exceeded"}, provider.KindLimit, "rate_limit_exceeded"},
	}
	for _, tt := range tests {
		e := tt.obj.Err()
		if e.Kind != tt.kind || e.Code != tt.code {
			t.Errorf("%+v: %+v", tt.obj, e)
		}
	}
}

func TestSmallHelpers(t *testing.T) {
	if got := FormatName("answer card/v2"); got != "answer_card_v2" {
		t.Errorf("FormatName = %q", got)
	}
	if got := FormatName(""); got != "response" {
		t.Errorf("FormatName(\"\") = %q", got)
	}
	if got := FormatName(strings.Repeat("a", 80)); len(got) != 64 {
		t.Errorf("FormatName length %d", len(got))
	}
	for mime, want := range map[string]string{"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/ogg": "ogg"} {
		if got := AudioFormat(mime); got != want {
			t.Errorf("AudioFormat(%s) = %q, want %q", mime, got, want)
		}
	}
	if got := DataURL(provider.Media{Data: "AAAA", MIMEType: "image/png"}); got != "data:image/png;base64,AAAA" {
		t.Errorf("DataURL = %q", got)
	}
	if got := DataURL(provider.Media{URL: "https://x/y.png"}); got != "https://x/y.png" {
		t.Errorf("DataURL = %q", got)
	}
	if a, b := NewCallID(), NewCallID(); a == b || !strings.HasPrefix(a, "call_") {
		t.Errorf("NewCallID = %q, %q", a, b)
	}
}
