package tests

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
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// TestSidecarMinimalRoot runs agent-server as the sidecar image does, with
// nothing but its static binaries: chrooted into a directory holding them
// (plus the /tmp and /dev/null any container runtime gives), with no libc
// and no /etc/ssl. It reaches the model over HTTPS, trusting a CA passed
// with SSL_CERT_FILE, runs a plugin, and answers both health probes.
func TestSidecarMinimalRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		unavailable(t, "chroot needs root")
	}
	if os.Getenv("AGENTCORE_E2E_RACE") != "" {
		t.Skip("the race detector's binaries need libc")
	}
	// The suite's binaries are static (CGO_ENABLED=0), as make build makes them.
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(filepath.Join(bin, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{
		suite.Bin: filepath.Join(bin, "agent-server"),
		filepath.Join(filepath.Dir(suite.Bin), "toolhost"): filepath.Join(bin, "toolhost"),
		filepath.Join(suite.Plugins, "hello"):              filepath.Join(bin, "plugins", "hello"),
	} {
		if err := copyFile(from, to); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := e2e.Go("version", "-m", filepath.Join(bin, "agent-server")).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "golang.org/x/crypto/x509roots/fallback") || !strings.Contains(string(out), "CGO_ENABLED=0") {
		t.Fatalf("agent-server is not static with embedded roots: %v\n%s", err, out)
	}
	if err := os.Mkdir(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "var", "lib", "agentcore"), 0o755); err != nil { // the image's data folder
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(root, "dev", "null"), syscall.S_IFCHR|0o666, int(unix1_3())); err != nil {
		unavailable(t, "mknod /dev/null: %v", err)
	}

	// The model, over HTTPS: a TLS front of the fake model with a CA of its own.
	target, _ := url.Parse(suite.Model.URL)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, FlushInterval: -1}
	front := httptest.NewTLSServer(proxy)
	defer front.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: front.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(root, "ca.pem"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another HTTPS model, whose certificate nobody trusts: it must be refused.
	stranger := httptest.NewUnstartedServer(http.NotFoundHandler())
	stranger.TLS = &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
	stranger.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	stranger.StartTLS()
	defer stranger.Close()

	cmd := exec.Command("/bin/agent-server", "-listen", "127.0.0.1:0", "-log-format", "json",
		"-tool-dir", "/bin/plugins", "-shutdown-grace", "1s")
	cmd.Dir = "/"
	cmd.Env = []string{
		"SSL_CERT_FILE=/ca.pem",
		"AGENTCORE_DATA_DIR=/var/lib/agentcore", // as the image sets it
		"AGENTCORE_MODEL_BASE_URL=" + front.URL,
		"AGENTCORE_MODEL=fake-model",
		"AGENTCORE_MODEL_API_KEY=" + e2e.TestKey,
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Setpgid: true}
	srv, err := e2e.Launch(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v\n%s", err, srv.Logs())
		}
	}()

	for _, service := range []string{"", "liveness"} {
		out, err := exec.Command(filepath.Join(bin, "agent-server"), "probe", "-service", service, srv.Addr).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "SERVING" {
			t.Errorf("probe -service %q: %v %s", service, err, out)
		}
	}

	system := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
		}
		return fakemodel.Turn{Text: "Done: " + strings.Join(e2e.LastToolResults(req), "")}
	})
	c, err := client.Dial(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	agent, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Send(ctx, "Say hello to Ming", client.Callbacks{})
	if err != nil {
		t.Fatalf("send over HTTPS from the bare root: %v\n%s", err, srv.Logs())
	}
	if !strings.Contains(res.Text, "Hello, Ming") {
		t.Errorf("result %q", res.Text)
	}

	other, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{
		BaseUrl: proto.String(stranger.URL), Model: proto.String("m"), ApiKey: proto.String("k"),
		RetryMaxElapsed: durationpb.New(time.Millisecond), // a certificate error is not worth retrying here
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Send(ctx, "hi", client.Callbacks{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a model whose CA was not given: %v, want a certificate error", err)
	}
}

// selfSigned returns a new self-signed certificate for 127.0.0.1.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stranger"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// unix1_3 is the device number of /dev/null (major 1, minor 3).
func unix1_3() uint64 { return 1<<8 | 3 }
