package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/mcpserver"
	"github.com/agentcore/agentcore/pkg/tool"
)

// MCPHandler returns the handler serving the server's tools over MCP
// streamable HTTP (pkg/mcpserver), with the bearer tokens and tenants of the
// gRPC API and ExecuteTool's output caps and telemetry. Its tool calls are
// audited as ExecuteTool is, and their output loses the server-held secrets
// as every response of the API does.
func (s *Server) MCPHandler(version string) (http.Handler, error) {
	opts := mcpserver.Options{
		Tools:   s.currentTools,
		Name:    "agentcore",
		Version: version,
		Logger:  s.log.Named("mcp"),
		Execute: s.executeMCP,
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
	c := s.tools.Get()
	if c == nil {
		return nil, errors.New("tools are still loading; retry shortly")
	}
	return c.Tools, nil
}

// executeMCP runs a tools/call of the MCP listener: its live output and its
// result cleaned of server-held secrets (the gRPC and HTTP responses lose
// them in the codec), then the audit line ExecuteTool gets, with via=mcp.
func (s *Server) executeMCP(ctx context.Context, tenant string, set *tool.Set, name string, input json.RawMessage, opts tool.Options) tool.Result {
	start := time.Now()
	opts.Redact = s.secrets.RedactHeld
	res := set.Execute(ctx, name, input, opts)
	outcome := codes.OK
	if err := ctx.Err(); err != nil {
		outcome = status.Code(apierr.FromError(err))
	}
	id, _ := strings.CutPrefix(tenant, mcpTenantPrefix)
	s.audit.Info("audit", "call", "ExecuteTool", "via", "mcp", "tenant", (&auth.Tenant{ID: id}).Name(), "agent", "", "run", "",
		"tool", name, "outcome", outcome.String(), "duration", time.Since(start))
	return res
}

// mcpTenantPrefix starts the user of an MCP session (authenticateMCP).
const mcpTenantPrefix = "tenant:"

// authenticateMCP checks an MCP request's bearer token (and client
// certificate) exactly as the gRPC API does, and returns the caller's
// tenant, which becomes the MCP session's user.
func (s *Server) authenticateMCP(_ context.Context, token string, r *http.Request) (string, error) {
	t, err := s.auth.Check(token, auth.RequestCert(r))
	if err != nil {
		return "", err
	}
	return mcpTenantPrefix + t.ID, nil // never empty: the default tenant is ""
}
