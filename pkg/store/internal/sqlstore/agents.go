package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

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
