// Package adaptertest holds what the protocol adapters' tests share: loading
// the recorded fixtures into fakemodel turns, running a model streaming or
// not, and checking the resulting message against the protocol-neutral
// expectations of the provider contract. It lives under pkg/llm/internal so
// that only pkg/llm and its adapters' tests can import it.
package adaptertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// Fixtures is the fixture directory, relative to an adapter package.
const Fixtures = "../testdata/fixtures"

// FixtureTurn loads a recorded fixture (relative to Fixtures) as a turn and
// says whether it is a stream: *.chunks.txt become events (named after their
// "type" when named is set), *.sse and *.json are replayed verbatim.
func FixtureTurn(t testing.TB, name string, named bool) (turn fakemodel.Turn, stream bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasSuffix(name, ".json"):
		return fakemodel.Turn{Raw: data, RawContentType: "application/json"}, false
	case strings.HasSuffix(name, ".sse"):
		return fakemodel.Turn{Raw: data, RawContentType: "text/event-stream"}, true
	}
	events, err := fakemodel.ChunkEvents(data, named)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return fakemodel.Turn{Events: events}, true
}

// Call is one tool call expected in a message.
type Call struct {
	// ID is the call id; empty means any non-empty id.
	ID   string
	Name string
	// Args is the parsed JSON arguments.
	Args any
}

// Want is what a message must hold.
type Want struct {
	Text, Reasoning string
	Calls           []Call
	Finish, Raw     string
	Input, Output   int
	// Total is the total; 0 means Input + Output.
	Total           int
	CacheRead       int
	CacheWrite      int
	ReasoningTokens int
}

// Generate calls m.Generate, failing the test on error.
func Generate(t testing.TB, m model.BaseChatModel, input []*schema.Message, opts ...model.Option) *schema.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return msg
}

// Stream calls m.Stream and reads every chunk, failing the test on error. It
// checks that only the last chunk has ResponseMeta and returns the chunks
// joined with schema.ConcatMessages, with the last chunk's usage (which
// ConcatMessages would cut down).
func Stream(t testing.TB, m model.BaseChatModel, input []*schema.Message, opts ...model.Option) *schema.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	chunks, err := Collect(ctx, m, input, opts...)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(chunks) == 0 {
		t.Fatal("Stream: no chunks")
	}
	for i, c := range chunks[:len(chunks)-1] {
		if c.ResponseMeta != nil {
			t.Fatalf("chunk %d of %d has ResponseMeta: %+v", i, len(chunks), c.ResponseMeta)
		}
	}
	msg, err := schema.ConcatMessages(chunks)
	if err != nil {
		t.Fatal(err)
	}
	if msg.ResponseMeta == nil {
		t.Fatal("Stream: the last chunk has no ResponseMeta")
	}
	msg.ResponseMeta.Usage = chunks[len(chunks)-1].ResponseMeta.Usage
	return msg
}

// Run calls Stream or Generate.
func Run(t testing.TB, m model.BaseChatModel, stream bool, input []*schema.Message, opts ...model.Option) *schema.Message {
	t.Helper()
	if stream {
		return Stream(t, m, input, opts...)
	}
	return Generate(t, m, input, opts...)
}

// Collect reads a whole stream; the error is Stream's or the stream's.
func Collect(ctx context.Context, m model.BaseChatModel, input []*schema.Message, opts ...model.Option) ([]*schema.Message, error) {
	sr, err := m.Stream(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	defer sr.Close()
	var chunks []*schema.Message
	for {
		c, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			return chunks, nil
		}
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, c)
	}
}

