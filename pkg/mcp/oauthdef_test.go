package mcp

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseOAuth(t *testing.T) {
	dir := t.TempDir()
	const http = `"transport": {"type": "http", "url": "https://example.com/mcp"}`
	cases := []struct {
		name, data string
		want       *OAuth
	}{
		{"empty: authorization code, dynamic registration", `{` + http + `, "oauth": {}}`,
			&OAuth{Grant: GrantAuthorizationCode, DynamicRegistration: true}},
		{"pre-registered with a secret file", `{` + http + `, "oauth": {"clientId": "app", "clientSecret": {"file": "secret.txt"},
			"dynamicRegistration": false, "scopes": ["read", "write"], "tokenEndpointAuthMethod": "client_secret_post",
			"redirectUrl": "https://agents.example/v1/oauth/callback"}}`,
			&OAuth{Grant: GrantAuthorizationCode, ClientID: "app", ClientSecret: &SecretSource{File: filepath.Join(dir, "secret.txt")},
				Scopes: []string{"read", "write"}, TokenEndpointAuthMethod: AuthClientSecretPost, RedirectURL: "https://agents.example/v1/oauth/callback"}},
		{"client metadata document", `{` + http + `, "oauth": {"clientMetadataUrl": "https://app.example/client.json"}}`,
			&OAuth{Grant: GrantAuthorizationCode, ClientMetadataURL: "https://app.example/client.json", DynamicRegistration: true}},
		{"client credentials with a secret", `{` + http + `, "oauth": {"grant": "client_credentials", "clientId": "svc", "clientSecret": {"env": "SVC_SECRET"}}}`,
			&OAuth{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: &SecretSource{Env: "SVC_SECRET"}}},
		{"client credentials with a key", `{` + http + `, "oauth": {"grant": "client_credentials", "clientId": "svc", "privateKey": {"file": "/keys/svc.pem"}, "signingAlgorithm": "ES256"}}`,
			&OAuth{Grant: GrantClientCredentials, ClientID: "svc", PrivateKey: &SecretSource{File: "/keys/svc.pem"}, SigningAlgorithm: "ES256"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			def, err := ParseDefinition(filepath.Join(dir, "s.mcp.json"), []byte(c.data))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(def.OAuth, c.want) {
				t.Errorf("got  %+v\nwant %+v", def.OAuth, c.want)
			}
		})
	}
}

func TestParseOAuthErrors(t *testing.T) {
	const http = `"transport": {"type": "http", "url": "https://example.com/mcp"}`
	const canary = "s3cr3t-canary"
	cc := func(rest string) string {
		return `{` + http + `, "oauth": {"grant": "client_credentials", "clientId": "svc"` + rest + `}}`
	}
	cases := []struct{ name, data, want string }{
		{"stdio", `{"transport": {"type": "stdio", "command": "x"}, "oauth": {}}`, "oauth: only an http (streamable) server"},
		{"sse", `{"transport": {"type": "sse", "url": "http://x/sse"}, "oauth": {}}`, "oauth: only an http (streamable) server"},
		{"reuse", `{` + http + `, "reuse": true, "oauth": {}}`, "reuse: cannot be combined with oauth"},
		{"not an object", `{` + http + `, "oauth": true}`, "oauth: want an object"},
		{"unknown field", `{` + http + `, "oauth": {"clientID": "x"}}`, "oauth.clientID: unknown field"},
		{"inline secret is refused and not echoed", `{` + http + `, "oauth": {"clientId": "a", "clientSecret": "` + canary + `"}}`, "oauth.clientSecret: a secret is never written in the file"},
		{"secret with both sources", `{` + http + `, "oauth": {"clientId": "a", "clientSecret": {"env": "A", "file": "b"}}}`, `want exactly one of "env"`},
		{"secret without a client", `{` + http + `, "oauth": {"clientSecret": {"env": "A"}}}`, "oauth.clientSecret: needs clientId"},
		{"bad grant", `{` + http + `, "oauth": {"grant": "password"}}`, `oauth.grant: "password" is not a grant`},
		{"bad auth method", `{` + http + `, "oauth": {"tokenEndpointAuthMethod": "tls_client_auth"}}`, `oauth.tokenEndpointAuthMethod: "tls_client_auth" is not one of`},
		{"http client metadata url", `{` + http + `, "oauth": {"clientMetadataUrl": "http://app.example/c.json"}}`, "oauth.clientMetadataUrl: want an https URL with a path"},
		{"root client metadata url", `{` + http + `, "oauth": {"clientMetadataUrl": "https://app.example/"}}`, "oauth.clientMetadataUrl: want an https URL with a path"},
		{"no registration", `{` + http + `, "oauth": {"dynamicRegistration": false}}`, "no way to register the client"},
		{"bad scope", `{` + http + `, "oauth": {"scopes": ["a b"]}}`, "oauth.scopes[0]: not a valid scope"},
		{"relative redirect", `{` + http + `, "oauth": {"redirectUrl": "/cb"}}`, "oauth.redirectUrl: want an absolute URL"},
		{"key for authorization code", `{` + http + `, "oauth": {"clientId": "a", "privateKey": {"file": "k.pem"}}}`, "oauth.privateKey: only the client_credentials grant"},
		{"client credentials without a client", `{` + http + `, "oauth": {"grant": "client_credentials", "clientSecret": {"env": "A"}}}`, "oauth.clientSecret: needs clientId"},
		{"client credentials without a secret", cc(``), "needs exactly one of clientSecret or privateKey"},
		{"client credentials with both", cc(`, "clientSecret": {"env": "A"}, "privateKey": {"env": "B"}`), "needs exactly one of clientSecret or privateKey"},
		{"client credentials redirect", cc(`, "clientSecret": {"env": "A"}, "redirectUrl": "https://x/cb"`), "oauth.redirectUrl: not used by the client_credentials grant"},
		{"client credentials key with basic", cc(`, "privateKey": {"env": "B"}, "tokenEndpointAuthMethod": "client_secret_basic"`), "does not sign with privateKey"},
		{"client credentials secret with jwt", cc(`, "clientSecret": {"env": "A"}, "tokenEndpointAuthMethod": "private_key_jwt"`), "use client_secret_basic or client_secret_post"},
		{"bad algorithm", cc(`, "privateKey": {"env": "B"}, "signingAlgorithm": "HS256"`), `oauth.signingAlgorithm: "HS256" is not one of`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.mcp.json")
			_, err := ParseDefinition(path, []byte(c.data))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to name %s and hold %q", err, path, c.want)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q echoes the secret", err)
			}
		})
	}
}

func TestSecretSourceRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	writeFile(t, file, "from-file\n")
	t.Setenv("MCP_TEST_SECRET", "from-env")
	cases := []struct {
		src     *SecretSource
		want    string
		wantErr string
	}{
		{&SecretSource{File: file}, "from-file", ""},
		{&SecretSource{Env: "MCP_TEST_SECRET"}, "from-env", ""},
		{&SecretSource{Env: "MCP_TEST_UNSET_SECRET"}, "", "environment variable MCP_TEST_UNSET_SECRET is not set"},
		{&SecretSource{File: filepath.Join(dir, "gone")}, "", "no such file"},
		{nil, "", ""},
	}
	for _, c := range cases {
		got, err := c.src.Read()
		if got != c.want || (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("Read(%v) = %q, %v; want %q, %q", c.src, got, err, c.want, c.wantErr)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
