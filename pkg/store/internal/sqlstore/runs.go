package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// StartRun stores r as running and takes its agent's lease.
func (db *DB) StartRun(ctx context.Context, r *store.Run, ttl time.Duration) error {
	return db.relaxedTx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		var (
			tenant, leaseRun, leaseOwner string
			exp, now, version            int64
			historyStart                 int
		)
		err := tx.QueryRowContext(ctx, db.q(`SELECT tenant, lease_run, lease_owner, lease_expires, {now}, version, history_length FROM agents WHERE id = $1{for_update}`),
			r.AgentID).Scan(&tenant, &leaseRun, &leaseOwner, &exp, &now, &version, &historyStart)
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
		if db.Dialect.CoarseClock {
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
		res, err := tx.ExecContext(ctx, db.q(`INSERT INTO runs (id, agent_id, tenant, compaction, on_disconnect, state, owner, lease_expires, started, history_start, resume,
			parent_run, root_run, depth, tool_call, subject)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT (id) DO NOTHING`),
			r.ID, r.AgentID, tenant, BoolInt(r.Compaction), int32(r.OnDisconnect), int32(agentv1.RunState_RUN_STATE_RUNNING), r.Owner, until, started,
			historyStart, r.Resume, r.ParentRunID, r.RootRunID, r.Depth, r.ToolCallID, r.User)
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
		r.AgentVersion, r.HistoryStart = version, historyStart
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

// TakeOverRun makes owner the owner of a running run, to resume it.
func (db *DB) TakeOverRun(ctx context.Context, runID, owner string, attempts int, ttl time.Duration) (*store.Run, error) {
	var out *store.Run
	err := db.relaxedTx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		var agentID string
		err := tx.QueryRowContext(ctx, db.q(`UPDATE runs SET owner = $2, lease_expires = {now} + $3, attempts = attempts + 1
			WHERE id = $1 AND state = $4 AND attempts = $5 RETURNING agent_id`),
			runID, owner, ttl.Microseconds(), int32(agentv1.RunState_RUN_STATE_RUNNING), attempts).Scan(&agentID)
		if errors.Is(err, sql.ErrNoRows) {
			r, gerr := scanRun(tx.QueryRowContext(ctx, db.q(`SELECT `+runCols+` FROM runs WHERE id = $1`), runID))
			switch {
			case errors.Is(gerr, sql.ErrNoRows):
				return fmt.Errorf("run %q: %w", runID, store.ErrNotFound)
			case gerr != nil:
				return db.wrap(gerr)
			case r.Done():
				return fmt.Errorf("run %q ended already (%s): %w", runID, r.State, store.ErrConflict)
			}
			return fmt.Errorf("run %q was taken over already (attempt %d): %w", runID, r.Attempts, store.ErrConflict)
		}
		if err != nil {
			return db.wrap(err)
		}
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE agents SET lease_owner = $2, lease_expires = {now} + $3 WHERE id = $1 AND lease_run = $4`),
			agentID, owner, ttl.Microseconds(), runID); err != nil {
			return db.wrap(err)
		}
		out, err = scanRun(tx.QueryRowContext(ctx, db.q(`SELECT `+runCols+` FROM runs WHERE id = $1`), runID))
		return db.wrap(err)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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

const runCols = `id, agent_id, tenant, compaction, on_disconnect, state, result, error, owner, lease_expires, started, ended, last_seq, purged, event_bytes, history_start, resume, attempts,
	parent_run, root_run, depth, tool_call, subject, {now}`

func scanRun(row interface{ Scan(...any) error }) (*store.Run, error) {
	var (
		r                                   store.Run
		compaction, purged                  int
		onDisc, state                       int32
		result, rerr                        []byte
		exp, started, ended, lastSeq, nowUS int64
	)
	if err := row.Scan(&r.ID, &r.AgentID, &r.Tenant, &compaction, &onDisc, &state, &result, &rerr, &r.Owner, &exp, &started, &ended, &lastSeq, &purged,
		&r.EventBytes, &r.HistoryStart, &r.Resume, &r.Attempts, &r.ParentRunID, &r.RootRunID, &r.Depth, &r.ToolCallID, &r.User, &nowUS); err != nil {
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
	if q.RootRunID != "" {
		root := arg(q.RootRunID)
		where = append(where, "(id = "+root+" OR root_run = "+root+")")
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