// Check compares msg with w.
func Check(t testing.TB, msg *schema.Message, w Want) {
	t.Helper()
	if msg.Role != schema.Assistant {
		t.Errorf("role = %q", msg.Role)
	}
	if msg.Content != w.Text {
		t.Errorf("text = %q, want %q", msg.Content, w.Text)
	}
	if msg.ReasoningContent != w.Reasoning {
		t.Errorf("reasoning = %q, want %q", msg.ReasoningContent, w.Reasoning)
	}
	if len(msg.ToolCalls) != len(w.Calls) {
		t.Fatalf("tool calls = %+v, want %d", msg.ToolCalls, len(w.Calls))
	}
	for i, c := range msg.ToolCalls {
		wc := w.Calls[i]
		var args any
		if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil {
			t.Errorf("call %d: arguments %q: %v", i, c.Function.Arguments, err)
		}
		idOK := c.ID == wc.ID || (wc.ID == "" && c.ID != "")
		if !idOK || c.Function.Name != wc.Name || !reflect.DeepEqual(args, wc.Args) || c.Type != "function" {
			t.Errorf("call %d = %q %s %s, want %q %s %v", i, c.ID, c.Function.Name, c.Function.Arguments, wc.ID, wc.Name, wc.Args)
		}
	}
	meta := msg.ResponseMeta
	if meta == nil || meta.Usage == nil {
		t.Fatalf("no ResponseMeta or usage: %+v", meta)
	}
	if meta.FinishReason != w.Finish || msg.Extra[provider.ExtraRawFinishReason] != w.Raw {
		t.Errorf("finish = %q (raw %v), want %q (%q)", meta.FinishReason, msg.Extra[provider.ExtraRawFinishReason], w.Finish, w.Raw)
	}
	total := w.Total
	if total == 0 {
		total = w.Input + w.Output
	}
	write, _ := msg.Extra[provider.ExtraCacheWriteTokens].(int)
	u := meta.Usage
	if u.PromptTokens != w.Input || u.CompletionTokens != w.Output || u.TotalTokens != total ||
		u.PromptTokenDetails.CachedTokens != w.CacheRead || write != w.CacheWrite ||
		u.CompletionTokensDetails.ReasoningTokens != w.ReasoningTokens {
		t.Errorf("usage = %+v, cache write %d; want input %d output %d total %d cache read %d write %d reasoning %d",
			*u, write, w.Input, w.Output, total, w.CacheRead, w.CacheWrite, w.ReasoningTokens)
	}
}

// ErrorKind asserts that err is a *provider.Error of kind and returns it.
func ErrorKind(t testing.TB, err error, kind provider.Kind) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want a *provider.Error", err, err)
	}
	if pe.Kind != kind {
		t.Fatalf("error kind = %q (%v), want %q", pe.Kind, pe, kind)
	}
	return pe
}

// Golden compares a JSON body with testdata/<name>.golden.json, rewriting
// the file instead when update is set. Both are compared indented, with
// object keys sorted.
func Golden(t testing.TB, name string, body []byte, update bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: body is not JSON: %v\n%s", name, err, body)
	}
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from %s (run with -update to accept):\n%s", name, path, got)
	}
}

// RunErr calls Generate, or Stream and reads it to the end, with ctx, and
// returns the error (nil when the call succeeded).
func RunErr(ctx context.Context, m model.BaseChatModel, stream bool, input []*schema.Message) error {
	if stream {
		_, err := Collect(ctx, m, input)
		return err
	}
	_, err := m.Generate(ctx, input)
	return err
}

// Decode encodes v as a request body is sent and decodes it back as generic
// JSON, for assertions.
func Decode(t testing.TB, v any) map[string]any {
	t.Helper()
	data, err := provider.MarshalBody(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// JSON parses a JSON literal of a test; it panics when s is not JSON.
func JSON(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(fmt.Sprintf("adaptertest.JSON(%q): %v", s, err))
	}
	return v
}

// EqualJSON checks that got (decoded JSON) equals the JSON literal want.
func EqualJSON(t testing.TB, what string, got any, want string) {
	t.Helper()
	if !reflect.DeepEqual(got, JSON(want)) {
		b, _ := json.Marshal(got)
		t.Errorf("%s = %s\nwant %s", what, b, want)
	}
}
