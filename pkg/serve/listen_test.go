package serve

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentcore/agentcore/pkg/config"
)

func TestExposure(t *testing.T) {
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 50051} }
	tests := []struct {
		name       string
		addr       net.Addr
		cfg        config.Config
		auth       bool
		mode, fail string
	}{
		{"loopback", tcp("127.0.0.1"), config.Config{}, false, "on", ""},
		{"loopback v6", tcp("::1"), config.Config{}, false, "on", ""},
		{"unix socket", &net.UnixAddr{Name: "/tmp/a.sock", Net: "unix"}, config.Config{}, false, "on", ""},
		{"every interface, nothing", tcp("0.0.0.0"), config.Config{}, false, "", "-auth-tokens-file"},
		{"a LAN address, nothing", tcp("10.1.2.3"), config.Config{}, false, "", "-tls-cert"},
		{"every interface, a token", tcp("0.0.0.0"), config.Config{}, true, "auth", ""},
		{"every interface, TLS", tcp("0.0.0.0"), config.Config{TLS: config.TLS{CertFile: "c", KeyFile: "k"}}, false, "auth", ""},
		{"every interface, -insecure", tcp("0.0.0.0"), config.Config{Insecure: true}, false, "auth", ""},
		{"reflection set", tcp("0.0.0.0"), config.Config{Reflection: "off"}, true, "off", ""},
		{"reflection on loopback set", tcp("127.0.0.1"), config.Config{Reflection: "auth"}, true, "auth", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Listen = tc.addr.String()
			mode, err := exposure(&tc.cfg, tc.addr, tc.auth)
			if tc.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fail) {
					t.Fatalf("exposure = %q, %v; want an error naming %s", mode, err, tc.fail)
				}
				return
			}
			if err != nil || mode != tc.mode {
				t.Fatalf("exposure = %q, %v; want %q", mode, err, tc.mode)
			}
		})
	}
}

func TestSocketOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a socket to another user needs root")
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	lis, err := listen("unix:"+sock, "65534:65534")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket owned by %d:%d mode %v, want 65534:65534 0600", st.Uid, st.Gid, fi.Mode().Perm())
	}
}
