package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/auth"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// testPKI is a CA with certificates it signed.
type testPKI struct {
	dir      string
	ca       *x509.Certificate
	caKey    *ecdsa.PrivateKey
	pool     *x509.CertPool
	caFile   string
	certFile string // the server's, for 127.0.0.1
	keyFile  string
}

func newPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	p.caKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e CA"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.pool = x509.NewCertPool()
	p.pool.AddCert(p.ca)
	p.caFile = p.write(t, "ca.pem", "CERTIFICATE", der)
	srv := p.issue(t, 2, pkix.Name{CommonName: "agent-server"}, nil, x509.ExtKeyUsageServerAuth)
	p.certFile = p.write(t, "server.pem", "CERTIFICATE", srv.Certificate[0])
	keyDER, _ := x509.MarshalECPrivateKey(srv.PrivateKey.(*ecdsa.PrivateKey))
	p.keyFile = p.write(t, "server.key", "EC PRIVATE KEY", keyDER)
	return p
}

func (p *testPKI) write(t *testing.T, name, typ string, der []byte) string {
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *testPKI) issue(t *testing.T, serial int64, subject pkix.Name, dns []string, usage x509.ExtKeyUsage) tls.Certificate {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// creds are a client's TLS credentials with the certificate given.
func (p *testPKI) creds(cert tls.Certificate) credentials.TransportCredentials {
	return credentials.NewTLS(&tls.Config{RootCAs: p.pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
}

const (
	aliceToken = "alice-token-0123456789"
	bobToken   = "bob-token-0123456789"
	carolToken = "carol-token-0123456789"
)

// TestTenants runs a server with a tokens file over mutual TLS: tenants by
// token and by certificate, ownership, limits, admin, reflection with auth,
// the audit log, and a SIGHUP reload during a running send.
func TestTenants(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	anon := pki.issue(t, 10, pkix.Name{CommonName: "anon"}, nil, x509.ExtKeyUsageClientAuth)
	daveCert := pki.issue(t, 11, pkix.Name{CommonName: "dave"}, []string{"dave.agentcore.test"}, x509.ExtKeyUsageClientAuth)
	tokens := filepath.Join(t.TempDir(), "tenants.yaml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(tokens, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dave := "  dave:\n    client_certs: {sans: [dave.agentcore.test]}\n"
	bob := "  bob:\n    admin: true\n    tokens: [\"" + auth.HashToken(bobToken) + "\"]\n"
	write("tenants:\n  alice:\n    tokens: [" + aliceToken + "]\n    limits: {agents: 2, concurrent_runs: 1}\n" + bob + dave)

	// At -log-level warn the audit lines stay (and the "listening" line
	// goes: the server gets a port of its own choosing).
	cmd := suite.ServerCmd(suite.Plugins, []string{"-auth-tokens-file", tokens, "-tls-cert", pki.certFile, "-tls-key", pki.keyFile,
		"-tls-client-ca", pki.caFile, "-reflection", "auth", "-log-level", "warn", "-listen", freeAddr(t)})
	p, err := e2e.Launch(cmd, grpc.WithTransportCredentials(pki.creds(anon)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p.Cmd.ProcessState == nil {
			p.Kill()
		}
	}()
	dial := func(cert tls.Certificate, token string) *client.Client {
		opts := []client.Option{client.WithDialOptions(grpc.WithTransportCredentials(pki.creds(cert)))}
		if token != "" {
			opts = append(opts, client.WithToken(token))
		}
		c, err := client.Dial(p.Addr, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	alice, bobC, daveC, nobody := dial(anon, aliceToken), dial(anon, bobToken), dial(daveCert, ""), dial(anon, "")
	ctx := e2e.Context(t, 60*time.Second)
	code := func(err error) codes.Code {
		if ce := (*client.Error)(nil); asClientError(err, &ce) {
			return ce.Code
		}
		return status.Code(err)
	}

	// Each tenant has its own agent ids.
	release := make(chan struct{})
	releaseModel := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseModel) // a failed test must not leave the fake model's handler waiting
	held := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		<-release
		return fakemodel.Turn{Text: "done after the reload"}
	})
	create := func(c *client.Client, id, system string) error {
		_, err := c.API().CreateAgent(ctx, &agentv1.CreateAgentRequest{AgentId: id, Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{System: proto.String(system)}}})
		return err
	}
	for _, e := range []struct {
		c      *client.Client
		id     string
		system string
	}{{alice, "shared", held}, {alice, "a2", "alice's"}, {bobC, "shared", "bob's"}, {bobC, "bob-only", "bob's"}, {daveC, "d1", "dave's"}} {
		if err := create(e.c, e.id, e.system); err != nil {
			t.Fatalf("create %s: %v", e.id, err)
		}
	}
	if err := create(alice, "a3", "x"); code(err) != codes.ResourceExhausted || errorInfo(err).GetReason() != "SESSION_LIMIT" {
		t.Errorf("alice's third agent: %v, want RESOURCE_EXHAUSTED SESSION_LIMIT (limits.agents: 2)", err)
	}
	ids := func(c *client.Client) []string {
		list, err := c.ListAgents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range list {
			out = append(out, a.GetId())
		}
		return out
	}
	if got := ids(alice); !slices.Equal(got, []string{"a2", "shared"}) {
		t.Errorf("alice lists %v", got)
	}
	if got := ids(bobC); !slices.Equal(got, []string{"bob-only", "shared"}) {
		t.Errorf("bob lists %v", got)
	}
	if got := ids(daveC); !slices.Equal(got, []string{"d1"}) {
		t.Errorf("dave (by certificate) lists %v", got)
	}
	if a, err := bobC.Agent("shared").Get(ctx); err != nil || a.GetConfig().GetSystem() != "bob's" {
		t.Errorf("bob's shared: %v %v", a.GetConfig().GetSystem(), err)
	}
	api := alice.API()
	for name, call := range map[string]func() error{
		"GetAgent": func() error { _, err := api.GetAgent(ctx, &agentv1.GetAgentRequest{AgentId: "bob-only"}); return err },
		"Stop":     func() error { _, err := api.Stop(ctx, &agentv1.StopRequest{AgentId: "bob-only"}); return err },
		"DeleteAgent": func() error {
			_, err := api.DeleteAgent(ctx, &agentv1.DeleteAgentRequest{AgentId: "bob-only"})
			return err
		},
		"GetHistory": func() error {
			_, err := api.GetHistory(ctx, &agentv1.GetHistoryRequest{AgentId: "bob-only"})
			return err
		},
		"UpdateAgent": func() error {
			_, err := api.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{Agent: &agentv1.Agent{Id: "d1", Config: &agentv1.AgentConfig{System: proto.String("mine")}}})
			return err
		},
	} {
		if err := call(); code(err) != codes.NotFound {
			t.Errorf("alice %s on another tenant's agent: %v, want NOT_FOUND", name, err)
		}
	}
	if _, err := bobC.Agent("bob-only").Get(ctx); err != nil {
		t.Errorf("bob's agent after alice's attempts: %v", err)
	}
	// Bob's own changes, audited: an update, a history (whose content no
	// audit line may hold) and a stop of his idle agent.
	bobAPI := bobC.API()
	if _, err := bobAPI.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{Agent: &agentv1.Agent{Id: "bob-only", Config: &agentv1.AgentConfig{System: proto.String("bob's, updated")}}}); err != nil {
		t.Errorf("bob updates his agent: %v", err)
	}
	if _, err := bobAPI.SetHistory(ctx, &agentv1.SetHistoryRequest{AgentId: "bob-only", Messages: []*agentv1.Message{
		{Role: agentv1.Role_ROLE_USER, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "audit-content-marker"}}}}}}); err != nil {
		t.Errorf("bob sets his agent's history: %v", err)
	}
	if _, err := bobAPI.Stop(ctx, &agentv1.StopRequest{AgentId: "bob-only"}); err != nil {
		t.Errorf("bob stops his idle agent: %v", err)
	}
	if _, err := nobody.ListAgents(ctx); code(err) != codes.Unauthenticated {
		t.Errorf("a certificate of no tenant, no token: %v, want UNAUTHENTICATED", err)
	}
	if _, err := alice.ReloadTools(ctx); code(err) != codes.PermissionDenied {
		t.Errorf("alice (not admin) ReloadTools: %v, want PERMISSION_DENIED", err)
	}
	if _, err := bobC.ReloadTools(ctx); err != nil {
		t.Errorf("bob (admin) ReloadTools: %v", err)
	}
	checkReflection(t, p.Addr, pki.creds(anon))

	// A running send; alice's second one is over her limit.
	sendDone := make(chan error, 1)
	started := make(chan string, 1)
	go func() {
		res, err := alice.Agent("shared").Send(ctx, "audit-content-marker", client.Callbacks{
			OnStart: func(runID string) { started <- runID },
		})
		if err == nil && res.Text != "done after the reload" {
			err = status.Errorf(codes.Internal, "result %q", res.Text)
		}
		sendDone <- err
	}()
	select {
	case <-started:
	case err := <-sendDone:
		t.Fatalf("alice's send ended early: %v", err)
	}
	_, err = alice.Agent("a2").Send(ctx, "second", client.Callbacks{})
	if ce := (*client.Error)(nil); !asClientError(err, &ce) || ce.Code != codes.ResourceExhausted || ce.Reason != "RUN_LIMIT" {
		t.Errorf("alice's second concurrent send: %v, want RESOURCE_EXHAUSTED RUN_LIMIT", err)
	}

	// SIGHUP with alice gone and carol new: new calls see it, alice's send goes on.
	write("tenants:\n  carol:\n    tokens: [" + carolToken + "]\n    profiles: []\n" + bob + dave)
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	carol := dial(anon, carolToken)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := carol.ListAgents(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("carol's token after SIGHUP: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := alice.ListAgents(ctx); code(err) != codes.Unauthenticated {
		t.Errorf("alice after the reload removed her: %v, want UNAUTHENTICATED", err)
	}
	// carol may use no profile: naming one is as if it were not there; without one, no model.
	_, err = carol.API().CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{Profile: proto.String("default")}}})
	if code(err) != codes.InvalidArgument || !slices.Contains(badRequestFields(err), "agent.config.profile") || !strings.Contains(err.Error(), "no profile default") {
		t.Errorf("carol names a profile she may not use: %v", err)
	}
	ca, err := carol.CreateAgent(ctx, client.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Send(ctx, "hi", client.Callbacks{}); code(err) != codes.FailedPrecondition {
		t.Errorf("carol's send without a profile of hers: %v, want FAILED_PRECONDITION NO_MODEL", err)
	}
	releaseModel()
	if err := <-sendDone; err != nil {
		t.Errorf("alice's send running across the reload: %v", err)
	}
	if err := bobC.Agent("bob-only").Delete(ctx); err != nil {
		t.Errorf("bob deletes his agent: %v", err)
	}
	stopped(t, p)
	checkAudit(t, p.Logs())
}

