package serve

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/mcpserver"
	"github.com/agentcore/agentcore/pkg/server"
)

// serveMCP starts serving the tools over MCP streamable HTTP when
// cfg.MCPListen is set, with the gRPC API's TLS settings; the channel gets
// the error that ended serving. It returns a nil server when MCP is off.
func serveMCP(cfg *config.Config, srv *server.Server, log hclog.Logger) (*http.Server, <-chan error, error) {
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
	if _, err := exposure(cfg, lis.Addr(), srv.Auth().Required()); err != nil {
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
