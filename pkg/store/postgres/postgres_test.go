package postgres

import (
	"context"
	"io/fs"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/pgtest"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/storetest"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Reopenable(
		func(t *testing.T) string { return pgtest.Schema(t) },
		func(t *testing.T, dsn string) store.Store {
			s, err := Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}))
}

// TestMigrationsForward opens a schema at the first version, writes to it,
// and opens it again at the latest: the data is kept and the new tables work.
func TestMigrationsForward(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	old, err := OpenWith(ctx, dsn, Options{upTo: 1})
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

	// Two replicas start together on the old schema: one migrates, both work.
	var wg sync.WaitGroup
	stores := make([]*Store, 2)
	errs := make([]error, 2)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = Open(ctx, dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	s := stores[0]
	sub, _ := fs.Sub(migrationFiles, "migrations")
	ms, _ := store.Migrations(sub)
	if v, _ := s.Version(ctx); v != len(ms) {
		t.Fatalf("schema version %d after reopening, want %d", v, len(ms))
	}
	msgs, _, err := s.History(ctx, "kept")
	if err != nil || len(msgs) != 1 {
		t.Fatalf("history after migrating: %v, %v", msgs, err)
	}
	if err := stores[1].StartRun(ctx, &store.Run{ID: "run_1", AgentID: "kept", Owner: "me"}, time.Minute); err != nil {
		t.Fatalf("a run on the migrated schema: %v", err)
	}
}

func BenchmarkStep(b *testing.B) {
	s, err := Open(context.Background(), pgtest.Schema(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.Bench(b, s)
}

// TestPasswordOption: a password given in Options is used when the URL
// holds none (agent-server's PGPASSWORD, kept out of its environment), and
// the URL's own password wins over it.
func TestPasswordOption(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pw, ok := u.User.Password()
	if !ok || os.Getenv("PGPASSWORD") != "" {
		t.Skipf("%s holds no password, or PGPASSWORD is set: nothing to hand over", pgtest.EnvVar)
	}
	u.User = url.User(u.User.Username())
	bare := u.String()
	for _, tc := range []struct {
		name string
		dsn  string
		opts Options
		ok   bool
	}{
		{"the option's password", bare, Options{Password: pw}, true},
		{"no password at all", bare, Options{}, false},
		{"the URL's password wins", dsn, Options{Password: "not-the-password"}, true},
	} {
		s, err := OpenWith(ctx, tc.dsn, tc.opts)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want success %v", tc.name, err, tc.ok)
		}
		if err == nil {
			s.Close()
		}
	}
}
