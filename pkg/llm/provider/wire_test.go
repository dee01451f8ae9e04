package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/sse"
)

func TestParseDataURL(t *testing.T) {
	tests := []struct {
		in     string
		mime   string
		data   string
		wantOK bool
	}{
		{"data:image/png;base64,AAAA", "image/png", "AAAA", true},
		{"data:text/plain;charset=utf-8;base64,aGk=", "text/plain", "aGk=", true},
		{"data:;base64,AAAA", "", "AAAA", true},
		{"data:text/plain,hello", "", "", false},
		{"https://example.com/a.png", "", "", false},
		{"data:image/png;base64", "", "", false},
	}
	for _, tt := range tests {
		mime, data, ok := ParseDataURL(tt.in)
		if mime != tt.mime || data != tt.data || ok != tt.wantOK {
			t.Errorf("ParseDataURL(%q) = %q, %q, %v; want %q, %q, %v", tt.in, mime, data, ok, tt.mime, tt.data, tt.wantOK)
		}
	}
}

func TestStringMap(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want map[string]string
	}{
		{"strings", map[string]string{"a": "b"}, map[string]string{"a": "b"}},
		{"any", map[string]any{"a": "b", "n": 1}, map[string]string{"a": "b"}},
		{"nil", nil, nil},
		{"other", "x", nil},
	}
	for _, tt := range tests {
		got := StringMap(tt.in)
		if len(got) != len(tt.want) || got["a"] != tt.want["a"] {
			t.Errorf("%s: StringMap = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestPost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Test") != "1" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(`{"ok":true}`))
		case "/limit":
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`))
		}
	}))
	defer srv.Close()
	header := http.Header{"X-Test": {"1"}}
	tests := []struct {
		path     string
		wantKind Kind
	}{
		{"/ok", ""},
		{"/limit", KindLimit},
	}
	for _, tt := range tests {
		resp, err := Post(context.Background(), srv.Client(), srv.URL+tt.path, header, []byte(`{}`))
		if tt.wantKind == "" {
			if err != nil {
				t.Fatalf("%s: %v", tt.path, err)
			}
			body, err := ReadBody(context.Background(), resp)
			if err != nil || string(body) != `{"ok":true}` {
				t.Fatalf("%s: body %q, %v", tt.path, body, err)
			}
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != tt.wantKind || pe.Code != "rate_limit_error" || pe.RetryAfter.Seconds() != 2 {
			t.Fatalf("%s: got %#v", tt.path, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Post(ctx, srv.Client(), srv.URL+"/ok", header, nil)
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindAborted {
		t.Fatalf("cancelled: got %#v", err)
	}
}

func TestMarshalBody(t *testing.T) {
	got, err := MarshalBody(map[string]any{"b": "<x>", "a": 1})
	if err != nil || string(got) != `{"a":1,"b":"<x>"}` {
		t.Fatalf("MarshalBody = %s, %v", got, err)
	}
}

func TestApplyOptions(t *testing.T) {
	temp := 0.5
	base := Config{Params: Params{Temperature: &temp, Stop: []string{"x"}}, ToolChoice: "auto"}
	bound := []*schema.ToolInfo{{Name: "a"}}
	tests := []struct {
		name       string
		cfg        Config
		opts       []model.Option
		wantTemp   float64
		wantChoice string
		wantTools  int
		wantStop   int
	}{
		{"config only", base, nil, 0.5, "auto", 1, 1},
		{"options win", base, []model.Option{model.WithTemperature(1), model.WithStop([]string{"a", "b"}), model.WithTools(nil)}, 1, "auto", 0, 2},
		{"forbidden", base, []model.Option{model.WithToolChoice(schema.ToolChoiceForbidden)}, 0.5, "none", 1, 1},
		{"forced", base, []model.Option{model.WithToolChoice(schema.ToolChoiceForced)}, 0.5, "required", 1, 1},
		{"forced one", base, []model.Option{model.WithToolChoice(schema.ToolChoiceForced, "a")}, 0.5, "a", 1, 1},
		{"omitted", Config{Params: base.Params, ToolChoice: "required", OmitToolChoice: true}, nil, 0.5, "", 1, 1},
	}
	for _, tt := range tests {
		c := ApplyOptions(tt.cfg, bound, tt.opts...)
		if *c.Params.Temperature != tt.wantTemp || c.ToolChoice != tt.wantChoice || len(c.Tools) != tt.wantTools || len(c.Params.Stop) != tt.wantStop {
			t.Errorf("%s: got temp %v choice %q tools %d stop %v", tt.name, *c.Params.Temperature, c.ToolChoice, len(c.Tools), c.Params.Stop)
		}
	}
	if *base.Params.Temperature != 0.5 {
		t.Fatal("ApplyOptions changed the Config")
	}
}

func TestObjectArgs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `{}`},
		{"  ", `{}`},
		{`{"a":1}`, `{"a":1}`},
		{` {"a":1} `, `{"a":1}`},
		{`[1]`, `{"raw_arguments":"[1]"}`},
		{`null`, `{"raw_arguments":"null"}`},
		{`{"a":`, `{"raw_arguments":"{\"a\":"}`},
		{`"SELECT *"`, `{"raw_arguments":"SELECT *"}`},
	}
	for _, tt := range tests {
		if got := string(ObjectArgs(tt.in)); got != tt.want {
			t.Errorf("ObjectArgs(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestReadWholeAndStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`["a","b"]`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: a\n\ndata: b\n\ndata: fail\n\n"))
	}))
	defer srv.Close()
	// decode turns ["a","b"] into a text chunk per element, usage on the last.
	decode := func(body []byte) ([]*schema.Message, error) {
		var parts []string
		if err := json.Unmarshal(body, &parts); err != nil {
			return nil, Unknown("bad", err)
		}
		var out []*schema.Message
		for _, p := range parts {
			out = append(out, &schema.Message{Role: schema.Assistant, Content: p})
		}
		out[len(out)-1].ResponseMeta = &schema.ResponseMeta{Usage: &schema.TokenUsage{CompletionTokensDetails: schema.CompletionTokensDetails{ReasoningTokens: 7}}}
		return out, nil
	}
	read := func(r *sse.Reader, emit func(*schema.Message) bool) error {
		for {
			ev, err := r.Next()
			if err != nil {
				return Unknown("ended", err)
			}
			if string(ev.Data) == "fail" {
				return FromStreamError("overloaded_error", "busy")
			}
			if !emit(&schema.Message{Role: schema.Assistant, Content: string(ev.Data)}) {
				return nil
			}
		}
	}
	ctx := context.Background()
	post := func(path string) *http.Response {
		resp, err := Post(ctx, srv.Client(), srv.URL+path, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	msg, err := ReadWhole(ctx, post("/json"), decode)
	if err != nil || msg.Content != "ab" || msg.ResponseMeta.Usage.CompletionTokensDetails.ReasoningTokens != 7 {
		t.Fatalf("ReadWhole = %+v, %v", msg, err)
	}

	tests := []struct {
		path    string
		want    string
		wantErr Kind
	}{
		{"/json", "ab", ""},
		{"/sse", "ab", KindServer},
	}
	for _, tt := range tests {
		sr, err := ReadStream(ctx, post(tt.path), decode, read)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		var recvErr error
		for {
			c, err := sr.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					recvErr = err
				}
				break
			}
			got += c.Content
		}
		sr.Close()
		var pe *Error
		if got != tt.want || (tt.wantErr == "") != (recvErr == nil) || (recvErr != nil && (!errors.As(recvErr, &pe) || pe.Kind != tt.wantErr)) {
			t.Errorf("%s: got %q, %v", tt.path, got, recvErr)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	tests := []struct {
		in      Config
		want    string
		wantErr bool
	}{
		{Config{Model: "m"}, "https://d/v1", false},
		{Config{Model: "m", BaseURL: "http://x/v1/"}, "http://x/v1", false},
		{Config{BaseURL: "http://x"}, "", true},
	}
	for _, tt := range tests {
		got, err := tt.in.WithDefaults("https://d/v1")
		if (err != nil) != tt.wantErr || (err == nil && got.BaseURL != tt.want) {
			t.Errorf("%+v: got %q, %v", tt.in, got.BaseURL, err)
		}
	}
}

func TestMediaOf(t *testing.T) {
	str := func(s string) *string { return &s }
	common := func(mime string, data, url *string) schema.MessagePartCommon {
		return schema.MessagePartCommon{MIMEType: mime, Base64Data: data, URL: url}
	}
	tests := []struct {
		name    string
		part    schema.MessageInputPart
		want    Media
		wantErr bool
	}{
		{"image base64", schema.MessageInputPart{Type: schema.ChatMessagePartTypeImageURL, Image: &schema.MessageInputImage{MessagePartCommon: common("image/PNG", str("AA"), nil)}},
			Media{Kind: MediaImage, MIMEType: "image/png", Data: "AA"}, false},
		{"file data URL is an image", schema.MessageInputPart{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{MessagePartCommon: common("", nil, str("data:image/jpeg;base64,BB")), Name: "a.jpg"}},
			Media{Kind: MediaImage, MIMEType: "image/jpeg", Data: "BB", Name: "a.jpg"}, false},
		{"file pdf url", schema.MessageInputPart{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{MessagePartCommon: common("application/pdf", nil, str("https://x/a.pdf"))}},
			Media{Kind: MediaFile, MIMEType: "application/pdf", URL: "https://x/a.pdf"}, false},
		{"file audio", schema.MessageInputPart{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{MessagePartCommon: common("audio/wav", str("CC"), nil)}},
			Media{Kind: MediaAudio, MIMEType: "audio/wav", Data: "CC"}, false},
		{"video url", schema.MessageInputPart{Type: schema.ChatMessagePartTypeVideoURL, Video: &schema.MessageInputVideo{MessagePartCommon: common("", nil, str("https://x/v"))}},
			Media{Kind: MediaVideo, URL: "https://x/v"}, false},
		{"no payload", schema.MessageInputPart{Type: schema.ChatMessagePartTypeAudioURL}, Media{}, true},
		{"no data", schema.MessageInputPart{Type: schema.ChatMessagePartTypeImageURL, Image: &schema.MessageInputImage{}}, Media{}, true},
		{"unknown", schema.MessageInputPart{Type: "hologram"}, Media{}, true},
	}
	for _, tt := range tests {
		got, err := MediaOf(tt.part)
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("%s: got %+v, %v", tt.name, got, err)
		}
	}
}

func TestSnakeKeys(t *testing.T) {
	in := map[string]any{
		"budgetTokens":      1,
		"already_snake":     "keepMe",
		"contextManagement": map[string]any{"edits": []any{map[string]any{"clearAtLeast": 2}}},
	}
	got, _ := json.Marshal(SnakeKeys(in))
	want := `{"already_snake":"keepMe","budget_tokens":1,"context_management":{"edits":[{"clear_at_least":2}]}}`
	if string(got) != want {
		t.Fatalf("SnakeKeys = %s, want %s", got, want)
	}
}

// BenchmarkMarshalBody encodes a chat request's body as the chat adapter
// builds it: two messages, streaming, a prepared tools list.
func BenchmarkMarshalBody(b *testing.B) {
	type message struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}
	body := map[string]any{
		"model":          "fake-model",
		"messages":       []message{{"system", "You are terse."}, {"user", "hi"}},
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"tools":          Encoded(`[{"type":"function","function":{"name":"add","parameters":{"type":"object"}}}]`),
		"temperature":    0.5,
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MarshalBody(body); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMarshalBodyAsEncodingJSON: a map body's bytes are encoding/json's
// (compact, no HTML escaping), keys escaped where they need it; Encoded
// values are copied in, their keys last; a value JSON cannot encode is an
// error.
func TestMarshalBodyAsEncodingJSON(t *testing.T) {
	bodies := []map[string]any{
		{},
		{"model": "m", "messages": []map[string]any{{"role": "user", "content": "<hi> & \u2028"}}, "stream": true,
			"stream_options": map[string]any{"include_usage": true}, "temperature": 0.25, "n": nil},
		{"a\"b": 1, "<k>": "v", "é": []int{1}, "": "empty", "x y": false, "max_tokens": 10, "top-p.v2": 1.5},
	}
	for _, body := range bodies {
		want, err := encode(body)
		if err != nil {
			t.Fatal(err)
		}
		got, err := MarshalBody(body)
		if err != nil || string(got) != string(want) {
			t.Errorf("MarshalBody(%v) = %s, %v; want %s", body, got, err, want)
		}
	}
	got, err := MarshalBody(map[string]any{"tools": Encoded(`[{"x":1}]`), "b": 2, "a": Encoded(nil), "c": "<"})
	if want := `{"b":2,"c":"<","a":null,"tools":[{"x":1}]}`; err != nil || string(got) != want {
		t.Errorf("with Encoded values: %s, %v; want %s", got, err, want)
	}
	if _, err := MarshalBody(map[string]any{"ch": make(chan int)}); err == nil {
		t.Error("a channel value encoded")
	}
}
