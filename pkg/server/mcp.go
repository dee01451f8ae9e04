package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/agentcore/agentcore/pkg/mcpserver"
	"github.com/agentcore/agentcore/pkg/tool"
)

// MCPHandler returns the handler serving the server's tools over MCP
// streamable HTTP (pkg/mcpserver), with the bearer token of the gRPC API.
func (s *Server) MCPHandler(version string) (http.Handler, error) {
	opts := mcpserver.Options{
		Tools:   s.currentTools,
		Name:    "agentcore",
		Version: version,
		Logger:  s.log.Named("mcp"),
	}
	if s.cfg.AuthToken != "" {
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

// authenticateMCP checks an MCP request's bearer token and returns the
// caller's tenant (the single default tenant, ""). It is the one place
// where the MCP listener authenticates: the tenant-aware check (issue 9)
// replaces its body.
func (s *Server) authenticateMCP(_ context.Context, token string, _ *http.Request) (string, error) {
	if !tokenMatches([]byte(s.cfg.AuthToken), token) {
		return "", fmt.Errorf("wrong bearer token")
	}
	return "", nil
}
