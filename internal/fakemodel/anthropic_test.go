package fakemodel_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

func TestAnthropicEncoder(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	turn := fakemodel.Turn{
		Reasoning: "think", ReasoningSignature: "sig",
		TextChunks: []string{"Hel", "lo"},
		ToolCalls:  []fakemodel.ToolCall{{ID: "toolu_1", Name: "add", Arguments: `{"a":1,"b":2}`}},
		Usage:      &fakemodel.Usage{Input: 100, Output: 20, CacheRead: 60, CacheWrite: 30, Reasoning: 5},
	}
	srv.Push(turn)
	evs := events(t, post(t, context.Background(), c, srv.URL+"/v1/messages", `{"model":"claude","stream":true}`))
	var names []string
	var payloads []map[string]any
	for _, e := range evs {
		var p map[string]any
		if err := json.Unmarshal([]byte(e[1]), &p); err != nil || p["type"] != e[0] {
			t.Fatalf("event %s data %s", e[0], e[1])
		}
		names = append(names, e[0])
		payloads = append(payloads, p)
	}
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events %v\nwant   %v", names, want)
	}
	checks := []struct {
		event int
		path  []string
		want  any
	}{
		{0, []string{"message", "model"}, "claude"},
		{0, []string{"message", "usage", "input_tokens"}, 10.0},
		{0, []string{"message", "usage", "cache_read_input_tokens"}, 60.0},
		{0, []string{"message", "usage", "cache_creation_input_tokens"}, 30.0},
		{2, []string{"content_block", "type"}, "thinking"},
		{4, []string{"delta", "signature"}, "sig"},
		{7, []string{"delta", "text"}, "Hel"},
		{10, []string{"content_block", "id"}, "toolu_1"},
		{10, []string{"index"}, 2.0},
		{15, []string{"delta", "stop_reason"}, "tool_use"},
		{15, []string{"usage", "output_tokens"}, 20.0},
		{15, []string{"usage", "output_tokens_details", "thinking_tokens"}, 5.0},
	}
	for _, ck := range checks {
		var v any = payloads[ck.event]
		for _, k := range ck.path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		if v != ck.want {
			t.Errorf("event %d %v = %v, want %v", ck.event, ck.path, v, ck.want)
		}
	}

	srv.Push(turn)
	var reply struct {
		Type    string `json:"type"`
		Content []struct {
			Type      string          `json:"type"`
			Signature string          `json:"signature"`
			Text      string          `json:"text"`
			Input     json.RawMessage `json:"input"`
		} `json:"content"`
		StopReason string         `json:"stop_reason"`
		Usage      map[string]any `json:"usage"`
	}
	if err := json.Unmarshal([]byte(readBody(t, post(t, context.Background(), c, srv.URL+"/messages", `{"model":"claude"}`))), &reply); err != nil {
		t.Fatal(err)
	}
	if reply.Type != "message" || len(reply.Content) != 3 || reply.Content[0].Signature != "sig" || reply.Content[1].Text != "Hello" ||
		string(reply.Content[2].Input) != `{"a":1,"b":2}` || reply.StopReason != "tool_use" ||
		reply.Usage["input_tokens"] != 10.0 || reply.Usage["cache_read_input_tokens"] != 60.0 || reply.Usage["output_tokens"] != 20.0 {
		t.Errorf("reply %+v", reply)
	}

	srv.Push(fakemodel.Turn{Status: 529})
	resp := post(t, context.Background(), c, srv.URL+"/messages", `{}`)
	if body := readBody(t, resp); resp.StatusCode != 529 || provider.FromStatus(529, nil, []byte(body)).Code != "overloaded_error" {
		t.Errorf("529 reply %d %s", resp.StatusCode, body)
	}

	srv.Push(fakemodel.Turn{Text: "x", StreamError: &fakemodel.StreamError{Type: "overloaded_error", Message: "Overloaded"}})
	evs = events(t, post(t, context.Background(), c, srv.URL+"/messages", `{"stream":true}`))
	if last := evs[len(evs)-1]; last[0] != "error" || last[1] != `{"error":{"message":"Overloaded","type":"overloaded_error"},"type":"error"}` {
		t.Errorf("stream error: last event %v", last)
	}
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("error content type %q", resp.Header.Get("Content-Type"))
	}
}
