// Package mcpauth is agent-server's side of OAuth for MCP servers: the
// Authorizer that runs the connect flow for pkg/connect (probe the server,
// discovery, client registration, PKCE, the authorization URL; then the
// code's exchange), and the Handler that answers the MCP host processes'
// credential requests from the token vault, for a run's tenant and user.
// The protocol pieces are the MCP Go SDK's (oauthex, auth) and
// golang.org/x/oauth2's; the flow is split at the person's visit, so that
// its state lives in the vault record between Connect and the callback,
// on any replica.
package mcpauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/agentcore/agentcore/pkg/connect"
	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/vault"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// Authorizer runs the OAuth flows of the MCP servers defined in a
// server's tool paths (connect.Authorizer).
type Authorizer struct {
	paths  func() []string
	client *http.Client
}

var _ connect.Authorizer = (*Authorizer)(nil)

// New returns the Authorizer of the definitions found in paths (tool
// directories and definition files, as a scan reads them); client makes
// its requests to MCP and authorization servers (nil: http.DefaultClient).
func New(paths func() []string, client *http.Client) *Authorizer {
	if client == nil {
		client = http.DefaultClient
	}
	return &Authorizer{paths: paths, client: client}
}

// definitions are the MCP definitions in the paths that have an oauth
// block, by name. A definition that does not parse is left out: the scan
// reports it.
func (a *Authorizer) definitions() map[string]*mcp.Definition {
	defs := map[string]*mcp.Definition{}
	add := func(path string) {
		if _, ok := mcp.DefinitionName(path); !ok {
			return
		}
		if def, err := mcp.ReadDefinition(path); err == nil && def.OAuth != nil {
			if _, dup := defs[def.Name]; !dup {
				defs[def.Name] = def
			}
		}
	}
	for _, root := range a.paths() {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil
			case d.IsDir() && path != root && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case !d.IsDir():
				add(path)
			}
			return nil
		})
	}
	return defs
}

// Definition returns the definition of the OAuth server named name.
func (a *Authorizer) Definition(name string) (*mcp.Definition, error) {
	def, ok := a.definitions()[name]
	if !ok {
		return nil, fmt.Errorf("no MCP server %q requires OAuth", name)
	}
	return def, nil
}

// Servers lists the MCP servers that require OAuth.
func (a *Authorizer) Servers(context.Context) ([]connect.Server, error) {
	var out []connect.Server
	for name, def := range a.definitions() {
		out = append(out, connect.Server{Name: name, Consent: def.OAuth.Grant == mcp.GrantAuthorizationCode})
	}
	slices.SortFunc(out, func(x, y connect.Server) int { return strings.Compare(x.Name, y.Name) })
	return out, nil
}

// Begin starts a flow for server: a client_credentials server gets its
// token at once; an authorization_code one gets the URL a person opens.
func (a *Authorizer) Begin(ctx context.Context, server string, rec *vault.Record, redirectURL, state string) (string, *vault.Record, error) {
	def, err := a.Definition(server)
	if err != nil {
		return "", nil, err
	}
	req, resp, err := a.probe(ctx, def)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	if def.OAuth.Grant == mcp.GrantClientCredentials {
		out, err := a.clientCredentials(ctx, def, req, resp)
		return "", out, err
	}
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return "", nil, fmt.Errorf("mcp server %s: its WWW-Authenticate: %w", server, err)
	}
	prm, err := mcp.ProtectedResource(ctx, a.client, challenges, def.Transport.URL)
	if err != nil {
		return "", nil, fmt.Errorf("mcp server %s: %w", server, err)
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], a.client)
	if err != nil {
		return "", nil, fmt.Errorf("mcp server %s: authorization server metadata: %w", server, err)
	}
	if asm == nil {
		base := strings.TrimSuffix(prm.AuthorizationServers[0], "/")
		asm = &oauthex.AuthServerMeta{Issuer: base, AuthorizationEndpoint: base + "/authorize", TokenEndpoint: base + "/token", RegistrationEndpoint: base + "/register"}
	}
	out := &vault.Record{}
	if rec != nil {
		out.Client = rec.Client
	}
	if err := a.register(ctx, def, asm, redirectURL, &out.Client); err != nil {
		return "", nil, fmt.Errorf("mcp server %s: %w", server, err)
	}
	scopes := def.OAuth.Scopes
	if len(scopes) == 0 {
		scopes = mcp.ChallengeScopes(challenges)
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(slices.Clone(scopes), "offline_access")
	}
	out.Client.AuthURL, out.Client.TokenURL, out.Client.Issuer = asm.AuthorizationEndpoint, asm.TokenEndpoint, asm.Issuer
	out.Client.Resource, out.Client.RedirectURL, out.Client.Scopes = prm.Resource, redirectURL, scopes
	verifier := oauth2.GenerateVerifier()
	out.Pending = &vault.Pending{Verifier: verifier, RedirectURL: redirectURL, Scopes: scopes}
	u := config(out.Client).AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", prm.Resource))
	return u, out, nil
}

// Complete exchanges the callback's code for the token.
func (a *Authorizer) Complete(ctx context.Context, server string, rec *vault.Record, code, iss string) (*vault.Record, error) {
	if rec == nil || rec.Pending == nil {
		return nil, errors.New("no connect of this server is waiting")
	}
	if iss != "" && strings.TrimSuffix(iss, "/") != strings.TrimSuffix(rec.Client.Issuer, "/") {
		return nil, fmt.Errorf("the callback's issuer %q is not the authorization server's %q (RFC 9207)", iss, rec.Client.Issuer)
	}
	cfg := config(rec.Client)
	cfg.RedirectURL = rec.Pending.RedirectURL
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, a.client), code,
		oauth2.VerifierOption(rec.Pending.Verifier), oauth2.SetAuthURLParam("resource", rec.Client.Resource))
	if err != nil {
		return nil, fmt.Errorf("mcp server %s: exchanging the code: %w", server, err)
	}
	out := *rec
	out.Token, out.Pending = tok, nil
	return &out, nil
}

