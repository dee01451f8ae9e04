// Package connect is the person's side of OAuth for MCP servers: the
// ListConnections, Connect and Disconnect RPCs, and the callback route an
// authorization server sends the person's browser back to. A Connect starts
// an authorization-code flow (the OAuth client, an Authorizer, does the
// protocol), keeps what the flow needs in the caller's vault record
// (vault.Pending) and returns the URL to open; the callback, bound by its
// state parameter to that tenant, user and server, used once and only
// before it expires, finishes the flow and stores the tokens in the vault.
// Tokens never leave agent-server through here: a Connection shows only
// their state, scopes and expiry.
package connect

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/vault"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// CallbackPath is the callback route on the HTTP listener.
const CallbackPath = "/v1/oauth/callback"

// Authorizer is the OAuth client that runs the flows (the MCP bridge's,
// pkg/mcpauth).
type Authorizer interface {
	// Servers lists the MCP servers that require OAuth.
	Servers(ctx context.Context) ([]Server, error)
	// Begin starts an authorization-code flow for server (discovery,
	// client registration reusing rec.Client when set, PKCE) and returns
	// the URL a person opens, with state and redirectURL in it, and the
	// record to keep: Client filled, Pending holding the PKCE verifier
	// (its Nonce and Expires are set here). rec is the stored record, or
	// nil. A server that needs no person (client credentials) returns no
	// URL and a record holding its Token.
	Begin(ctx context.Context, server string, rec *vault.Record, redirectURL, state string) (authURL string, out *vault.Record, err error)
	// Complete exchanges the code of the callback (checking iss against
	// the issuer when given, RFC 9207) and returns the record with Token.
	Complete(ctx context.Context, server string, rec *vault.Record, code, iss string) (*vault.Record, error)
}

// Server is an MCP server that requires OAuth.
type Server struct {
	// Name is its definition's name.
	Name string
	// Consent says its tokens need a person (the authorization-code
	// flow); false: the server gets them itself (client credentials).
	Consent bool
}

// Options configure a Service.
type Options struct {
	// Vault keeps the records. Required (it may be unavailable).
	Vault *vault.Vault
	// Authorizer runs the flows; nil: no MCP server requires OAuth.
	Authorizer Authorizer
	// Timeout bounds the time from Connect to its callback; 0: 10 minutes.
	Timeout time.Duration
	// Log gets a line per connection made, refused or removed.
	Log hclog.Logger
	// OnConnected, if set, is called when a connection has been stored,
	// before the callback answers (e.g. to discover the server's tools
	// now that there is a token).
	OnConnected func(ctx context.Context, k vault.Key)
}

// Service serves the connections' RPCs and their callback route.
type Service struct {
	o        Options
	callback atomic.Pointer[string]
}

// New returns the service; SetCallbackURL says where its callback route is
// reached.
func New(o Options) *Service {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	return &Service{o: o}
}

// SetCallbackURL sets the absolute URL of the callback route that people's
// browsers reach (-public-url, else the HTTP listener's); "": none, and a
// Connect needing a person fails.
func (s *Service) SetCallbackURL(u string) { s.callback.Store(&u) }

func (s *Service) callbackURL() string {
	if p := s.callback.Load(); p != nil {
		return *p
	}
	return ""
}

// caller returns the tenant and user a call acts for.
func caller(ctx context.Context) (tenant, user string, err error) {
	t, ok := auth.FromContext(ctx)
	if !ok {
		return "", "", apierr.Failure(codes.Unauthenticated, agentv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED, "the call carries no authenticated tenant")
	}
	if user, err = auth.UserOf(ctx); err != nil {
		return "", "", apierr.InvalidField(auth.UserHeader, "%v", err)
	}
	return t.ID, user, nil
}

// servers returns the MCP servers that require OAuth.
func (s *Service) servers(ctx context.Context) ([]Server, error) {
	if s.o.Authorizer == nil {
		return nil, nil
	}
	out, err := s.o.Authorizer.Servers(ctx)
	if err != nil {
		return nil, apierr.Failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_TOOLS_NOT_LOADED, "the MCP servers are not known yet: %v", err)
	}
	slices.SortFunc(out, func(a, b Server) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// vaultError maps a vault error to a status.
func vaultError(err error) error {
	switch {
	case errors.Is(err, vault.ErrUnavailable):
		return apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_VAULT_UNAVAILABLE, "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierr.FromError(err)
	}
	return apierr.Failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_STORE_UNAVAILABLE, "the token vault is unavailable: %v", err)
}

