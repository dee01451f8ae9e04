package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

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
	var last, size int64
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
		size += int64(len(b))
	}
	// The update checks the batch follows the stored events and locks the run.
	res, err := tx.ExecContext(ctx, db.q(`UPDATE runs SET last_seq = $2, event_bytes = event_bytes + $4 WHERE id = $1 AND last_seq < $3`),
		run, last, evs[0].GetSeq(), size)
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
		_, err = tx.ExecContext(ctx, db.q(`UPDATE runs SET purged = 1, event_bytes = 0 WHERE state <> $1 AND purged = 0 AND ended < $2 AND last_seq > 0`),
			int32(agentv1.RunState_RUN_STATE_RUNNING), Micros(t))
		return db.wrap(err)
	})
	return n, err
}
