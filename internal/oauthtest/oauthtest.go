// Package oauthtest is an OAuth 2.1 authorization server and an MCP server
// it protects, both on 127.0.0.1 in the test's own process, for tests of
// OAuth for MCP servers (the MCP bridge, the token vault, the connect flow,
// the console): the MCP authorization spec's discovery (the resource's
// 401 with WWW-Authenticate, its protected-resource metadata, the
// authorization server's RFC 8414 metadata), dynamic client registration,
// the authorization-code grant with PKCE (S256) and the RFC 8707 resource,
// refresh tokens (rotated at each use) and client credentials, access
// tokens of a lifetime the test chooses. A browser (or http.Client)
// following /authorize's redirect stands for a person who consents. It
// counts what it issued and keeps every token and secret it made, so that a
// test can look for them where they must not be.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Options configure a Server.
type Options struct {
	// TokenLifetime is the life of an access token; 0: an hour.
	TokenLifetime time.Duration
	// Scopes are those the MCP server requires; nil: ["mcp:tools"].
	Scopes []string
}

// Server is the authorization server (Issuer) and the MCP server it
// protects (MCPURL). Start stops both when the test ends.
type Server struct {
	// Issuer is the authorization server's URL (its metadata at
	// Issuer/.well-known/oauth-authorization-server).
	Issuer string
	// MCPURL is the protected MCP endpoint (streamable HTTP).
	MCPURL string

	o          Options
	as, rs     *httptest.Server
	mcp        *sdk.Server
	mu         sync.Mutex
	clients    map[string]*client // by id
	codes      map[string]*grant  // by code
	access     map[string]*grant  // by access token
	refresh    map[string]*grant  // by refresh token
	deny       bool
	counts     Counts
	secrets    []string // every token and client secret issued
	calledWith []string // the subject of each tool call
}

// Counts are what the authorization server did.
type Counts struct {
	// Registered clients (dynamic registration), codes given (consents),
	// access tokens issued for a code, by refresh and by client
	// credentials; tool calls the MCP server answered; requests it refused
	// for want of a valid token.
	Registered, Consents, ByCode, ByRefresh, ByClientCredentials, Calls, Refused int
}

type client struct {
	id, secret, method string
	redirects          []string
}

// grant is what a code or token stands for.
type grant struct {
	client, subject, challenge, redirect, resource string
	scopes                                         []string
	expires                                        time.Time
}

// Start starts both servers.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.TokenLifetime <= 0 {
		o.TokenLifetime = time.Hour
	}
	if o.Scopes == nil {
		o.Scopes = []string{"mcp:tools"}
	}
	s := &Server{o: o, clients: map[string]*client{}, codes: map[string]*grant{}, access: map[string]*grant{}, refresh: map[string]*grant{}}
	am := http.NewServeMux()
	am.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	am.HandleFunc("POST /register", s.register)
	am.HandleFunc("GET /authorize", s.authorize)
	am.HandleFunc("POST /token", s.token)
	s.as = httptest.NewServer(am)
	s.Issuer = s.as.URL

	s.mcp = sdk.NewServer(&sdk.Implementation{Name: "oauthtest", Version: "1.0.0"}, nil)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "whoami", Description: "Says whose token the call came with."}, s.whoami)
	rm := http.NewServeMux()
	s.rs = httptest.NewServer(rm)
	s.MCPURL = s.rs.URL + "/mcp"
	prm := &oauthex.ProtectedResourceMetadata{Resource: s.MCPURL, AuthorizationServers: []string{s.Issuer}, ScopesSupported: o.Scopes,
		BearerMethodsSupported: []string{"header"}}
	rm.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(prm))
	rm.Handle("/.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(prm))
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp }, nil)
	rm.Handle("/mcp", auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: s.rs.URL + "/.well-known/oauth-protected-resource/mcp", Scopes: o.Scopes})(mcpHandler))
	t.Cleanup(func() {
		for ss := range s.mcp.Sessions() {
			_ = ss.Close()
		}
		s.rs.CloseClientConnections()
		s.rs.Close()
		s.as.Close()
	})
	return s
}

// Deny makes the authorization server refuse the next consents (the
// person says no): /authorize answers access_denied.
func (s *Server) Deny(deny bool) {
	s.mu.Lock()
	s.deny = deny
	s.mu.Unlock()
}

// Counts returns what the servers did so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Secrets returns every access token, refresh token and client secret
// issued so far: texts that must never show outside the vault and the MCP
// host process.
func (s *Server) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.secrets)
}

// CalledWith returns the subject (the consenting person, or the client of a
// client-credentials token) of each tool call, in order.
func (s *Server) CalledWith() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calledWith)
}

// RegisterClient registers a client as an operator would beforehand
// (pre-registration): method is its token endpoint auth method
// (client_secret_basic, client_secret_post or none). It returns the id and
// the secret ("" for none).
func (s *Server) RegisterClient(method string, redirects ...string) (id, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addClient(method, redirects)
}

