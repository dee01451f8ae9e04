package mcp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// The client_credentials grant with private_key_jwt client authentication
// (RFC 7523 section 2.2, SEP-1046), which the MCP Go SDK does not have:
// discovery as its handlers do it (oauthex), the token request by
// golang.org/x/oauth2's clientcredentials, with a freshly signed client
// assertion in each.

// assertionLifetime is how long a client assertion is valid: one token request.
const assertionLifetime = 5 * time.Minute

// jwtClientHandler is the auth.OAuthHandler of that grant.
type jwtClientHandler struct {
	clientID string
	key      any
	method   jwt.SigningMethod
	scopes   []string // the definition's, replacing the discovered ones
	client   *http.Client
	src      oauth2.TokenSource
}

func newJWTClientHandler(o *OAuth, stored *pluginv1.Credential, client *http.Client) (*jwtClientHandler, error) {
	pem := []byte(stored.GetPrivateKeyPem())
	alg := firstNonEmpty(o.SigningAlgorithm, stored.GetSigningAlgorithm())
	h := &jwtClientHandler{clientID: o.ClientID, scopes: o.Scopes, client: client}
	if key, err := jwt.ParseECPrivateKeyFromPEM(pem); err == nil {
		h.key = key
		if alg == "" {
			alg = ecAlgorithm(key)
		}
	} else if key, err := jwt.ParseRSAPrivateKeyFromPEM(pem); err == nil {
		h.key = key
		if alg == "" {
			alg = "RS256"
		}
	} else {
		return nil, fmt.Errorf("oauth.privateKey (%s): not a PEM EC or RSA private key", o.PrivateKey)
	}
	h.method = jwt.GetSigningMethod(alg)
	if h.method == nil {
		return nil, fmt.Errorf("oauth.signingAlgorithm: %q is not a JWS algorithm", alg)
	}
	return h, nil
}

// ecAlgorithm is the JWS algorithm of an EC key's curve.
func ecAlgorithm(key *ecdsa.PrivateKey) string {
	switch key.Curve {
	case elliptic.P384():
		return "ES384"
	case elliptic.P521():
		return "ES512"
	default:
		return "ES256"
	}
}

func (h *jwtClientHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return h.src, nil
}

// Authorize finds the authorization server and gets a token.
func (h *jwtClientHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer func() { _, _ = io.Copy(io.Discard, resp.Body) }()
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("parsing WWW-Authenticate: %w", err)
	}
	prm, err := ProtectedResource(ctx, h.client, challenges, req.URL.String())
	if err != nil {
		return err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], h.client)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: prm.AuthorizationServers[0], TokenEndpoint: strings.TrimSuffix(prm.AuthorizationServers[0], "/") + "/token"}
	}
	scopes := h.scopes
	if len(scopes) == 0 {
		scopes = ChallengeScopes(challenges)
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	src := &assertionSource{h: h, ctx: context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, h.client),
		issuer: asm.Issuer, tokenURL: asm.TokenEndpoint, scopes: scopes}
	tok, err := src.Token()
	if err != nil {
		return fmt.Errorf("client credentials token request: %w", err)
	}
	h.src = oauth2.ReuseTokenSource(tok, src)
	return nil
}

// ProtectedResource finds an MCP server's protected resource metadata
// where the MCP spec says to look: its challenge's resource_metadata, then
// the well-known URLs for the server's path and its root; without any, the
// server's origin is its authorization server (the 2025-03-26 fallback).
func ProtectedResource(ctx context.Context, client *http.Client, challenges []oauthex.Challenge, server string) (*oauthex.ProtectedResourceMetadata, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("the server's URL: %w", err)
	}
	type candidate struct{ url, resource string }
	var tries []candidate
	for _, c := range challenges {
		if m := c.Params["resource_metadata"]; m != "" {
			tries = append(tries, candidate{m, server})
		}
	}
	origin := *u
	origin.Path, origin.RawQuery = "", ""
	tries = append(tries,
		candidate{origin.String() + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), server},
		candidate{origin.String() + "/.well-known/oauth-protected-resource", origin.String()})
	for _, c := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, client)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("the protected resource metadata names no authorization server")
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{origin.String()}, Resource: server}, nil
}

// ChallengeScopes are the scopes a Bearer challenge asks for.
func ChallengeScopes(challenges []oauthex.Challenge) []string {
	for _, c := range challenges {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// assertionSource gets a token with a new client assertion each time.
type assertionSource struct {
	h        *jwtClientHandler
	ctx      context.Context
	issuer   string
	tokenURL string
	scopes   []string
}

func (s *assertionSource) Token() (*oauth2.Token, error) {
	assertion, err := s.h.assertion(s.issuer)
	if err != nil {
		return nil, err
	}
	cfg := &clientcredentials.Config{ClientID: s.h.clientID, TokenURL: s.tokenURL, Scopes: s.scopes,
		AuthStyle: oauth2.AuthStyleInParams,
		EndpointParams: url.Values{
			"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion":      {assertion},
		}}
	return cfg.Token(s.ctx)
}

// assertion is a client assertion for the authorization server audience.
func (h *jwtClientHandler) assertion(audience string) (string, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", err
	}
	now := time.Now()
	claims := jwt.RegisteredClaims{Issuer: h.clientID, Subject: h.clientID, Audience: jwt.ClaimStrings{audience},
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(assertionLifetime)), ID: hex.EncodeToString(id)}
	signed, err := jwt.NewWithClaims(h.method, claims).SignedString(h.key)
	if err != nil {
		return "", fmt.Errorf("signing the client assertion: %w", err)
	}
	return signed, nil
}
