package connect_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/connect"
	"github.com/agentcore/agentcore/pkg/store/memory"
	"github.com/agentcore/agentcore/pkg/vault"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type fixture struct {
	svc   *connect.Service
	vault *vault.Vault
	as    *authServer
	logs  *bytes.Buffer
}

func newFixture(t *testing.T, timeout time.Duration) *fixture {
	t.Helper()
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	keys, err := vault.RandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{vault: vault.New(st, keys), as: startAuthServer(t), logs: &bytes.Buffer{}}
	f.svc = connect.New(connect.Options{Vault: f.vault, Authorizer: &authorizer{as: f.as}, Timeout: timeout,
		Log: hclog.New(&hclog.LoggerOptions{Output: f.logs, Level: hclog.Debug})})
	cb := httptest.NewServer(f.svc)
	t.Cleanup(cb.Close)
	f.svc.SetCallbackURL(cb.URL + connect.CallbackPath)
	return f
}

// as is the context of a call of tenant for user ("": none).
func as(tenant, user string) context.Context {
	md := metadata.MD{}
	if user != "" {
		md.Set(auth.UserHeader, user)
	}
	return auth.NewContext(metadata.NewIncomingContext(context.Background(), md), &auth.Tenant{ID: tenant})
}

// open opens a URL as a person's browser does, following redirects, and
// returns the last page.
func open(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func states(t *testing.T, f *fixture, ctx context.Context) map[string]*agentv1.Connection {
	t.Helper()
	resp, err := f.svc.ListConnections(ctx, &agentv1.ListConnectionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*agentv1.Connection{}
	for _, c := range resp.GetConnections() {
		out[c.GetServer()] = c
	}
	return out
}

func wantReason(t *testing.T, err error, code codes.Code, reason agentv1.ErrorReason) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.GetReason() != strings.TrimPrefix(reason.String(), "ERROR_REASON_") {
				t.Fatalf("error %v: reason %s, want %s", err, info.GetReason(), reason)
			}
			return
		}
	}
	t.Fatalf("error %v has no ErrorInfo", err)
}

// noSecrets fails when text shows a token, the client secret or a PKCE verifier.
func noSecrets(t *testing.T, what, text string, more ...string) {
	t.Helper()
	for _, s := range append([]string{accessCanary, refreshCanary, secretCanary}, more...) {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s shows %q: %s", what, s, text)
		}
	}
}

