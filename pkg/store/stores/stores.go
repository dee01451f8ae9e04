// Package stores opens the store a configuration names (-store): memory,
// SQLite or PostgreSQL. It sits beside the drivers, which import pkg/store,
// so that pkg/store itself imports none of them.
package stores

import (
	"context"
	"fmt"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/memory"
	"github.com/agentcore/agentcore/pkg/store/postgres"
	"github.com/agentcore/agentcore/pkg/store/sqlite"
)

// Open opens the store cfg names, applying its migrations.
func Open(ctx context.Context, cfg *config.Config) (store.Store, error) {
	switch kind, rest := cfg.StoreKind(); kind {
	case "memory":
		return memory.New(), nil
	case "sqlite":
		return sqlite.Open(ctx, rest)
	case "postgres":
		return postgres.OpenWith(ctx, rest, postgres.Options{Password: cfg.StorePassword})
	}
	return nil, fmt.Errorf("store %q: want sqlite:PATH, postgres://… or memory", cfg.StoreName())
}
