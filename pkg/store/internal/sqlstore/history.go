package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

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
