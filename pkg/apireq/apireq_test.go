package apireq

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestApplyMask(t *testing.T) {
	cur := &agentv1.AgentConfig{Model: proto.String("m1"), System: proto.String("be brief"),
		Compact: &agentv1.CompactConfig{Model: proto.String("c1")}}
	a := &agentv1.Agent{Config: &agentv1.AgentConfig{Model: proto.String("m2")}, Tools: &agentv1.ToolSelection{}}
	tests := []struct {
		name      string
		paths     []string
		model     string // the config's model after
		system    string
		compact   string
		tools     bool
		wantField string // the field of an INVALID_ARGUMENT, "" for none
	}{
		{"no mask merges", nil, "m2", "be brief", "c1", true, ""},
		{"one field", []string{"config.model"}, "m2", "be brief", "c1", false, ""},
		{"a field cleared", []string{"config.system"}, "m1", "", "c1", false, ""},
		{"a sub-field cleared", []string{"config.compact.model"}, "m1", "be brief", "", false, ""},
		{"the whole config", []string{"config"}, "m2", "", "", false, ""},
		{"a selection", []string{"tools"}, "m1", "be brief", "c1", true, ""},
		{"no such field", []string{"tools", "config.nope"}, "", "", "", false, "update_mask.paths[1]"},
		{"no sub-fields", []string{"config.model.x"}, "", "", "", false, "update_mask.paths[0]"},
		{"unknown path", []string{"history"}, "", "", "", false, "update_mask.paths[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ApplyMask(cur, a, tc.paths)
			if tc.wantField != "" {
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tc.wantField) {
					t.Fatalf("err = %v, want INVALID_ARGUMENT naming %s", err, tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := u.Config
			if c.GetModel() != tc.model || c.GetSystem() != tc.system || c.GetCompact().GetModel() != tc.compact || u.Tools != tc.tools {
				t.Errorf("got model %q system %q compact %q tools %v", c.GetModel(), c.GetSystem(), c.GetCompact().GetModel(), u.Tools)
			}
			if cur.GetModel() != "m1" || cur.GetCompact().GetModel() != "c1" {
				t.Fatalf("the current config changed: %v", cur)
			}
		})
	}
}

func TestPageTokens(t *testing.T) {
	tok := HistoryPageToken(40, 100)
	if start, err := HistoryPageStart(tok, 120); err != nil || start != 40 {
		t.Errorf("a grown history: %d, %v", start, err)
	}
	if _, err := HistoryPageStart(tok, 50); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("a history replaced by a shorter one: %v, want FAILED_PRECONDITION", err)
	}
	for _, bad := range []string{"", "!!", RunPageToken(&store.Run{ID: "r1", Started: time.Unix(1, 0)})} {
		if _, err := HistoryPageStart(bad, 10); status.Code(err) != codes.InvalidArgument {
			t.Errorf("token %q: %v, want INVALID_ARGUMENT", bad, err)
		}
	}
	if c, ok := RunCursor(RunPageToken(&store.Run{ID: "r1", Started: time.UnixMicro(7)})); !ok || c.ID != "r1" || c.Started.UnixMicro() != 7 {
		t.Errorf("a run cursor read back: %v, %v", c, ok)
	}
	if _, ok := RunCursor(HistoryPageToken(1, 2)); ok {
		t.Error("a history token read as a run cursor")
	}
	for n, want := range map[int32]int{0: DefaultPageSize, 5: 5, 5000: MaxPageSize} {
		if got, err := PageSize(n); err != nil || got != want {
			t.Errorf("PageSize(%d) = %d, %v; want %d", n, got, err, want)
		}
	}
	if _, err := PageSize(-1); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a negative page size: %v", err)
	}
}
