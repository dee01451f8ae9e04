package server

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"

	"github.com/agentcore/agentcore/pkg/mcpserver"
	"github.com/agentcore/agentcore/pkg/tool"
)

// MCPHandler returns the handler serving the server's tools over MCP
// streamable HTTP (pkg/mcpserver), with the bearer token of the gRPC API and
// ExecuteTool's output caps and telemetry.
func (s *Server) MCPHandler(version string) (http.Handler, error) {
	opts := mcpserver.Options{
		Tools:   s.currentTools,
		Name:    "agentcore",
		Version: version,
		Logger:  s.log.Named("mcp"),
		// Bounded and observed as ExecuteTool's calls are.
		Limit:    s.cfg.Limits.MaxToolOutput,
		MaxBytes: int(s.cfg.Limits.MaxToolResultBytes),
		Observe:  s.observeTool,
	}
	if s.auth.Required() {
		opts.Authenticate = s.authenticateMCP
	}
	return mcpserver.NewHandler(opts)
}

// currentTools returns the tools of the current catalog, or why there are none yet.
func (s *Server) currentTools() (*tool.Set, error) {
	c := s.tools.get()
	if c == nil {
		return nil, errors.New("tools are still loading; retry shortly")
	}
	return c.tools, nil
}

// authenticateMCP checks an MCP request's bearer token (and client
// certificate) exactly as the gRPC API does, and returns the caller's
// tenant, which becomes the MCP session's user.
func (s *Server) authenticateMCP(_ context.Context, token string, r *http.Request) (string, error) {
	var cert *x509.Certificate
	if r != nil && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		cert = r.TLS.VerifiedChains[0][0]
	}
	t, err := s.auth.Check(token, cert)
	if err != nil {
		return "", err
	}
	return "tenant:" + t.ID, nil // never empty: the default tenant is ""
}
