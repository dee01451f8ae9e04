// Package sqlite is the default store driver: one SQLite file (pure Go,
// modernc.org/sqlite, so builds stay free of cgo) used by one agent-server
// process. It runs in WAL mode with one writer connection (writes queue in
// Go instead of retrying on SQLITE_BUSY) beside a pool of readers, and
// takes an exclusive lock on PATH.lock so that a second process cannot
// share the file by mistake: replicas need PostgreSQL.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is the SQLite driver.
type Store struct {
	*sqlstore.DB
	hub  store.Hub
	path string
	lock *os.File // holds the exclusive flock on path+".lock"
}

var _ store.Store = (*Store)(nil)

// Options tune Open.
type Options struct {
	// upTo stops the migrations at this version (tests of migrations).
	upTo int
}

// Open opens (creating it and its folder when missing) the database at
// path and applies the migrations it lacks.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, Options{})
}

func open(ctx context.Context, path string, o Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: no database path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("sqlite: %s is used by another process (only one agent-server may use a SQLite store; use PostgreSQL for replicas): %w", path, err)
	}
	s := &Store{path: path, lock: lock}
	dsn := func(extra string) string {
		q := url.Values{}
		for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(ON)"} {
			q.Add("_pragma", p)
		}
		return "file:" + path + "?" + q.Encode() + extra
	}
	w, err := sql.Open("sqlite", dsn("&_txlock=immediate"))
	if err != nil {
		s.unlock()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	w.SetMaxOpenConns(1) // one writer: writes wait their turn in Go, never on SQLITE_BUSY
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err := sql.Open("sqlite", dsn("&_pragma=query_only(1)"))
	if err != nil {
		w.Close()
		s.unlock()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	s.DB = &sqlstore.DB{Writer: w, Reader: r, Dialect: sqlstore.Dialect{
		Name:        "sqlite",
		Numbered:    true,
		Now:         "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)",
		CoarseClock: true,
		AfterCommit: func(ctx context.Context, ns []store.Notice) { s.notifyAll(ctx, ns) },
		Prepare:     true,
	}}
	sub, _ := fs.Sub(migrationFiles, "migrations") // embedded: it exists
	ms, err := store.Migrations(sub)
	if err == nil {
		err = s.Migrate(ctx, ms, o.upTo, "")
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) notifyAll(ctx context.Context, ns []store.Notice) {
	for _, n := range ns {
		_ = s.hub.Notify(ctx, n)
	}
}

func (s *Store) unlock() {
	if s.lock != nil {
		_ = syscall.Flock(int(s.lock.Fd()), syscall.LOCK_UN)
		s.lock.Close()
		s.lock = nil
	}
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Shared is false: one process uses the file.
func (s *Store) Shared() bool { return false }

// Notify hands n to this process's listeners.
func (s *Store) Notify(ctx context.Context, n store.Notice) error { return s.hub.Notify(ctx, n) }

// Listen calls fn with every notice until ctx ends or the store closes.
func (s *Store) Listen(ctx context.Context, fn func(store.Notice)) error {
	return s.hub.Listen(ctx, fn)
}

// Close closes the database and releases the file lock.
func (s *Store) Close() error {
	s.hub.Close()
	var err error
	if s.DB != nil {
		s.CloseStatements()
		err = errors.Join(s.Writer.Close(), s.Reader.Close())
	}
	s.unlock()
	return err
}

// String names the driver and its file.
func (s *Store) String() string { return "sqlite:" + s.path }
