// Package server is agentcore's gRPC AgentService: a registry of agent
// sessions (pkg/agent) over one tool host (pkg/tool), with the conversions,
// validation, limits, authentication and error mapping of the public API
// (proto/agentcore/v1).
//
// Errors follow one rule: a request the server or engine rejects is
// INVALID_ARGUMENT with a google.rpc.BadRequest naming the field; a model
// error carries a google.rpc.ErrorInfo (domain "agentcore", reason the error
// kind upper-cased, metadata retryable and the upstream status); every other
// error carries an ErrorInfo with one of the Reason constants. Secrets (API
// keys, the bearer token) are removed from every error, response and event.
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
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/telemetry"
	"github.com/agentcore/agentcore/pkg/tokens"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/limits"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Options configure a Server.
type Options struct {
	// Config is the server configuration (tool dirs, profiles, limits). Required.
	Config *config.Config
	// LogOutput receives the server's logs, in the configured format and
	// level, with every known secret replaced. Default: none.
	LogOutput io.Writer
	// Kinds are extra kinds of tool files the scan recognises (e.g. MCP definitions).
	Kinds []tool.Kind
	// Getenv reads the OTEL_* variables that turn tracing on (see
	// pkg/telemetry); nil: tracing stays off. Metrics and the per-run log
	// line are always on.
	Getenv func(string) string
}

// Server implements agentv1.AgentServiceServer. It owns its tool host and
// every session; Close ends them all.
type Server struct {
	agentv1.UnimplementedAgentServiceServer

	cfg     *config.Config
	log     hclog.Logger
	auth    *auth.Authenticator
	host    *tool.Host
	limits  *limits.Controller // the tool host's limits mechanism; closed after the host
	secrets *secrets
	tools   toolState
	agents  registry
	// llm and encoders are shared by every session.
	llm      *llm.Client
	encoders *tokens.Encoders
	// tel observes runs, tool calls and plugin processes (traces, metrics, logs).
	tel *telemetry.Telemetry

	closeOnce sync.Once
}

// New returns a Server with no tools loaded yet: call LoadTools. It reads
// the tokens file, if any, and resolves the plugin user.
func New(opts Options) (*Server, error) {
	if opts.Config == nil {
		return nil, errors.New("server: Options.Config is required")
	}
	cfg := opts.Config
	authn, err := auth.New(auth.Options{Token: cfg.AuthToken, TokensFile: cfg.AuthTokensFile, Profiles: cfg.ProfileNames()})
	if err != nil {
		return nil, err
	}
	cred, err := pluginCredential(cfg.PluginUser)
	if err != nil {
		return nil, err
	}
	sec := newSecrets(cfg.Secrets()...)
	log := hclog.NewNullLogger()
	if opts.LogOutput != nil {
		log = cfg.Logger("agent-server", sec.writer(opts.LogOutput))
	}
	tel, err := telemetry.New(context.Background(), telemetry.Config{
		Getenv: opts.Getenv, TraceContent: opts.Config.TraceContent, Logger: log, Redact: sec.redact,
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
	s := &Server{
		cfg:     cfg,
		log:     log,
		auth:    authn,
		secrets: sec,
		tel:     tel,
		limits:  lim,
		host: tool.NewHost(tool.Config{
			Logger:          log.Named("tool"),
			MaxIdle:         cfg.MaxIdlePlugins,
			Kinds:           opts.Kinds,
			Credential:      cred,
			Observer:        tel,
			Limits:          lim,
			LimitPolicy:     LimitPolicy(cfg.ToolLimits),
			MaxResultBytes:  int(cfg.Limits.MaxToolResultBytes),
			MaxReceiveBytes: max(minReceiveBytes, 2*int(cfg.Limits.MaxToolResultBytes)),
			SkipBadPlugins:  cfg.SkipBadPlugins,
		}),
	}
	s.llm = llm.NewClient(llm.Options{Logger: log.Named("llm"), RetryMaxElapsed: cfg.Limits.RetryMaxElapsed, RetryMaxDelay: cfg.Limits.RetryMaxDelay})
	s.encoders = tokens.NewEncoders()
	s.agents.init()
	tel.GaugeFunc("agentcore_agents", "Agents the server holds now.", func() float64 { return float64(s.agents.count()) })
	return s, nil
}

// Telemetry returns the server's telemetry: its metrics registry and HTTP
// handler, its gRPC server options.
func (s *Server) Telemetry() *telemetry.Telemetry { return s.tel }

// Interceptors returns the gRPC server options that authenticate every
// AgentService call (and reflection when reflectionAuth is set), put the
// caller's tenant in its context, write the audit log, keep secrets out of
// responses and errors and bound responses to the message limit, and the
// codec that names a request's field holding invalid UTF-8.
func (s *Server) Interceptors(reflectionAuth bool) []grpc.ServerOption {
	g := &guard{auth: s.auth, reflectionAuth: reflectionAuth, secrets: s.secrets, log: s.log.Named("rpc"), audit: s.log.Named("audit"),
		maxMessage: s.cfg.Limits.MaxMessageBytes, codec: newUTF8Codec()}
	return g.interceptors()
}

// LimitsMechanism says how tool limits are enforced (for the start log).
func (s *Server) LimitsMechanism() string { return s.limits.String() }

// StopRuns stops every running send (their streams end UNAVAILABLE) and
// waits until they have ended, or ctx is done.
func (s *Server) StopRuns(ctx context.Context) {
	s.agents.stopAll(ctx)
}

// Logger returns the server's logger (secrets redacted).
func (s *Server) Logger() hclog.Logger { return s.log }

// Close stops every run, forgets every session and kills every plugin
// process. It is idempotent.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.agents.closeAll()
		err = errors.Join(s.host.Close(), s.limits.Close())
		ctx, cancel := context.WithTimeout(context.Background(), afterStop)
		defer cancel()
		if terr := s.tel.Shutdown(ctx); terr != nil {
			s.log.Warn("spans not flushed", "error", terr)
		}
	})
	return err
}
