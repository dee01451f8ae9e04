package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Grant names how a client gets its tokens from an authorization server.
type Grant string

// The two grants an MCP client uses.
const (
	// GrantAuthorizationCode needs a person's consent once (connect); the
	// token is then refreshed without them.
	GrantAuthorizationCode Grant = "authorization_code"
	// GrantClientCredentials is machine to machine: the client's own secret
	// or signed JWT gets the token, no person involved.
	GrantClientCredentials Grant = "client_credentials"
)

// The token endpoint's client authentication methods (RFC 7591 names).
const (
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthNone              = "none"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// signingAlgorithms are the JWS algorithms a private_key_jwt assertion may use.
var signingAlgorithms = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}

// OAuth is a definition's "oauth" block: how the client authorizes with an
// http or sse server that follows the MCP authorization spec. Secrets are
// never written in the file: they come from a variable of the host's
// environment or a file, which the host (agent-server) reads and gives the
// MCP host process through its credential requests.
type OAuth struct {
	// Grant is authorization_code (the default) or client_credentials.
	Grant Grant
	// ClientID is a pre-registered client's id.
	ClientID string
	// ClientSecret is where a pre-registered client's secret is.
	ClientSecret *SecretSource
	// PrivateKey is where the PEM key signing private_key_jwt assertions is
	// (client_credentials only).
	PrivateKey *SecretSource
	// SigningAlgorithm is the assertions' JWS algorithm; empty: ES256 for an
	// EC key, RS256 for an RSA key.
	SigningAlgorithm string
	// ClientMetadataURL is the client's id as a client ID metadata document
	// URL (an https URL with a path), used when the server supports it.
	ClientMetadataURL string
	// DynamicRegistration registers the client with the authorization
	// server when no other registration applies (default true).
	DynamicRegistration bool
	// Scopes are asked for instead of those the server names in its
	// challenge or metadata.
	Scopes []string
	// RedirectURL is where the authorization server sends the person back;
	// empty: the host's callback route.
	RedirectURL string
	// TokenEndpointAuthMethod forces a client authentication method; empty:
	// the best the authorization server supports.
	TokenEndpointAuthMethod string
}

// SecretSource names where a secret is: a variable of the host's
// environment or a file (relative to the definition's folder).
type SecretSource struct {
	Env  string
	File string
}

// Read returns the secret, without a trailing newline. Errors name the
// source, never the value.
func (s *SecretSource) Read() (string, error) {
	if s == nil {
		return "", nil
	}
	if s.Env != "" {
		v, ok := os.LookupEnv(s.Env)
		if !ok || v == "" {
			return "", fmt.Errorf("environment variable %s is not set", s.Env)
		}
		return v, nil
	}
	b, err := os.ReadFile(s.File)
	if err != nil {
		return "", fmt.Errorf("reading the secret: %w", err)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("secret file %s is empty", s.File)
	}
	return v, nil
}

// String says where the secret is, never what it is.
func (s *SecretSource) String() string {
	switch {
	case s == nil:
		return "none"
	case s.Env != "":
		return "$" + s.Env
	default:
		return s.File
	}
}

// oauthFields are the keys an "oauth" block may hold.
var oauthFields = []string{"grant", "clientId", "clientSecret", "privateKey", "signingAlgorithm", "clientMetadataUrl",
	"dynamicRegistration", "scopes", "redirectUrl", "tokenEndpointAuthMethod"}

// oauthFrom reads and checks an "oauth" block; relative files are resolved
// against dir.
func oauthFrom(f fields, dir string) (*OAuth, error) {
	if err := f.only(oauthFields, ""); err != nil {
		return nil, err
	}
	o := &OAuth{Grant: GrantAuthorizationCode, DynamicRegistration: true}
	grant, err := f.str("grant")
	if err != nil {
		return nil, err
	}
	if grant != "" {
		o.Grant = Grant(grant)
	}
	if o.ClientID, err = f.str("clientId"); err != nil {
		return nil, err
	}
	if o.ClientSecret, err = secretFrom(f, "clientSecret", dir); err != nil {
		return nil, err
	}
	if o.PrivateKey, err = secretFrom(f, "privateKey", dir); err != nil {
		return nil, err
	}
	if o.SigningAlgorithm, err = f.str("signingAlgorithm"); err != nil {
		return nil, err
	}
	if o.ClientMetadataURL, err = f.str("clientMetadataUrl"); err != nil {
		return nil, err
	}
	if f.has("dynamicRegistration") {
		if o.DynamicRegistration, err = f.boolean("dynamicRegistration"); err != nil {
			return nil, err
		}
	}
	if o.Scopes, err = f.strings("scopes"); err != nil {
		return nil, err
	}
	if o.RedirectURL, err = f.str("redirectUrl"); err != nil {
		return nil, err
	}
	if o.TokenEndpointAuthMethod, err = f.str("tokenEndpointAuthMethod"); err != nil {
		return nil, err
	}
	if err := o.check(f.name); err != nil {
		return nil, err
	}
	if o.Grant == GrantClientCredentials {
		o.DynamicRegistration = false
	}
	return o, nil
}

