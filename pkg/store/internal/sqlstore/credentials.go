package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentcore/agentcore/pkg/store"
)

// PutCredential writes a sealed credential when the stored version is
// match, in one statement, so that two writers racing cannot both win.
func (db *DB) PutCredential(ctx context.Context, c *store.Credential, match int64) (int64, error) {
	if match < 0 && match != store.AnyVersion {
		return 0, store.CheckCredentialVersion(c, nil, false, match)
	}
	var (
		version int64
		q       string
		args    = []any{c.Tenant, c.Subject, c.Server, c.KeyID, c.Sealed}
	)
	switch {
	case match == store.AnyVersion:
		q = `INSERT INTO credentials (tenant, subject, server, key_id, sealed, version, updated) VALUES ($1, $2, $3, $4, $5, 1, {now})
			ON CONFLICT (tenant, subject, server) DO UPDATE SET key_id = excluded.key_id, sealed = excluded.sealed,
			version = credentials.version + 1, updated = excluded.updated RETURNING version`
	case match == 0:
		q = `INSERT INTO credentials (tenant, subject, server, key_id, sealed, version, updated) VALUES ($1, $2, $3, $4, $5, 1, {now})
			ON CONFLICT (tenant, subject, server) DO NOTHING RETURNING version`
	default:
		q = `UPDATE credentials SET key_id = $4, sealed = $5, version = version + 1, updated = {now}
			WHERE tenant = $1 AND subject = $2 AND server = $3 AND version = $6 RETURNING version`
		args = append(args, match)
	}
	err := db.tx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		return tx.QueryRowContext(ctx, db.q(q), args...).Scan(&version)
	})
	if errors.Is(err, sql.ErrNoRows) {
		// Nothing written: say why from what is stored.
		old, gerr := db.GetCredential(ctx, c.Tenant, c.Subject, c.Server)
		found := gerr == nil
		if gerr != nil && !errors.Is(gerr, store.ErrNotFound) {
			return 0, gerr
		}
		if cerr := store.CheckCredentialVersion(c, old, found, match); cerr != nil {
			return 0, cerr
		}
		return 0, fmt.Errorf("credential %q changed while it was written: %w", c.Server, store.ErrConflict)
	}
	if err != nil {
		return 0, db.wrap(err)
	}
	return version, nil
}

const credCols = `tenant, subject, server, key_id, sealed, version, updated`

func scanCredential(row interface{ Scan(...any) error }) (*store.Credential, error) {
	var (
		c       store.Credential
		updated int64
	)
	if err := row.Scan(&c.Tenant, &c.Subject, &c.Server, &c.KeyID, &c.Sealed, &c.Version, &updated); err != nil {
		return nil, err
	}
	c.Updated = Time(updated)
	return &c, nil
}

// GetCredential returns a credential.
func (db *DB) GetCredential(ctx context.Context, tenant, subject, server string) (*store.Credential, error) {
	c, err := scanCredential(db.queryRow(ctx, db.q(`SELECT `+credCols+` FROM credentials WHERE tenant = $1 AND subject = $2 AND server = $3`),
		tenant, subject, server))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.CredentialNotFound(tenant, subject, server)
	}
	if err != nil {
		return nil, db.wrap(err)
	}
	return c, nil
}

// DeleteCredential removes a credential.
func (db *DB) DeleteCredential(ctx context.Context, tenant, subject, server string) error {
	return db.tx(ctx, func(tx *Tx, _ func(store.Notice)) error {
		res, err := tx.ExecContext(ctx, db.q(`DELETE FROM credentials WHERE tenant = $1 AND subject = $2 AND server = $3`), tenant, subject, server)
		if err != nil {
			return db.wrap(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.CredentialNotFound(tenant, subject, server)
		}
		return nil
	})
}

// ListCredentials pages through credentials by tenant, subject, then server.
func (db *DB) ListCredentials(ctx context.Context, q store.CredentialQuery) ([]*store.Credential, error) {
	query := `SELECT ` + credCols + ` FROM credentials WHERE tenant = $1 AND (subject > $2 OR (subject = $2 AND server > $3))`
	args := []any{q.Tenant, q.AfterSubject, q.AfterServer, store.Limit(q.Limit)}
	if q.AnyTenant {
		query = `SELECT ` + credCols + ` FROM credentials WHERE (tenant > $1 OR (tenant = $1 AND (subject > $2 OR (subject = $2 AND server > $3))))`
		args[0] = q.AfterTenant
	}
	if !q.AnySubject {
		query += ` AND subject = $5`
		args = append(args, q.Subject)
	}
	rows, err := db.query(ctx, db.q(query+` ORDER BY tenant, subject, server LIMIT $4`), args...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []*store.Credential
	for rows.Next() {
		c, err := scanCredential(rows)
		if err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, c)
	}
	return out, db.wrap(rows.Err())
}
