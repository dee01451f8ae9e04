package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// afterStop bounds how long Run waits for streams to end once runs were
// stopped at the end of the grace period.
const afterStop = 5 * time.Second

// Run serves AgentService as configured until ctx is done, then shuts down:
// it stops accepting, lets running sends go on for cfg.ShutdownGrace, stops
// those still running, kills every plugin process and returns nil.
// The health service reports NOT_SERVING until the tools are loaded (and
// again during shutdown); a tool directory that fails to scan ends Run with
// its error. Logs go to logOut (nil: nowhere) with secrets redacted.
// onListen, if set, gets the address once the server listens.
func Run(ctx context.Context, cfg *config.Config, logOut io.Writer, kinds []tool.Kind, onListen func(net.Addr)) error {
	srv, err := New(Options{Config: cfg, LogOutput: logOut, Kinds: kinds})
	if err != nil {
		return err
	}
	defer srv.Close()
	log := srv.Logger()

	opts, err := grpcOptions(cfg)
	if err != nil {
		return err
	}
	gs := grpc.NewServer(append(opts, srv.Interceptors()...)...)
	agentv1.RegisterAgentServiceServer(gs, srv)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	hs.SetServingStatus(agentv1.AgentService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	reflection.Register(gs)

	lis, err := listen(cfg.Listen)
	if err != nil {
		return err
	}
	log.Info("listening", "addr", lis.Addr().String(), "tls", cfg.TLS.CertFile != "", "mtls", cfg.TLS.ClientCAFile != "", "auth", cfg.AuthToken != "")
	if onListen != nil {
		onListen(lis.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()

	loaded := make(chan error, 1)
	loadCtx, cancelLoad := context.WithCancel(ctx)
	defer cancelLoad()
	go func() { loaded <- srv.LoadTools(loadCtx) }()

	var runErr error
	for waiting := true; waiting; {
		select {
		case err := <-loaded:
			loaded = nil
			if err != nil {
				runErr = err
				waiting = false
				break
			}
			hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
			hs.SetServingStatus(agentv1.AgentService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
			if _, ok := cfg.Profile(""); !ok {
				log.Warn("no default model: agents must name a profile or give base_url and model in their config " +
					"(set AGENTCORE_MODEL_BASE_URL and AGENTCORE_MODEL, or -model-base-url and -model)")
			}
		case err := <-served:
			return fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
			waiting = false
		}
	}
	cancelLoad()
	if loaded != nil {
		<-loaded
	}
	shutdown(gs, hs, srv, cfg.ShutdownGrace, log)
	<-served
	if runErr == nil {
		log.Info("stopped")
	}
	return runErr
}

// shutdown stops accepting, waits up to grace for running calls, stops the
// runs still going and, after a last wait, closes every connection.
func shutdown(gs *grpc.Server, hs *health.Server, srv *Server, grace time.Duration, log hclog.Logger) {
	hs.Shutdown()
	log.Info("shutting down", "grace", grace)
	done := make(chan struct{})
	go func() { gs.GracefulStop(); srv.bgRuns.Wait(); close(done) }() // streams, and runs that outlived theirs
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	log.Info("grace period over: stopping runs")
	stopCtx, cancel := context.WithTimeout(context.Background(), afterStop)
	srv.StopRuns(stopCtx)
	cancel()
	select {
	case <-done:
	case <-time.After(afterStop):
		gs.Stop()
		<-done
	}
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
	}
	if cfg.TLS.CertFile == "" {
		return opts, nil
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
	return append(opts, grpc.Creds(credentials.NewTLS(tc))), nil
}

// listen opens host:port, or a unix socket created with mode 0600 (a stale
// socket file nobody listens on is replaced).
func listen(addr string) (net.Listener, error) {
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
	return lis, nil
}

func unixPath(addr string) (string, bool) {
	c := config.Config{Listen: addr}
	return c.UnixSocket()
}
