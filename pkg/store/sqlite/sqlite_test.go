package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/storetest"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Reopenable(
		func(t *testing.T) string { return filepath.Join(t.TempDir(), "agentcore.db") },
		func(t *testing.T, path string) store.Store {
			s, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}))
}

// TestMigrationsForward opens a database at the first schema version,
// writes to it, and opens it again at the latest: the data is kept and the
// new tables work.
func TestMigrationsForward(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := open(ctx, path, Options{upTo: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := old.Version(ctx); v != 1 {
		t.Fatalf("schema version %d, want 1", v)
	}
	a := &store.Agent{ID: "kept", Spec: &agentv1.Agent{}, Created: time.Now(), Updated: time.Now()}
	if err := old.CreateAgent(ctx, a, []*agentv1.Message{history.User("hello")}); err != nil {
		t.Fatal(err)
	}
	old.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != 2 {
		t.Fatalf("schema version %d after reopening, want 2", v)
	}
	msgs, _, err := s.History(ctx, "kept")
	if err != nil || len(msgs) != 1 {
		t.Fatalf("history after migrating: %v, %v", msgs, err)
	}
	if err := s.StartRun(ctx, &store.Run{ID: "run_1", AgentID: "kept", Owner: "me"}, time.Minute); err != nil {
		t.Fatalf("a run on the migrated schema: %v", err)
	}
	s.Close()
	// Opening an up-to-date database again changes nothing.
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, err := s.GetRun(ctx, "run_1"); err != nil || r.AgentID != "kept" {
		t.Fatalf("run after a second reopen: %v, %v", r, err)
	}
}

func TestSecondProcessIsRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentcore.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "used by another process") {
		t.Fatalf("a second Open of the same file: %v", err)
	}
}

func BenchmarkStep(b *testing.B) {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.Bench(b, s)
}
