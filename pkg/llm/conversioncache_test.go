package llm

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestConversionCache checks that requests converted through the cache get
// what converting afresh gives, whatever changed since the last request.
func TestConversionCache(t *testing.T) {
	reasoning := &agentv1.Part{Kind: &agentv1.Part_Reasoning{Reasoning: &agentv1.ReasoningPart{Text: "think"}}}
	goal := userMsg(text("add"), imageURL("https://x/a.png"))
	ask := assistantMsg(reasoning, text("adding"), call("c1", "add", `{"a":1}`), call("c2", "add", `{"a":2}`))
	answer := toolMsg(resultText("c1", "add", "1"), resultText("c2", "add", "2"))
	shot := assistantMsg(call("c3", "shot", "{}"))
	shotResult := toolMsg(resultParts("c3", "shot", text("here"), fileData("image/png", pngBytes)))
	next := userMsg(text("go on"))
	notice := &agentv1.Message{Role: agentv1.Role_ROLE_SYSTEM, Parts: []*agentv1.Part{text("a notice")}}
	summary := &agentv1.Message{Role: agentv1.Role_ROLE_ASSISTANT, Compact: true, Parts: []*agentv1.Part{text("done so far")}}
	noImage := allCaps()
	noImage.Image = false
	withReasoning := allCaps()
	withReasoning.Reasoning = true
	native := &converter{caps: allCaps(), fallback: MediaFallbackError}
	steps := []struct {
		name    string
		cv      *converter
		history []*agentv1.Message
	}{
		{"a call without its result", native, []*agentv1.Message{goal, shot}},
		{"its result appended: the call is sent now", native, []*agentv1.Message{goal, shot, shotResult}},
		{"first request", native, []*agentv1.Message{goal, ask, answer}},
		{"grown history", native, []*agentv1.Message{goal, ask, answer, shot, shotResult}},
		{"a notice and a summary appended", native, []*agentv1.Message{goal, ask, answer, shot, shotResult, notice, summary, next}},
		{"a result left out: its call is not sent", native, []*agentv1.Message{goal, ask, shot, shotResult}},
		{"the result back", native, []*agentv1.Message{goal, ask, answer, shot, shotResult, next}},
		{"reasoning on", &converter{caps: withReasoning, fallback: MediaFallbackError}, []*agentv1.Message{goal, ask, answer, next}},
		{"images stripped", &converter{caps: noImage, fallback: MediaFallbackStrip}, []*agentv1.Message{goal, ask, answer, shot, shotResult}},
		{"text protocol", &converter{caps: allCaps(), fallback: MediaFallbackError, text: true, tools: []Tool{{Name: "add"}, {Name: "shot"}}},
			[]*agentv1.Message{goal, ask, answer, shot, shotResult, next}},
		{"native again", native, []*agentv1.Message{goal, ask, answer, shot, shotResult, next}},
	}
	var cache ConversionCache
	var last []*schema.Message
	for _, st := range steps {
		want, err := st.cv.convert("sys", st.history)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		cached := *st.cv
		cached.cache = &cache
		got, err := cached.convert("sys", st.history)
		if err != nil {
			t.Fatalf("%s: cached: %v", st.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: cached conversion differs:\n got %s\nwant %s", st.name, dump(got), dump(want))
		}
		last = got
	}
	// The last two requests were the same: the second reused every message.
	again, err := (&converter{caps: allCaps(), fallback: MediaFallbackError, cache: &cache}).convert("sys", steps[len(steps)-1].history)
	if err != nil {
		t.Fatal(err)
	}
	for i := range again {
		if i > 0 && again[i] != last[i] {
			t.Errorf("message %d was converted again", i)
		}
	}

	// A long run keeps about what its latest requests used.
	for i := range 100 {
		h := []*agentv1.Message{userMsg(text(fmt.Sprint("new ", i))), goal}
		if _, err := (&converter{caps: allCaps(), fallback: MediaFallbackError, cache: &cache}).convert("", h); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(cache.kept); n > 2*2+16 {
		t.Errorf("after 100 requests of 2 messages the cache holds %d", n)
	}
}

func dump(msgs []*schema.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n  %+v", *m)
	}
	return b.String()
}

// TestConversionCacheTools checks that tool definitions are converted again
// whenever the tools differ from the last request's.
func TestConversionCacheTools(t *testing.T) {
	schemaA := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer"}}}
	schemaB := map[string]any{"type": "object", "properties": map[string]any{"b": map[string]any{"type": "string"}}}
	base := []Tool{{Name: "add", Description: "adds", Schema: schemaA}, {Name: "ls"}}
	var cache ConversionCache
	first, err := cache.toolSet(base)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tools []Tool
		reuse bool
	}{
		{"the same tools", base, true},
		{"a copy of the same tools", slices.Clone(base), true},
		{"another description", []Tool{{Name: "add", Description: "sums", Schema: schemaA}, {Name: "ls"}}, false},
		{"another schema", []Tool{{Name: "add", Description: "adds", Schema: schemaB}, {Name: "ls"}}, false},
		{"a tool less", base[:1], false},
	}
	for _, tt := range tests {
		// Each case starts from the base tools' definitions.
		if _, err := cache.toolSet(base); err != nil {
			t.Fatal(err)
		}
		got, err := cache.toolSet(tt.tools)
		if err != nil {
			t.Fatal(err)
		}
		want, err := toolSetOf(tt.tools)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.infos, want.infos) {
			t.Errorf("%s: definitions differ from a fresh conversion", tt.name)
		}
		if reused := got.Len() > 0 && got.infos[0] == first.infos[0]; reused != tt.reuse {
			t.Errorf("%s: reused = %v, want %v", tt.name, reused, tt.reuse)
		}
	}
}
