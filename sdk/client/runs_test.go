package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/servetest"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// startServer runs an agent-server in-process on a real socket, with the fake
// model as its default model and a memory store, until the test ends.
// extra adds agent-server flags.
func startServer(t *testing.T, model *fakemodel.Server, extra ...string) *client.Client {
	t.Helper()
	target, stop := servetest.Start(t, append([]string{"-listen", "127.0.0.1:0", "-tool-dir", t.TempDir(), "-tool-limits", "off", "-store", "memory",
		"-model-base-url", model.URL, "-model", "m"}, extra...), nil)
	c, err := client.Dial(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		if err := stop(); err != nil {
			t.Errorf("server: %v", err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := c.ListTools(context.Background()); err == nil {
			return c
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
}

func TestAttachAfterASeq(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: []string{"a ", "b ", "c ", "d"}}
	})
	c := startServer(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ag, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	var all []int64
	res, err := ag.Send(ctx, "go", client.Callbacks{OnEvent: func(e *agentv1.Event) { all = append(all, e.GetSeq()) }})
	if err != nil {
		t.Fatal(err)
	}
	after := all[len(all)/2]
	for name, attach := range map[string]func(cb client.Callbacks) (*client.Result, error){
		"Agent.AttachAfter": func(cb client.Callbacks) (*client.Result, error) { return ag.AttachAfter(ctx, after, cb) },
		"Client.Attach":     func(cb client.Callbacks) (*client.Result, error) { return c.Attach(ctx, res.RunID, after, cb) },
	} {
		var got []int64
		var text string
		r, err := attach(client.Callbacks{
			OnEvent:    func(e *agentv1.Event) { got = append(got, e.GetSeq()) },
			OnLLMEvent: func(d *agentv1.ModelDeltaEvent) { text += d.GetText() },
		})
		if err != nil || r.RunID != res.RunID || r.Text != "a b c d" {
			t.Fatalf("%s: %v, %v", name, r, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(all[len(all)/2+1:]) {
			t.Errorf("%s after %d: seqs %v, want %v", name, after, got, all[len(all)/2+1:])
		}
	}
	if r, err := ag.Attach(ctx, client.Callbacks{}); err != nil || r.Text != "a b c d" {
		t.Fatalf("Agent.Attach from the start: %v, %v", r, err)
	}
}

// A history larger than one response comes in pages: History, Turns and
// Render read all of them.
func TestHistoryFollowsPages(t *testing.T) {
	model := fakemodel.StartTB(t)
	answer := strings.Repeat("x", 60<<10)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: answer} })
	c := startServer(t, model, "-max-message-bytes", "262144")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ag, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	const sends = 5 // 300 KiB of answers: over one 256 KiB response
	for i := range sends {
		if _, err := ag.Send(ctx, fmt.Sprint("task ", i), client.Callbacks{}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := c.API().GetHistory(ctx, &agentv1.GetHistoryRequest{AgentId: ag.ID})
	if err != nil || first.GetNextPageToken() == "" {
		t.Fatalf("the history fits one response (%d messages, %v): the test proves nothing", len(first.GetMessages()), err)
	}
	msgs, err := ag.History(ctx)
	if err != nil || len(msgs) != 2*sends {
		t.Fatalf("History: %d messages, %v; want %d", len(msgs), err, 2*sends)
	}
	if got := msgs[2*sends-2].GetParts()[0].GetText(); got != fmt.Sprint("task ", sends-1) {
		t.Errorf("the last task is %q", got)
	}
	turns, err := ag.Turns(ctx)
	n := 0
	for _, turn := range turns {
		n += len(turn)
	}
	if err != nil || n != 2*sends || turns[len(turns)-1][0].GetParts()[0].GetText() != answer {
		t.Fatalf("Turns: %d turns of %d messages, %v", len(turns), n, err)
	}
	text, err := ag.Render(ctx)
	if err != nil || strings.Count(text, "user: task ") != sends || strings.Count(text, "assistant: x") != sends {
		t.Fatalf("Render: %d user lines, %d assistant lines, %v", strings.Count(text, "user: task "), strings.Count(text, "assistant: x"), err)
	}
}

// Client.Runs lists every agent's runs, newest first, over more than a
// page of the server's (1000), and as a filter selects.
func TestClientRunsFollowsPagesAndFilters(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
	c := startServer(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const agents, each = 8, 126 // 1008 runs
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for i := range agents {
		ag, err := c.CreateAgent(ctx, client.AgentOptions{ID: fmt.Sprint("r", i), Config: &agentv1.AgentConfig{System: proto.String("s")}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for range each {
				if _, err := ag.Send(ctx, "hi", client.Callbacks{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	runs, err := c.Runs(ctx, client.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != agents*each {
		t.Fatalf("%d runs, want %d", len(runs), agents*each)
	}
	seen := map[string]bool{}
	for i, r := range runs {
		if seen[r.GetId()] {
			t.Fatalf("run %s listed twice", r.GetId())
		}
		seen[r.GetId()] = true
		if i > 0 && r.GetStartTime().AsTime().After(runs[i-1].GetStartTime().AsTime()) {
			t.Fatalf("run %d started after run %d: not newest first", i, i-1)
		}
	}
	for _, tt := range []struct {
		name string
		f    client.RunFilter
		want int
	}{
		{"one agent", client.RunFilter{AgentID: "r3"}, each},
		{"at most", client.RunFilter{Max: 5}, 5},
		{"one agent, at most", client.RunFilter{AgentID: "r3", Max: 200}, each},
		{"a state", client.RunFilter{State: agentv1.RunState_RUN_STATE_SUCCEEDED}, agents * each},
		{"a state none is in", client.RunFilter{State: agentv1.RunState_RUN_STATE_FAILED}, 0},
	} {
		got, err := c.Runs(ctx, tt.f)
		if err != nil || len(got) != tt.want {
			t.Errorf("%s: %d runs, %v; want %d", tt.name, len(got), err, tt.want)
		}
		for _, r := range got {
			if tt.f.AgentID != "" && r.GetAgentId() != tt.f.AgentID {
				t.Errorf("%s: a run of agent %s", tt.name, r.GetAgentId())
			}
		}
	}
	var e *client.Error
	if got, err := c.Runs(ctx, client.RunFilter{AgentID: "nobody"}); !errors.As(err, &e) || e.Code != codes.NotFound || got != nil {
		t.Errorf("runs of no agent: %v, %v", got, err)
	}
}
