package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
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
	sub, _ := fs.Sub(migrationFiles, "migrations")
	ms, _ := store.Migrations(sub)
	if v, _ := s.Version(ctx); v != len(ms) || v < 6 {
		t.Fatalf("schema version %d after reopening, want %d", v, len(ms))
	}
	msgs, _, err := s.History(ctx, "kept")
	if err != nil || len(msgs) != 1 {
		t.Fatalf("history after migrating: %v, %v", msgs, err)
	}
	r := &store.Run{ID: "run_1", AgentID: "kept", Owner: "me", Resume: []byte("r")}
	if err := s.StartRun(ctx, r, time.Minute); err != nil || r.HistoryStart != 1 {
		t.Fatalf("a run on the migrated schema: history start %d, %v", r.HistoryStart, err)
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

// TestDeletedEventsGiveTheirSpaceBack: a file made without auto_vacuum (as
// agent-server made them before) is converted when opened; the pages of
// events swept by size go back to the file system, so that the file
// shrinks to about what it held before them.
func TestDeletedEventsGiveTheirSpaceBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentcore.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec("CREATE TABLE older (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	old.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode int
	if err := s.Writer.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil || mode != autoVacuumIncremental {
		t.Fatalf("auto_vacuum %d, %v; want INCREMENTAL (2)", mode, err)
	}
	size := func() int64 {
		t.Helper()
		if _, err := s.Writer.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	a := &store.Agent{ID: "a", Spec: &agentv1.Agent{}, Created: time.Now(), Updated: time.Now()}
	if err := s.CreateAgent(ctx, a, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.StartRun(ctx, &store.Run{ID: "run_1", AgentID: "a", Owner: "me"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	before := size()
	var evs []*agentv1.Event
	for i := range 80 {
		evs = append(evs, &agentv1.Event{Seq: int64(i + 1), RunId: "run_1", Kind: &agentv1.Event_ToolOutput{
			ToolOutput: &agentv1.ToolOutputEvent{Data: strings.Repeat("x", 64<<10)}}})
	}
	if err := s.AppendEvents(ctx, evs, store.RunEnd{RunID: "run_1", State: agentv1.RunState_RUN_STATE_SUCCEEDED}); err != nil {
		t.Fatal(err)
	}
	full := size()
	if n, err := s.TrimEvents(ctx, 1<<20, 0); err != nil || n != 80 {
		t.Fatalf("TrimEvents = %d, %v", n, err)
	}
	after := size()
	t.Logf("file: %d KiB, %d KiB with 5 MiB of events, %d KiB once they were swept", before>>10, full>>10, after>>10)
	if full < before+5<<20 || after > before+256<<10 {
		t.Errorf("file %d bytes before, %d with the events, %d after: their pages were not given back", before, full, after)
	}
}

// TestQuietSweepTakesNoWriteLock: a size sweep that finds nothing over its
// bounds does not wait for the one writer connection, which every write of
// every run shares.
func TestQuietSweepTakesNoWriteLock(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "agentcore.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	held, err := s.Writer.Conn(ctx) // a long write in progress
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if n, err := s.TrimEvents(short, 1<<20, 1<<30); err != nil || n != 0 {
		t.Fatalf("TrimEvents with nothing over its bounds, while a write is in progress: %d, %v; want 0, nil at once", n, err)
	}
}
