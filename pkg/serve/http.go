package serve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/test/bufconn"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/connect"
	"github.com/agentcore/agentcore/pkg/gateway"
)

// memBuffer is the buffer of each direction of the in-process connection.
const memBuffer = 1 << 20

// httpFront is the HTTP listener of the gateway and console (pkg/gateway).
// The gateway calls the gRPC server over an in-process connection, so every
// interceptor (authentication, limits, logging) applies to an HTTP request
// exactly as to a gRPC call.
type httpFront struct {
	link   *link
	srv    *http.Server
	lis    net.Listener
	served chan error
}

// link is an in-process connection to the gRPC server, for a front end
// that serves HTTP (the gateway, A2A) with the gRPC API's handlers.
type link struct {
	mem    *memListener
	conn   *grpc.ClientConn
	served chan error
}

// newLink serves gs on a new in-process listener and connects to it.
func newLink(cfg *config.Config, gs *grpc.Server) (*link, error) {
	mem := &memListener{bufconn.Listen(memBuffer)}
	conn, err := grpc.NewClient("passthrough:///agent-server",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return mem.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(cfg.Limits.MaxMessageBytes),
			grpc.MaxCallSendMsgSize(cfg.Limits.MaxMessageBytes)),
	)
	if err != nil {
		mem.Close()
		return nil, err
	}
	l := &link{mem: mem, conn: conn, served: make(chan error, 1)}
	go func() { l.served <- gs.Serve(mem) }()
	return l, nil
}

// close closes the connection and the listener, and waits for the gRPC
// server to stop serving it.
func (l *link) close() {
	_ = l.conn.Close()
	_ = l.mem.Close()
	<-l.served
}

// startHTTP serves the gateway on cfg.HTTP.Listen (TLS as the gRPC
// listener's) and gs on the in-process link. Like the gRPC listener, it
// refuses a non-loopback address with neither TLS nor a token unless
// cfg.Insecure. It returns nil when no HTTP listener is configured.
func startHTTP(cfg *config.Config, gs *grpc.Server, authRequired bool, logger hclog.Logger, conns *connect.Service) (*httpFront, error) {
	if cfg.HTTP.Listen == "" {
		return nil, nil
	}
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	lis, err := listen(cfg.HTTP.Listen, cfg.SocketOwner)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	if _, err := exposure(cfg, lis.Addr(), authRequired); err != nil {
		lis.Close()
		return nil, fmt.Errorf("http: %w", err)
	}
	l, err := newLink(cfg, gs)
	if err != nil {
		lis.Close()
		return nil, fmt.Errorf("http gateway: %w", err)
	}
	h, err := gateway.New(gateway.Options{Conn: l.conn, CORSOrigins: cfg.HTTP.CORSOrigins, MaxBodyBytes: int64(cfg.Limits.MaxMessageBytes), Callback: conns})
	if err != nil {
		lis.Close()
		l.close()
		return nil, err
	}
	conns.SetCallbackURL(callbackURL(cfg, lis.Addr(), tc != nil))
	f := &httpFront{link: l, lis: lis, served: make(chan error, 1)}
	f.srv = newHTTPServer(h, tc, logger.Named("http"))
	go func() { f.served <- serveHTTP(f.srv, lis, tc) }()
	logger.Info("serving HTTP", "addr", lis.Addr().String(), "tls", tc != nil, "cors", cfg.HTTP.CORSOrigins)
	return f, nil
}

// newHTTPServer is the HTTP server of a front end: bounded header reads
// and idle connections, its errors in log at debug level.
func newHTTPServer(h http.Handler, tc *tls.Config, log hclog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		TLSConfig:         tc,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true, ForceLevel: hclog.Debug}),
	}
}

