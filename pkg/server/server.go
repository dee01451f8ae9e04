// Package server is agentcore's gRPC AgentService: a registry of agent
// sessions (pkg/agent) over one tool host (pkg/tool), with the conversions,
// validation, limits, authentication and error mapping of the public API
// (proto/agentcore/v1).
//
// Agents, histories, runs and their events live in a store (pkg/store); a
// session is this replica's working copy of a stored agent, written through
// its journal. Runs hold their agent's lease in the store, so that replicas
// sharing a PostgreSQL store apply one busy policy; notices from the store
// carry stops, permission answers and new events between replicas, and the
// stored event log is what Attach streams.
//
// Errors follow one rule: a request the server or engine rejects is
// INVALID_ARGUMENT with a google.rpc.BadRequest naming the field; a model
// error carries a google.rpc.ErrorInfo (domain "agentcore", reason the error
// kind upper-cased, metadata retryable and the upstream status); every other
// error carries an ErrorInfo whose reason is an agentv1.ErrorReason (listed
// in docs/errors.md). Secrets (API keys, the bearer token) are removed from
// every error, response and event.
//
// Every agent belongs to the tenant that created it (package auth): another
// tenant's agents do not exist for a caller. A server-held API key is sent
// only to its profile's endpoints.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/catalog"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/eventlog"
	"github.com/agentcore/agentcore/pkg/faults"
	"github.com/agentcore/agentcore/pkg/interceptor"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/mcpauth"
	"github.com/agentcore/agentcore/pkg/pending"
	"github.com/agentcore/agentcore/pkg/profile"
	"github.com/agentcore/agentcore/pkg/redact"
	"github.com/agentcore/agentcore/pkg/replica"
	"github.com/agentcore/agentcore/pkg/runhooks"
	"github.com/agentcore/agentcore/pkg/sessions"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/stores"
	"github.com/agentcore/agentcore/pkg/telemetry"
	"github.com/agentcore/agentcore/pkg/tokens"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/limits"
	"github.com/agentcore/agentcore/pkg/tool/osuser"
	"github.com/agentcore/agentcore/pkg/vault"
	"github.com/agentcore/agentcore/pkg/webhook"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Options configure a Server.
type Options struct {
	// Config is the server configuration (tool dirs, profiles, limits). Required.
	Config *config.Config
	// LogOutput receives the server's logs, in the configured format and
	// level, with every known secret replaced, one whole entry per Write,
	// on the caller's goroutine (pkg/serve hands it an asynchronous
	// writer). Default: none.
	LogOutput io.Writer
	// Kinds are extra kinds of tool files the scan recognises (e.g. MCP definitions).
	Kinds []tool.Kind
	// Getenv reads the OTEL_* variables that turn tracing on (see
	// pkg/telemetry); nil: tracing stays off. Metrics and the per-run log
	// line are always on.
	Getenv func(string) string
	// Store, when set, is used instead of opening the one Config names.
	// The server closes it.
	Store store.Store
	// VaultKeys seal the token vault; nil: no vault (ErrUnavailable).
	VaultKeys *vault.Keys
}

