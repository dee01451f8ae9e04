package storetest

import (
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func testPermissions(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "p")
	mustStart(t, s, "p", "run_p", "x", time.Minute)
	for _, id := range []string{"c1", "c2"} {
		if err := s.AskPermission(c, &store.Permission{RunID: "run_p", CallID: id, ToolName: "shell", Arguments: `{"command":"ls"}`}); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, s.AskPermission(c, &store.Permission{RunID: "run_p", CallID: "c1"}), store.ErrExists, "asking twice")
	p, err := s.AnswerPermission(c, "run_p", "c1", true, "")
	if err != nil || !p.Answered || !p.Allow || p.ToolName != "shell" {
		t.Fatalf("AnswerPermission = %+v, %v", p, err)
	}
	p, err = s.AnswerPermission(c, "run_p", "c1", false, "too late")
	wantErr(t, err, store.ErrConflict, "answering twice")
	if p == nil || !p.Allow {
		t.Errorf("the conflict does not carry the first answer: %+v", p)
	}
	_, err = s.AnswerPermission(c, "run_p", "c9", true, "")
	wantErr(t, err, store.ErrNotFound, "answering no request")
	all, err := s.Permissions(c, "run_p")
	if err != nil || len(all) != 2 || all[0].CallID != "c1" || all[1].CallID != "c2" || all[1].Answered || all[1].Arguments != `{"command":"ls"}` {
		t.Fatalf("Permissions = %+v, %v", all, err)
	}
	if err := s.FinishRun(c, "run_p", agentv1.RunState_RUN_STATE_STOPPED, nil, &agentv1.RunError{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.AnswerPermission(c, "run_p", "c2", true, "")
	wantErr(t, err, store.ErrConflict, "answering a request of an ended run")
}
