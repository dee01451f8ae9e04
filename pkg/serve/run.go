// Package serve is the agent-server process around pkg/server: Run opens
// the store and the tool host (server.New), scans the tools, then listens
// (TCP or a unix socket, TLS and mutual TLS) with the interceptor chain,
// health, reflection, the HTTP gateway and console (http.go), the metrics
// listener, the MCP listener (mcp.go) and the A2A listener (a2a.go), reloads the tokens file on
// SIGHUP, and on the end of its context shuts down gracefully: not ready
// any more, calls drained, runs stopped after the grace period. Its logs go
// out through an asynchronous writer (logwriter.go).
package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/interceptor"
	"github.com/agentcore/agentcore/pkg/server"
	"github.com/agentcore/agentcore/pkg/telemetry"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// afterStop bounds how long Run waits for streams to end once runs were
// stopped at the end of the grace period.
const afterStop = 5 * time.Second

// LivenessService is the health service name that is SERVING for as long as
// the server runs (a liveness probe); "" and AgentService's name are
// readiness: SERVING once the tools are loaded, NOT_SERVING during shutdown.
const LivenessService = "liveness"

// Run serves AgentService as configured until ctx is done, then shuts down:
// it stops accepting, lets running sends go on for cfg.ShutdownGrace, stops
// those still running, kills every plugin process and returns nil.
// The tools are scanned before the server listens: a tool directory that
// fails to scan ends Run with its error before any client could connect,
// and once it listens the health service reports SERVING (NOT_SERVING again
// during shutdown). Logs go to logOut (nil: nowhere) with secrets redacted;
// the start log says which mechanism enforces tool limits. onListen, if
// set, gets the address once the server listens. SIGHUP reads the tokens
// file again. Run refuses to serve a non-loopback address with neither TLS
// nor a token unless cfg.Insecure is set.
func Run(ctx context.Context, cfg *config.Config, logOut io.Writer, kinds []tool.Kind, onListen func(net.Addr)) error {
	if logOut != nil {
		lw := newLogWriter(logOut)
		defer lw.Close() // after the server's last lines
		logOut = lw
	}
	keys, err := vaultKeys(cfg)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Options{Config: cfg, LogOutput: logOut, Kinds: kinds, Getenv: os.Getenv, VaultKeys: keys})
	if err != nil {
		return err
	}
	defer srv.Close()
	log := srv.Logger()
	startVault(ctx, log, srv.Vault())
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	log.Info("tool limits", "mechanism", srv.LimitsMechanism())

	opts, err := grpcOptions(cfg)
	if err != nil {
		return err
	}
	if err := srv.LoadTools(ctx); err != nil {
		if ctx.Err() != nil {
			log.Info("stopped while loading tools")
			return nil
		}
		return err
	}
	lis, err := listen(cfg.Listen, cfg.SocketOwner)
	if err != nil {
		return err
	}
	reflectionMode, err := exposure(cfg, lis.Addr(), srv.Auth().Required())
	if err != nil {
		lis.Close()
		return err
	}
	opts = append(opts, srv.Telemetry().ServerOptions()...) // outside the guard: it counts its refusals
	// The drain goes first: a call refused during shutdown needs no more.
	dr := interceptor.NewDrain()
	defer dr.EndWatches()
	opts = append(append(opts, dr.ServerOptions()...), srv.Interceptors(reflectionMode == "auth")...)
	gs := grpc.NewServer(opts...)
	conns := newConnections(cfg, srv)
	agentv1.RegisterAgentServiceServer(gs, agentService{srv, conns})
	hs := health.NewServer()
	hs.SetServingStatus(LivenessService, healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(agentv1.AgentService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	if reflectionMode != "off" {
		reflection.Register(gs)
	}

	log.Info("listening", "addr", lis.Addr().String(), "tls", cfg.TLS.CertFile != "", "mtls", cfg.TLS.ClientCAFile != "",
		"auth", srv.Auth().Required(), "tenants_file", cfg.AuthTokensFile != "", "reflection", reflectionMode)
	if !loopback(lis.Addr()) && cfg.TLS.CertFile == "" && !srv.Auth().Required() {
		log.Warn("serving a non-loopback address without TLS and without a token (-insecure): anyone who can reach it can use every agent and tool")
	}
	if os.Geteuid() == 0 && cfg.PluginUser == "" {
		log.Warn("running as root, and so do the plugins: set -plugin-user to run them as an unprivileged user")
	}
	front, err := startHTTP(cfg, gs, srv.Auth().Required(), log, conns)
	if err != nil {
		lis.Close()
		return err
	}
	defer front.close()
	a2aF, err := startA2A(cfg, gs, srv.Auth(), srv.Webhooks(), telemetry.Version(), log)
	if err != nil {
		lis.Close()
		return err
	}
	defer a2aF.close()
	if p, ok := cfg.Profile(""); !ok {
		log.Warn("no default model: agents must name a profile or give base_url and model in their config " +
			"(set AGENTCORE_MODEL_BASE_URL and AGENTCORE_MODEL, or -model-base-url and -model)")
	} else {
		logDefaultModel(log, p)
	}
	if onListen != nil {
		onListen(lis.Addr())
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	if cfg.MetricsListen != "" {
		mlis, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			gs.Stop()
			<-served
			return fmt.Errorf("metrics listen %s: %w", cfg.MetricsListen, err)
		}
		log.Info("metrics listening", "addr", mlis.Addr().String(), "pprof", cfg.Pprof)
		mctx, stopMetrics := context.WithCancel(context.Background())
		metricsDone := make(chan error, 1)
		go func() { metricsDone <- srv.Telemetry().Serve(mctx, mlis, cfg.Pprof) }()
		defer func() {
			stopMetrics()
			if err := <-metricsDone; err != nil {
				log.Warn("metrics listener", "error", err)
			}
		}()
	}
	log.Info("telemetry", "tracing", srv.Telemetry().Tracing(), "metrics", cfg.MetricsListen != "", "trace_content", cfg.TraceContent)

	mcpSrv, mcpServed, err := serveMCP(cfg, srv, log)
	if err != nil {
		gs.Stop()
		<-served
		return err
	}

	for waiting := true; waiting; {
		select {
		case err := <-served:
			return fmt.Errorf("serve: %w", err)
		case <-hup:
			if cfg.AuthTokensFile == "" {
				log.Info("SIGHUP: no tokens file to read again (-auth-tokens-file)")
			} else {
				// New calls see the new tenants at once, calls in flight keep theirs.
				if n, err := srv.Auth().Reload(); err != nil {
					log.Error("tokens file not reloaded; the previous tenants stay", "error", err)
				} else {
					log.Info("tenants reloaded", "tenants", n)
				}
			}
		case err := <-mcpServed:
			gs.Stop()
			<-served
			return fmt.Errorf("serve MCP: %w", err)
		case <-ctx.Done():
			waiting = false
		}
	}
	shutdown(gs, dr, hs, srv, mcpSrv, front, a2aF, cfg.ShutdownGrace, log)
	<-served
	log.Info("stopped")
	return nil
}

// shutdown stops taking calls (gRPC, HTTP, A2A and MCP), waits up to grace for
// running calls, stops the runs still going and, after a last wait, closes
// every connection. Until then the gRPC listener stays open for the health
// service alone (dr refuses every other call), so that a probe on a new
// connection finds the server alive but not ready. MCP calls still running
// after the grace period are cancelled (their tools killed); HTTP event
// streams end with their calls.
func shutdown(gs *grpc.Server, dr *interceptor.Drain, hs *health.Server, srv *server.Server, mcpSrv *http.Server, front *httpFront, a2aF *a2aFront, grace time.Duration, log hclog.Logger) {
	// Not ready any more, still alive: a liveness probe must not restart a
	// server that is shutting down gracefully.
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	hs.SetServingStatus(agentv1.AgentService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
	dr.Close()
	log.Info("shutting down", "grace", grace)
	// HTTP requests end with their gRPC calls: once those have, their
	// handlers write the last events and return (or are cut after afterStop).
	httpCtx, cancelHTTP := context.WithCancel(context.Background())
	defer cancelHTTP()
	httpDone := make(chan struct{})
	go func() { front.shutdown(httpCtx); close(httpDone) }()
	a2aDone := make(chan struct{})
	go func() { a2aF.shutdown(httpCtx); close(a2aDone) }()
	defer func() {
		for _, done := range []chan struct{}{httpDone, a2aDone} {
			select {
			case <-done:
			case <-time.After(afterStop):
				cancelHTTP()
				<-done
			}
		}
	}()
	if mcpSrv != nil {
		mcpDone := make(chan struct{})
		go func() {
			defer close(mcpDone)
			ctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			if mcpSrv.Shutdown(ctx) != nil {
				mcpSrv.Close()
			}
		}()
		defer func() { <-mcpDone }()
	}
	drained := make(chan struct{})
	go func() { dr.Wait(); srv.WaitDetached(); close(drained) }() // calls, and runs that outlived theirs
	select {
	case <-drained:
	case <-time.After(grace):
		log.Info("grace period over: stopping runs")
		stopCtx, cancel := context.WithTimeout(context.Background(), afterStop)
		srv.StopRuns(stopCtx)
		cancel()
		select {
		case <-drained:
		case <-time.After(afterStop):
		}
	}
	// Left: health watches, ended now, and calls that outlived afterStop.
	dr.EndWatches()
	stopped := make(chan struct{})
	go func() { gs.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(afterStop):
		gs.Stop()
		<-stopped
	}
	<-drained
}

// logDefaultModel says which default model the server picked up: the
// profile, model, protocol, the base URL's host and path (never its query,
// nor the key) and where the key comes from.
func logDefaultModel(log hclog.Logger, p *config.Profile) {
	endpoint := p.BaseURL
	if u, err := url.Parse(p.BaseURL); err == nil {
		endpoint = u.Host + u.EscapedPath()
	}
	protocol := "chat"
	if p.Protocol != agentv1.Protocol_PROTOCOL_UNSPECIFIED {
		protocol = strings.ToLower(strings.TrimPrefix(p.Protocol.String(), "PROTOCOL_"))
	}
	key := "none"
	switch {
	case p.APIKey != "" && p.APIKeyFile != "":
		key = "from the file " + p.APIKeyFile
	case p.APIKey != "":
		key = "from " + p.APIKeyEnv
	}
	log.Info("default model", "profile", p.Name, "model", p.Model, "protocol", protocol, "base_url", endpoint, "api_key", key)
}