// serveHTTP serves hs on lis, with TLS when tc is set, until it is shut
// down (nil) or fails.
func serveHTTP(hs *http.Server, lis net.Listener, tc *tls.Config) error {
	var err error
	if tc != nil {
		err = hs.ServeTLS(lis, "", "")
	} else {
		err = hs.Serve(lis)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// shutdown stops accepting HTTP requests and waits, until ctx is done, for
// those running (event streams end when their calls do).
func (f *httpFront) shutdown(ctx context.Context) {
	if f == nil {
		return
	}
	_ = f.srv.Shutdown(ctx)
}

// close ends every HTTP connection and the in-process link; the gRPC server
// must have stopped serving the link (or be about to).
func (f *httpFront) close() {
	if f == nil {
		return
	}
	_ = f.srv.Close()
	<-f.served
	f.link.close()
}

// memListener is the in-process link from the gateway to the gRPC server.
// Its connections are marked, so that the server's TLS is skipped for them
// only (gatewayCreds): they never leave the process, and the HTTP listener
// has the TLS.
type memListener struct{ *bufconn.Listener }

// Accept marks each connection as in-process.
func (l *memListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return memConn{c}, nil
}

// memConn is a connection of the in-process link.
type memConn struct{ net.Conn }

// gatewayCreds are the server's transport credentials (TLS, or none) for
// every connection but those of the in-process link, which get inProcess.
type gatewayCreds struct {
	credentials.TransportCredentials
}

// ServerHandshake runs the transport's handshake, except on the in-process link.
func (c gatewayCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if _, ok := conn.(memConn); ok {
		return conn, inProcess{credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
	}
	return c.TransportCredentials.ServerHandshake(conn)
}

// Clone clones the transport credentials.
func (c gatewayCreds) Clone() credentials.TransportCredentials {
	return gatewayCreds{c.TransportCredentials.Clone()}
}

// fromGateway gives a call that came through the HTTP gateway the peer its
// HTTP client would have over gRPC: the client's address (the last
// x-forwarded-for entry, which the gateway appends) and, when it presented
// one on the HTTP listener, its verified certificate. Authentication (tokens
// and certificates map to tenants) and the audit log after it then treat
// both front ends alike. Calls on other connections pass unchanged.
func fromGateway(ctx context.Context) context.Context {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return ctx
	}
	if _, ok := p.AuthInfo.(inProcess); !ok {
		return ctx
	}
	md, _ := metadata.FromIncomingContext(ctx)
	np := &peer.Peer{Addr: httpClient("gateway"), LocalAddr: p.LocalAddr, AuthInfo: p.AuthInfo}
	if xff := md.Get("x-forwarded-for"); len(xff) > 0 {
		parts := strings.Split(xff[len(xff)-1], ",")
		np.Addr = httpClient(strings.TrimSpace(parts[len(parts)-1]))
	}
	if v := md.Get(gateway.ClientCertMetadata); len(v) == 1 {
		if cert, err := x509.ParseCertificate([]byte(v[0])); err == nil {
			np.AuthInfo = credentials.TLSInfo{
				State:          tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}},
				CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity},
			}
		}
	}
	return peer.NewContext(ctx, np)
}

// httpClient is the address of a gateway call's HTTP client.
type httpClient string

// Network names the front end.
func (httpClient) Network() string { return "http" }

// String is the client's IP address.
func (a httpClient) String() string { return string(a) }

// gatewayUnary and gatewayStream apply fromGateway; they run before every
// other interceptor.
func gatewayUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return handler(fromGateway(ctx), req)
}

func gatewayStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := fromGateway(ss.Context())
	if ctx == ss.Context() {
		return handler(srv, ss)
	}
	return handler(srv, &gatewayServerStream{ServerStream: ss, ctx: ctx})
}

// gatewayServerStream is a stream with fromGateway's context.
type gatewayServerStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context returns the stream's context with the HTTP client's peer.
func (s *gatewayServerStream) Context() context.Context { return s.ctx }

// inProcess is the AuthInfo of a call that came through the HTTP gateway.
type inProcess struct{ credentials.CommonAuthInfo }

// AuthType names the in-process link.
func (inProcess) AuthType() string { return "in-process" }