// probe sends the server an initialize request without a token, for the
// challenge of its refusal. A server that does not refuse needs no token.
func (a *Authorizer) probe(ctx context.Context, def *mcp.Definition) (*http.Request, *http.Response, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"agentcore","version":"connect"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, def.Transport.URL, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range def.Transport.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("mcp server %s: %w", def.Name, err)
	}
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		resp.Body.Close()
		return nil, nil, fmt.Errorf("mcp server %s answered %s without a token: it asks for no authorization", def.Name, resp.Status)
	}
	// The SDK's handlers read and close the body; keep a copy readable.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return req, resp, nil
}

// register fills c with the client to use with the authorization server
// asm: the stored one when it was registered there, else a client ID
// metadata document, the pre-registered client, or a dynamic
// registration, in the order the MCP spec gives.
func (a *Authorizer) register(ctx context.Context, def *mcp.Definition, asm *oauthex.AuthServerMeta, redirectURL string, c *vault.Client) error {
	o := def.OAuth
	if c.ID != "" && strings.TrimSuffix(c.Issuer, "/") == strings.TrimSuffix(asm.Issuer, "/") {
		return nil
	}
	*c = vault.Client{}
	switch {
	case o.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported:
		c.ID, c.AuthMethod = o.ClientMetadataURL, mcp.AuthNone
	case o.ClientID != "":
		secret, err := o.ClientSecret.Read()
		if err != nil {
			return fmt.Errorf("oauth.clientSecret: %w", err)
		}
		c.ID, c.Secret, c.AuthMethod = o.ClientID, secret, authMethod(o.TokenEndpointAuthMethod, asm.TokenEndpointAuthMethodsSupported, secret)
	case o.DynamicRegistration && asm.RegistrationEndpoint != "":
		res, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirectURL}, ClientName: "agentcore", GrantTypes: []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: o.TokenEndpointAuthMethod}, a.client)
		if err != nil {
			return fmt.Errorf("dynamic client registration: %w", err)
		}
		c.ID, c.Secret, c.AuthMethod = res.ClientID, res.ClientSecret, res.TokenEndpointAuthMethod
	default:
		return errors.New("no way to register a client with its authorization server (no client ID metadata document support, no clientId, no registration endpoint)")
	}
	return nil
}

// authMethod is the token endpoint auth method of a pre-registered client:
// the definition's, else the best the server lists.
func authMethod(forced string, supported []string, secret string) string {
	switch {
	case forced != "":
		return forced
	case secret == "":
		return mcp.AuthNone
	case slices.Contains(supported, mcp.AuthClientSecretPost) && !slices.Contains(supported, mcp.AuthClientSecretBasic):
		return mcp.AuthClientSecretPost
	default:
		return mcp.AuthClientSecretBasic
	}
}

// clientCredentials gets a client_credentials token for the record, as
// the MCP host process would.
func (a *Authorizer) clientCredentials(ctx context.Context, def *mcp.Definition, req *http.Request, resp *http.Response) (*vault.Record, error) {
	c, err := secrets(def)
	if err != nil {
		return nil, err
	}
	h, err := mcp.ClientCredentialsHandler(def.OAuth, c, a.client)
	if err != nil {
		return nil, err
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return nil, fmt.Errorf("mcp server %s: %w", def.Name, err)
	}
	src, err := h.TokenSource(ctx)
	if err != nil || src == nil {
		return nil, fmt.Errorf("mcp server %s: no token: %v", def.Name, err)
	}
	tok, err := src.Token()
	if err != nil {
		return nil, fmt.Errorf("mcp server %s: %w", def.Name, err)
	}
	return &vault.Record{Token: tok, Client: vault.Client{ID: def.OAuth.ClientID}}, nil
}

// secrets is the client secret or private key of a definition, read from
// where it names (agent-server's environment or a file).
func secrets(def *mcp.Definition) (*pluginv1.Credential, error) {
	o := def.OAuth
	c := &pluginv1.Credential{ClientId: o.ClientID, SigningAlgorithm: o.SigningAlgorithm}
	var err error
	if c.ClientSecret, err = o.ClientSecret.Read(); err != nil {
		return nil, fmt.Errorf("mcp server %s: oauth.clientSecret: %w", def.Name, err)
	}
	if c.PrivateKeyPem, err = o.PrivateKey.Read(); err != nil {
		return nil, fmt.Errorf("mcp server %s: oauth.privateKey: %w", def.Name, err)
	}
	return c, nil
}

// config is the oauth2 config of a registration.
func config(c vault.Client) *oauth2.Config {
	style := oauth2.AuthStyleAutoDetect
	switch c.AuthMethod {
	case mcp.AuthClientSecretBasic:
		style = oauth2.AuthStyleInHeader
	case mcp.AuthClientSecretPost, mcp.AuthNone:
		style = oauth2.AuthStyleInParams
	}
	return &oauth2.Config{ClientID: c.ID, ClientSecret: c.Secret, RedirectURL: c.RedirectURL, Scopes: c.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL, AuthStyle: style}}
}