// checkReflection checks that reflection (mode auth) needs a token.
func checkReflection(t *testing.T, addr string, creds credentials.TransportCredentials) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	list := func(ctx context.Context) error {
		rc, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
		if err != nil {
			return err
		}
		// A refused stream's Send says only EOF; Recv has the status.
		_ = rc.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
		_, err = rc.Recv()
		_ = rc.CloseSend()
		return err
	}
	ctx := e2e.Context(t, 10*time.Second)
	if err := list(ctx); status.Code(err) != codes.Unauthenticated {
		t.Errorf("reflection without a token (-reflection auth): %v, want UNAUTHENTICATED", err)
	}
	if err := list(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+bobToken)); err != nil {
		t.Errorf("reflection with a token: %v", err)
	}
}

// checkAudit checks the audit lines of TestTenants' server.
func checkAudit(t *testing.T, logs string) {
	t.Helper()
	type line struct {
		Module, Call, Phase, Tenant, Agent, Run, Outcome string
		Raw                                              string
	}
	var lines []line
	for _, l := range strings.Split(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil {
			continue
		}
		if rec["@module"] != "agent-server.audit" {
			if rec["@level"] == "info" || rec["@level"] == "debug" {
				t.Errorf("at -log-level warn, a line not of the audit log at %s: %s", rec["@level"], l)
			}
			continue
		}
		if rec["@level"] != "info" {
			t.Errorf("audit line not at INFO: %s", l)
		}
		s := func(k string) string { v, _ := rec[k].(string); return v }
		lines = append(lines, line{Call: s("call"), Phase: s("phase"), Tenant: s("tenant"), Agent: s("agent"), Run: s("run"), Outcome: s("outcome"), Raw: l})
		for _, secret := range []string{aliceToken, bobToken, carolToken, e2e.TestKey, "audit-content-marker"} {
			if strings.Contains(l, secret) {
				t.Errorf("an audit line holds %q: %s", secret, l)
			}
		}
		if _, ok := rec["duration"]; !ok && rec["outcome"] != nil {
			t.Errorf("an audit line without duration: %s", l)
		}
	}
	want := []line{
		{Call: "CreateAgent", Tenant: "alice", Agent: "shared", Outcome: "OK"},
		{Call: "CreateAgent", Tenant: "alice", Agent: "a3", Outcome: "ResourceExhausted"},
		{Call: "CreateAgent", Tenant: "dave", Agent: "d1", Outcome: "OK"},
		{Call: "DeleteAgent", Tenant: "alice", Agent: "bob-only", Outcome: "NotFound"},
		{Call: "ReloadTools", Tenant: "alice", Outcome: "PermissionDenied"},
		{Call: "ReloadTools", Tenant: "bob", Outcome: "OK"},
		{Call: "Send", Phase: "started", Tenant: "alice", Agent: "shared"},
		{Call: "Send", Phase: "ended", Tenant: "alice", Agent: "shared", Outcome: "OK"},
		{Call: "Send", Phase: "ended", Tenant: "alice", Agent: "a2", Outcome: "ResourceExhausted"},
		{Call: "DeleteAgent", Tenant: "bob", Agent: "bob-only", Outcome: "OK"},
		{Call: "UpdateAgent", Tenant: "alice", Agent: "d1", Outcome: "NotFound"},
		{Call: "UpdateAgent", Tenant: "bob", Agent: "bob-only", Outcome: "OK"},
		{Call: "SetHistory", Tenant: "bob", Agent: "bob-only", Outcome: "OK"},
		{Call: "Stop", Tenant: "alice", Agent: "bob-only", Outcome: "NotFound"},
		{Call: "Stop", Tenant: "bob", Agent: "bob-only", Outcome: "OK"},
	}
	for _, w := range want {
		found := false
		for _, l := range lines {
			if l.Call == w.Call && l.Phase == w.Phase && l.Tenant == w.Tenant && l.Agent == w.Agent && l.Outcome == w.Outcome &&
				(w.Call != "Send" || w.Agent != "shared" || strings.HasPrefix(l.Run, "run_")) {
				found = true
			}
		}
		if !found {
			t.Errorf("no audit line %+v among %d", w, len(lines))
		}
	}
	for _, l := range lines {
		if l.Call == "ListAgents" || l.Call == "GetAgent" {
			t.Errorf("a read was audited: %s", l.Raw)
		}
	}
}

// freeAddr returns a loopback address with a port free now, for a server
// whose address cannot be read from its log.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
