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
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/pgtest"
	"github.com/agentcore/agentcore/pkg/auth"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// TestServerKeyStaysWithItsEndpoint tries every way a client could have the
// server's own API key sent to a URL of its choosing.
func TestServerKeyStaysWithItsEndpoint(t *testing.T) {
	t.Parallel()
	attacker := fakemodel.StartTB(t)
	attacker.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "from the other endpoint"} })
	api := suite.client.API()
	ctx := e2e.Context(t, 30*time.Second)
	legit := newAgent(t, e2e.TwoTools, nil) // the default profile, holding the server's key
	input := []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "hi"}}}
	elsewhere := proto.String(attacker.URL)

	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"CreateAgent with base_url", func() error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{
				Profile: proto.String("default"), BaseUrl: elsewhere}}})
			return err
		}, "agent.config.base_url"},
		{"UpdateAgent with mask config.base_url", func() error {
			_, err := api.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{
				Agent:      &agentv1.Agent{Id: legit.ID, Config: &agentv1.AgentConfig{BaseUrl: elsewhere}},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"config.base_url"}},
			})
			return err
		}, "agent.config.base_url"},
		{"Send with a config override", func() error {
			return sendRaw(ctx, &agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: &agentv1.StartRun{
				AgentId: legit.ID, Input: input, Config: &agentv1.AgentConfig{BaseUrl: elsewhere}}}})
		}, "start.config.base_url"},
		{"Send with compact.base_url", func() error {
			return sendRaw(ctx, &agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: &agentv1.StartRun{
				AgentId: legit.ID, Input: input, Config: &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{BaseUrl: elsewhere}}}}})
		}, "start.config.compact.base_url"},
		{"CreateAgent with compact.base_url", func() error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{
				Compact: &agentv1.CompactConfig{BaseUrl: elsewhere}}}})
			return err
		}, "agent.config.compact.base_url"},
		{"CreateAgent with a credential header", func() error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{
				Provider: &agentv1.ProviderOptions{Headers: map[string]string{"X-Api-Key": "mine"}}}}})
			return err
		}, "agent.config.provider.headers"},
	}
	for _, tc := range tests {
		err := tc.call()
		if status.Code(err) != codes.InvalidArgument || !slices.Contains(badRequestFields(err), tc.field) {
			t.Errorf("%s: %v (fields %v), want INVALID_ARGUMENT naming %s", tc.name, err, badRequestFields(err), tc.field)
		}
		if err != nil && strings.Contains(err.Error(), e2e.TestKey) {
			t.Errorf("%s: the error holds the key", tc.name)
		}
	}
	if n := len(attacker.Requests()); n != 0 {
		t.Fatalf("the other endpoint got %d requests", n)
	}

	// A client's own key goes with its own base_url.
	own, err := suite.client.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{
		BaseUrl: elsewhere, ApiKey: proto.String("sk-client-own-0123456789"), Model: proto.String("m")}})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Delete(context.Background())
	res, err := own.Send(ctx, "hi", client.Callbacks{})
	if err != nil || res.Text != "from the other endpoint" {
		t.Fatalf("send with the client's own key: %+v %v", res, err)
	}
	reqs := attacker.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer sk-client-own-0123456789" {
		t.Fatalf("the other endpoint got %d requests, authorization %q", len(reqs), reqs[0].Header.Get("Authorization"))
	}
}

// Canaries of the secrets test: values no other text holds.
const (
	canaryKey   = "sk-canary-key-7f3a9c2e51"
	canaryToken = "canary-token-4b8d0e6f27"
	// canaryPGDecoy is a PGPASSWORD that the store's URL makes unused.
	canaryPGDecoy = "pg-decoy-pw-0e93b6c1d8"
	// canaryOTLP is the OTLP exporter's API key (OTEL_EXPORTER_OTLP_HEADERS).
	canaryOTLP = "otlp-canary-key-2a7f5e90c3"
)

// The PostgreSQL role of the secrets test (.ci/run makes it): its password
// is a canary, which the server must really use.
const (
	canaryPGUser     = "agentcore_canary"
	canaryPGPassword = "pg-canary-pw-5d2c8e17a4"
)

