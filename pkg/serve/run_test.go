package serve_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/internal/servetest"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/serve"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func skillDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "review-pr"), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: review-pr\ndescription: Use when reviewing a PR.\n---\n1. Run the tests.\n"
	if err := os.WriteFile(filepath.Join(dir, "review-pr", "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunOnUnixSocketWithToken(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "agent.sock")
	target, stop := servetest.Start(t, []string{"-listen", "unix:" + sock, "-tool-dir", t.TempDir(), "-skill-dir", skillDir(t)},
		map[string]string{"AGENTCORE_AUTH_TOKEN": "s3cret-token"})
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	servetest.WaitServing(t, conn) // health needs no token

	// Reflection is open too, and lists the service.
	rc, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	_ = rc.CloseSend()
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	if !strings.Contains(strings.Join(names, " "), "agentcore.v1.AgentService") {
		t.Errorf("reflection lists %v", names)
	}

	// AgentService needs the token.
	api := agentv1.NewAgentServiceClient(conn)
	if _, err := api.ListTools(context.Background(), &agentv1.ListToolsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("no token: %v, want UNAUTHENTICATED", err)
	}
	c, err := client.Dial(target, client.WithToken("wrong"))
	if err != nil {
		t.Fatal(err)
	}
	var ce *client.Error
	if _, err := c.ListTools(context.Background()); !asErr(err, &ce) || ce.Code != codes.Unauthenticated {
		t.Errorf("wrong token: %v, want UNAUTHENTICATED", err)
	}
	c.Close()
	c, err = client.Dial(target, client.WithToken("s3cret-token"))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.GetSkills()) != 1 || tools.GetSkills()[0].GetName() != "review-pr" {
		t.Errorf("skills %v", tools.GetSkills())
	}

	// Without a model, a send fails saying how to configure one.
	a, err := c.CreateAgent(context.Background(), client.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Send(context.Background(), "hi", client.Callbacks{})
	if !asErr(err, &ce) || ce.Code != codes.FailedPrecondition || ce.Reason != "NO_MODEL" ||
		!strings.Contains(ce.Message, "AGENTCORE_MODEL_BASE_URL") {
		t.Errorf("send without a model: %v", err)
	}
	c.Close()
	conn.Close()
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket file left behind: %v", err)
	}
}

func asErr(err error, ce **client.Error) bool {
	e, ok := err.(*client.Error)
	*ce = e
	return ok
}

// certs writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all signed by the CA, and returns their paths.
func certs(t *testing.T) (caFile, certFile, keyFile string, clientCert tls.Certificate, pool *x509.CertPool) {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	issue := func(serial int64, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	srvDER, srvKey := issue(2, x509.ExtKeyUsageServerAuth)
	srvKeyDER, _ := x509.MarshalECPrivateKey(srvKey)
	cliDER, cliKey := issue(3, x509.ExtKeyUsageClientAuth)
	caFile = write("ca.pem", "CERTIFICATE", caDER)
	certFile = write("server.pem", "CERTIFICATE", srvDER)
	keyFile = write("server.key", "EC PRIVATE KEY", srvKeyDER)
	clientCert = tls.Certificate{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}
	return caFile, certFile, keyFile, clientCert, pool
}

func TestRunWithMutualTLS(t *testing.T) {
	caFile, certFile, keyFile, clientCert, pool := certs(t)
	target, stop := servetest.Start(t, []string{"-listen", "127.0.0.1:0", "-tool-dir", t.TempDir(),
		"-tls-cert", certFile, "-tls-key", keyFile, "-tls-client-ca", caFile}, nil)

	// With a client certificate: served.
	good, err := grpc.NewClient(target, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{clientCert}, MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	servetest.WaitServing(t, good)
	good.Close()

	// Without one: refused.
	bad, err := grpc.NewClient(target, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err = healthpb.NewHealthClient(bad).Check(ctx, &healthpb.HealthCheckRequest{})
	cancel()
	bad.Close()
	if err == nil {
		t.Error("a client without a certificate was served")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestRunFailsOnABrokenToolDir(t *testing.T) {
	dir := t.TempDir()
	// An executable that is not a plugin fails the scan loudly.
	if err := os.WriteFile(filepath.Join(dir, "broken"), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load([]string{"-store", "memory", "-listen", "127.0.0.1:0", "-tool-dir", dir}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = serve.Run(context.Background(), cfg, io.Discard, nil, func(net.Addr) { t.Error("it listened before its tools were loaded") })
	if err == nil || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("Run = %v, want an error naming the broken plugin", err)
	}
}

// TestToolsLoadBeforeListening: the server scans its tools first, so a
// client that can connect finds it serving, its tools loaded.
func TestToolsLoadBeforeListening(t *testing.T) {
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "slowstart"), "./testdata/slowstart") // go test puts its go first on PATH
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the test plugin: %v\n%s", err, out)
	}
	started := time.Now()
	target, stop := servetest.Start(t, []string{"-listen", "127.0.0.1:0", "-tool-dir", dir}, nil)
	if d := time.Since(started); d < 1400*time.Millisecond {
		t.Errorf("listening %v after the start, before the plugin's 1.5 s handshake", d)
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health at the first connection: %v %v, want SERVING", resp.GetStatus(), err)
	}
	tools, err := agentv1.NewAgentServiceClient(conn).ListTools(context.Background(), &agentv1.ListToolsRequest{})
	if err != nil || len(tools.GetTools()) != 1 || tools.GetTools()[0].GetName() != "slow_hello" {
		t.Errorf("tools at the first connection: %v %v", tools, err)
	}
	if m := tools.GetLimitsMechanism(); m == "" || !strings.Contains(m, "enforces") {
		t.Errorf("limits mechanism = %q", m)
	}
	conn.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
