package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"google.golang.org/protobuf/types/known/timestamppb"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	"github.com/agentcore/agentcore/sdk/tool"
)

// A definition with "oauth" authorizes its http requests with the MCP Go
// SDK's OAuth handlers (discovery, registration, PKCE, step-up): the
// credential they start from and every new or refreshed token go through
// the host of the running call or discovery (sdk/tool's Credential), which
// keeps them. This process holds a token only while a connection lives,
// and only for its own server.

// oauthHandler is one connection's auth.OAuthHandler: the stored
// credential first, then the SDK's handler for the definition's grant when
// the server refuses it.
type oauthHandler struct {
	def *Definition
	// ctx carries the host link of the call or discovery that made the
	// connection, and ends with the connection.
	ctx    context.Context
	client *http.Client // for the authorization server

	mu     sync.Mutex
	loaded bool
	stored *pluginv1.Credential // LOAD's answer; nil when none
	// absent is LOAD's NOT_CONNECTED, the answer when there is no way to
	// ask a person either.
	absent error
	src    oauth2.TokenSource
	inner  auth.OAuthHandler // made at the first Authorize
}

func newOAuthHandler(ctx context.Context, def *Definition, client *http.Client) *oauthHandler {
	return &oauthHandler{def: def, ctx: ctx, client: client}
}

// TokenSource is the stored token's source (refreshing it and saving the
// new one) until Authorize gets another; nil when there is none.
func (h *oauthHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.load(); err != nil {
		return nil, err
	}
	return h.src, nil
}

// load asks the host for the stored credential, once. NOT_CONNECTED is no
// error here: the server's challenge then starts the grant, which for
// authorization_code asks the host to authorize.
func (h *oauthHandler) load() error {
	if h.loaded {
		return nil
	}
	res, err := tool.Credential(h.ctx, &pluginv1.CredentialRequest{Op: pluginv1.CredentialOp_CREDENTIAL_OP_LOAD})
	var he *tool.HostError
	switch {
	case errors.As(err, &he) && he.Code == pluginv1.HostErrorCode_HOST_ERROR_CODE_NOT_CONNECTED:
		h.loaded, h.absent = true, err
		return nil
	case err != nil:
		return fmt.Errorf("loading the OAuth credential from the host: %w", err)
	}
	h.loaded = true
	h.stored = res.GetCredential()
	if c := h.stored; c != nil && (c.GetAccessToken() != "" || c.GetRefreshToken() != "") {
		tok := tokenOf(c)
		if c.GetRefreshToken() != "" && c.GetTokenEndpoint() != "" {
			cfg := configOf(c)
			h.src = &savingSource{h: h, base: c, cfg: cfg, src: cfg.TokenSource(h.tokenContext(), tok), last: tok.AccessToken}
		} else if tok.Valid() {
			h.src = oauth2.StaticTokenSource(tok)
		}
	}
	return nil
}

// tokenContext is the context token requests are made with: the
// connection's, with its HTTP client.
func (h *oauthHandler) tokenContext() context.Context {
	return context.WithValue(h.ctx, oauth2.HTTPClient, h.client)
}

// Authorize runs the definition's grant after the server refused a
// request (401, or 403 insufficient_scope), through the SDK's handler,
// which is kept so that step-up adds to the scopes granted before.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.load(); err != nil {
		resp.Body.Close()
		return err
	}
	if h.inner == nil {
		inner, err := h.newInner()
		if err != nil {
			resp.Body.Close()
			return err
		}
		h.inner = inner
	}
	if err := h.inner.Authorize(ctx, req, resp); err != nil {
		return err
	}
	src, err := h.inner.TokenSource(ctx)
	if err != nil {
		return err
	}
	if h.def.OAuth.Grant == GrantClientCredentials {
		// The SDK's token source asks for a new token when this one
		// expires; what is saved spares the next connection the request.
		src = &savingSource{h: h, base: h.registration(), src: src}
	}
	h.src = src
	return nil
}

