package connect_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/agentcore/agentcore/pkg/connect"
	"github.com/agentcore/agentcore/pkg/vault"
)

// Canaries: no response, page or log line may show them.
const (
	accessCanary  = "at-CANARY-d41f"
	refreshCanary = "rt-CANARY-8e07"
	secretCanary  = "cs-CANARY-55aa"
)

// authServer is an OAuth authorization server on 127.0.0.1: /authorize
// consents at once (as a person would) and sends the browser back with a
// code; /token checks the client and the PKCE verifier and issues tokens.
type authServer struct {
	*httptest.Server
	mu    sync.Mutex
	codes map[string]string // code -> PKCE challenge
	deny  bool              // /authorize answers access_denied
}

func startAuthServer(t *testing.T) *authServer {
	as := &authServer{codes: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		back, _ := url.Parse(q.Get("redirect_uri"))
		v := url.Values{"state": {q.Get("state")}, "iss": {as.URL}}
		as.mu.Lock()
		if as.deny {
			v.Set("error", "access_denied")
			v.Set("error_description", "the person said no <b>")
		} else {
			code := "code-" + q.Get("state")[:8] + q.Get("code_challenge")[:6]
			as.codes[code] = q.Get("code_challenge")
			v.Set("code", code)
		}
		as.mu.Unlock()
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		if id != "agentcore-test" || secret != secretCanary {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		_ = r.ParseForm()
		as.mu.Lock()
		challenge, ok := as.codes[r.Form.Get("code")]
		delete(as.codes, r.Form.Get("code"))
		as.mu.Unlock()
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": accessCanary, "token_type": "Bearer",
			"refresh_token": refreshCanary, "expires_in": 3600, "scope": "read write"})
	})
	as.Server = httptest.NewServer(mux)
	t.Cleanup(as.Close)
	return as
}

// authorizer is the test's OAuth client, with golang.org/x/oauth2 as the
// real one (pkg/mcpauth) uses it: "consent" needs a person, "machine"
// gets its token at once (client credentials).
type authorizer struct {
	as *authServer
}

func (a *authorizer) Servers(context.Context) ([]connect.Server, error) {
	return []connect.Server{{Name: "machine"}, {Name: "consent", Consent: true}}, nil
}

func (a *authorizer) config(redirect string) *oauth2.Config {
	return &oauth2.Config{ClientID: "agentcore-test", ClientSecret: secretCanary, RedirectURL: redirect, Scopes: []string{"read", "write"},
		Endpoint: oauth2.Endpoint{AuthURL: a.as.URL + "/authorize", TokenURL: a.as.URL + "/token", AuthStyle: oauth2.AuthStyleInHeader}}
}

func (a *authorizer) Begin(_ context.Context, server string, rec *vault.Record, redirect, state string) (string, *vault.Record, error) {
	client := vault.Client{ID: "agentcore-test", Secret: secretCanary, AuthMethod: "client_secret_basic",
		AuthURL: a.as.URL + "/authorize", TokenURL: a.as.URL + "/token", Issuer: a.as.URL, RedirectURL: redirect}
	switch server {
	case "machine":
		client.Scopes = []string{"read"}
		return "", &vault.Record{Client: client, Token: &oauth2.Token{AccessToken: accessCanary, TokenType: "Bearer"}}, nil
	case "consent":
		verifier := oauth2.GenerateVerifier()
		out := &vault.Record{Client: client, Pending: &vault.Pending{Verifier: verifier, RedirectURL: redirect}}
		if rec != nil {
			out.Token = rec.Token
		}
		return a.config(redirect).AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), out, nil
	}
	return "", nil, errors.New("unknown server")
}

func (a *authorizer) Complete(ctx context.Context, _ string, rec *vault.Record, code, iss string) (*vault.Record, error) {
	if iss != "" && iss != rec.Client.Issuer {
		return nil, errors.New("the callback's issuer is not the authorization server's")
	}
	tok, err := a.config(rec.Pending.RedirectURL).Exchange(ctx, code, oauth2.VerifierOption(rec.Pending.Verifier))
	if err != nil {
		return nil, err
	}
	out := *rec
	out.Token = tok
	out.Client.Scopes = []string{"read", "write"}
	return &out, nil
}