// ListConnections lists the caller's connection to each MCP server that
// requires OAuth: its user's own, else its tenant's.
func (s *Service) ListConnections(ctx context.Context, _ *agentv1.ListConnectionsRequest) (*agentv1.ListConnectionsResponse, error) {
	tenant, user, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	servers, err := s.servers(ctx)
	if err != nil {
		return nil, err
	}
	resp := &agentv1.ListConnectionsResponse{}
	for _, srv := range servers {
		c, err := s.connection(ctx, tenant, user, srv)
		if err != nil {
			return nil, err
		}
		resp.Connections = append(resp.Connections, c)
	}
	return resp, nil
}

// connection describes the caller's connection to srv: the user's record,
// else (none, or one holding no token) the tenant's.
func (s *Service) connection(ctx context.Context, tenant, user string, srv Server) (*agentv1.Connection, error) {
	c := &agentv1.Connection{Server: srv.Name, Consent: srv.Consent, State: agentv1.ConnectionState_CONNECTION_STATE_NOT_CONNECTED}
	subjects := []string{user}
	if user != "" {
		subjects = append(subjects, "")
	}
	for _, subject := range subjects {
		rec, e, err := s.o.Vault.Get(ctx, vault.Key{Tenant: tenant, Subject: subject, Server: srv.Name})
		switch {
		case errors.Is(err, vault.ErrNotFound):
			continue
		case errors.Is(err, vault.ErrKey):
			s.o.Log.Warn("a vault record does not open: connect again to replace it", "server", srv.Name, "tenant", tenant, "subject", subject, "error", err)
			continue
		case err != nil:
			return nil, vaultError(err)
		}
		switch {
		case rec.Token != nil:
			c.State, c.Subject = agentv1.ConnectionState_CONNECTION_STATE_CONNECTED, subject
			c.Scopes, c.Issuer, c.UpdateTime = rec.Client.Scopes, rec.Client.Issuer, timestamppb.New(e.Updated)
			if !rec.Token.Expiry.IsZero() {
				c.ExpireTime = timestamppb.New(rec.Token.Expiry)
			}
			return c, nil
		case rec.Pending != nil && time.Now().Before(rec.Pending.Expires) && subject == user && c.State != agentv1.ConnectionState_CONNECTION_STATE_PENDING:
			c.State, c.Subject, c.UpdateTime = agentv1.ConnectionState_CONNECTION_STATE_PENDING, subject, timestamppb.New(e.Updated)
		}
	}
	return c, nil
}

// Disconnect deletes the caller's own record for a server: the user's, or
// without a user the tenant's.
func (s *Service) Disconnect(ctx context.Context, req *agentv1.DisconnectRequest) (*agentv1.DisconnectResponse, error) {
	tenant, user, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if req.GetServer() == "" {
		return nil, apierr.InvalidField("server", "required")
	}
	err = s.o.Vault.Delete(ctx, vault.Key{Tenant: tenant, Subject: user, Server: req.GetServer()})
	if errors.Is(err, vault.ErrNotFound) {
		whose := "the tenant has"
		if user != "" {
			whose = fmt.Sprintf("user %q has no connection of its own (a call without %s removes the tenant's, which its runs may use) and", user, auth.UserHeader)
		}
		return nil, apierr.Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_CONNECTION_NOT_FOUND, "%s no connection to MCP server %q", whose, req.GetServer())
	}
	if err != nil {
		return nil, vaultError(err)
	}
	s.o.Log.Info("oauth connection removed", "server", req.GetServer(), "tenant", tenant, "user", user)
	return &agentv1.DisconnectResponse{}, nil
}

// state is what the state parameter of a flow carries, sealed.
type state struct {
	Tenant  string `json:"t"`
	User    string `json:"u,omitempty"`
	Server  string `json:"s"`
	Nonce   string `json:"n"`
	Expires int64  `json:"e"` // Unix seconds
}