// addClient makes a client; s.mu is held.
func (s *Server) addClient(method string, redirects []string) (id, secret string) {
	c := &client{id: "client-" + random(8), method: method, redirects: redirects}
	if method != "none" {
		c.secret = "cs-" + random(24)
		s.secrets = append(s.secrets, c.secret)
	}
	s.clients[c.id] = c
	return c.id, c.secret
}

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, code int, e, desc string) {
	writeJSON(w, code, map[string]string{"error": e, "error_description": desc})
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": s.Issuer, "authorization_endpoint": s.Issuer + "/authorize", "token_endpoint": s.Issuer + "/token",
		"registration_endpoint": s.Issuer + "/register", "scopes_supported": s.o.Scopes,
		"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token", "client_credentials"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": true,
	})
}

// register is dynamic client registration (RFC 7591).
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var m oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "redirect_uris are required")
		return
	}
	method := m.TokenEndpointAuthMethod
	if method == "" {
		method = "client_secret_basic"
	}
	s.mu.Lock()
	id, secret := s.addClient(method, m.RedirectURIs)
	s.counts.Registered++
	s.mu.Unlock()
	out := map[string]any{"client_id": id, "client_id_issued_at": time.Now().Unix(), "redirect_uris": m.RedirectURIs,
		"token_endpoint_auth_method": method, "grant_types": m.GrantTypes, "client_name": m.ClientName}
	if secret != "" {
		out["client_secret"], out["client_secret_expires_at"] = secret, 0
	}
	writeJSON(w, http.StatusCreated, out)
}

// authorize consents at once, as the person would, and sends the browser
// back to the client's redirect URI with a code (or access_denied).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	if c == nil || !slices.Contains(c.redirects, redirect) {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	v := back.Query()
	v.Set("state", q.Get("state"))
	v.Set("iss", s.Issuer)
	switch {
	case s.deny:
		v.Set("error", "access_denied")
		v.Set("error_description", "the person did not consent")
	case q.Get("response_type") != "code" || q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		v.Set("error", "invalid_request")
		v.Set("error_description", "PKCE (S256) is required")
	default:
		code := "code-" + random(16)
		s.codes[code] = &grant{client: c.id, subject: "person-" + random(4), challenge: q.Get("code_challenge"), redirect: redirect,
			resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope")), expires: time.Now().Add(time.Minute)}
		s.counts.Consents++
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// authenticate checks the client of a token request as it registered.
func (s *Server) authenticate(r *http.Request) *client {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c := s.clients[id]
	switch {
	case c == nil:
		return nil
	case c.method == "none":
		return c
	case c.method == "client_secret_basic" && basic && secret == c.secret,
		c.method == "client_secret_post" && !basic && secret == c.secret:
		return c
	}
	return nil
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.authenticate(r)
	if c == nil {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	var g *grant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		g = s.codes[code]
		delete(s.codes, code)
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if g == nil || g.client != c.id || time.Now().After(g.expires) || g.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown code, or the verifier, client or redirect_uri does not match")
			return
		}
		s.counts.ByCode++
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		g = s.refresh[rt]
		delete(s.refresh, rt) // rotated: a refresh token works once
		if g == nil || g.client != c.id {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		s.counts.ByRefresh++
	case "client_credentials":
		g = &grant{client: c.id, subject: c.id, scopes: strings.Fields(r.PostForm.Get("scope")), resource: r.PostForm.Get("resource")}
		s.counts.ByClientCredentials++
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", r.PostForm.Get("grant_type"))
		return
	}
	if len(g.scopes) == 0 {
		g.scopes = s.o.Scopes
	}
	issued := *g
	issued.expires = time.Now().Add(s.o.TokenLifetime)
	at := "at-" + random(24)
	s.access[at] = &issued
	s.secrets = append(s.secrets, at)
	out := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(s.o.TokenLifetime / time.Second),
		"scope": strings.Join(issued.scopes, " ")}
	if r.PostForm.Get("grant_type") != "client_credentials" {
		rt := "rt-" + random(24)
		s.refresh[rt] = &issued
		s.secrets = append(s.secrets, rt)
		out["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, out)
}

// verify checks a bearer token for the MCP server.
func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.access[token]
	if g == nil || time.Now().After(g.expires) {
		s.counts.Refused++
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: g.scopes, Expiration: g.expires, UserID: g.subject}, nil
}

type whoamiOut struct {
	Subject string `json:"subject"`
}

func (s *Server) whoami(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, whoamiOut, error) {
	subject := ""
	if ti := req.Extra.TokenInfo; ti != nil {
		subject = ti.UserID
	}
	s.mu.Lock()
	s.counts.Calls++
	s.calledWith = append(s.calledWith, subject)
	s.mu.Unlock()
	return nil, whoamiOut{Subject: subject}, nil
}
