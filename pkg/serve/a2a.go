package serve

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/agentcore/agentcore/pkg/a2a"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/webhook"
)

// a2aFront is the A2A listener (pkg/a2a). Like the HTTP gateway it calls
// the gRPC server over an in-process link, so authentication, tenants,
// limits and the audit log apply to an A2A request as to a gRPC call.
type a2aFront struct {
	link    *link
	handler *a2a.Handler
	srv     *http.Server
	served  chan error
}

// startA2A serves the agents over A2A on cfg.A2AListen (TLS as the gRPC
// listener's); nil when A2A is off. It refuses, as the other listeners
// do, a non-loopback address with neither TLS nor a token unless
// cfg.Insecure.
func startA2A(cfg *config.Config, gs *grpc.Server, authn *auth.Authenticator, push *webhook.Sender, version string, logger hclog.Logger) (*a2aFront, error) {
	if cfg.A2AListen == "" {
		return nil, nil
	}
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	lis, err := listen(cfg.A2AListen, cfg.SocketOwner)
	if err != nil {
		return nil, fmt.Errorf("a2a: %w", err)
	}
	if _, err := exposure(cfg, lis.Addr(), authn.Required()); err != nil {
		lis.Close()
		return nil, fmt.Errorf("a2a: %w", err)
	}
	l, err := newLink(cfg, gs)
	if err != nil {
		lis.Close()
		return nil, fmt.Errorf("a2a: %w", err)
	}
	opts := a2a.Options{
		Conn:         l.conn,
		BearerAuth:   authn.Required(),
		MutualTLS:    cfg.TLS.ClientCAFile != "",
		Version:      version,
		MaxBodyBytes: int64(cfg.Limits.MaxMessageBytes),
		Logger:       logger.Named("a2a"),
	}
	if push != nil { // push notifications go through the server's webhook sender: its allowed hosts, secret, retries and metrics
		opts.Push = a2a.WebhookPusher(push)
	}
	if authn.Required() {
		opts.Authenticate = func(r *http.Request) error {
			_, err := authn.AuthenticateHTTP(r)
			return err
		}
	}
	h, err := a2a.NewHandler(opts)
	if err != nil {
		lis.Close()
		l.close()
		return nil, err
	}
	f := &a2aFront{link: l, handler: h, served: make(chan error, 1)}
	f.srv = newHTTPServer(h, tc, logger.Named("a2a"))
	go func() { f.served <- serveHTTP(f.srv, lis, tc) }()
	logger.Info("a2a listening", "addr", lis.Addr().String(), "path", a2a.PathPrefix+"{agent_id}", "tls", tc != nil, "auth", authn.Required())
	return f, nil
}

// shutdown stops accepting A2A requests and waits, until ctx is done, for
// those running (their streams end when their calls do).
func (f *a2aFront) shutdown(ctx context.Context) {
	if f == nil {
		return
	}
	_ = f.srv.Shutdown(ctx)
}

// close ends every A2A connection, the push watchers and the in-process link.
func (f *a2aFront) close() {
	if f == nil {
		return
	}
	_ = f.srv.Close()
	<-f.served
	f.handler.Close()
	f.link.close()
}
