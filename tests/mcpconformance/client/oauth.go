package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/tool"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// The suite's authorization servers redirect at once, with the code, to
// this redirect URL, which nothing serves: the client reads the redirect.
const (
	redirectURL = "http://localhost:3000/callback"
	// cimdURL is the client ID metadata document URL the suite expects.
	cimdURL = "https://conformance-test.local/client-metadata.json"
)

// oauthBlock is the definition's "oauth" block for a scenario: none
// outside auth/*; the client_credentials grant for the client-credentials
// scenarios; else the authorization code grant with every registration
// (client metadata document, the context's pre-registered client,
// dynamic). Secrets the context gives are written to files in dir, which
// the block names, as an operator would.
func oauthBlock(scenario, contextJSON, dir string) (map[string]any, error) {
	if !strings.HasPrefix(scenario, "auth/") {
		return nil, nil
	}
	var cx map[string]any
	if contextJSON != "" {
		if err := json.Unmarshal([]byte(contextJSON), &cx); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	str := func(k string) string { s, _ := cx[k].(string); return s }
	secretFile := func(name, value string) (map[string]any, error) {
		path := filepath.Join(dir, name)
		return map[string]any{"file": path}, os.WriteFile(path, []byte(value), 0o600)
	}
	var err error
	if strings.HasPrefix(scenario, "auth/client-credentials") {
		o := map[string]any{"grant": "client_credentials", "clientId": str("client_id")}
		if pem := str("private_key_pem"); pem != "" {
			o["privateKey"], err = secretFile("client.pem", pem)
			if alg := str("signing_algorithm"); alg != "" {
				o["signingAlgorithm"] = alg
			}
		} else {
			o["clientSecret"], err = secretFile("client-secret", str("client_secret"))
		}
		return o, err
	}
	o := map[string]any{"redirectUrl": redirectURL, "clientMetadataUrl": cimdURL}
	if id := str("client_id"); id != "" {
		o["clientId"] = id
		if secret := str("client_secret"); secret != "" {
			o["clientSecret"], err = secretFile("client-secret", secret)
		}
	}
	return o, err
}

// vault is the credential store of this host: in memory, for the one
// server of the definition at path.
type vault struct {
	path string

	mu    sync.Mutex
	saved *pluginv1.Credential
}

// answer is the HostHandler's Credential func.
func (v *vault) answer(ctx context.Context, source string, req *pluginv1.CredentialRequest) (*pluginv1.CredentialResponse, error) {
	if source != "mcp:"+v.path {
		return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED, Message: "no credential for " + source}
	}
	switch req.GetOp() {
	case pluginv1.CredentialOp_CREDENTIAL_OP_LOAD:
		return v.load()
	case pluginv1.CredentialOp_CREDENTIAL_OP_SAVE:
		v.mu.Lock()
		v.saved = proto.CloneOf(req.GetCredential())
		v.mu.Unlock()
		return &pluginv1.CredentialResponse{}, nil
	case pluginv1.CredentialOp_CREDENTIAL_OP_AUTHORIZE:
		return authorize(ctx, req.GetAuthorizationUrl())
	default:
		return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_INVALID, Message: "unknown credential op"}
	}
}

// load is what was saved, with the definition's client secret or key.
func (v *vault) load() (*pluginv1.CredentialResponse, error) {
	def, err := mcp.ReadDefinition(v.path)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	c := proto.CloneOf(v.saved)
	v.mu.Unlock()
	if c == nil {
		c = &pluginv1.Credential{}
	}
	if o := def.OAuth; o != nil {
		if c.ClientSecret == "" && o.ClientSecret != nil {
			if c.ClientSecret, err = o.ClientSecret.Read(); err != nil {
				return nil, err
			}
		}
		if o.PrivateKey != nil {
			if c.PrivateKeyPem, err = o.PrivateKey.Read(); err != nil {
				return nil, err
			}
		}
	}
	return &pluginv1.CredentialResponse{Credential: c}, nil
}

// authorize is the person's part, done headlessly: the suite's
// authorization server redirects at once; the redirect holds the code,
// state and iss.
func authorize(ctx context.Context, authURL string) (*pluginv1.CredentialResponse, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.String() == "" {
		return nil, errors.New("the authorization server did not redirect")
	}
	q := loc.Query()
	return &pluginv1.CredentialResponse{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
