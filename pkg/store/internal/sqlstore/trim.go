package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TrimEvents deletes the events of ended runs over perRun bytes, then of
// the runs that ended first while the events of all runs hold more than
// total bytes.
func (db *DB) TrimEvents(ctx context.Context, perRun, total int64) (int64, error) {
	if perRun <= 0 && total <= 0 {
		return 0, nil
	}
	running := int32(agentv1.RunState_RUN_STATE_RUNNING)
	// Most sweeps find nothing over either bound: they look on the reader
	// and take no write lock (on SQLite, every writer's).
	if over, err := db.overBounds(ctx, running, perRun, total); err != nil || !over {
		return 0, err
	}
	var n int64
	err := db.relaxedTx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		n = 0
		var doomed []string
		if perRun > 0 {
			ids, err := db.runIDs(ctx, tx, db.q(`SELECT id FROM runs WHERE state <> $1 AND purged = 0 AND event_bytes > $2`), running, perRun)
			if err != nil {
				return err
			}
			doomed = ids
		}
		for _, id := range doomed {
			m, err := db.purgeRun(ctx, tx, id)
			if err != nil {
				return err
			}
			n += m
		}
		if total <= 0 {
			return nil
		}
		var sum int64
		if err := tx.QueryRowContext(ctx, db.q(`SELECT coalesce(sum(event_bytes), 0) FROM runs WHERE purged = 0`)).Scan(&sum); err != nil {
			return db.wrap(err)
		}
		for sum > total {
			// The runs that ended first, a page at a time: most sweeps
			// need a few.
			var page []string
			var sizes []int64
			rows, err := tx.QueryContext(ctx, db.q(`SELECT id, event_bytes FROM runs WHERE state <> $1 AND purged = 0 AND event_bytes > 0
				ORDER BY ended, id LIMIT 100`), running)
			if err != nil {
				return db.wrap(err)
			}
			for rows.Next() {
				var id string
				var size int64
				if err := rows.Scan(&id, &size); err != nil {
					rows.Close()
					return db.wrap(err)
				}
				page, sizes = append(page, id), append(sizes, size)
			}
			if err := rows.Close(); err != nil {
				return db.wrap(err)
			}
			if len(page) == 0 {
				return nil // the rest is running runs'
			}
			for i, id := range page {
				if sum <= total {
					break
				}
				m, err := db.purgeRun(ctx, tx, id)
				if err != nil {
					return err
				}
				n += m
				sum -= sizes[i]
			}
		}
		return nil
	})
	return n, err
}

// overBounds reports whether an ended run's events hold more than perRun
// bytes, or all runs' more than total.
func (db *DB) overBounds(ctx context.Context, running int32, perRun, total int64) (bool, error) {
	if perRun > 0 {
		var one int
		err := db.queryRow(ctx, db.q(`SELECT 1 FROM runs WHERE state <> $1 AND purged = 0 AND event_bytes > $2 LIMIT 1`), running, perRun).Scan(&one)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, db.wrap(err)
		}
	}
	if total <= 0 {
		return false, nil
	}
	var sum int64
	if err := db.queryRow(ctx, db.q(`SELECT coalesce(sum(event_bytes), 0) FROM runs WHERE purged = 0`)).Scan(&sum); err != nil {
		return false, db.wrap(err)
	}
	return sum > total, nil
}

// runIDs runs a query of run ids.
func (db *DB) runIDs(ctx context.Context, tx *Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, db.wrap(err)
		}
		ids = append(ids, id)
	}
	return ids, db.wrap(rows.Err())
}

// purgeRun deletes a run's events, marks it purged and returns how many
// events it had.
func (db *DB) purgeRun(ctx context.Context, tx *Tx, id string) (int64, error) {
	res, err := tx.ExecContext(ctx, db.q(`DELETE FROM events WHERE run_id = $1`), id)
	if err != nil {
		return 0, db.wrap(err)
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, db.q(`UPDATE runs SET purged = 1, event_bytes = 0 WHERE id = $1`), id); err != nil {
		return 0, db.wrap(err)
	}
	return n, nil
}