// Server implements agentv1.AgentServiceServer. It owns its tool host and
// every session; Close ends them all.
type Server struct {
	agentv1.UnimplementedAgentServiceServer

	cfg   *config.Config
	log   hclog.Logger
	audit hclog.Logger // the audit lines: at INFO whatever the log level
	// frozen holds the encodings of responses made once and sent as they
	// are (ListTools').
	frozen *interceptor.Frozen
	auth   *auth.Authenticator
	// profiles are the model profiles as the tenants may use them.
	profiles *profile.Profiles
	host     *tool.Host
	limits   *limits.Controller // the tool host's limits mechanism; closed after the host
	secrets  *redact.Secrets
	tools    catalog.Holder
	agents   *sessions.Registry[*session]
	// llm and encoders are shared by every session.
	llm      *llm.Client
	encoders *tokens.Encoders
	// tel observes runs, tool calls and plugin processes (traces, metrics, logs).
	tel *telemetry.Telemetry
	// hooks posts the runs' webhooks; nil when no host is allowed.
	hooks *runhooks.Hooks

	// store keeps agents, histories, runs and events; events batches run
	// events into it; replica holds the runs executing here, their leases
	// and permission requests, and the requests waiting for the store to
	// change; pending the runs' requests waiting for an answer.
	store   store.Store
	vault   *vault.Vault // the OAuth tokens of MCP servers, in store
	events  *eventlog.Log
	replica *replica.Replica
	pending *pending.Requests
	// bgRuns counts the runs that outlived their stream (on_disconnect
	// CONTINUE); bg the server's own loops (event writer, notices,
	// leases), which stopBG ends.
	bgRuns sync.WaitGroup
	bg     sync.WaitGroup
	stopBG context.CancelFunc
	// bgCtx is the context of the server's own work (runs it resumes after
	// a crash), ended by stopBG.
	bgCtx context.Context
	// closing is closed when Close begins: a run taken over after a crash
	// starts no more, and one waiting for the tools stops waiting (both are
	// left for the next start). closed, under closeMu, orders the start of
	// such a run before Close waits for bgRuns.
	closing chan struct{}
	closeMu sync.Mutex
	closed  bool
	// faults are the crash tests' fault hooks (test-only).
	faults faults.Hooks

	closeOnce sync.Once
}

