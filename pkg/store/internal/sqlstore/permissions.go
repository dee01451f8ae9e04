package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

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