func TestConnectThroughTheBrowser(t *testing.T) {
	f := newFixture(t, time.Minute)
	alice := as("acme", "alice@example.com")
	if c := states(t, f, alice)["consent"]; c.GetState() != agentv1.ConnectionState_CONNECTION_STATE_NOT_CONNECTED || !c.GetConsent() {
		t.Fatalf("before: %v", c)
	}
	resp, err := f.svc.Connect(alice, &agentv1.ConnectRequest{Server: "consent"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(resp.GetAuthorizationUrl())
	if err != nil || !strings.HasPrefix(resp.GetAuthorizationUrl(), f.as.URL+"/authorize?") || u.Query().Get("code_challenge_method") != "S256" {
		t.Fatalf("authorization URL %q", resp.GetAuthorizationUrl())
	}
	if st := u.Query().Get("state"); strings.Contains(st, "acme") || strings.Contains(st, "alice") {
		t.Errorf("the state shows whose connect it is: %q", st)
	}
	if resp.GetConnection().GetState() != agentv1.ConnectionState_CONNECTION_STATE_PENDING || !resp.GetExpireTime().AsTime().After(time.Now()) {
		t.Errorf("Connect = %v", resp)
	}
	rec, _, err := f.vault.Get(context.Background(), vault.Key{Tenant: "acme", Subject: "alice@example.com", Server: "consent"})
	if err != nil || rec.Pending == nil || rec.Pending.Verifier == "" {
		t.Fatalf("the pending flow in the vault: %v, %v", rec, err)
	}
	verifier := rec.Pending.Verifier
	if states(t, f, alice)["consent"].GetState() != agentv1.ConnectionState_CONNECTION_STATE_PENDING {
		t.Error("not pending while the person is away")
	}

	code, page := open(t, resp.GetAuthorizationUrl())
	if code != http.StatusOK || !strings.Contains(page, `data-outcome="connected"`) {
		t.Fatalf("callback page %d: %s", code, page)
	}
	c := states(t, f, alice)["consent"]
	if c.GetState() != agentv1.ConnectionState_CONNECTION_STATE_CONNECTED || c.GetSubject() != "alice@example.com" ||
		strings.Join(c.GetScopes(), " ") != "read write" || c.GetIssuer() != f.as.URL || !c.GetExpireTime().AsTime().After(time.Now().Add(50*time.Minute)) {
		t.Fatalf("after the callback: %v", c)
	}
	rec, _, err = f.vault.Get(context.Background(), vault.Key{Tenant: "acme", Subject: "alice@example.com", Server: "consent"})
	if err != nil || rec.Token.AccessToken != accessCanary || rec.Token.RefreshToken != refreshCanary || rec.Pending != nil {
		t.Fatalf("the vault after the callback: %v, %v", rec, err)
	}

	// The same return again (a reload, a replay) connects nothing.
	code, page = open(t, resp.GetAuthorizationUrl())
	if code != http.StatusBadRequest || !strings.Contains(page, "used already") {
		t.Errorf("the callback a second time: %d %s", code, page)
	}

	// Nothing shown holds a token, the client secret or the verifier.
	list, _ := f.svc.ListConnections(alice, &agentv1.ListConnectionsRequest{})
	for what, m := range map[string]proto.Message{"Connect": resp, "ListConnections": list} {
		noSecrets(t, what, protojson.Format(m), verifier)
	}
	noSecrets(t, "the callback page", page, verifier)
	noSecrets(t, "the log", f.logs.String(), verifier)
}

// TestConnectionsAreTheCallers: a user's connection is that user's; a
// tenant's (made without a user) serves its users who have none.
func TestConnectionsAreTheCallers(t *testing.T) {
	f := newFixture(t, time.Minute)
	connectAs := func(ctx context.Context) {
		t.Helper()
		resp, err := f.svc.Connect(ctx, &agentv1.ConnectRequest{Server: "consent"})
		if err != nil {
			t.Fatal(err)
		}
		if code, page := open(t, resp.GetAuthorizationUrl()); code != http.StatusOK {
			t.Fatalf("callback %d: %s", code, page)
		}
	}
	stateOf := func(ctx context.Context) (agentv1.ConnectionState, string) {
		c := states(t, f, ctx)["consent"]
		return c.GetState(), c.GetSubject()
	}
	connectAs(as("acme", "alice"))
	for _, tc := range []struct {
		ctx     context.Context
		who     string
		state   agentv1.ConnectionState
		subject string
	}{
		{as("acme", "alice"), "alice", agentv1.ConnectionState_CONNECTION_STATE_CONNECTED, "alice"},
		{as("acme", "bob"), "bob", agentv1.ConnectionState_CONNECTION_STATE_NOT_CONNECTED, ""},
		{as("acme", ""), "the tenant", agentv1.ConnectionState_CONNECTION_STATE_NOT_CONNECTED, ""},
		{as("other", "alice"), "alice of another tenant", agentv1.ConnectionState_CONNECTION_STATE_NOT_CONNECTED, ""},
	} {
		if st, sub := stateOf(tc.ctx); st != tc.state || sub != tc.subject {
			t.Errorf("%s: %s of %q, want %s of %q", tc.who, st, sub, tc.state, tc.subject)
		}
	}
	connectAs(as("acme", ""))
	if st, sub := stateOf(as("acme", "bob")); st != agentv1.ConnectionState_CONNECTION_STATE_CONNECTED || sub != "" {
		t.Errorf("bob, once the tenant connected: %s of %q", st, sub)
	}
	// bob has none of his own to remove; alice removes hers and falls back
	// on the tenant's.
	_, err := f.svc.Disconnect(as("acme", "bob"), &agentv1.DisconnectRequest{Server: "consent"})
	wantReason(t, err, codes.NotFound, agentv1.ErrorReason_ERROR_REASON_CONNECTION_NOT_FOUND)
	if _, err := f.svc.Disconnect(as("acme", "alice"), &agentv1.DisconnectRequest{Server: "consent"}); err != nil {
		t.Fatal(err)
	}
	if st, sub := stateOf(as("acme", "alice")); st != agentv1.ConnectionState_CONNECTION_STATE_CONNECTED || sub != "" {
		t.Errorf("alice, disconnected: %s of %q; want the tenant's", st, sub)
	}
	if _, err := f.svc.Disconnect(as("acme", ""), &agentv1.DisconnectRequest{Server: "consent"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := stateOf(as("acme", "alice")); st != agentv1.ConnectionState_CONNECTION_STATE_NOT_CONNECTED {
		t.Errorf("alice, all disconnected: %s", st)
	}
}

func TestMachineServerConnectsWithoutAPerson(t *testing.T) {
	f := newFixture(t, time.Minute)
	resp, err := f.svc.Connect(as("acme", ""), &agentv1.ConnectRequest{Server: "machine"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetAuthorizationUrl() != "" || resp.GetConnection().GetState() != agentv1.ConnectionState_CONNECTION_STATE_CONNECTED || resp.GetConnection().GetConsent() {
		t.Errorf("Connect = %v", resp)
	}
	noSecrets(t, "Connect", protojson.Format(resp))
}

func TestCallbackRefusals(t *testing.T) {
	f := newFixture(t, time.Minute)
	ctx := as("acme", "alice")
	resp, err := f.svc.Connect(ctx, &agentv1.ConnectRequest{Server: "consent"})
	if err != nil {
		t.Fatal(err)
	}
	au, _ := url.Parse(resp.GetAuthorizationUrl())
	state := au.Query().Get("state")
	cb, _ := url.Parse(au.Query().Get("redirect_uri"))
	call := func(q url.Values) (int, string) {
		u := *cb
		u.RawQuery = q.Encode()
		return open(t, u.String())
	}
	for _, tc := range []struct {
		name string
		q    url.Values
		want string
	}{
		{"no state", url.Values{"code": {"x"}}, "carries no state"},
		{"forged state", url.Values{"code": {"x"}, "state": {"abc.def"}}, "not made by this agent-server"},
		{"altered state", url.Values{"code": {"x"}, "state": {state[:len(state)-3] + "AAA"}}, "not made by this agent-server"},
	} {
		if code, page := call(tc.q); code != http.StatusBadRequest || !strings.Contains(page, tc.want) {
			t.Errorf("%s: %d %s", tc.name, code, page)
		}
	}
	// A newer Connect replaces the older: its return no longer works.
	if _, err := f.svc.Connect(ctx, &agentv1.ConnectRequest{Server: "consent"}); err != nil {
		t.Fatal(err)
	}
	if code, page := call(url.Values{"code": {"x"}, "state": {state}}); code != http.StatusBadRequest || !strings.Contains(page, "newer Connect") {
		t.Errorf("the older Connect's return: %d %s", code, page)
	}
	// The person says no: nothing is connected, and the flow is gone.
	f.as.mu.Lock()
	f.as.deny = true
	f.as.mu.Unlock()
	resp, err = f.svc.Connect(ctx, &agentv1.ConnectRequest{Server: "consent"})
	if err != nil {
		t.Fatal(err)
	}
	code, page := open(t, resp.GetAuthorizationUrl())
	if code != http.StatusBadRequest || !strings.Contains(page, "access_denied") || strings.Contains(page, "<b>") {
		t.Errorf("declined: %d %s", code, page)
	}
	if st := states(t, f, ctx)["consent"].GetState(); st != agentv1.ConnectionState_CONNECTION_STATE_NOT_CONNECTED {
		t.Errorf("after a refusal: %s", st)
	}
	if resp, err := http.Post(cb.String(), "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to the callback: %v, %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

func TestConnectExpires(t *testing.T) {
	f := newFixture(t, time.Second)
	resp, err := f.svc.Connect(as("acme", ""), &agentv1.ConnectRequest{Server: "consent"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if code, page := open(t, resp.GetAuthorizationUrl()); code != http.StatusBadRequest || !strings.Contains(page, "expired") {
		t.Errorf("an expired Connect's return: %d %s", code, page)
	}
	if st := states(t, f, as("acme", ""))["consent"].GetState(); st != agentv1.ConnectionState_CONNECTION_STATE_NOT_CONNECTED {
		t.Errorf("an expired Connect: %s", st)
	}
}

func TestConnectErrors(t *testing.T) {
	f := newFixture(t, time.Minute)
	_, err := f.svc.Connect(as("acme", ""), &agentv1.ConnectRequest{Server: "nope"})
	wantReason(t, err, codes.NotFound, agentv1.ErrorReason_ERROR_REASON_MCP_SERVER_NOT_FOUND)
	if !strings.Contains(err.Error(), "consent") {
		t.Errorf("the error does not list the servers: %v", err)
	}
	_, err = f.svc.Connect(as("acme", ""), &agentv1.ConnectRequest{})
	wantReason(t, err, codes.InvalidArgument, agentv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	_, err = f.svc.Connect(as("acme", "bad user"), &agentv1.ConnectRequest{Server: "consent"})
	wantReason(t, err, codes.InvalidArgument, agentv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	_, err = f.svc.ListConnections(context.Background(), &agentv1.ListConnectionsRequest{})
	wantReason(t, err, codes.Unauthenticated, agentv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED)

	f.svc.SetCallbackURL("")
	_, err = f.svc.Connect(as("acme", ""), &agentv1.ConnectRequest{Server: "consent"})
	wantReason(t, err, codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_VAULT_UNAVAILABLE)
	if !strings.Contains(err.Error(), "-public-url") {
		t.Errorf("the error does not name -public-url: %v", err)
	}

	st := memory.New()
	t.Cleanup(func() { st.Close() })
	off := connect.New(connect.Options{Vault: vault.New(st, nil), Authorizer: &authorizer{as: f.as}})
	_, err = off.Connect(as("acme", ""), &agentv1.ConnectRequest{Server: "consent"})
	wantReason(t, err, codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_VAULT_UNAVAILABLE)
	_, err = off.ListConnections(as("acme", ""), &agentv1.ListConnectionsRequest{})
	wantReason(t, err, codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_VAULT_UNAVAILABLE)

	none := connect.New(connect.Options{Vault: vault.New(st, nil)})
	if resp, err := none.ListConnections(as("acme", ""), &agentv1.ListConnectionsRequest{}); err != nil || len(resp.GetConnections()) != 0 {
		t.Errorf("without servers that need OAuth: %v, %v", resp, err)
	}
	if _, err := none.Connect(as("acme", ""), &agentv1.ConnectRequest{Server: "consent"}); status.Code(err) != codes.NotFound {
		t.Errorf("Connect without servers that need OAuth: %v", err)
	}
}