// canaryStore returns a store URL for the canary role, without its
// password: a schema of its own on the test server (pgtest), granted to it.
func canaryStore(t *testing.T) string {
	t.Helper()
	dsn := pgtest.Schema(t)
	ctx := e2e.Context(t, 30*time.Second)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "GRANT ALL ON SCHEMA "+pgx.Identifier{schema}.Sanitize()+" TO "+canaryPGUser); err != nil {
		unavailable(t, "no role %s on the test PostgreSQL server (.ci/run creates it: LOGIN PASSWORD '%s'): %v", canaryPGUser, canaryPGPassword, err)
	}
	u.User = url.User(canaryPGUser)
	canary := *u
	canary.User = url.UserPassword(canaryPGUser, canaryPGPassword)
	if c, err := pgx.Connect(ctx, canary.String()); err != nil {
		unavailable(t, "the role %s cannot log in with its password: %v", canaryPGUser, err)
	} else {
		c.Close(ctx)
	}
	return u.String()
}

// procWalk is the tool command of the secrets test: the environment and
// command line of the server (the parent of the plugin, bash's $PPID) and
// of the plugin, the tool's own environment, and every environment in /proc
// the tool can read.
const procWalk = `echo "tool uid=$(id -u)"; srv=$(awk '{print $4}' /proc/$PPID/stat); echo "server pid $srv"; ` +
	`cat /proc/$srv/environ /proc/$srv/cmdline /proc/$PPID/environ /proc/$PPID/cmdline; echo; env; ` +
	`for f in /proc/[0-9]*/environ; do cat "$f" 2>/dev/null; echo; done; echo walked`

// TestSecretsOutOfReach runs a tool that looks for the server's secrets in
// /proc (the API key, the bearer token, the store's password given in
// -store or in PGPASSWORD, the OTLP exporter's header), with agent-server
// as an unprivileged user and as root running its plugins as another user;
// as root, it reads the server's own environ and cmdline, which the
// re-exec must have left without any of them.
func TestSecretsOutOfReach(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		// Already unprivileged: the server runs as this user.
		t.Run("unprivileged", func(t *testing.T) { secretsOutOfReach(t, nil, false) })
		unavailable(t, "not root: the server's /proc files and -plugin-user need root")
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		unavailable(t, "setpriv (util-linux) is needed to run agent-server as another user")
	}
	t.Run("unprivileged, password in -store", func(t *testing.T) {
		secretsOutOfReach(t, []string{setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups"}, true)
	})
	t.Run("root with -plugin-user, password in PGPASSWORD", func(t *testing.T) {
		secretsOutOfReach(t, nil, false, "-plugin-user", "65534:65534")
	})
}

// secretsOutOfReach runs one server of TestSecretsOutOfReach under wrap,
// with the store's password in -store (inArg) or in PGPASSWORD.
func secretsOutOfReach(t *testing.T, wrap []string, inArg bool, extra ...string) {
	store := canaryStore(t)
	env := []string{"AGENTCORE_MODEL_API_KEY=" + canaryKey, "AGENTCORE_AUTH_TOKEN=" + canaryToken,
		"OTEL_EXPORTER_OTLP_HEADERS=api-key=" + canaryOTLP}
	recv := startReceiver(t)
	env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+recv.addr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_BSP_SCHEDULE_DELAY=50")
	if inArg {
		u, _ := url.Parse(store)
		u.User = url.UserPassword(canaryPGUser, canaryPGPassword)
		store = u.String()
		env = append(env, "PGPASSWORD="+canaryPGDecoy) // unused: the URL's password wins
	} else {
		env = append(env, "PGPASSWORD="+canaryPGPassword)
	}
	canaries := []string{canaryKey, canaryToken, canaryPGPassword, canaryPGDecoy, canaryOTLP}
	cmd := suite.ServerCmd(suite.Plugins, append(extra, "-store", store), env...)
	if len(wrap) > 0 {
		cmd.Args = append(append([]string{}, wrap...), cmd.Args...)
		cmd.Path = wrap[0]
	}
	cmd.Dir = filepath.Dir(suite.Bin) // a directory every user may enter
	p, err := e2e.Launch(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	if os.Geteuid() == 0 {
		checkProcFiles(t, p.Cmd.Process.Pid, canaries)
	}
	c, err := client.Dial(p.Addr, client.WithToken(canaryToken))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	system := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			args, _ := json.Marshal(map[string]string{"command": procWalk})
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_walk", Name: "shell", Arguments: string(args)}}}
		}
		return fakemodel.Turn{Text: "found: " + strings.Join(e2e.LastToolResults(req), " ")}
	})
	a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	res, err := a.Send(e2e.Context(t, 30*time.Second), "look for secrets", client.Callbacks{
		OnEvent: func(e *agentv1.Event) { events = append(events, protojson.Format(e)) },
	})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	all := strings.Join(events, "\n")
	if !strings.Contains(all, "walked") || !strings.Contains(all, "PATH=") || !strings.Contains(all, "-shutdown-grace") {
		t.Fatalf("the tool did not run its walk: %.2000s", all)
	}
	if os.Geteuid() == 0 && !strings.Contains(all, "tool uid=65534") {
		t.Errorf("the tool did not run as uid 65534: %.2000s", all)
	}
	if strings.Contains(all, "[redacted]") {
		t.Errorf("the tool found a secret (the events hid it): %.2000s", all)
	}
	// The tool's result went on to the model: the body of every request holds no canary.
	var bodies strings.Builder
	for _, r := range suite.Model.Requests() {
		if strings.Contains(string(r.Body), system) {
			bodies.Write(r.Body)
		}
	}
	if !strings.Contains(bodies.String(), "walked") {
		t.Fatalf("no model request carried the tool's result")
	}
	stopped(t, p)
	for what, text := range map[string]string{"the events": all, "the result": res.Text, "the model requests": bodies.String(), "the server's log": p.Logs()} {
		for _, canary := range canaries {
			if strings.Contains(text, canary) {
				i := strings.Index(text, canary)
				t.Errorf("%s hold %s: …%s…", what, canary, text[max(0, i-200):min(len(text), i+100)])
			}
		}
	}
	// The values handed over still did their work: the store opened with
	// its password (the server started), the spans went with their key.
	if keys := recv.apiKeys(); len(keys) == 0 || slices.ContainsFunc(keys, func(k string) bool { return k != canaryOTLP }) {
		t.Errorf("the exports' api-key headers: %q, want each %s", keys, canaryOTLP)
	}
}

