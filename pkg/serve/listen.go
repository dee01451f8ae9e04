package serve

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/tool/osuser"
)

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
		uid, gid, err := osuser.UserGroup(owner)
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