// ClientCredentialsHandler is the auth.OAuthHandler of a definition's
// client_credentials grant, with the client secret or private key of c.
func ClientCredentialsHandler(o *OAuth, c *pluginv1.Credential, client *http.Client) (auth.OAuthHandler, error) {
	if c.GetPrivateKeyPem() != "" {
		return newJWTClientHandler(o, c, client)
	}
	if c.GetClientSecret() == "" {
		return nil, fmt.Errorf("no client secret for the client_credentials grant (oauth.clientSecret: %s)", o.ClientSecret)
	}
	return extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: o.ClientID,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: c.GetClientSecret()}},
		HTTPClient: client,
	})
}

// newInner makes the SDK's handler for the definition's grant.
func (h *oauthHandler) newInner() (auth.OAuthHandler, error) {
	o := h.def.OAuth
	stored := h.stored
	if stored == nil {
		stored = &pluginv1.Credential{}
	}
	if o.Grant == GrantClientCredentials {
		return ClientCredentialsHandler(o, stored, h.client)
	}
	redirect := o.RedirectURL
	if redirect == "" {
		redirect = stored.GetRedirectUri()
	}
	if redirect == "" && h.absent != nil {
		return nil, h.absent
	}
	if redirect == "" {
		return nil, errors.New("no redirect URL: set oauth.redirectUrl, or run under a host that has a callback route")
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: h.authorize,
		RequestRefreshToken:      true,
		Client:                   h.client,
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			// The token of a completed grant: saved, and refreshed (and
			// saved again) from now on.
			s := &savingSource{h: h, base: credentialOf(cfg, stored), cfg: cfg, src: cfg.TokenSource(h.tokenContext(), tok)}
			return s, nil
		},
	}
	if len(o.Scopes) > 0 {
		cfg.ScopeFilter = func([]string) []string { return o.Scopes }
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	// A client registered before (dynamically, with the stored id) is
	// pre-registered from now on.
	if id := firstNonEmpty(o.ClientID, stored.GetClientId()); id != "" {
		pre := &oauthex.ClientCredentials{ClientID: id}
		if secret := stored.GetClientSecret(); secret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
		}
		cfg.PreregisteredClient = pre
	}
	if o.DynamicRegistration {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              "agentcore",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: o.TokenEndpointAuthMethod,
		}}
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}

// authorize is the SDK's AuthorizationCodeFetcher: the host has a person
// open the URL (or says no one can: NOT_CONNECTED).
func (h *oauthHandler) authorize(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	res, err := tool.Credential(ctx, &pluginv1.CredentialRequest{Op: pluginv1.CredentialOp_CREDENTIAL_OP_AUTHORIZE, AuthorizationUrl: args.URL})
	if err != nil {
		return nil, err
	}
	return &auth.AuthorizationResult{Code: res.GetCode(), State: res.GetState(), Iss: res.GetIss()}, nil
}

// registration is what is saved with a client_credentials token: the
// client's id (its secret or key stays with the host's definition).
func (h *oauthHandler) registration() *pluginv1.Credential {
	return &pluginv1.Credential{ClientId: h.def.OAuth.ClientID}
}

// save gives the host a new or refreshed token to keep. A failed save
// costs the next connection a token request, not this one its token.
func (h *oauthHandler) save(c *pluginv1.Credential) {
	_, _ = tool.Credential(h.ctx, &pluginv1.CredentialRequest{Op: pluginv1.CredentialOp_CREDENTIAL_OP_SAVE, Credential: c})
}

// savingSource is a token source that saves each new token it returns.
type savingSource struct {
	h    *oauthHandler
	base *pluginv1.Credential // the registration saved with the token
	cfg  *oauth2.Config       // nil for client credentials
	src  oauth2.TokenSource

	mu   sync.Mutex
	last string // the access token saved last
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, err := s.src.Token()
	if err != nil || tok.AccessToken == s.last {
		return tok, err
	}
	s.last = tok.AccessToken
	c := credentialOf(s.cfg, s.base)
	setToken(c, tok)
	s.h.save(c)
	return tok, nil
}

