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
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
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
	// W is used for writes, R for reads (the same pool is fine). Relaxed,
	// when set, takes the writes whose loss in a crash of the database
	// server costs little (events, run bookkeeping): PostgreSQL commits
	// them without waiting for the disk, and a later write through W, which
	// does wait, makes them durable with it (the log is sequential).
	W, R, Relaxed *sql.DB
	D             Dialect

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
	if !db.D.Prepare {
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

// query is db.R.QueryContext, prepared.
func (db *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := db.stmt(ctx, db.R, query, nil); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.R.QueryContext(ctx, query, args...)
}

// queryRow is db.R.QueryRowContext, prepared.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := db.stmt(ctx, db.R, query, nil); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return db.R.QueryRowContext(ctx, query, args...)
}

var placeholder = regexp.MustCompile(`\$(\d+)`)

// q returns the query in the dialect.
func (db *DB) q(query string) string {
	if v, ok := db.queries.Load(query); ok {
		return v.(string)
	}
	out := strings.ReplaceAll(query, "{now}", "("+db.D.Now+")")
	out = strings.ReplaceAll(out, "{for_update}", db.D.ForUpdate)
	if db.D.Numbered {
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
	w := db.W
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
	if len(ns) > 0 && db.D.NotifyTx != nil {
		if err := db.D.NotifyTx(ctx, tx.Tx, ns); err != nil {
			_ = tx.Rollback()
			return db.wrap(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return db.wrap(err)
	}
	if len(ns) > 0 && db.D.NotifyTx == nil && db.D.AfterCommit != nil {
		db.D.AfterCommit(ctx, ns)
	}
	return nil
}

// wrap names the engine in a database error.
func (db *DB) wrap(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed") {
		return fmt.Errorf("%s: %w", db.D.Name, store.ErrClosed)
	}
	return fmt.Errorf("%s: %w", db.D.Name, err)
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

func (db *DB) insertMessages(ctx context.Context, tx *Tx, agentID string, at int, msgs []*agentv1.Message) error {
	args := make([]any, 0, 3*len(msgs))
	for i, m := range msgs {
		b, err := Marshal(m)
		if err != nil {
			return err
		}
		args = append(args, agentID, at+i, b)
	}
	return db.insertRows(ctx, tx, "INSERT INTO messages (agent_id, idx, data)", 3, args)
}

const agentCols = `id, tenant, spec, secrets, usage, history_length, version, created, updated, lease_run, lease_expires, {now}`

func scanAgent(row interface{ Scan(...any) error }) (*store.Agent, error) {
	var (
		a                            store.Agent
		spec, usage                  []byte
		secrets, leaseRun            string
		created, updated, exp, nowUS int64
		hlen                         int64
	)
	if err := row.Scan(&a.ID, &a.Tenant, &spec, &secrets, &usage, &hlen, &a.Version, &created, &updated, &leaseRun, &exp, &nowUS); err != nil {
		return nil, err
	}
	a.Spec, a.Usage = &agentv1.Agent{}, &agentv1.Usage{}
	if err := unmarshal(spec, a.Spec); err != nil {
		return nil, err
	}
	if err := unmarshal(usage, a.Usage); err != nil {
		return nil, err
	}
	if secrets != "" {
		a.Secrets = strings.Split(secrets, "\n")
	}
	a.HistoryLength = int(hlen)
	a.Created, a.Updated = Time(created), Time(updated)
	if leaseRun != "" && exp > nowUS {
		a.RunID = leaseRun
	}
	return &a, nil
}

// CreateAgent stores a new agent with its initial history.
func (db *DB) CreateAgent(ctx context.Context, a *store.Agent, history []*agentv1.Message) error {
	spec, err := Marshal(a.Spec)
	if err != nil {
		return err
	}
	usage := a.Usage
	if usage == nil {
		usage = &agentv1.Usage{}
	}
	ub, err := Marshal(usage)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		res, err := tx.ExecContext(ctx, db.q(`INSERT INTO agents (id, tenant, spec, secrets, usage, history_length, version, created, updated)
			VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8) ON CONFLICT (id) DO NOTHING`),
			a.ID, a.Tenant, spec, strings.Join(a.Secrets, "\n"), ub, len(history), Micros(a.Created), Micros(a.Updated))
		if err != nil {
			return db.wrap(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("agent %q: %w", a.ID, store.ErrExists)
		}
		if err := db.insertMessages(ctx, tx, a.ID, 0, history); err != nil {
			return err
		}
		a.Version = 1
		return nil
	})
}

// GetAgent returns an agent.
func (db *DB) GetAgent(ctx context.Context, id string) (*store.Agent, error) {
	a, err := scanAgent(db.queryRow(ctx, db.q(`SELECT `+agentCols+` FROM agents WHERE id = $1`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("agent %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, db.wrap(err)
	}
	return a, nil
}

// AgentVersion returns an agent's version.
func (db *DB) AgentVersion(ctx context.Context, id string) (int64, error) {
	var v int64
	err := db.queryRow(ctx, db.q(`SELECT version FROM agents WHERE id = $1`), id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("agent %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return 0, db.wrap(err)
	}
	return v, nil
}

func limit(n int) int {
	if n <= 0 {
		return 100
	}
	return n
}

// ListAgents pages through agents ordered by id.
func (db *DB) ListAgents(ctx context.Context, q store.AgentQuery) ([]*store.Agent, error) {
	query := `SELECT ` + agentCols + ` FROM agents WHERE id > $1`
	args := []any{q.After}
	if !q.AnyTenant {
		query += ` AND tenant = $2`
		args = append(args, q.Tenant)
	}
	args = append(args, limit(q.Limit))
	query += fmt.Sprintf(` ORDER BY id LIMIT $%d`, len(args))
	rows, err := db.query(ctx, db.q(query), args...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []*store.Agent
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, a)
	}
	return out, db.wrap(rows.Err())
}

// CountAgents counts every agent.
func (db *DB) CountAgents(ctx context.Context) (int, error) {
	var n int
	err := db.queryRow(ctx, db.q(`SELECT COUNT(*) FROM agents`)).Scan(&n)
	return n, db.wrap(err)
}

// UpdateAgent writes an agent's spec, secrets, tenant and update time.
func (db *DB) UpdateAgent(ctx context.Context, a *store.Agent) (int64, error) {
	spec, err := Marshal(a.Spec)
	if err != nil {
		return 0, err
	}
	var v int64
	err = db.tx(ctx, func(tx *Tx, notify func(store.Notice)) error {
		err := tx.QueryRowContext(ctx, db.q(`UPDATE agents SET spec = $2, secrets = $3, tenant = $4, updated = $5, version = version + 1
			WHERE id = $1 RETURNING version`), a.ID, spec, strings.Join(a.Secrets, "\n"), a.Tenant, Micros(a.Updated)).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("agent %q: %w", a.ID, store.ErrNotFound)
		}
		return db.wrap(err)
	})
	return v, err
}

// DeleteAgent removes an agent and, by cascade, everything of it.
func (db *DB) DeleteAgent(ctx context.Context, id string) error {
	return db.tx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		res, err := tx.ExecContext(ctx, db.q(`DELETE FROM agents WHERE id = $1`), id)
		if err != nil {
			return db.wrap(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("agent %q: %w", id, store.ErrNotFound)
		}
		return nil
	})
}

// History returns an agent's history and version, read in one statement.
func (db *DB) History(ctx context.Context, agentID string) ([]*agentv1.Message, int64, error) {
	rows, err := db.query(ctx, db.q(`SELECT a.version, m.data FROM agents a LEFT JOIN messages m ON m.agent_id = a.id
		WHERE a.id = $1 ORDER BY m.idx`), agentID)
	if err != nil {
		return nil, 0, db.wrap(err)
	}
	defer rows.Close()
	var (
		out   []*agentv1.Message
		v     int64
		found bool
	)
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&v, &data); err != nil {
			return nil, 0, db.wrap(err)
		}
		found = true
		if data == nil {
			continue // no message: the LEFT JOIN's single row
		}
		m := &agentv1.Message{}
		if err := unmarshal(data, m); err != nil {
			return nil, 0, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, db.wrap(err)
	}
	if !found {
		return nil, 0, fmt.Errorf("agent %q: %w", agentID, store.ErrNotFound)
	}
	return out, v, nil
}

// AppendHistory appends msgs at position at, with the usage totals.
func (db *DB) AppendHistory(ctx context.Context, agentID string, at int, msgs []*agentv1.Message, usage *agentv1.Usage, sync bool) (int64, error) {
	var ub []byte
	if usage != nil {
		var err error
		if ub, err = Marshal(usage); err != nil {
			return 0, err
		}
	}
	var v int64
	err := db.txMode(ctx, !sync, func(tx *Tx, _ func(store.Notice)) error {
		// The update checks the position and locks the row in one statement.
		err := tx.QueryRowContext(ctx, db.q(`UPDATE agents SET history_length = $3, usage = COALESCE($4, usage), version = version + 1
			WHERE id = $1 AND history_length = $2 RETURNING version`), agentID, at, at+len(msgs), ub).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			var n int
			switch err := tx.QueryRowContext(ctx, db.q(`SELECT history_length FROM agents WHERE id = $1`), agentID).Scan(&n); {
			case errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("agent %q: %w", agentID, store.ErrNotFound)
			case err != nil:
				return db.wrap(err)
			}
			return fmt.Errorf("agent %q: append at %d to a history of %d: %w", agentID, at, n, store.ErrConflict)
		}
		if err != nil {
			return db.wrap(err)
		}
		return db.insertMessages(ctx, tx, agentID, at, msgs)
	})
	return v, err
}

// ReplaceHistory replaces an agent's history.
func (db *DB) ReplaceHistory(ctx context.Context, agentID string, msgs []*agentv1.Message) (int64, error) {
	var v int64
	err := db.tx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		err := tx.QueryRowContext(ctx, db.q(`UPDATE agents SET history_length = $2, version = version + 1 WHERE id = $1 RETURNING version`),
			agentID, len(msgs)).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("agent %q: %w", agentID, store.ErrNotFound)
		}
		if err != nil {
			return db.wrap(err)
		}
		if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM messages WHERE agent_id = $1`), agentID); err != nil {
			return db.wrap(err)
		}
		return db.insertMessages(ctx, tx, agentID, 0, msgs)
	})
	return v, err
}

// StartRun stores r as running and takes its agent's lease.
func (db *DB) StartRun(ctx context.Context, r *store.Run, ttl time.Duration) error {
	return db.relaxedTx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		var (
			tenant, leaseRun, leaseOwner string
			exp, now, version            int64
		)
		err := tx.QueryRowContext(ctx, db.q(`SELECT tenant, lease_run, lease_owner, lease_expires, {now}, version FROM agents WHERE id = $1{for_update}`),
			r.AgentID).Scan(&tenant, &leaseRun, &leaseOwner, &exp, &now, &version)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("agent %q: %w", r.AgentID, store.ErrNotFound)
		}
		if err != nil {
			return db.wrap(err)
		}
		if leaseRun != "" {
			var state int32
			err := tx.QueryRowContext(ctx, db.q(`SELECT state FROM runs WHERE id = $1`), leaseRun).Scan(&state)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return db.wrap(err)
			}
			if err == nil && agentv1.RunState(state) == agentv1.RunState_RUN_STATE_RUNNING {
				return &store.BusyError{RunID: leaseRun, Owner: leaseOwner, Expired: exp <= now}
			}
		}
		until := now + ttl.Microseconds()
		started := now
		if db.D.CoarseClock {
			// Runs are listed newest first by their start: one started in
			// the same tick as the tenant's last one starts after it.
			var last sql.NullInt64
			if err := tx.QueryRowContext(ctx, db.q(`SELECT MAX(started) FROM runs WHERE tenant = $1`), tenant).Scan(&last); err != nil {
				return db.wrap(err)
			}
			if last.Valid && last.Int64 >= started {
				started = last.Int64 + 1
			}
		}
		res, err := tx.ExecContext(ctx, db.q(`INSERT INTO runs (id, agent_id, tenant, compaction, on_disconnect, state, owner, lease_expires, started)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`),
			r.ID, r.AgentID, tenant, BoolInt(r.Compaction), int32(r.OnDisconnect), int32(agentv1.RunState_RUN_STATE_RUNNING), r.Owner, until, started)
		if err != nil {
			return db.wrap(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("run %q: %w", r.ID, store.ErrExists)
		}
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE agents SET lease_run = $2, lease_owner = $3, lease_expires = $4 WHERE id = $1`),
			r.AgentID, r.ID, r.Owner, until); err != nil {
			return db.wrap(err)
		}
		r.Tenant, r.State, r.Started, r.LeaseExpires = tenant, agentv1.RunState_RUN_STATE_RUNNING, Time(started), Time(until)
		r.AgentVersion = version
		return nil
	})
}

