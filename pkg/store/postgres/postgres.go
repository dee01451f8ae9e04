// Package postgres is the store driver for a fleet: any number of
// agent-server replicas on one PostgreSQL database (jackc/pgx). Leases are
// judged by the database's clock; notices travel with LISTEN/NOTIFY on a
// channel named after the schema (so that several deployments, or tests,
// can share a database in their own schemas), sent inside the transaction
// that made the change, so a listener never hears of a write it cannot
// read yet. History writes wait for the disk; events and run bookkeeping
// do not (synchronous_commit off for their transactions): a crash of the
// database server may lose the last few of those, never half a step.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// listenRetry bounds the wait between attempts to reconnect the listener.
const listenRetry = 2 * time.Second

// Store is the PostgreSQL driver.
type Store struct {
	*sqlstore.DB
	cfg     *pgx.ConnConfig
	channel string // the NOTIFY channel: "agentcore" or "agentcore_<schema>"

	closing   chan struct{} // closed by Close: Listen calls return
	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// Options tune OpenWith.
type Options struct {
	// Password is used when dsn holds none, over the PGPASSWORD variable
	// and the password file: a caller that keeps PGPASSWORD out of its
	// environment (agent-server) passes its value here.
	Password string
	// upTo stops the migrations at this version (tests of migrations).
	upTo int
}

// Open connects to the database at dsn (postgres://user:pass@host/db?…;
// search_path=SCHEMA selects a schema) and applies the migrations it lacks.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn string, o Options) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if o.Password != "" && !hasPassword(dsn) {
		cfg.Password = o.Password
	}
	upTo := o.upTo
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &Store{cfg: cfg, closing: make(chan struct{})}
	s.DB = &sqlstore.DB{Writer: db, Reader: db, Dialect: sqlstore.Dialect{
		Name:      "postgres",
		Now:       "(extract(epoch from clock_timestamp()) * 1000000)::bigint",
		ForUpdate: " FOR UPDATE",
		NotifyTx:  s.notifyTx,
	}}
	relaxed := cfg.Copy()
	relaxed.RuntimeParams["synchronous_commit"] = "off"
	s.Relaxed = stdlib.OpenDB(*relaxed)
	s.Relaxed.SetMaxOpenConns(16)
	s.Relaxed.SetMaxIdleConns(16)
	s.Relaxed.SetConnMaxIdleTime(5 * time.Minute)
	var schema string
	if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s.channel = "agentcore"
	if schema != "public" {
		s.channel += "_" + schema
	}
	sub, _ := fs.Sub(migrationFiles, "migrations") // embedded: it exists
	ms, err := store.Migrations(sub)
	if err == nil {
		// One replica migrates at a time; the lock is the schema's own.
		err = s.Migrate(ctx, ms, upTo, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.agentcore_migrations'))`)
	}
	if err != nil {
		s.closeDBs()
		return nil, err
	}
	return s, nil
}

// hasPassword reports whether a postgres:// URL holds a password (user
// info or parameter).
func hasPassword(dsn string) bool {
	u, err := url.Parse(dsn)
	if err != nil {
		return false
	}
	if _, ok := u.User.Password(); ok {
		return true
	}
	return u.Query().Has("password")
}

func (s *Store) closeDBs() error { return errors.Join(s.Writer.Close(), s.Relaxed.Close()) }

// Shared is true: replicas share the database.
func (s *Store) Shared() bool { return true }

// notifyTx sends notices as part of tx: PostgreSQL delivers them at commit.
func (s *Store) notifyTx(ctx context.Context, tx *sql.Tx, ns []store.Notice) error {
	payloads := make([]string, len(ns))
	for i, n := range ns {
		b, err := json.Marshal(n)
		if err != nil {
			return err
		}
		payloads[i] = string(b)
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, s.channel, payloads)
	return err
}

// Notify sends n to every replica's listeners.
func (s *Store) Notify(ctx context.Context, n store.Notice) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	_, err = s.Writer.ExecContext(ctx, `SELECT pg_notify($1, $2)`, s.channel, string(b))
	if err != nil {
		return fmt.Errorf("postgres: notify: %w", err)
	}
	return nil
}

// Listen calls fn with every notice until ctx ends or the store closes.
// It holds a connection of its own; when that connection drops it
// reconnects and delivers a NoticeResync, since notices may have been lost.
func (s *Store) Listen(ctx context.Context, fn func(store.Notice)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		err := s.listenOnce(ctx, fn)
		select {
		case <-s.closing:
			return store.ErrClosed
		default:
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		_ = err // the connection dropped or never came: retry after a pause
		select {
		case <-time.After(listenRetry):
		case <-ctx.Done():
		}
	}
}

// listenOnce listens on one connection until it fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, fn func(store.Notice)) error {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return err
	}
	fn(store.Notice{Kind: store.NoticeResync}) // anything sent before now was not heard
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var nt store.Notice
		if json.Unmarshal([]byte(n.Payload), &nt) == nil {
			fn(nt)
		}
	}
}

// Close closes the database connections and ends Listen calls.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closing)
		err = s.closeDBs()
	})
	return err
}

// String names the driver and the database, without the password.
func (s *Store) String() string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s", s.cfg.User, s.cfg.Host, s.cfg.Port, s.cfg.Database)
}
