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
// keys, the bearer token) are removed from every error and event.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/llm"
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
}

// Server implements agentv1.AgentServiceServer. It owns its tool host and
// every session; Close ends them all.
type Server struct {
	agentv1.UnimplementedAgentServiceServer

	cfg     *config.Config
	log     hclog.Logger
	host    *tool.Host
	limits  *limits.Controller // the tool host's limits mechanism; closed after the host
	secrets *secrets
	tools   toolState
	agents  registry
	// llm and encoders are shared by every session.
	llm      *llm.Client
	encoders *tokens.Encoders

	closeOnce sync.Once
}

// New returns a Server with no tools loaded yet: call LoadTools.
func New(opts Options) (*Server, error) {
	if opts.Config == nil {
		return nil, errors.New("server: Options.Config is required")
	}
	sec := newSecrets(opts.Config.Secrets()...)
	log := hclog.NewNullLogger()
	if opts.LogOutput != nil {
		log = opts.Config.Logger("agent-server", sec.writer(opts.LogOutput))
	}
	cfg := opts.Config
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
		secrets: sec,
		limits:  lim,
		host: tool.NewHost(tool.Config{
			Logger:          log.Named("tool"),
			MaxIdle:         cfg.MaxIdlePlugins,
			Kinds:           opts.Kinds,
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
	return s, nil
}

// Interceptors returns the gRPC server options that check the bearer token,
// log calls, keep secrets out of errors and bound responses to the message
// limit, and the codec that names a request's field holding invalid UTF-8.
func (s *Server) Interceptors() []grpc.ServerOption {
	codec := newUTF8Codec()
	g := &guard{token: []byte(s.cfg.AuthToken), secrets: s.secrets, log: s.log.Named("rpc"), maxMessage: s.cfg.Limits.MaxMessageBytes, codec: codec}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(g.Unary), grpc.ChainStreamInterceptor(g.Stream), grpc.ForceServerCodecV2(codec)}
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
	})
	return err
}