// statePurpose binds the sealed state to the connect flow.
const statePurpose = "oauth-connect-state"

// Connect starts connecting the caller to a server.
func (s *Service) Connect(ctx context.Context, req *agentv1.ConnectRequest) (*agentv1.ConnectResponse, error) {
	tenant, user, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	name := req.GetServer()
	if name == "" {
		return nil, apierr.InvalidField("server", "required")
	}
	srv, err := s.server(ctx, name)
	if err != nil {
		return nil, err
	}
	if !s.o.Vault.Available() {
		return nil, vaultError(vault.ErrUnavailable)
	}
	redirect := s.callbackURL()
	if srv.Consent && redirect == "" {
		return nil, apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_VAULT_UNAVAILABLE,
			"agent-server does not know where people's browsers reach its callback route %s: give it -public-url (or -http-listen on a TCP address)", CallbackPath)
	}
	key := vault.Key{Tenant: tenant, Subject: user, Server: name}
	rec, e, err := s.o.Vault.Get(ctx, key)
	match := e.Version
	switch {
	case errors.Is(err, vault.ErrNotFound):
		rec, match = nil, 0
	case errors.Is(err, vault.ErrKey):
		rec = nil // sealed with a key gone: replaced
	case err != nil:
		return nil, vaultError(err)
	}
	expires := time.Now().Add(s.o.Timeout).Truncate(time.Second)
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	st := state{Tenant: tenant, User: user, Server: name, Nonce: base64.RawURLEncoding.EncodeToString(nonce), Expires: expires.Unix()}
	plain, _ := json.Marshal(st) // strings and a number: cannot fail
	sealed, err := s.o.Vault.SealNote(statePurpose, plain)
	if err != nil {
		return nil, vaultError(err)
	}
	url, out, err := s.o.Authorizer.Begin(ctx, name, rec, redirect, sealed)
	if err != nil {
		s.o.Log.Warn("oauth connect refused", "server", name, "tenant", tenant, "user", user, "error", err)
		return nil, apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_AUTHORIZATION_FAILED, "MCP server %q: %v", name, err)
	}
	if out == nil || (url == "" && out.Token == nil) {
		return nil, apierr.Failure(codes.Internal, agentv1.ErrorReason_ERROR_REASON_INTERNAL, "MCP server %q: the OAuth client returned neither a URL nor a token", name)
	}
	resp := &agentv1.ConnectResponse{AuthorizationUrl: url}
	if url != "" {
		if out.Pending == nil {
			out.Pending = &vault.Pending{}
		}
		out.Pending.Nonce, out.Pending.Expires = st.Nonce, expires
		resp.ExpireTime = timestamppb.New(expires)
	} else {
		out.Pending = nil
	}
	if _, err := s.o.Vault.Put(ctx, key, out, match); err != nil {
		if errors.Is(err, vault.ErrConflict) || errors.Is(err, vault.ErrExists) {
			return nil, apierr.Failure(codes.Aborted, agentv1.ErrorReason_ERROR_REASON_ABORTED, "the connection to MCP server %q changed meanwhile (another Connect?); connect again", name)
		}
		return nil, vaultError(err)
	}
	s.o.Log.Info("oauth connect started", "server", name, "tenant", tenant, "user", user, "consent", url != "")
	if resp.Connection, err = s.connection(ctx, tenant, user, srv); err != nil {
		return nil, err
	}
	return resp, nil
}

// server returns the MCP server of that name that requires OAuth.
func (s *Service) server(ctx context.Context, name string) (Server, error) {
	servers, err := s.servers(ctx)
	if err != nil {
		return Server{}, err
	}
	names := make([]string, 0, len(servers))
	for _, srv := range servers {
		if srv.Name == name {
			return srv, nil
		}
		names = append(names, srv.Name)
	}
	if len(names) == 0 {
		return Server{}, apierr.Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_MCP_SERVER_NOT_FOUND, "no MCP server of this agent-server requires OAuth, so there is no %q to connect", name)
	}
	return Server{}, apierr.Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_MCP_SERVER_NOT_FOUND, "no MCP server %q requires OAuth; those that do: %v", name, names)
}
