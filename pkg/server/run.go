package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/interceptor"
	"github.com/agentcore/agentcore/pkg/mcpserver"
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
	srv, err := New(Options{Config: cfg, LogOutput: logOut, Kinds: kinds, Getenv: os.Getenv})
	if err != nil {
		return err
	}
	defer srv.Close()
	log := srv.Logger()
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
	reflectionMode, err := exposure(cfg, lis.Addr(), srv.auth.Required())
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
	agentv1.RegisterAgentServiceServer(gs, srv)
	hs := health.NewServer()
	hs.SetServingStatus(LivenessService, healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(agentv1.AgentService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	if reflectionMode != "off" {
		reflection.Register(gs)
	}

	log.Info("listening", "addr", lis.Addr().String(), "tls", cfg.TLS.CertFile != "", "mtls", cfg.TLS.ClientCAFile != "",
		"auth", srv.auth.Required(), "tenants_file", cfg.AuthTokensFile != "", "reflection", reflectionMode)
	if !loopback(lis.Addr()) && cfg.TLS.CertFile == "" && !srv.auth.Required() {
		log.Warn("serving a non-loopback address without TLS and without a token (-insecure): anyone who can reach it can use every agent and tool")
	}
	if os.Geteuid() == 0 && cfg.PluginUser == "" {
		log.Warn("running as root, and so do the plugins: set -plugin-user to run them as an unprivileged user")
	}
	front, err := startHTTP(cfg, gs, srv.auth.Required(), log)
	if err != nil {
		lis.Close()
		return err
	}
	defer front.close()
	if _, ok := cfg.Profile(""); !ok {
		log.Warn("no default model: agents must name a profile or give base_url and model in their config " +
			"(set AGENTCORE_MODEL_BASE_URL and AGENTCORE_MODEL, or -model-base-url and -model)")
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
				_ = srv.ReloadTenants()
			}
		case err := <-mcpServed:
			gs.Stop()
			<-served
			return fmt.Errorf("serve MCP: %w", err)
		case <-ctx.Done():
			waiting = false
		}
	}
	shutdown(gs, dr, hs, srv, mcpSrv, front, cfg.ShutdownGrace, log)
	<-served
	log.Info("stopped")
	return nil
}