// secretFrom reads a secret source: {"env": NAME} or {"file": PATH}. A
// string is refused: a secret is never written in the file.
func secretFrom(f fields, key, dir string) (*SecretSource, error) {
	v, ok := f.m[key]
	if !ok {
		return nil, nil
	}
	if _, isString := v.(string); isString {
		// Never echo it: it may be the secret itself.
		return nil, badField(f.name(key), `a secret is never written in the file: give {"env": "VARIABLE"} or {"file": "path"}`)
	}
	obj, err := objectAt(f.name(key), v)
	if err != nil {
		return nil, err
	}
	if err := obj.only([]string{"env", "file"}, ""); err != nil {
		return nil, err
	}
	s := &SecretSource{}
	if s.Env, err = obj.str("env"); err != nil {
		return nil, err
	}
	if s.File, err = obj.str("file"); err != nil {
		return nil, err
	}
	switch {
	case (s.Env == "") == (s.File == ""):
		return nil, badField(f.name(key), `want exactly one of "env" (a variable of agent-server's environment) or "file"`)
	case s.Env != "" && strings.ContainsAny(s.Env, "=\x00 "):
		return nil, badField(obj.name("env"), "not a valid variable name")
	case s.File != "" && !filepath.IsAbs(s.File):
		s.File = filepath.Join(dir, s.File)
	}
	return s, nil
}

// check reports what in o contradicts itself; name turns a key into its
// field path for errors.
func (o *OAuth) check(name func(string) string) error {
	method := o.TokenEndpointAuthMethod
	if method != "" && !slices.Contains([]string{AuthClientSecretBasic, AuthClientSecretPost, AuthNone, AuthPrivateKeyJWT}, method) {
		return badField(name("tokenEndpointAuthMethod"), "%q is not one of client_secret_basic, client_secret_post, none, private_key_jwt", method)
	}
	if o.ClientSecret != nil && o.ClientID == "" {
		return badField(name("clientSecret"), "needs clientId (the pre-registered client it belongs to)")
	}
	if o.SigningAlgorithm != "" && !slices.Contains(signingAlgorithms, o.SigningAlgorithm) {
		return badField(name("signingAlgorithm"), "%q is not one of %s", o.SigningAlgorithm, strings.Join(signingAlgorithms, ", "))
	}
	if o.SigningAlgorithm != "" && o.PrivateKey == nil {
		return badField(name("signingAlgorithm"), "needs privateKey")
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\n\"\\") {
			return badField(fmt.Sprintf("%s[%d]", name("scopes"), i), "not a valid scope")
		}
	}
	if o.RedirectURL != "" {
		if u, err := url.Parse(o.RedirectURL); err != nil || u.Scheme == "" || u.Host == "" {
			return badField(name("redirectUrl"), "want an absolute URL, got %q", o.RedirectURL)
		}
	}
	switch o.Grant {
	case GrantClientCredentials:
		return o.checkClientCredentials(name)
	case GrantAuthorizationCode:
		return o.checkAuthorizationCode(name)
	default:
		return badField(name("grant"), "%q is not a grant (authorization_code or client_credentials)", o.Grant)
	}
}

func (o *OAuth) checkClientCredentials(name func(string) string) error {
	if o.ClientMetadataURL != "" {
		return badField(name("clientMetadataUrl"), "not used by the client_credentials grant (it registers no client)")
	}
	if o.RedirectURL != "" {
		return badField(name("redirectUrl"), "not used by the client_credentials grant (no person, no redirect)")
	}
	if o.ClientID == "" {
		return badField(name("clientId"), "missing: the client_credentials grant needs a pre-registered client")
	}
	if (o.ClientSecret == nil) == (o.PrivateKey == nil) {
		return badField(name("clientSecret"), "the client_credentials grant needs exactly one of clientSecret or privateKey")
	}
	switch m := o.TokenEndpointAuthMethod; {
	case o.PrivateKey != nil && m != "" && m != AuthPrivateKeyJWT:
		return badField(name("tokenEndpointAuthMethod"), "%q does not sign with privateKey: use private_key_jwt or leave it out", m)
	case o.ClientSecret != nil && (m == AuthPrivateKeyJWT || m == AuthNone):
		return badField(name("tokenEndpointAuthMethod"), "%q with clientSecret: use client_secret_basic or client_secret_post", m)
	}
	return nil
}

func (o *OAuth) checkAuthorizationCode(name func(string) string) error {
	if o.PrivateKey != nil {
		return badField(name("privateKey"), "only the client_credentials grant signs with a private key")
	}
	if o.TokenEndpointAuthMethod == AuthPrivateKeyJWT {
		return badField(name("tokenEndpointAuthMethod"), "private_key_jwt is for the client_credentials grant")
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
			return badField(name("clientMetadataUrl"), "want an https URL with a path (the client ID metadata document), got %q", o.ClientMetadataURL)
		}
	}
	if o.ClientID == "" && o.ClientMetadataURL == "" && !o.DynamicRegistration {
		return errors.New("oauth: no way to register the client: give clientId, clientMetadataUrl, or leave dynamicRegistration on")
	}
	return nil
}
