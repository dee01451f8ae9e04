package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/internal/sqlstore"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// A model step writes its messages (one statement: a data-modifying CTE,
// arrays for the rows; one wait for the disk) and its events, which go
// beside the run in batches. A run's start is one round trip (a function,
// migration 0003); its last events and its end are another (migration 0004).

// appendHistorySQL checks the position, bumps the version, sets the usage
// and inserts the messages: nothing happens unless the history has $2
// messages.
const appendHistorySQL = `WITH u AS (
	UPDATE agents SET history_length = $3, usage = COALESCE($4, usage), version = version + 1
	WHERE id = $1 AND history_length = $2 RETURNING version
), ins AS (
	INSERT INTO messages (agent_id, idx, data)
	SELECT $1, $2 + m.ord - 1, m.data FROM u, unnest($5::bytea[]) WITH ORDINALITY AS m(data, ord)
)
SELECT version FROM u`

// AppendHistory appends msgs at position at, with the usage totals, in one
// statement.
func (s *Store) AppendHistory(ctx context.Context, agentID string, at int, msgs []*agentv1.Message, usage *agentv1.Usage, sync bool) (int64, error) {
	data := make([][]byte, len(msgs))
	for i, m := range msgs {
		b, err := proto.Marshal(m)
		if err != nil {
			return 0, fmt.Errorf("store: encode message: %w", err)
		}
		data[i] = b
	}
	var ub []byte
	if usage != nil {
		b, err := proto.Marshal(usage)
		if err != nil {
			return 0, fmt.Errorf("store: encode usage: %w", err)
		}
		ub = b
	}
	db := s.Writer
	if !sync {
		db = s.Relaxed
	}
	var v int64
	err := db.QueryRowContext(ctx, appendHistorySQL, agentID, at, at+len(msgs), ub, data).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		var n int
		switch err := s.Reader.QueryRowContext(ctx, `SELECT history_length FROM agents WHERE id = $1`, agentID).Scan(&n); {
		case errors.Is(err, sql.ErrNoRows):
			return 0, fmt.Errorf("agent %q: %w", agentID, store.ErrNotFound)
		case err != nil:
			return 0, fmt.Errorf("postgres: %w", err)
		}
		return 0, fmt.Errorf("agent %q: append at %d to a history of %d: %w", agentID, at, n, store.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: %w", err)
	}
	return v, nil
}

