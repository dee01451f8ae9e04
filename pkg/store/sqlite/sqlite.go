// Package sqlite is the default store driver: one SQLite file (pure Go,
// modernc.org/sqlite, so builds stay free of cgo) used by one agent-server
// process. It runs in WAL mode with one writer connection (writes queue in
// Go instead of retrying on SQLITE_BUSY) beside a pool of readers, and
// takes an exclusive lock on PATH.lock so that a second process cannot
// share the file by mistake: replicas need PostgreSQL. The file gives the
// pages of deleted events back (auto_vacuum INCREMENTAL, an incremental
// vacuum after each sweep) and the WAL is cut back to 8 MiB after a
// checkpoint, so that the disk it takes follows what it holds.
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
	"time"

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
	// auto_vacuum takes effect when a new file's first table is made; an
	// older file is converted once, below.
	w, err := sql.Open("sqlite", dsn("&_txlock=immediate&_pragma=auto_vacuum(INCREMENTAL)&_pragma=journal_size_limit(8388608)"))
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
	if err == nil {
		err = s.incrementalVacuum(ctx)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// incrementalVacuum converts a file made without auto_vacuum INCREMENTAL
// (by an older agent-server) with one VACUUM, which rewrites it whole: once,
// at the first start of a newer server.
func (s *Store) incrementalVacuum(ctx context.Context) error {
	var mode int
	if err := s.Writer.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if mode == autoVacuumIncremental {
		return nil
	}
	if _, err := s.Writer.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if _, err := s.Writer.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("sqlite: converting %s to auto_vacuum INCREMENTAL: %w", s.path, err)
	}
	return nil
}

// autoVacuumIncremental is PRAGMA auto_vacuum's value for INCREMENTAL.
const autoVacuumIncremental = 2

// DeleteEvents deletes the events of runs that ended before t, then gives
// their pages back to the file system.
func (s *Store) DeleteEvents(ctx context.Context, t time.Time) (int64, error) {
	n, err := s.DB.DeleteEvents(ctx, t)
	if err == nil && n > 0 {
		err = s.vacuum(ctx)
	}
	return n, err
}

// TrimEvents deletes events by size (store.Events), then gives their pages
// back to the file system.
func (s *Store) TrimEvents(ctx context.Context, perRun, total int64) (int64, error) {
	n, err := s.DB.TrimEvents(ctx, perRun, total)
	if err == nil && n > 0 {
		err = s.vacuum(ctx)
	}
	return n, err
}

// vacuum frees the file's unused pages (the file shrinks at the WAL's next
// checkpoint).
func (s *Store) vacuum(ctx context.Context) error {
	if _, err := s.Writer.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		return fmt.Errorf("sqlite: incremental vacuum: %w", err)
	}
	return nil
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
