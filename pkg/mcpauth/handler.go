package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/oauth2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/vault"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// CredentialFunc answers an MCP host process's credential requests
// (tool.HostHandler.Credential).
type CredentialFunc = func(ctx context.Context, source string, req *pluginv1.CredentialRequest) (*pluginv1.CredentialResponse, error)

// Handler answers the credential requests of the MCP host processes of a
// run of user in tenant (both "" for discovery, which uses the tenant's
// connection): LOAD from the vault (the user's record, else the
// tenant's), with the definition's client secret or key; SAVE back where
// it was found, over the version read; AUTHORIZE is NOT_CONNECTED, as is a
// LOAD with no token for an authorization_code server: a person connects
// it through the console or the Connect RPC, never in the middle of a call.
func Handler(v *vault.Vault, tenant, user string) CredentialFunc {
	return func(ctx context.Context, source string, req *pluginv1.CredentialRequest) (*pluginv1.CredentialResponse, error) {
		path, ok := strings.CutPrefix(source, "mcp:")
		if !ok {
			return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED, Message: "only an MCP server's host process gets credentials"}
		}
		def, err := mcp.ReadDefinition(path)
		if err != nil {
			return nil, err
		}
		if def.OAuth == nil {
			return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED, Message: fmt.Sprintf("MCP server %q has no oauth block", def.Name)}
		}
		switch req.GetOp() {
		case pluginv1.CredentialOp_CREDENTIAL_OP_LOAD:
			return load(ctx, v, def, tenant, user)
		case pluginv1.CredentialOp_CREDENTIAL_OP_SAVE:
			save(ctx, v, def, tenant, user, req.GetCredential())
			return &pluginv1.CredentialResponse{}, nil
		case pluginv1.CredentialOp_CREDENTIAL_OP_AUTHORIZE:
			return nil, notConnected(def.Name, "")
		default:
			return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_INVALID, Message: "unknown credential op"}
		}
	}
}

// notConnected is the NOT_CONNECTED answer naming the server and how to
// connect it.
func notConnected(server, why string) error {
	msg := fmt.Sprintf("connect it: the console's Connections view, or the Connect RPC (POST /v1/connections/%s:connect)", server)
	if why != "" {
		msg = why + "; " + msg
	}
	return &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_NOT_CONNECTED, Message: msg}
}

// load is the stored credential of def's server with its secrets.
func load(ctx context.Context, v *vault.Vault, def *mcp.Definition, tenant, user string) (*pluginv1.CredentialResponse, error) {
	c, err := secrets(def)
	if err != nil {
		return nil, err
	}
	rec, err := lookup(ctx, v, tenant, user, def.Name)
	switch {
	case err == nil:
		fill(c, rec)
	case def.OAuth.Grant == mcp.GrantClientCredentials:
		// The host process gets a token itself, and saves it.
	case errors.Is(err, vault.ErrNotFound):
		return nil, notConnected(def.Name, "")
	case errors.Is(err, vault.ErrUnavailable):
		return nil, notConnected(def.Name, "agent-server has no token vault (-vault-key-file)")
	default:
		return nil, err
	}
	return &pluginv1.CredentialResponse{Credential: c}, nil
}

// lookup is the record a run of user in tenant uses: the user's with a
// token, else the tenant's (a user's record without one is a connect
// under way, or refused).
func lookup(ctx context.Context, v *vault.Vault, tenant, user, server string) (*vault.Record, error) {
	rec, _, err := v.Lookup(ctx, tenant, user, server)
	if err == nil && rec.Token == nil && user != "" {
		rec, _, err = v.Get(ctx, vault.Key{Tenant: tenant, Server: server})
	}
	if err == nil && rec.Token == nil {
		return nil, vault.ErrNotFound
	}
	return rec, err
}

// save writes a new or refreshed token where the record was found, over
// the version read: when another replica wrote first, its token stands.
// Secrets of the definition are not stored: they stay where it names.
func save(ctx context.Context, v *vault.Vault, def *mcp.Definition, tenant, user string, c *pluginv1.Credential) {
	if c == nil || c.GetAccessToken() == "" {
		return
	}
	k, match := place(ctx, v, def, tenant, user)
	rec := &vault.Record{Token: token(c), Client: vault.Client{ID: c.GetClientId(), Secret: c.GetClientSecret(), AuthMethod: c.GetTokenEndpointAuthMethod(),
		AuthURL: c.GetAuthorizationEndpoint(), TokenURL: c.GetTokenEndpoint(), Issuer: c.GetIssuer(), Scopes: c.GetScopes(),
		Resource: c.GetResource(), RedirectURL: c.GetRedirectUri()}}
	if s, err := def.OAuth.ClientSecret.Read(); err == nil && s == rec.Client.Secret {
		rec.Client.Secret = ""
	}
	// A conflict (another writer's token stands) or an unavailable vault
	// costs the next connection a refresh, not this call its token.
	_, _ = v.Put(ctx, k, rec, match)
}

// place is where a token of def's server for user in tenant is saved, and
// the version there: the record holding the token the run used (the
// user's, else the tenant's), else the user's own; a client_credentials
// token is the tenant's.
func place(ctx context.Context, v *vault.Vault, def *mcp.Definition, tenant, user string) (vault.Key, int64) {
	subjects := []string{user, ""}
	if user == "" || def.OAuth.Grant == mcp.GrantClientCredentials {
		subjects = []string{""}
	}
	k, match := vault.Key{Tenant: tenant, Subject: subjects[0], Server: def.Name}, int64(0)
	for i, sub := range subjects {
		rec, e, err := v.Get(ctx, vault.Key{Tenant: tenant, Subject: sub, Server: def.Name})
		switch {
		case err != nil:
		case rec.Token != nil:
			return e.Key, e.Version
		case i == 0:
			match = e.Version // the user's connect under way: written over
		}
	}
	return k, match
}

// fill puts a record's token and registration in c, over the
// definition's (a registration made dynamically has its own secret).
func fill(c *pluginv1.Credential, r *vault.Record) {
	cl := r.Client
	if cl.ID != "" {
		c.ClientId = cl.ID
	}
	if cl.Secret != "" {
		c.ClientSecret = cl.Secret
	}
	c.TokenEndpointAuthMethod, c.AuthorizationEndpoint, c.TokenEndpoint = cl.AuthMethod, cl.AuthURL, cl.TokenURL
	c.Issuer, c.Scopes, c.Resource, c.RedirectUri = cl.Issuer, cl.Scopes, cl.Resource, cl.RedirectURL
	if t := r.Token; t != nil {
		c.AccessToken, c.TokenType, c.RefreshToken = t.AccessToken, t.TokenType, t.RefreshToken
		if !t.Expiry.IsZero() {
			c.Expiry = timestamppb.New(t.Expiry)
		}
	}
}

// token is the oauth2 token of a credential.
func token(c *pluginv1.Credential) *oauth2.Token {
	t := &oauth2.Token{AccessToken: c.GetAccessToken(), TokenType: c.GetTokenType(), RefreshToken: c.GetRefreshToken()}
	if c.GetExpiry() != nil {
		t.Expiry = c.GetExpiry().AsTime()
	}
	return t
}
