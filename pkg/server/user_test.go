package server_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// TestRunKeepsItsUser: the user a send names (x-agentcore-user) is its
// run's, kept in the store; a malformed one is refused before the run.
func TestRunKeepsItsUser(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
	r := startReplica(t, model, "-store", "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	ctx := ctxT(t)
	ag, err := r.c.CreateAgent(ctx, client.AgentOptions{ID: "u", Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"alice@example.com", ""} {
		uctx := ctx
		if user != "" {
			uctx = metadata.AppendToOutgoingContext(ctx, "x-agentcore-user", user)
		}
		res, err := ag.Send(uctx, "hi", client.Callbacks{})
		if err != nil {
			t.Fatal(err)
		}
		run, err := r.c.API().GetRun(ctx, &agentv1.GetRunRequest{RunId: res.RunID})
		if err != nil || run.GetRun().GetUser() != user {
			t.Errorf("the run of a send for %q: user %q, %v", user, run.GetRun().GetUser(), err)
		}
	}
	for _, bad := range []string{"alice smith", strings.Repeat("u", 129)} {
		_, err := ag.Send(metadata.AppendToOutgoingContext(ctx, "x-agentcore-user", bad), "hi", client.Callbacks{})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != codes.InvalidArgument || !strings.Contains(err.Error(), "x-agentcore-user") {
			t.Errorf("a send for %q: %v", bad, err)
		}
	}
}