// checkProcFiles reads, as root, the server's /proc environ and cmdline
// (kept by the kernel as the last execve left them, whatever the process
// did since): the re-exec must have left no secret in either.
func checkProcFiles(t *testing.T, pid int, canaries []string) {
	t.Helper()
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	env, args := strings.Split(string(environ), "\x00"), strings.Split(string(cmdline), "\x00")
	// The re-exec happened (its pipe's variable), and the arguments are
	// still the server's, with the store's URL less its password.
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "AGENTCORE_SECRETS_FD=") }) ||
		!slices.Contains(env, "AGENTCORE_MODEL=fake-model") {
		t.Errorf("/proc/%d/environ is not a re-executed server's: %q", pid, env)
	}
	if i := slices.Index(args, "-store"); i < 0 || i+1 >= len(args) || !strings.HasPrefix(args[i+1], "postgres://"+canaryPGUser+"@") {
		t.Errorf("/proc/%d/cmdline has no -store postgres://%s@… (its password taken out): %q", pid, canaryPGUser, args)
	}
	for _, canary := range canaries {
		for what, b := range map[string][]byte{"environ": environ, "cmdline": cmdline} {
			if strings.Contains(string(b), canary) {
				t.Errorf("/proc/%d/%s holds %s: %q", pid, what, canary, b)
			}
		}
	}
	for _, name := range []string{"AGENTCORE_MODEL_API_KEY", "AGENTCORE_AUTH_TOKEN", "PGPASSWORD", "OTEL_EXPORTER_OTLP_HEADERS"} {
		if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			t.Errorf("/proc/%d/environ still names %s", pid, name)
		}
	}
}

// stopped stops the server now (for checks of its whole log); the deferred stop is then a no-op.
func stopped(t *testing.T, p *e2e.Server) {
	t.Helper()
	if err := p.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
}

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

// TestNonLoopbackNeedsTLSOrToken starts agent-server on every interface:
// without TLS and without a token it refuses; -insecure starts it.
func TestNonLoopbackNeedsTLSOrToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := suite.ServerCmd(dir, []string{"-listen", "0.0.0.0:0"})
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !asExit(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "-tls-cert") || !strings.Contains(string(out), "-auth-tokens-file") {
		t.Fatalf("exit %v, output:\n%s\nwant exit 1 naming -tls-cert and -auth-tokens-file", err, out)
	}
	p, err := e2e.Launch(suite.ServerCmd(dir, []string{"-listen", "0.0.0.0:0", "-insecure"}))
	if err != nil {
		t.Fatal(err)
	}
	stopped(t, p)
	if !strings.Contains(p.Logs(), "without TLS and without a token (-insecure)") || !strings.Contains(p.Logs(), `"reflection":"auth"`) {
		t.Errorf("no warning, or reflection not auth by default off loopback:\n%s", p.Logs())
	}
}

