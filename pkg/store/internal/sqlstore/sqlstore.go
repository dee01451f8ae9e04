// Package sqlstore is the part of the SQL drivers (sqlite, postgres) that
// both share: every store method written once over database/sql, with a
// Dialect for what differs (placeholders, the clock, row locks, how notices
// travel). Times are stored as Unix microseconds, lease times by the
// database's clock, so that replicas with skewed clocks agree on leases.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
)

// Dialect is what differs between the SQL engines.
type Dialect struct {
	// Name names the engine in errors.
	Name string
	// Numbered, when set, turns the core's $1, $2… placeholders into ?1,
	// ?2… (SQLite).
	Numbered bool
	// Now is the SQL expression of the database's clock in Unix microseconds.
	Now string
	// ForUpdate is appended to a SELECT that reads a row the transaction
	// then changes (PostgreSQL: " FOR UPDATE"; SQLite has one writer).
	ForUpdate string
	// NotifyTx, when set, sends notices as part of a transaction (they are
	// delivered when it commits). Without it they go to AfterCommit.
	NotifyTx func(ctx context.Context, tx *sql.Tx, ns []store.Notice) error
	// AfterCommit sends notices after a transaction committed.
	AfterCommit func(ctx context.Context, ns []store.Notice)
	// CoarseClock says Now ticks in milliseconds (SQLite's clock), so that
	// runs started one after the other may share a tick.
	CoarseClock bool
	// Prepare keeps the core's statements prepared on each connection
	// (SQLite: parsing one cost a third of a step's CPU). Without it the
	// driver prepares them (pgx caches its prepared statements itself).
	Prepare bool
}

// DB implements every store method except Notify, Listen, Shared and Close.
type DB struct {
	// Writer is the pool for writes, Reader for reads (the same pool is
	// fine). Relaxed, when set, takes the writes whose loss in a crash of
	// the database server costs little (events, run bookkeeping):
	// PostgreSQL commits them without waiting for the disk, and a later
	// write through Writer, which does wait, makes them durable with it
	// (the log is sequential).
	Writer, Reader, Relaxed *sql.DB
	// Dialect is what this engine does its own way.
	Dialect Dialect

	queries sync.Map // core query text → dialect query text
	known   sync.Map // dialect query texts made by q: the ones that may be prepared
	stmts   sync.Map // stmtKey → *sql.Stmt (Dialect.Prepare)
}

// stmtKey names a prepared statement: its pool and its text.
type stmtKey struct {
	pool  *sql.DB
	query string
}

// stmt returns query prepared on pool, or nil when it is not to be
// prepared (Dialect.Prepare off, or a text q did not make: a migration)
// or not yet: a transaction cannot wait for a connection of its own pool
// (SQLite's writer has one), so in a transaction (tx not nil) a statement
// not yet prepared runs unprepared and is prepared once it has ended.
func (db *DB) stmt(ctx context.Context, pool *sql.DB, query string, tx *Tx) *sql.Stmt {
	if !db.Dialect.Prepare {
		return nil
	}
	if _, ok := db.known.Load(query); !ok {
		return nil
	}
	k := stmtKey{pool, query}
	if v, ok := db.stmts.Load(k); ok {
		return v.(*sql.Stmt)
	}
	if tx != nil {
		tx.unprepared = append(tx.unprepared, query)
		return nil
	}
	return db.prepare(ctx, k)
}

// prepare prepares a statement and keeps it.
func (db *DB) prepare(ctx context.Context, k stmtKey) *sql.Stmt {
	st, err := k.pool.PrepareContext(ctx, k.query)
	if err != nil {
		return nil // run unprepared: the error, if it is one, comes from there
	}
	if v, loaded := db.stmts.LoadOrStore(k, st); loaded {
		st.Close()
		return v.(*sql.Stmt)
	}
	return st
}

// CloseStatements closes the prepared statements; a driver calls it before
// it closes the pools.
func (db *DB) CloseStatements() {
	db.stmts.Range(func(k, v any) bool {
		v.(*sql.Stmt).Close()
		db.stmts.Delete(k)
		return true
	})
}

// query is db.Reader.QueryContext, prepared.
func (db *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := db.stmt(ctx, db.Reader, query, nil); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.Reader.QueryContext(ctx, query, args...)
}

// queryRow is db.Reader.QueryRowContext, prepared.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := db.stmt(ctx, db.Reader, query, nil); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return db.Reader.QueryRowContext(ctx, query, args...)
}

var placeholder = regexp.MustCompile(`\$(\d+)`)

// q returns the query in the dialect.
func (db *DB) q(query string) string {
	if v, ok := db.queries.Load(query); ok {
		return v.(string)
	}
	out := strings.ReplaceAll(query, "{now}", "("+db.Dialect.Now+")")
	out = strings.ReplaceAll(out, "{for_update}", db.Dialect.ForUpdate)
	if db.Dialect.Numbered {
		out = placeholder.ReplaceAllString(out, "?$1")
	}
	db.known.Store(out, struct{}{})
	db.queries.Store(query, out)
	return out
}

// Micros is t in Unix microseconds; the zero time is 0.
func Micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// Time is the time of Unix microseconds; 0 is the zero time.
func Time(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

// Marshal encodes m; a nil message (typed or not) is SQL NULL.
func Marshal(m proto.Message) ([]byte, error) {
	if m == nil || !m.ProtoReflect().IsValid() {
		return nil, nil
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("store: encode %T: %w", m, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func unmarshal(b []byte, m proto.Message) error {
	if err := proto.Unmarshal(b, m); err != nil {
		return fmt.Errorf("store: decode %T: %w", m, err)
	}
	return nil
}

// wrap names the engine in a database error.
func (db *DB) wrap(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed") {
		return fmt.Errorf("%s: %w", db.Dialect.Name, store.ErrClosed)
	}
	return fmt.Errorf("%s: %w", db.Dialect.Name, err)
}
