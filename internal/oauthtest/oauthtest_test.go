package oauthtest_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/oauthtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestWithTheSDKsClient checks the servers against a real peer: the MCP Go
// SDK's OAuth client discovers the authorization server from the MCP
// server's 401, registers, gets a code (a client following the redirect as
// a person's browser would), calls the tool, and refreshes its token once
// it expired.
func TestWithTheSDKsClient(t *testing.T) {
	s := oauthtest.Start(t, oauthtest.Options{TokenLifetime: time.Second})
	const redirect = "http://127.0.0.1:1/callback"
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, GrantTypes: []string{"authorization_code", "refresh_token"}, ClientName: "oauthtest"}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
			resp, err := noFollow.Do(req)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			back, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || back.Query().Get("code") == "" {
				return nil, errors.New("no code in " + resp.Header.Get("Location"))
			}
			q := back.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	ss, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.MCPURL, OAuthHandler: h, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	call := func() {
		t.Helper()
		res, err := ss.CallTool(ctx, &sdk.CallToolParams{Name: "whoami"})
		if err != nil || res.IsError {
			t.Fatalf("whoami: %v, %v", res, err)
		}
	}
	call()
	time.Sleep(1200 * time.Millisecond) // the access token expires
	call()
	n := s.Counts()
	if n.Registered != 1 || n.Consents != 1 || n.ByCode != 1 || n.ByRefresh < 1 || n.Calls != 2 {
		t.Errorf("counts %+v", n)
	}
	if w := s.CalledWith(); len(w) != 2 || w[0] == "" || w[0] != w[1] {
		t.Errorf("the calls' subjects: %q", w)
	}
	if len(s.Secrets()) < 4 {
		t.Errorf("secrets kept: %d", len(s.Secrets()))
	}
}
