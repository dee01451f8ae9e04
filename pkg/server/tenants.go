package server

import (
	"context"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/auth"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Auth returns the server's authenticator, for other front ends (an MCP
// listener, an HTTP gateway): authenticate a call with it, then put the
// tenant in the context given to the handlers (auth.NewContext).
func (s *Server) Auth() *auth.Authenticator { return s.auth }

// tenant returns the tenant the call acts for, put in its context by the
// front end. A context without one is the default tenant only when the
// server needs no credential.
func (s *Server) tenant(ctx context.Context) (*auth.Tenant, error) {
	if t, ok := auth.FromContext(ctx); ok {
		return t, nil
	}
	if t, err := s.auth.Check("", nil); err == nil {
		return t, nil
	}
	return nil, apierr.Failure(codes.Unauthenticated, agentv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED, "the call carries no authenticated tenant")
}

// requireAdmin fails unless the caller's tenant is an admin.
func (s *Server) requireAdmin(ctx context.Context, what string) error {
	t, err := s.tenant(ctx)
	if err != nil {
		return err
	}
	if !t.Admin {
		return apierr.Failure(codes.PermissionDenied, agentv1.ErrorReason_ERROR_REASON_ADMIN_REQUIRED, "%s needs an admin tenant (admin: true in the tokens file)", what)
	}
	return nil
}
