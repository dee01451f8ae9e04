package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentcore/agentcore/pkg/store"
)

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
		return fmt.Errorf("%s: migrations table: %w", db.Dialect.Name, err)
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
			return fmt.Errorf("%s: migration %d (%s): %w", db.Dialect.Name, m.Version, m.Name, err)
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
