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
	"io"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tokens"
	"github.com/agentcore/agentcore/pkg/tool"
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
	s := &Server{
		cfg:     opts.Config,
		log:     log,
		secrets: sec,
		host: tool.NewHost(tool.Config{
			Logger:  log.Named("tool"),
			MaxIdle: opts.Config.MaxIdlePlugins,
			MinIdle: minIdle(opts.Config.MinIdlePlugins),
			Kinds:   opts.Kinds,
		}),
	}
	s.llm = llm.NewClient(llm.Options{Logger: log.Named("llm")})
	s.encoders = tokens.NewEncoders()
	s.agents.init()
	return s, nil
}

// minIdle maps -min-idle-plugins (0: none) to tool.Config.MinIdle (0: the default).
func minIdle(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// Interceptors returns the gRPC server options that check the bearer token,
// log calls and keep secrets out of errors.
func (s *Server) Interceptors() []grpc.ServerOption {
	g := &guard{token: []byte(s.cfg.AuthToken), secrets: s.secrets, log: s.log.Named("rpc")}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(g.Unary), grpc.ChainStreamInterceptor(g.Stream)}
}

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
		err = s.host.Close()
	})
	return err
}
