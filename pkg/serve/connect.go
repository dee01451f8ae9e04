package serve

import (
	"context"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/connect"
	"github.com/agentcore/agentcore/pkg/mcpauth"
	"github.com/agentcore/agentcore/pkg/server"
	"github.com/agentcore/agentcore/pkg/vault"
)

// agentService is the AgentService served: the server's handlers and the
// OAuth connections' RPCs of pkg/connect (their methods, one level up, win
// over the Unimplemented ones the server embeds).
type agentService struct {
	*server.Server
	*connect.Service
}

// vaultKeys returns the token vault's keys: from -vault-key-file or
// AGENTCORE_VAULT_KEY; without either, a key of the process's own for a
// memory store (its records die with the process anyway), and none for a
// store that keeps them: a key made up here would be lost with the process
// (or differ between replicas) and the records with it, and one written
// beside the database would be taken with it.
func vaultKeys(cfg *config.Config) (*vault.Keys, error) {
	keys, err := vault.LoadKeys(cfg.Vault.KeyFile, cfg.Vault.Keys)
	if err == nil && keys == nil && cfg.StoreName() == "memory" {
		return vault.RandomKeys()
	}
	return keys, err
}

// resealTimeout bounds the start's resealing of the vault's records.
const resealTimeout = time.Minute

// startVault says at start whether the token vault is on, and with which
// keys. During a rotation (more keys than one) it first seals the records
// of the older keys again with the sealing key, so that they may be
// dropped from the key file.
func startVault(ctx context.Context, log hclog.Logger, v *vault.Vault) {
	ids := v.KeyIDs()
	if len(ids) == 0 {
		log.Info("token vault off: MCP servers that need OAuth cannot be connected until agent-server gets -vault-key-file or " + config.VaultKeyEnv)
		return
	}
	log.Info("token vault", "keys", len(ids), "sealing_key", ids[0])
	if len(ids) == 1 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, resealTimeout)
	defer cancel()
	r, err := v.Reseal(ctx)
	if err != nil {
		log.Error("token vault: sealing the records again with the sealing key failed; the older keys still open them", "error", err)
		return
	}
	log.Info("token vault: records sealed again with the sealing key", "resealed", r.Resealed, "already", r.Current, "unreadable", r.Unreadable)
	if r.Unreadable == 0 {
		log.Info("token vault: the older keys open no record now: they may be dropped from the key file", "older_keys", ids[1:])
	}
}

// newConnections returns the OAuth connections' service of srv.
func newConnections(cfg *config.Config, srv *server.Server) *connect.Service {
	return connect.New(connect.Options{Vault: srv.Vault(), Authorizer: authorizer(cfg), Timeout: cfg.Vault.ConnectTimeout,
		OnConnected: discover(srv),
		Log:         srv.Logger().Named("oauth")})
}

// authorizer returns the OAuth client of the MCP servers defined in the
// tool directories and -mcp paths, which runs the connect flows.
func authorizer(cfg *config.Config) connect.Authorizer {
	return mcpauth.New(func() []string { return append(slices.Clone(cfg.ToolDirs), cfg.MCP...) }, nil)
}

// discover rescans the tools when the default tenant's own connection is
// made: discovery uses it, so a server whose tools were left out for want
// of one has them now.
func discover(srv *server.Server) func(context.Context, vault.Key) {
	return func(ctx context.Context, k vault.Key) {
		if k.Tenant != auth.DefaultTenant || k.Subject != "" {
			return
		}
		if err := srv.LoadTools(ctx); err != nil {
			srv.Logger().Warn("rescanning the tools after a connection failed; ReloadTools retries", "server", k.Server, "error", err)
		}
	}
}

// callbackURL is where people's browsers reach the callback route:
// -public-url's, else the HTTP listener's address (a wildcard one as
// localhost); "" when the listener is a unix socket.
func callbackURL(cfg *config.Config, addr net.Addr, tls bool) string {
	if cfg.Vault.PublicURL != "" {
		return strings.TrimSuffix(cfg.Vault.PublicURL, "/") + connect.CallbackPath
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return ""
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "localhost"
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, strconv.Itoa(tcp.Port)), Path: connect.CallbackPath}
	if tls {
		u.Scheme = "https"
	}
	return u.String()
}
