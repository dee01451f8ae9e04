package server_test

import (
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// ListRuns pages through more runs than a page, each once, newest first.
func TestListRunsPages(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
	r := startReplica(t, model, "-store", "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	ctx := ctxT(t)
	var sent []string // oldest first
	for _, id := range []string{"pa", "pb"} {
		ag, err := r.c.CreateAgent(ctx, client.AgentOptions{ID: id, Config: &agentv1.AgentConfig{System: proto.String("s")}})
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			res, err := ag.Send(ctx, "hi", client.Callbacks{})
			if err != nil {
				t.Fatal(err)
			}
			sent = append(sent, res.RunID)
		}
	}
	for _, tt := range []struct {
		agent string
		want  []string
	}{{"", sent}, {"pb", sent[4:]}} {
		var got []string
		pages, tok := 0, ""
		for {
			resp, err := r.c.API().ListRuns(ctx, &agentv1.ListRunsRequest{AgentId: tt.agent, PageSize: 3, PageToken: tok})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(resp.GetRuns()) > 3 {
				t.Fatalf("a page of %d runs, asked for 3", len(resp.GetRuns()))
			}
			for _, run := range resp.GetRuns() {
				got = append(got, run.GetId())
			}
			if tok = resp.GetNextPageToken(); tok == "" {
				break
			}
		}
		if want := (len(tt.want) + 2) / 3; pages != want {
			t.Errorf("agent %q: %d pages, want %d", tt.agent, pages, want)
		}
		if len(got) != len(tt.want) {
			t.Fatalf("agent %q: runs %v, want %v (newest first)", tt.agent, got, tt.want)
		}
		for i, id := range got {
			if id != tt.want[len(tt.want)-1-i] {
				t.Fatalf("agent %q: runs %v, want %v reversed", tt.agent, got, tt.want)
			}
		}
	}
	if _, err := r.c.API().ListRuns(ctx, &agentv1.ListRunsRequest{PageToken: "not-a-token"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a made-up page token: %v", err)
	}
}
