package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

func TestCompactPreviewAndUpdate(t *testing.T) {
	t.Parallel()
	a := newAgent(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if strings.Contains(string(req.Body), "Write the summary now") {
			return fakemodel.Turn{TextChunks: []string{"Goal: greet Ming. ", "Done: greeted."}}
		}
		return e2e.TwoTools(step, req)
	}, &agentv1.AgentConfig{MaxTokens: proto.Int64(100000)})
	ctx := e2e.Context(t, 30*time.Second)
	if _, err := a.Send(ctx, "greet Ming and add 2 and 3", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}

	// Compact streams its events and ends with the summary, appended to history.
	var kinds []string
	summary, err := a.Compact(ctx, func(e *agentv1.Event) { kinds = append(kinds, kindName(e)) })
	if err != nil {
		t.Fatal(err)
	}
	if summary != "Goal: greet Ming. Done: greeted." {
		t.Errorf("summary %q", summary)
	}
	if got := strings.Join(kinds, " "); !strings.HasPrefix(got, "compact_started compact_delta") || !strings.HasSuffix(got, "compact_finished") {
		t.Errorf("compaction events: %s", got)
	}
	h, err := a.History(ctx)
	if err != nil || len(h) != 5 || !h[4].GetCompact() {
		t.Fatalf("history after compaction: %d messages, last compact=%v, %v", len(h), h[len(h)-1].GetCompact(), err)
	}

	// The preview folds the summary into the system prompt and counts tokens.
	p, err := a.Preview(ctx, &agentv1.Part{Kind: &agentv1.Part_Text{Text: "and now?"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.GetSystem(), "Goal: greet Ming.") || p.GetTokens() <= 0 || p.GetMaxTokens() != 100000 || p.GetWouldCompact() {
		t.Errorf("preview: system %q tokens %d max %d compact %v", p.GetSystem(), p.GetTokens(), p.GetMaxTokens(), p.GetWouldCompact())
	}

	// UpdateAgent with a mask changes one field and keeps the rest.
	got, err := a.Update(ctx, &agentv1.AgentConfig{MaxSteps: proto.Int32(3), MaxTokens: proto.Int64(1)}, "config.max_steps")
	if err != nil {
		t.Fatal(err)
	}
	if got.GetConfig().GetMaxSteps() != 3 || got.GetConfig().GetMaxTokens() != 100000 {
		t.Errorf("masked update: %v", got.GetConfig())
	}
	// Without a mask, set fields merge; provider replaces whole.
	if _, err := a.Update(ctx, &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{Temperature: proto.Float64(0.5), TopP: proto.Float64(0.9)}}); err != nil {
		t.Fatal(err)
	}
	got, err = a.Update(ctx, &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{Temperature: proto.Float64(0.1)}})
	if err != nil {
		t.Fatal(err)
	}
	if pr := got.GetConfig().GetProvider(); pr.GetTemperature() != 0.1 || pr.TopP != nil || got.GetConfig().GetMaxSteps() != 3 {
		t.Errorf("merge update: %v", got.GetConfig())
	}
	// Tools can be narrowed by mask.
	resp, err := suite.client.API().UpdateAgent(ctx, &agentv1.UpdateAgentRequest{
		Agent:      &agentv1.Agent{Id: a.ID, Tools: &agentv1.ToolSelection{Names: []string{"add"}}},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"tools"}},
	})
	if err != nil || strings.Join(resp.GetAgent().GetTools().GetNames(), ",") != "add" {
		t.Errorf("tools update: %v %v", resp.GetAgent().GetTools(), err)
	}
}

func TestListAgentsPages(t *testing.T) {
	t.Parallel()
	ctx := e2e.Context(t, 30*time.Second)
	prefix := "list-" + strings.ReplaceAll(t.Name(), "/", "-") + "-"
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		a, err := suite.client.CreateAgent(ctx, client.AgentOptions{ID: prefix + id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Delete(context.Background()) })
	}
	var seen []string
	req := &agentv1.ListAgentsRequest{PageSize: 2}
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		resp, err := suite.client.API().ListAgents(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetAgents()) > 2 {
			t.Fatalf("page of %d, asked for 2", len(resp.GetAgents()))
		}
		for _, a := range resp.GetAgents() {
			if strings.HasPrefix(a.GetId(), prefix) {
				seen = append(seen, strings.TrimPrefix(a.GetId(), prefix))
			}
		}
		if resp.GetNextPageToken() == "" {
			break
		}
		req.PageToken = resp.GetNextPageToken()
	}
	if strings.Join(seen, "") != "abcde" {
		t.Errorf("paged through %v, want a..e in order", seen)
	}
}