// AppendEvents stores events and ends runs in one round trip
// (agentcore_append_events, migration 0004), without waiting for the disk.
// The runs whose events do not follow their stored log (or that are gone)
// are left out, with their ends, and named in the error.
func (s *Store) AppendEvents(ctx context.Context, events []*agentv1.Event, ends ...store.RunEnd) error {
	if len(events) == 0 && len(ends) == 0 {
		return nil
	}
	runs := make([]string, len(events))
	seqs := make([]int64, len(events))
	data := make([][]byte, len(events))
	want := map[string]bool{}
	for i, ev := range events {
		if i > 0 && ev.GetRunId() == runs[i-1] && ev.GetSeq() <= seqs[i-1] {
			return fmt.Errorf("event %d of run %q after %d: %w", ev.GetSeq(), ev.GetRunId(), seqs[i-1], store.ErrConflict)
		}
		b, err := proto.Marshal(ev)
		if err != nil {
			return fmt.Errorf("store: encode event: %w", err)
		}
		runs[i], seqs[i], data[i] = ev.GetRunId(), ev.GetSeq(), b
		want[ev.GetRunId()] = true
	}
	endRuns := make([]string, len(ends))
	states := make([]int32, len(ends))
	results := make([][]byte, len(ends))
	errs := make([][]byte, len(ends))
	for i, e := range ends {
		var err error
		if results[i], err = sqlstore.Marshal(e.Result); err != nil {
			return err
		}
		if errs[i], err = sqlstore.Marshal(e.Error); err != nil {
			return err
		}
		endRuns[i], states[i] = e.RunID, int32(e.State)
	}
	rows, err := s.Relaxed.QueryContext(ctx, `SELECT * FROM agentcore_append_events($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		runs, seqs, data, endRuns, states, results, errs, int32(agentv1.RunState_RUN_STATE_RUNNING), s.channel)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		delete(want, id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	left := store.LeftOut{}
	for id := range want {
		if _, err := s.GetRun(ctx, id); errors.Is(err, store.ErrNotFound) {
			left[id] = fmt.Errorf("events of run %q: %w", id, store.ErrNotFound)
		} else {
			left[id] = fmt.Errorf("events of run %q do not follow its stored ones: %w", id, store.ErrConflict)
		}
	}
	return left.Err()
}

// StartRun stores r as running and takes its agent's lease, in one round
// trip (agentcore_start_run, migration 0005).
func (s *Store) StartRun(ctx context.Context, r *store.Run, ttl time.Duration) error {
	var (
		status                       string
		tenant, leaseRun, leaseOwner sql.NullString
		exp, now, version            sql.NullInt64
		historyStart                 sql.NullInt32
	)
	running := int32(agentv1.RunState_RUN_STATE_RUNNING)
	err := s.Relaxed.QueryRowContext(ctx, `SELECT * FROM agentcore_start_run($1, $2, $3, $4, $5, $6, $7, $8)`,
		r.AgentID, r.ID, sqlstore.BoolInt(r.Compaction), int32(r.OnDisconnect), r.Owner, ttl.Microseconds(), running, r.Resume).
		Scan(&status, &tenant, &leaseRun, &leaseOwner, &exp, &now, &version, &historyStart)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	switch status {
	case "not_found":
		return fmt.Errorf("agent %q: %w", r.AgentID, store.ErrNotFound)
	case "busy":
		return &store.BusyError{RunID: leaseRun.String, Owner: leaseOwner.String, Expired: exp.Int64 <= now.Int64}
	case "exists":
		return fmt.Errorf("run %q: %w", r.ID, store.ErrExists)
	case "ok":
	default:
		return fmt.Errorf("postgres: agentcore_start_run said %q", status)
	}
	if r.ParentRunID != "" || r.User != "" {
		// A child run, or a run for a user, rare beside plain root runs:
		// their place in the tree and their user cost a second statement
		// rather than a new start function.
		if _, err := s.Relaxed.ExecContext(ctx, `UPDATE runs SET parent_run = $2, root_run = $3, depth = $4, tool_call = $5, subject = $6 WHERE id = $1`,
			r.ID, r.ParentRunID, r.RootRunID, r.Depth, r.ToolCallID, r.User); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
	}
	r.Tenant, r.State = tenant.String, agentv1.RunState_RUN_STATE_RUNNING
	r.Started, r.LeaseExpires = sqlstore.Time(now.Int64), sqlstore.Time(now.Int64+ttl.Microseconds())
	r.AgentVersion, r.HistoryStart = version.Int64, int(historyStart.Int32)
	return nil
}

// FinishRun ends a running run and releases its lease, in one round trip
// (agentcore_finish_run, migration 0003), without waiting for the disk.
func (s *Store) FinishRun(ctx context.Context, runID string, state agentv1.RunState, result *agentv1.RunResultEvent, runErr *agentv1.RunError) error {
	rb, err := sqlstore.Marshal(result)
	if err != nil {
		return err
	}
	eb, err := sqlstore.Marshal(runErr)
	if err != nil {
		return err
	}
	var (
		status string
		agent  sql.NullString
		cur    sql.NullInt32
	)
	err = s.Relaxed.QueryRowContext(ctx, `SELECT * FROM agentcore_finish_run($1, $2, $3, $4, $5, $6)`,
		runID, int32(state), rb, eb, int32(agentv1.RunState_RUN_STATE_RUNNING), s.channel).Scan(&status, &agent, &cur)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	switch status {
	case "ok":
		return nil
	case "not_found":
		return fmt.Errorf("run %q: %w", runID, store.ErrNotFound)
	case "conflict":
		return fmt.Errorf("run %q ended already (%s): %w", runID, agentv1.RunState(cur.Int32), store.ErrConflict)
	}
	return fmt.Errorf("postgres: agentcore_finish_run said %q", status)
}