// tokenOf is the oauth2 token of a stored credential.
func tokenOf(c *pluginv1.Credential) *oauth2.Token {
	tok := &oauth2.Token{AccessToken: c.GetAccessToken(), TokenType: c.GetTokenType(), RefreshToken: c.GetRefreshToken()}
	if c.GetExpiry() != nil {
		tok.Expiry = c.GetExpiry().AsTime()
	}
	return tok
}

// setToken puts tok in c.
func setToken(c *pluginv1.Credential, tok *oauth2.Token) {
	c.AccessToken, c.TokenType, c.RefreshToken = tok.AccessToken, tok.TokenType, tok.RefreshToken
	c.Expiry = nil
	if !tok.Expiry.IsZero() {
		c.Expiry = timestamppb.New(tok.Expiry)
	}
}

// configOf is the oauth2 config that refreshes a stored credential's token.
func configOf(c *pluginv1.Credential) *oauth2.Config {
	style := oauth2.AuthStyleAutoDetect
	switch c.GetTokenEndpointAuthMethod() {
	case AuthClientSecretBasic:
		style = oauth2.AuthStyleInHeader
	case AuthClientSecretPost, AuthNone:
		style = oauth2.AuthStyleInParams
	}
	return &oauth2.Config{ClientID: c.GetClientId(), ClientSecret: c.GetClientSecret(), RedirectURL: c.GetRedirectUri(), Scopes: c.GetScopes(),
		Endpoint: oauth2.Endpoint{AuthURL: c.GetAuthorizationEndpoint(), TokenURL: c.GetTokenEndpoint(), AuthStyle: style}}
}

// credentialOf is the registration of cfg (when set) over base, without a token.
func credentialOf(cfg *oauth2.Config, base *pluginv1.Credential) *pluginv1.Credential {
	c := &pluginv1.Credential{ClientId: base.GetClientId(), ClientSecret: base.GetClientSecret(), TokenEndpointAuthMethod: base.GetTokenEndpointAuthMethod(),
		AuthorizationEndpoint: base.GetAuthorizationEndpoint(), TokenEndpoint: base.GetTokenEndpoint(), Issuer: base.GetIssuer(),
		Scopes: base.GetScopes(), Resource: base.GetResource(), RedirectUri: base.GetRedirectUri()}
	if cfg == nil {
		return c
	}
	c.ClientId, c.ClientSecret, c.RedirectUri, c.Scopes = cfg.ClientID, cfg.ClientSecret, cfg.RedirectURL, cfg.Scopes
	c.AuthorizationEndpoint, c.TokenEndpoint = cfg.Endpoint.AuthURL, cfg.Endpoint.TokenURL
	switch {
	case cfg.ClientSecret == "":
		c.TokenEndpointAuthMethod = AuthNone
	case cfg.Endpoint.AuthStyle == oauth2.AuthStyleInParams:
		c.TokenEndpointAuthMethod = AuthClientSecretPost
	case cfg.Endpoint.AuthStyle == oauth2.AuthStyleInHeader:
		c.TokenEndpointAuthMethod = AuthClientSecretBasic
	}
	return c
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// notConnected reports whether err is the host's NOT_CONNECTED: the server
// needs a person to connect it.
func notConnected(err error) bool {
	var he *tool.HostError
	return errors.As(err, &he) && he.Code == pluginv1.HostErrorCode_HOST_ERROR_CODE_NOT_CONNECTED
}

// notConnectedResult is the error result of a call whose server is not
// connected: which server, and the host's word on how to connect it.
func (b *Bridge) notConnectedResult(err error) *pluginv1.ToolResult {
	var he *tool.HostError
	errors.As(err, &he)
	return errorResult(fmt.Sprintf("MCP server %q is not connected: %s", b.def.Name, he.Message))
}