// BoolInt is b as SQL's 0 or 1.
func BoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RenewLeases extends the leases of owner's running runs.
func (db *DB) RenewLeases(ctx context.Context, owner string, ttl time.Duration) ([]string, error) {
	var ids []string
	err := db.relaxedTx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		ids = nil
		rows, err := tx.QueryContext(ctx, db.q(`UPDATE runs SET lease_expires = {now} + $2 WHERE owner = $1 AND state = $3 RETURNING id`),
			owner, ttl.Microseconds(), int32(agentv1.RunState_RUN_STATE_RUNNING))
		if err != nil {
			return db.wrap(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return db.wrap(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return db.wrap(err)
		}
		_, err = tx.ExecContext(ctx, db.q(`UPDATE agents SET lease_expires = {now} + $2 WHERE lease_owner = $1 AND lease_run <> ''`),
			owner, ttl.Microseconds())
		return db.wrap(err)
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(ids)
	return ids, nil
}

// FinishRun ends a running run and releases its lease.
func (db *DB) FinishRun(ctx context.Context, runID string, state agentv1.RunState, result *agentv1.RunResultEvent, runErr *agentv1.RunError) error {
	return db.relaxedTx(ctx, func(tx *Tx, notify func(store.Notice)) error {
		return db.finish(ctx, tx, notify, store.RunEnd{RunID: runID, State: state, Result: result, Error: runErr})
	})
}

// finish ends a running run and releases its lease, in tx.
func (db *DB) finish(ctx context.Context, tx *Tx, notify func(store.Notice), e store.RunEnd) error {
	rb, err := Marshal(e.Result)
	if err != nil {
		return err
	}
	eb, err := Marshal(e.Error)
	if err != nil {
		return err
	}
	var agentID string
	err = tx.QueryRowContext(ctx, db.q(`UPDATE runs SET state = $2, result = $3, error = $4, ended = {now}
		WHERE id = $1 AND state = $5 RETURNING agent_id`), e.RunID, int32(e.State), rb, eb, int32(agentv1.RunState_RUN_STATE_RUNNING)).Scan(&agentID)
	if errors.Is(err, sql.ErrNoRows) {
		var cur int32
		switch err := tx.QueryRowContext(ctx, db.q(`SELECT state FROM runs WHERE id = $1`), e.RunID).Scan(&cur); {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("run %q: %w", e.RunID, store.ErrNotFound)
		case err != nil:
			return db.wrap(err)
		}
		return fmt.Errorf("run %q ended already (%s): %w", e.RunID, agentv1.RunState(cur), store.ErrConflict)
	}
	if err != nil {
		return db.wrap(err)
	}
	res, err := tx.ExecContext(ctx, db.q(`UPDATE agents SET lease_run = '', lease_owner = '', lease_expires = 0 WHERE id = $1 AND lease_run = $2`),
		agentID, e.RunID)
	if err != nil {
		return db.wrap(err)
	}
	notify(store.Notice{Kind: store.NoticeRunEnded, RunID: e.RunID, AgentID: agentID})
	if n, _ := res.RowsAffected(); n > 0 {
		notify(store.Notice{Kind: store.NoticeLease, AgentID: agentID, RunID: e.RunID})
	}
	return nil
}

const runCols = `id, agent_id, tenant, compaction, on_disconnect, state, result, error, owner, lease_expires, started, ended, last_seq, purged, {now}`

func scanRun(row interface{ Scan(...any) error }) (*store.Run, error) {
	var (
		r                                   store.Run
		compaction, purged                  int
		onDisc, state                       int32
		result, rerr                        []byte
		exp, started, ended, lastSeq, nowUS int64
	)
	if err := row.Scan(&r.ID, &r.AgentID, &r.Tenant, &compaction, &onDisc, &state, &result, &rerr, &r.Owner, &exp, &started, &ended, &lastSeq, &purged, &nowUS); err != nil {
		return nil, err
	}
	r.Compaction, r.Purged = compaction != 0, purged != 0
	r.OnDisconnect, r.State = agentv1.OnDisconnect(onDisc), agentv1.RunState(state)
	if result != nil {
		r.Result = &agentv1.RunResultEvent{}
		if err := unmarshal(result, r.Result); err != nil {
			return nil, err
		}
	}
	if rerr != nil {
		r.Error = &agentv1.RunError{}
		if err := unmarshal(rerr, r.Error); err != nil {
			return nil, err
		}
	}
	r.LeaseExpires, r.Started, r.Ended, r.LastSeq = Time(exp), Time(started), Time(ended), lastSeq
	r.LeaseExpired = !r.Done() && exp <= nowUS
	return &r, nil
}

// GetRun returns a run.
func (db *DB) GetRun(ctx context.Context, id string) (*store.Run, error) {
	r, err := scanRun(db.queryRow(ctx, db.q(`SELECT `+runCols+` FROM runs WHERE id = $1`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, db.wrap(err)
	}
	return r, nil
}

// ListRuns pages through runs, newest first.
func (db *DB) ListRuns(ctx context.Context, q store.RunQuery) ([]*store.Run, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.AgentID != "" {
		where = append(where, "agent_id = "+arg(q.AgentID))
	}
	if !q.AnyTenant {
		where = append(where, "tenant = "+arg(q.Tenant))
	}
	if q.State != agentv1.RunState_RUN_STATE_UNSPECIFIED {
		where = append(where, "state = "+arg(int32(q.State)))
	}
	if c := q.Before; c != nil {
		s := arg(Micros(c.Started))
		where = append(where, fmt.Sprintf("(started < %s OR (started = %s AND id < %s))", s, s, arg(c.ID)))
	}
	query := `SELECT ` + runCols + ` FROM runs`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY started DESC, id DESC LIMIT " + arg(limit(q.Limit))
	rows, err := db.query(ctx, db.q(query), args...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []*store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, r)
	}
	return out, db.wrap(rows.Err())
}

// AppendEvents stores events, a run's in seq order, then ends runs, and
// tells listeners, in one transaction. A run whose events do not follow
// its stored ones (or that is gone) is left out, with its end.
func (db *DB) AppendEvents(ctx context.Context, events []*agentv1.Event, ends ...store.RunEnd) error {
	if len(events) == 0 && len(ends) == 0 {
		return nil
	}
	var left store.LeftOut
	err := db.relaxedTx(ctx, func(tx *Tx, notify func(store.Notice)) error {
		left = store.LeftOut{}
		for evs := events; len(evs) > 0; {
			run := evs[0].GetRunId()
			n := 1
			for n < len(evs) && evs[n].GetRunId() == run {
				n++
			}
			err := db.appendRunEvents(ctx, tx, run, evs[:n])
			switch {
			case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
				left[run] = err // nothing of this run was written
			case err != nil:
				return err
			default:
				notify(store.Notice{Kind: store.NoticeEvents, RunID: run, Seq: evs[n-1].GetSeq()})
			}
			evs = evs[n:]
		}
		for _, e := range ends {
			if left[e.RunID] != nil {
				continue
			}
			err := db.finish(ctx, tx, notify, e)
			if err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return left.Err()
}

// appendRunEvents stores a batch of one run's events.
func (db *DB) appendRunEvents(ctx context.Context, tx *Tx, run string, evs []*agentv1.Event) error {
	args := make([]any, 0, 3*len(evs))
	var last int64
	for i, ev := range evs {
		if i > 0 && ev.GetSeq() <= last {
			return fmt.Errorf("event %d of run %q after %d: %w", ev.GetSeq(), run, last, store.ErrConflict)
		}
		last = ev.GetSeq()
		b, err := Marshal(ev)
		if err != nil {
			return err
		}
		args = append(args, run, ev.GetSeq(), b)
	}
	// The update checks the batch follows the stored events and locks the run.
	res, err := tx.ExecContext(ctx, db.q(`UPDATE runs SET last_seq = $2 WHERE id = $1 AND last_seq < $3`), run, last, evs[0].GetSeq())
	if err != nil {
		return db.wrap(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var stored int64
		switch err := tx.QueryRowContext(ctx, db.q(`SELECT last_seq FROM runs WHERE id = $1`), run).Scan(&stored); {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("events of run %q: %w", run, store.ErrNotFound)
		case err != nil:
			return db.wrap(err)
		}
		return fmt.Errorf("event %d of run %q after %d: %w", evs[0].GetSeq(), run, stored, store.ErrConflict)
	}
	return db.insertRows(ctx, tx, "INSERT INTO events (run_id, seq, data)", 3, args)
}

// Events returns up to limit events of a run after seq after.
func (db *DB) Events(ctx context.Context, runID string, after int64, n int) ([]*agentv1.Event, error) {
	rows, err := db.query(ctx, db.q(`SELECT data FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`),
		runID, after, limit(n))
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []*agentv1.Event
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, db.wrap(err)
		}
		ev := &agentv1.Event{}
		if err := unmarshal(data, ev); err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, db.wrap(err)
	}
	if len(out) == 0 {
		var one int
		err := db.queryRow(ctx, db.q(`SELECT 1 FROM runs WHERE id = $1`), runID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("run %q: %w", runID, store.ErrNotFound)
		}
		if err != nil {
			return nil, db.wrap(err)
		}
	}
	return out, nil
}

// DeleteEvents deletes the events of runs that ended before t.
func (db *DB) DeleteEvents(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := db.relaxedTx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		res, err := tx.ExecContext(ctx, db.q(`DELETE FROM events WHERE run_id IN
			(SELECT id FROM runs WHERE state <> $1 AND purged = 0 AND ended < $2)`), int32(agentv1.RunState_RUN_STATE_RUNNING), Micros(t))
		if err != nil {
			return db.wrap(err)
		}
		n, _ = res.RowsAffected()
		_, err = tx.ExecContext(ctx, db.q(`UPDATE runs SET purged = 1 WHERE state <> $1 AND purged = 0 AND ended < $2 AND last_seq > 0`),
			int32(agentv1.RunState_RUN_STATE_RUNNING), Micros(t))
		return db.wrap(err)
	})
	return n, err
}

// AskPermission stores a pending permission request.
func (db *DB) AskPermission(ctx context.Context, p *store.Permission) error {
	return db.relaxedTx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		var one int
		err := tx.QueryRowContext(ctx, db.q(`SELECT 1 FROM runs WHERE id = $1`), p.RunID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %q: %w", p.RunID, store.ErrNotFound)
		}
		if err != nil {
			return db.wrap(err)
		}
		res, err := tx.ExecContext(ctx, db.q(`INSERT INTO permissions (run_id, call_id, tool_name, arguments, asked)
			VALUES ($1, $2, $3, $4, {now}) ON CONFLICT (run_id, call_id) DO NOTHING`), p.RunID, p.CallID, p.ToolName, p.Arguments)
		if err != nil {
			return db.wrap(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("permission %q of run %q: %w", p.CallID, p.RunID, store.ErrExists)
		}
		return nil
	})
}

const permCols = `run_id, call_id, tool_name, arguments, asked, answered, allow, reason`

func scanPermission(row interface{ Scan(...any) error }) (*store.Permission, error) {
	var (
		p               store.Permission
		asked           int64
		answered, allow int
	)
	if err := row.Scan(&p.RunID, &p.CallID, &p.ToolName, &p.Arguments, &asked, &answered, &allow, &p.Reason); err != nil {
		return nil, err
	}
	p.Asked, p.Answered, p.Allow = Time(asked), answered != 0, allow != 0
	return &p, nil
}

// AnswerPermission decides a pending permission request.
func (db *DB) AnswerPermission(ctx context.Context, runID, callID string, allow bool, reason string) (*store.Permission, error) {
	var out *store.Permission
	err := db.relaxedTx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		var state int32
		err := tx.QueryRowContext(ctx, db.q(`SELECT state FROM runs WHERE id = $1`), runID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %q: %w", runID, store.ErrNotFound)
		}
		if err != nil {
			return db.wrap(err)
		}
		p, err := scanPermission(tx.QueryRowContext(ctx, db.q(`SELECT `+permCols+` FROM permissions WHERE run_id = $1 AND call_id = $2{for_update}`), runID, callID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("permission %q of run %q: %w", callID, runID, store.ErrNotFound)
		}
		if err != nil {
			return db.wrap(err)
		}
		if agentv1.RunState(state) != agentv1.RunState_RUN_STATE_RUNNING {
			return fmt.Errorf("run %q ended (%s): %w", runID, agentv1.RunState(state), store.ErrConflict)
		}
		out = p
		if p.Answered {
			return fmt.Errorf("permission %q of run %q: answered already: %w", callID, runID, store.ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE permissions SET answered = 1, allow = $3, reason = $4 WHERE run_id = $1 AND call_id = $2`),
			runID, callID, BoolInt(allow), reason); err != nil {
			return db.wrap(err)
		}
		p.Answered, p.Allow, p.Reason = true, allow, reason
		return nil
	})
	return out, err
}

// Permissions returns a run's permission requests in order.
func (db *DB) Permissions(ctx context.Context, runID string) ([]*store.Permission, error) {
	rows, err := db.query(ctx, db.q(`SELECT `+permCols+` FROM permissions WHERE run_id = $1 ORDER BY asked, call_id`), runID)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []*store.Permission
	for rows.Next() {
		p, err := scanPermission(rows)
		if err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, db.wrap(err)
	}
	if len(out) == 0 {
		if _, err := db.GetRun(ctx, runID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Migrate applies the migrations the database lacks, each in its own
// transaction, up to version upTo (0: all). lock, when set, runs first in
// each transaction (PostgreSQL: an advisory lock, so that replicas starting
// together migrate one at a time).
func (db *DB) Migrate(ctx context.Context, ms []store.Migration, upTo int, lock string) error {
	err := db.tx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		if lock != "" {
			if _, err := tx.ExecContext(ctx, lock); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: migrations table: %w", db.D.Name, err)
	}
	for _, m := range ms {
		if upTo > 0 && m.Version > upTo {
			break
		}
		err := db.tx(ctx, func(tx *Tx, _ func(store.Notice)) error {
			if lock != "" {
				if _, err := tx.ExecContext(ctx, lock); err != nil {
					return err
				}
			}
			var one int
			err := tx.QueryRowContext(ctx, db.q(`SELECT 1 FROM schema_migrations WHERE version = $1`), m.Version).Scan(&one)
			if err == nil {
				return nil // applied already
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, db.q(`INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)`),
				m.Version, m.Name, time.Now().UnixMicro())
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: migration %d (%s): %w", db.D.Name, m.Version, m.Name, err)
		}
	}
	return nil
}

// Version returns the schema version the database is at.
func (db *DB) Version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := db.queryRow(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v)
	return int(v.Int64), db.wrap(err)
}
