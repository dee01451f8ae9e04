package server

import (
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// Past -event-retention a finished run's events are swept: Attach before
// its last event answers EVENTS_EXPIRED, GetRun keeps its outcome.
func TestEventRetentionExpiresAttach(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: []string{"kept ", "briefly"}}
	})
	r := startReplica(t, model, "-store", "sqlite:"+filepath.Join(t.TempDir(), "a.db"), "-event-retention", "1s")
	ctx := ctxT(t)
	ag, err := r.c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ag.Send(ctx, "hi", client.Callbacks{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Attach(ctx, res.RunID, 0, client.Callbacks{}); err != nil {
		t.Fatalf("attach within the retention: %v", err)
	}
	var run *agentv1.Run
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if run, err = r.c.Run(ctx, res.RunID); err != nil {
			t.Fatal(err)
		}
		if run.GetEventsExpired() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's events were never swept: %v", run)
		}
	}
	if run.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED || run.GetResult().GetText() != "kept briefly" || run.GetLastSeq() == 0 {
		t.Fatalf("the swept run: %v", run)
	}
	for _, after := range []int64{0, run.GetLastSeq() - 1} {
		n := 0
		_, err := r.c.Attach(ctx, res.RunID, after, client.Callbacks{OnEvent: func(*agentv1.Event) { n++ }})
		if codeOf(err) != codes.OutOfRange || reasonOf(err) != "EVENTS_EXPIRED" || n != 0 {
			t.Fatalf("attach after %d to a swept run: %d events, %v", after, n, err)
		}
	}
	if _, err := ag.Send(ctx, "again", client.Callbacks{}); err != nil {
		t.Fatalf("a send after the sweep: %v", err)
	}
}

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