// shutdown stops taking calls (gRPC, HTTP and MCP), waits up to grace for
// running calls, stops the runs still going and, after a last wait, closes
// every connection. Until then the gRPC listener stays open for the health
// service alone (dr refuses every other call), so that a probe on a new
// connection finds the server alive but not ready. MCP calls still running
// after the grace period are cancelled (their tools killed); HTTP event
// streams end with their calls.
func shutdown(gs *grpc.Server, dr *interceptor.Drain, hs *health.Server, srv *Server, mcpSrv *http.Server, front *httpFront, grace time.Duration, log hclog.Logger) {
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
	defer func() {
		select {
		case <-httpDone:
		case <-time.After(afterStop):
			cancelHTTP()
			<-httpDone
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
	go func() { dr.Wait(); srv.bgRuns.Wait(); close(drained) }() // calls, and runs that outlived theirs
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

// serveMCP starts serving the tools over MCP streamable HTTP when
// cfg.MCPListen is set, with the gRPC API's TLS settings; the channel gets
// the error that ended serving. It returns a nil server when MCP is off.
func serveMCP(cfg *config.Config, srv *Server, log hclog.Logger) (*http.Server, <-chan error, error) {
	if cfg.MCPListen == "" {
		return nil, nil, nil
	}
	h, err := srv.MCPHandler("")
	if err != nil {
		return nil, nil, err
	}
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	lis, err := listen(cfg.MCPListen, cfg.SocketOwner)
	if err != nil {
		return nil, nil, fmt.Errorf("mcp: %w", err)
	}
	if _, err := exposure(cfg, lis.Addr(), srv.auth.Required()); err != nil {
		lis.Close()
		return nil, nil, fmt.Errorf("mcp: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(mcpserver.Path, h)
	hs := &http.Server{Handler: mux, TLSConfig: tc, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() {
		var err error
		if tc != nil {
			err = hs.ServeTLS(lis, "", "")
		} else {
			err = hs.Serve(lis)
		}
		if errors.Is(err, http.ErrServerClosed) {
			return
		}
		served <- err
	}()
	log.Info("mcp listening", "addr", lis.Addr().String(), "path", mcpserver.Path, "tls", tc != nil, "auth", cfg.AuthToken != "")
	return hs, served, nil
}

// tlsConfig is the servers' TLS configuration, nil without -tls-cert.
func tlsConfig(cfg *config.Config) (*tls.Config, error) {
	if cfg.TLS.CertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLS.CertFile, cfg.TLS.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if cfg.TLS.ClientCAFile != "" {
		pem, err := os.ReadFile(cfg.TLS.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("tls client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls client CA %s: no PEM certificate in it", cfg.TLS.ClientCAFile)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// grpcOptions are the transport options: TLS, keepalive, message sizes.
func grpcOptions(cfg *config.Config) ([]grpc.ServerOption, error) {
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.Limits.MaxMessageBytes),
		grpc.MaxSendMsgSize(cfg.Limits.MaxMessageBytes),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: cfg.KeepaliveTime, Timeout: cfg.KeepaliveTimeout}),
		// Clients may ping every 10 s, even between calls: a client waiting
		// on a blocking tool keeps its connection alive that way.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		// Calls run on goroutines that live on: a new goroutine per call
		// grows its stack again through the interceptors, the agent loop
		// and the codecs (runtime.copystack was 8 % of a send's CPU).
		grpc.NumStreamWorkers(streamWorkers()),
	}
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if tc != nil {
		creds = credentials.NewTLS(tc)
	}
	// The HTTP gateway's in-process connections skip TLS and are marked
	// (gatewayCreds), so that its calls get their HTTP client's peer first.
	return append(opts, grpc.Creds(gatewayCreds{creds}),
		grpc.ChainUnaryInterceptor(gatewayUnary), grpc.ChainStreamInterceptor(gatewayStream)), nil
}

// streamWorkers is how many goroutines serve calls (see grpc.NumStreamWorkers):
// a send holds one for its whole run, and a call finding none free
// gets a goroutine of its own, as without workers.
func streamWorkers() uint32 {
	return uint32(max(16, 4*runtime.GOMAXPROCS(0)))
}

// exposure checks that the listener is not open to the network without
// TLS and without a token (unless cfg.Insecure), and returns the reflection
// mode: cfg.Reflection, or by default "on" on loopback and unix sockets and
// "auth" elsewhere.
func exposure(cfg *config.Config, addr net.Addr, authRequired bool) (string, error) {
	local := loopback(addr)
	if !local && cfg.TLS.CertFile == "" && !authRequired && !cfg.Insecure {
		return "", fmt.Errorf("listen %s: a non-loopback address without TLS and without any token would give every agent and tool "+
			"to anyone who can reach it: give -tls-cert and -tls-key, or -auth-tokens-file (or -auth-token-file), "+
			"or -insecure to serve it so anyway", addr)
	}
	if cfg.Reflection != "" {
		return cfg.Reflection, nil
	}
	if local {
		return "on", nil
	}
	return "auth", nil
}

// loopback reports whether a listener's address is a unix socket or a
// loopback IP address.
func loopback(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.UnixAddr:
		return true
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	}
	return false
}

// listen opens host:port, or a unix socket created with mode 0600 (a stale
// socket file nobody listens on is replaced) and given to owner (USER[:GROUP]) if set.
func listen(addr, owner string) (net.Listener, error) {
	path, ok := unixPath(addr)
	if !ok {
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		return lis, nil
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("listen %s: %s exists and is not a socket", addr, path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("listen %s: another server is listening there", addr)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("listen %s: remove the stale socket: %w", addr, err)
		}
	}
	// The umask makes the socket 0600 from the start: no moment when others may connect.
	old := syscall.Umask(0o177)
	lis, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lis.Close()
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	if owner != "" {
		uid, gid, err := tool.UserGroup(owner)
		if err == nil {
			err = os.Lchown(path, uid, gid)
		}
		if err != nil {
			lis.Close()
			return nil, fmt.Errorf("listen %s: socket-owner %q: %w", addr, owner, err)
		}
	}
	return lis, nil
}

func unixPath(addr string) (string, bool) {
	c := config.Config{Listen: addr}
	return c.UnixSocket()
}