func asExit(err error, e **exec.ExitError) bool {
	x, ok := err.(*exec.ExitError)
	*e = x
	return ok
}

// leakCommand prints the suite server's model key (e2e.TestKey) without holding
// it: the model's arguments stay clean, the tool's output does not.
const leakCommand = `a=sk-e2e-very; b=secret-key; echo "found $a-$b-0123456789"`

// TestToolOutputKeepsServerSecrets: a tool prints a secret the server holds
// (its model key): its output events, the history and the next model
// request hold [redacted] in its place.
func TestToolOutputKeepsServerSecrets(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string // what the model got back
	var bodies []string
	a := newAgent(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			args, _ := json.Marshal(map[string]string{"command": leakCommand})
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_leak", Name: "shell", Arguments: string(args)}}}
		}
		mu.Lock()
		seen = append(seen, e2e.LastToolResults(req)...)
		bodies = append(bodies, string(req.Body))
		mu.Unlock()
		return fakemodel.Turn{Text: "noted"}
	}, nil)
	ctx := e2e.Context(t, 30*time.Second)
	var events []string
	if _, err := a.Send(ctx, "print it", client.Callbacks{OnEvent: func(e *agentv1.Event) {
		if e.GetToolOutput() != nil || e.GetToolResult() != nil {
			events = append(events, protojson.Format(e))
		}
	}}); err != nil {
		t.Fatal(err)
	}
	history, err := a.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range history {
		for _, p := range m.GetParts() {
			if r := p.GetToolResult(); r != nil {
				results = append(results, protojson.Format(r))
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for what, text := range map[string]string{"the model's next request": strings.Join(seen, " "),
		"the tool's events": strings.Join(events, "\n"), "GetHistory's tool result": strings.Join(results, "\n")} {
		if !strings.Contains(text, "found [redacted]") {
			t.Errorf("%s: no [redacted] in %s", what, text)
		}
	}
	if body := strings.Join(bodies, "\n"); strings.Contains(body, e2e.TestKey) || !strings.Contains(body, "found [redacted]") {
		t.Errorf("the model request's body: %.2000s", body)
	}
}

// TestMCPListenerKeepsServerSecrets calls the same tool over the MCP
// listener (the Go MCP SDK's client): its live output and its result hold
// [redacted] in place of the server's key, and the call is audited as
// ExecuteTool is.
func TestMCPListenerKeepsServerSecrets(t *testing.T) {
	t.Parallel()
	const token = "mcp-trust-token-0123456789"
	srv, err := suite.StartServer(suite.Plugins, []string{"-mcp-listen", "127.0.0.1:0"}, "AGENTCORE_AUTH_TOKEN="+token)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if srv.Cmd.ProcessState == nil {
			srv.Kill()
		}
	}()
	ctx := e2e.Context(t, 30*time.Second)
	var mu sync.Mutex
	var progress []string
	mcpAddr, _ := srv.WaitLog(t, "mcp listening")["addr"].(string)
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "trust-test"}, &mcpsdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
	}).Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: "http://" + mcpAddr + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport(token)}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	params := &mcpsdk.CallToolParams{Name: "shell", Arguments: map[string]string{"command": leakCommand}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), e2e.TestKey) || !strings.Contains(string(b), "found [redacted]") {
		t.Errorf("the MCP result: %s", b)
	}
	// Notifications may be handled after the result.
	live := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(progress, "")
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(live(), "found") && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Contains(live(), e2e.TestKey) || !strings.Contains(live(), "found [redacted]") {
		t.Errorf("the MCP progress notifications: %q", live())
	}
	cs.Close()
	stopped(t, srv)
	audited := false
	for _, rec := range srv.LogLines("audit") {
		if rec["call"] == "ExecuteTool" && rec["via"] == "mcp" && rec["tenant"] == "default" && rec["tool"] == "shell" &&
			rec["outcome"] == "OK" && rec["duration"] != nil && rec["@level"] == "info" {
			audited = true
		}
	}
	if !audited || strings.Contains(srv.Logs(), token) {
		t.Errorf("no audit line for the MCP call (or the token logged):\n%s", srv.Logs())
	}
}

// bearerTransport adds a bearer token to every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
