package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/auth"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Auth returns the server's authenticator, for other front ends (an MCP
// listener, an HTTP gateway): authenticate a call with it, then put the
// tenant in the context given to the handlers (auth.NewContext).
func (s *Server) Auth() *auth.Authenticator { return s.auth }

// ReloadTenants reads the tokens file again (on SIGHUP): new calls see the
// new tenants at once, calls in flight keep theirs. On error the previous
// tenants stay.
func (s *Server) ReloadTenants() error {
	n, err := s.auth.Reload()
	if err != nil {
		s.log.Error("tokens file not reloaded; the previous tenants stay", "error", err)
		return err
	}
	s.log.Info("tenants reloaded", "tenants", n)
	return nil
}

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
	return nil, failure(codes.Unauthenticated, agentv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED, "the call carries no authenticated tenant")
}

// requireAdmin fails unless the caller's tenant is an admin.
func (s *Server) requireAdmin(ctx context.Context, what string) error {
	t, err := s.tenant(ctx)
	if err != nil {
		return err
	}
	if !t.Admin {
		return failure(codes.PermissionDenied, agentv1.ErrorReason_ERROR_REASON_ADMIN_REQUIRED, "%s needs an admin tenant (admin: true in the tokens file)", what)
	}
	return nil
}

// limitFailure is RESOURCE_EXHAUSTED with the reason and, in the
// ErrorInfo's metadata, whose limit it is: "server" or "tenant".
func limitFailure(reason agentv1.ErrorReason, scope, format string, args ...any) error {
	return withDetails(codes.ResourceExhausted, fmt.Sprintf(format, args...), errorInfo(reason, map[string]string{"scope": scope}))
}

// pluginCredential resolves -plugin-user USER[:GROUP]. Only root may run
// plugins as another user; naming the server's own user is allowed and
// changes nothing.
func pluginCredential(spec string) (*syscall.Credential, error) {
	if spec == "" {
		return nil, nil
	}
	uid, gid, err := userGroup(spec)
	if err != nil {
		return nil, fmt.Errorf("plugin-user %q: %w", spec, err)
	}
	if uid == 0 {
		return nil, fmt.Errorf("plugin-user %q: plugins must not run as root; name an unprivileged user", spec)
	}
	if euid := os.Geteuid(); euid != 0 {
		if euid == uid && os.Getegid() == gid {
			return nil, nil
		}
		return nil, fmt.Errorf("plugin-user %q: only root can run plugins as another user, and agent-server runs as uid %d", spec, euid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// userGroup resolves USER[:GROUP] (names or numeric ids; the group
// defaults to the user's) to ids.
func userGroup(spec string) (uid, gid int, err error) {
	name, group, hasGroup := strings.Cut(spec, ":")
	u, err := lookupUser(name)
	if err != nil {
		return 0, 0, err
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	if hasGroup {
		if gid, err = lookupGroup(group); err != nil {
			return 0, 0, err
		}
	}
	return uid, gid, nil
}

func lookupUser(name string) (*user.User, error) {
	if _, err := strconv.ParseUint(name, 10, 32); err == nil {
		if u, err := user.LookupId(name); err == nil {
			return u, nil
		}
		// A numeric id without a passwd entry: its group is the same number.
		return &user.User{Uid: name, Gid: name, Username: name}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	return u, nil
}

func lookupGroup(name string) (int, error) {
	if id, err := strconv.ParseUint(name, 10, 32); err == nil {
		return int(id), nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseUint(g.Gid, 10, 32)
	if err != nil {
		return 0, errors.New("group " + name + " has no numeric id")
	}
	return int(id), nil
}
