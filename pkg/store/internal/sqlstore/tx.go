package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/agentcore/agentcore/pkg/store"
)

// Tx is a write transaction: *sql.Tx, with the core's statements run
// prepared (see Dialect.Prepare).
type Tx struct {
	*sql.Tx
	db         *DB
	pool       *sql.DB
	unprepared []string // statements to prepare once the transaction ended
}

// ExecContext is sql.Tx's, prepared.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.db.stmt(ctx, t.pool, query, t); st != nil {
		return t.Tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// QueryContext is sql.Tx's, prepared.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.db.stmt(ctx, t.pool, query, t); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext is sql.Tx's, prepared.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.db.stmt(ctx, t.pool, query, t); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// tx runs fn in a write transaction and sends the notices it collected
// once it committed.
func (db *DB) tx(ctx context.Context, fn func(tx *Tx, notify func(store.Notice)) error) error {
	return db.txMode(ctx, false, fn)
}

// relaxedTx is tx for writes whose loss in a database crash costs little.
func (db *DB) relaxedTx(ctx context.Context, fn func(tx *Tx, notify func(store.Notice)) error) error {
	return db.txMode(ctx, true, fn)
}

func (db *DB) txMode(ctx context.Context, relaxed bool, fn func(tx *Tx, notify func(store.Notice)) error) error {
	w := db.Writer
	if relaxed && db.Relaxed != nil {
		w = db.Relaxed
	}
	stx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return db.wrap(err)
	}
	tx := &Tx{Tx: stx, db: db, pool: w}
	defer func() {
		for _, q := range tx.unprepared {
			db.prepare(ctx, stmtKey{w, q})
		}
	}()
	var ns []store.Notice
	if err := fn(tx, func(n store.Notice) { ns = append(ns, n) }); err != nil {
		_ = tx.Rollback()
		return err
	}
	if len(ns) > 0 && db.Dialect.NotifyTx != nil {
		if err := db.Dialect.NotifyTx(ctx, tx.Tx, ns); err != nil {
			_ = tx.Rollback()
			return db.wrap(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return db.wrap(err)
	}
	if len(ns) > 0 && db.Dialect.NotifyTx == nil && db.Dialect.AfterCommit != nil {
		db.Dialect.AfterCommit(ctx, ns)
	}
	return nil
}

// insertRows inserts rows of width columns in batches of multi-row INSERTs.
func (db *DB) insertRows(ctx context.Context, tx *Tx, head string, width int, args []any) error {
	const maxRows = 200
	for len(args) > 0 {
		n := min(len(args)/width, maxRows)
		var b strings.Builder
		b.WriteString(head)
		b.WriteString(" VALUES ")
		for r := range n {
			if r > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for c := range width {
				if c > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "$%d", r*width+c+1)
			}
			b.WriteByte(')')
		}
		if _, err := tx.ExecContext(ctx, db.q(b.String()), args[:n*width]...); err != nil {
			return db.wrap(err)
		}
		args = args[n*width:]
	}
	return nil
}
