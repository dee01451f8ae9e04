package tests

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/pgtest"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// Canaries of the secrets test: values no other text holds.
const (
	canaryKey   = "sk-canary-key-7f3a9c2e51"
	canaryToken = "canary-token-4b8d0e6f27"
	// canaryPGDecoy is a PGPASSWORD that the store's URL makes unused.
	canaryPGDecoy = "pg-decoy-pw-0e93b6c1d8"
	// canaryOTLP is the OTLP exporter's API key (OTEL_EXPORTER_OTLP_HEADERS).
	canaryOTLP = "otlp-canary-key-2a7f5e90c3"
	// canaryVaultKey is the token vault's key (AGENTCORE_VAULT_KEY): the
	// base64 of 32 bytes.
	canaryVaultKey = "dmF1bHQtY2FuYXJ5LWtleS0wMTIzNDU2Nzg5YWJjZGU="
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
// -store or in PGPASSWORD, the OTLP exporter's header, the webhooks' signing secret, the token vault's key), with agent-server
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
		"OTEL_EXPORTER_OTLP_HEADERS=api-key=" + canaryOTLP, "AGENTCORE_WEBHOOK_SECRET=" + hookSecret, "AGENTCORE_VAULT_KEY=" + canaryVaultKey}
	extra = append(extra, "-webhook-allowed-hosts", "hooks.example.com")
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
	canaries := []string{canaryKey, canaryToken, canaryPGPassword, canaryPGDecoy, canaryOTLP, hookSecret, strings.TrimPrefix(hookSecret, "whsec_"), canaryVaultKey}
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
	// its password (the server started), the spans went with their key,
	// the vault has its key.
	if !strings.Contains(p.Logs(), "token vault") || strings.Contains(p.Logs(), "token vault off") {
		t.Errorf("the vault did not get its key: %.3000s", p.Logs())
	}
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
	for _, name := range []string{"AGENTCORE_MODEL_API_KEY", "AGENTCORE_AUTH_TOKEN", "PGPASSWORD", "OTEL_EXPORTER_OTLP_HEADERS", "AGENTCORE_WEBHOOK_SECRET", "AGENTCORE_VAULT_KEY"} {
		if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			t.Errorf("/proc/%d/environ still names %s", pid, name)
		}
	}
}
