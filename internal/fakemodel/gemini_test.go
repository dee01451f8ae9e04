package fakemodel_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

func TestGeminiEncoder(t *testing.T) {
	srv := fakemodel.StartTB(t)
	c := newClient(t)
	turn := fakemodel.Turn{
		Reasoning: "think", ReasoningSignature: "sig",
		TextChunks: []string{"Hel", "lo"},
		ToolCalls:  []fakemodel.ToolCall{{Name: "add", Arguments: `{"a":1}`}, {ID: "gem-2", Name: "now"}},
		Usage:      &fakemodel.Usage{Input: 100, Output: 20, CacheRead: 60, Reasoning: 5},
	}
	srv.Push(turn)
	evs := events(t, post(t, context.Background(), c, srv.URL+"/v1beta/models/gem:streamGenerateContent?alt=sse", `{"contents":[]}`))
	reqs := srv.Requests()
	if r := reqs[len(reqs)-1]; r.Protocol != provider.ProtocolGemini || !r.Stream {
		t.Errorf("recorded %+v", r)
	}
	var parts []string
	for i, e := range evs {
		var r struct {
			Candidates []struct {
				Content struct {
					Parts []json.RawMessage `json:"parts"`
				} `json:"content"`
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
			UsageMetadata json.RawMessage `json:"usageMetadata"`
			ModelVersion  string          `json:"modelVersion"`
		}
		if err := json.Unmarshal([]byte(e[1]), &r); err != nil || e[0] != "" || len(r.Candidates) != 1 || r.ModelVersion != "gem" {
			t.Fatalf("event %d: %v %s", i, e, err)
		}
		for _, p := range r.Candidates[0].Content.Parts {
			parts = append(parts, string(p))
		}
		last := i == len(evs)-1
		if (r.Candidates[0].FinishReason != "") != last || (r.UsageMetadata != nil) != last {
			t.Errorf("event %d: finish %q usage %s", i, r.Candidates[0].FinishReason, r.UsageMetadata)
		}
		if last {
			var u map[string]any
			_ = json.Unmarshal(r.UsageMetadata, &u)
			want := map[string]any{"promptTokenCount": 100.0, "cachedContentTokenCount": 60.0, "candidatesTokenCount": 15.0, "thoughtsTokenCount": 5.0, "totalTokenCount": 120.0}
			if r.Candidates[0].FinishReason != "STOP" || !reflect.DeepEqual(u, want) {
				t.Errorf("last event %s", e[1])
			}
		}
	}
	wantParts := []string{`{"text":"think","thought":true}`, `{"text":"Hel"}`, `{"text":"lo"}`,
		`{"functionCall":{"args":{"a":1},"name":"add"},"thoughtSignature":"sig"}`, `{"functionCall":{"args":{},"id":"gem-2","name":"now"}}`}
	if !reflect.DeepEqual(parts, wantParts) {
		t.Errorf("parts %v\nwant  %v", parts, wantParts)
	}

	srv.Push(fakemodel.Turn{Text: "whole", ReasoningSignature: "sig", FinishReason: provider.FinishLength})
	body := readBody(t, post(t, context.Background(), c, srv.URL+"/models/gem:generateContent", `{}`))
	want := `{"candidates":[{"content":{"parts":[{"text":"whole","thoughtSignature":"sig"}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}],` +
		`"modelVersion":"gem","responseId":"resp_fake_gemini","usageMetadata":{"candidatesTokenCount":0,"promptTokenCount":0,"totalTokenCount":0}}`
	if body != want {
		t.Errorf("reply %s\nwant  %s", body, want)
	}

	srv.Push(fakemodel.Turn{Status: 429})
	resp := post(t, context.Background(), c, srv.URL+"/models/gem:generateContent", `{}`)
	if body := readBody(t, resp); resp.StatusCode != 429 || provider.FromStatus(429, nil, []byte(body)).Code != "RESOURCE_EXHAUSTED" {
		t.Errorf("429 reply %d %s", resp.StatusCode, body)
	}

	srv.Push(fakemodel.Turn{Text: "x", StreamError: &fakemodel.StreamError{Type: "UNAVAILABLE", Message: "busy"}})
	evs = events(t, post(t, context.Background(), c, srv.URL+"/models/gem:streamGenerateContent?alt=sse", `{}`))
	if last := evs[len(evs)-1][1]; last != `{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}` {
		t.Errorf("stream error: last event %s", last)
	}
}
