package openai

import (
	"strings"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

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