// New returns a Server with no tools loaded yet: call LoadTools. It reads
// the tokens file, if any, resolves the plugin user, opens the store
// (applying its migrations), resumes the runs a previous life of this
// server left running when they ask for it and ends the others
// (interrupted, histories repaired), and starts the server's loops; Close
// ends them.
func New(opts Options) (*Server, error) {
	if opts.Config == nil {
		return nil, errors.New("server: Options.Config is required")
	}
	cfg := opts.Config
	if cfg.LeaseTTL <= 0 || cfg.PermissionTimeout <= 0 || cfg.EventRetention <= 0 || cfg.ReplicaID == "" {
		c := *cfg
		if c.LeaseTTL <= 0 {
			c.LeaseTTL = 10 * time.Second
		}
		if c.PermissionTimeout <= 0 {
			c.PermissionTimeout = 10 * time.Minute
		}
		if c.EventRetention <= 0 {
			c.EventRetention = 24 * time.Hour
		}
		if c.ReplicaID == "" {
			c.ReplicaID = "agent-server"
		}
		opts.Config = &c
	}
	cfg = opts.Config
	authn, err := auth.New(auth.Options{Token: cfg.AuthToken, TokensFile: cfg.AuthTokensFile, Profiles: cfg.ProfileNames()})
	if err != nil {
		return nil, err
	}
	cred, err := osuser.Credential(cfg.PluginUser)
	if err != nil {
		return nil, err
	}
	sec := redact.New(cfg.Secrets()...)
	log, audit := hclog.NewNullLogger(), hclog.NewNullLogger()
	if opts.LogOutput != nil {
		log = cfg.Logger("agent-server", sec.Writer(opts.LogOutput))
		audit = cfg.AuditLogger("agent-server", sec.Writer(opts.LogOutput))
	}
	tel, err := telemetry.New(context.Background(), telemetry.Config{
		Getenv: opts.Getenv, Headers: cfg.TraceHeaders, TraceContent: opts.Config.TraceContent, Logger: log, Redact: sec.Redact,
	})
	if err != nil {
		return nil, err
	}
	mech, err := limits.ParseMechanism(cfg.ToolLimits.Mechanism)
	if err != nil {
		return nil, err
	}
	lim, err := limits.New(limits.Options{Mechanism: mech, Logger: log.Named("limits")})
	if err != nil {
		return nil, fmt.Errorf("tool limits (-tool-limits %s): %w", mech, err)
	}
	scanHost := &tool.HostHandler{} // answers discovery's credential requests once the vault is open
	s := &Server{
		cfg:      cfg,
		log:      log,
		audit:    audit,
		auth:     authn,
		profiles: profile.New(cfg, authn.Lookup),
		secrets:  sec,
		frozen:   interceptor.NewFrozen(sec),
		tel:      tel,
		limits:   lim,
		host: tool.NewHost(tool.Config{
			Logger:          log.Named("tool"),
			MaxIdle:         cfg.MaxIdlePlugins,
			MinIdle:         cfg.MinIdlePlugins,
			PluginProcs:     cfg.PluginGOMAXPROCS,
			Kinds:           opts.Kinds,
			Credential:      cred,
			Observer:        tel,
			Limits:          lim,
			LimitPolicy:     tool.LimitPolicyOf(cfg.ToolLimits),
			MaxResultBytes:  int(cfg.Limits.MaxToolResultBytes),
			MaxReceiveBytes: max(minReceiveBytes, 2*int(cfg.Limits.MaxToolResultBytes)),
			SkipBadPlugins:  cfg.SkipBadPlugins,
			HideEnv:         cfg.SecretEnv(),
			ScanHost:        scanHost,
		}),
	}
	s.llm = llm.NewClient(llm.Options{
		Logger: log.Named("llm"), RetryMaxElapsed: cfg.Limits.RetryMaxElapsed, RetryMaxDelay: cfg.Limits.RetryMaxDelay,
		RetryUnreachable: retryUnreachable(cfg.Limits.RetryUnreachable),
		IdleConnsPerHost: idleModelConns(cfg.Limits.MaxConcurrentRuns),
	})
	s.encoders = tokens.NewEncoders()
	if s.hooks, err = runhooks.New(cfg, log.Named("webhook"), tel.Registry(), tel.TracerProvider()); err != nil {
		return nil, errors.Join(fmt.Errorf("webhooks: %w", err), s.host.Close(), lim.Close())
	}
	s.agents = sessions.New[*session](sessions.Limits{MaxLoaded: cfg.Limits.MaxLoadedAgents, MaxBytes: int64(cfg.Limits.AgentMemory)}, sec, tel)
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s.faults = faults.From(getenv)

	st := opts.Store
	if st == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var err error
		st, err = stores.Open(ctx, opts.Config)
		cancel()
		if err != nil {
			s.host.Close()
			lim.Close()
			s.hooks.Close(0)
			_ = tel.Shutdown(context.Background())
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	s.store, s.vault = st, vault.New(st, opts.VaultKeys)
	// Discovery uses the default tenant's connections (client credentials need none).
	scanHost.Credential = mcpauth.Handler(s.vault, auth.DefaultTenant, "")
	s.replica = replica.New(replica.Options{Store: st, ID: cfg.ReplicaID, LeaseTTL: cfg.LeaseTTL,
		PermissionTimeout: cfg.PermissionTimeout, EventRetention: cfg.EventRetention,
		EventRetentionRunBytes: int64(cfg.EventRetentionRunBytes), EventRetentionBytes: int64(cfg.EventRetentionBytes), Log: log,
		Resume: s.resume, ResumeAttempts: cfg.ResumeAttempts})
	s.pending = pending.New(st, s.replica, log)
	// A run whose events the store could not keep is stopped.
	s.events = eventlog.New(st, log.Named("events"), func(runID string, err error) { s.replica.Stop(runID, err) })
	ctx, cancel := context.WithCancel(context.Background())
	s.stopBG, s.bgCtx, s.closing = cancel, ctx, make(chan struct{})
	s.replica.RecoverStale(ctx, true)
	s.bg.Add(3)
	go func() { defer s.bg.Done(); s.events.Run() }()
	go func() { defer s.bg.Done(); s.replica.Listen(ctx) }()
	go func() { defer s.bg.Done(); s.replica.Maintain(ctx) }()
	log.Info("store open", "store", opts.Config.StoreName(), "replica", opts.Config.ReplicaID)
	tel.GaugeFunc("agentcore_agents", "Agents the server holds now.", s.agentCount)
	tel.GaugeFunc("agentcore_agents_loaded", "Agents held in memory now (-max-loaded-agents bounds the idle ones).", func() float64 {
		n, _ := s.agents.Loaded()
		return float64(n)
	})
	tel.GaugeFunc("agentcore_agents_loaded_bytes", "What the agents held in memory cost, as -agent-memory counts it: their footprints estimated in bytes of live heap, times the garbage collector's room (GOGC).", func() float64 {
		_, b := s.agents.Loaded()
		return float64(b)
	})
	return s, nil
}

// Vault returns the server's token vault (never nil; maybe unavailable).
func (s *Server) Vault() *vault.Vault { return s.vault }

// Telemetry returns the server's telemetry: its metrics registry and HTTP
// handler, its gRPC server options.
func (s *Server) Telemetry() *telemetry.Telemetry { return s.tel }

// Webhooks returns the server's webhook sender (nil when no host is
// allowed), for other listeners' notifications (A2A push).
func (s *Server) Webhooks() *webhook.Sender { return s.hooks.Sender() }

// Interceptors returns the gRPC server options that authenticate every
// AgentService call (and reflection when reflectionAuth is set), put the
// caller's tenant in its context, write the audit log, keep secrets out of
// responses and errors and bound responses to the message limit, and the
// codec that names a request's field holding invalid UTF-8.
func (s *Server) Interceptors(reflectionAuth bool) []grpc.ServerOption {
	return interceptor.New(interceptor.Options{
		Auth: s.auth, ReflectionAuth: reflectionAuth, Secrets: s.secrets, Log: s.log.Named("rpc"), Audit: s.audit,
		MaxMessageBytes: s.cfg.Limits.MaxMessageBytes, Status: apierr.FromError, Frozen: s.frozen,
	})
}

// minReceiveBytes is the least the host accepts in one message from a
// plugin: room for a result at the cap, which sdk/tool cuts to fit, and
// more for plugins that do not.
const minReceiveBytes = 64 << 20

// closeTimeout bounds how long closing a session waits for its run to end.
const closeTimeout = 5 * time.Second

// noLimitModelConns is how many idle model connections per endpoint are
// kept when -max-runs sets no limit: the default -max-runs.
const noLimitModelConns = 4096

// retryUnreachable is -retry-unreachable as the model client takes it: 0
// (fail at the first attempt) is llm.NoRetry.
func retryUnreachable(d time.Duration) time.Duration {
	if d == 0 {
		return llm.NoRetry
	}
	return d
}

// idleModelConns is how many idle connections the model client keeps per
// endpoint: one per run that may be asking a model at once (-max-runs), so
// that a burst of sends finds its connections again, instead of all but
// llm.MaxIdleConnsPerHost of them dialing (and a TLS handshake) anew.
func idleModelConns(maxRuns int) int {
	if maxRuns <= 0 {
		return noLimitModelConns
	}
	return maxRuns
}

// LimitsMechanism says how tool limits are enforced (for the start log).
func (s *Server) LimitsMechanism() string { return s.limits.String() }

// WaitDetached waits until the runs that outlived their stream
// (on_disconnect CONTINUE) have ended.
func (s *Server) WaitDetached() { s.bgRuns.Wait() }

// StopRuns stops every running send (their streams end UNAVAILABLE) and
// waits until they have ended, or ctx is done.
func (s *Server) StopRuns(ctx context.Context) {
	s.agents.StopAll(ctx)
}

// Logger returns the server's logger (secrets redacted).
func (s *Server) Logger() hclog.Logger { return s.log }

// Close stops every run (a run cut off this way is interrupted: a later
// send resumes it), forgets every session, gives the webhooks still pending
// up to -shutdown-grace, writes the last events, closes the store and
// kills every plugin process. It is idempotent.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.closeMu.Lock()
		s.closed = true
		close(s.closing)
		s.closeMu.Unlock()
		closing, cancelClosing := context.WithTimeout(context.Background(), closeTimeout)
		s.agents.CloseAll(closing)
		cancelClosing()
		s.bgRuns.Wait()
		s.hooks.Close(s.cfg.ShutdownGrace) // after the runs' ends were posted
		s.events.Close()
		s.stopBG()
		s.bg.Wait()
		s.llm.CloseIdleConnections()
		err = errors.Join(s.store.Close(), s.host.Close(), s.limits.Close())
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		if terr := s.tel.Shutdown(ctx); terr != nil {
			s.log.Warn("spans not flushed", "error", terr)
		}
	})
	return err
}
