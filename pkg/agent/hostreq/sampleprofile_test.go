package hostreq

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// TestSampleProfile: a call of a server whose definition names a sampling
// profile samples with that profile's config; a profile the run cannot
// use (unknown, or closed to the tenant) or a host without profiles is an
// error naming it, never the run's model.
func TestSampleProfile(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "s.mcp.json")
	if err := os.WriteFile(def, []byte(`{"transport": {"type": "stdio", "command": "/bin/true"}, "sampling": {"profile": "cheap"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	user := []*pluginv1.SampleMessage{{Role: "user", Content: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: "hi"}}}}}
	cheap := &llm.Config{Profile: "cheap", Model: "cheap-model"}
	for _, c := range []struct {
		name    string
		source  string
		profile func(string) (*llm.Config, error)
		model   string                 // the model that answered; "": an error
		code    pluginv1.HostErrorCode // the error's
		inErr   string
	}{
		{name: "the profile", source: "mcp:" + def, profile: func(n string) (*llm.Config, error) {
			if n != "cheap" {
				return nil, errors.New("asked for " + n)
			}
			return cheap, nil
		}, model: "cheap-model"},
		{name: "no sampling block: the run's", source: filepath.Join(dir, "plugin"), model: "m1"},
		{name: "closed to the tenant", source: "mcp:" + def, profile: func(string) (*llm.Config, error) {
			return nil, errors.New("config.profile: no profile cheap on this server (it has main)")
		}, code: pluginv1.HostErrorCode_HOST_ERROR_CODE_FAILED, inErr: "the server's sampling profile cheap: config.profile: no profile cheap"},
		{name: "no profiles here", source: "mcp:" + def, code: pluginv1.HostErrorCode_HOST_ERROR_CODE_UNSUPPORTED, inErr: "profile cheap"},
		{name: "definition gone", source: "mcp:" + filepath.Join(dir, "gone.mcp.json"), code: pluginv1.HostErrorCode_HOST_ERROR_CODE_FAILED, inErr: "reading the server's definition"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked string
			call := &Call{ToolCallID: "c1", ToolName: "t", Config: &llm.Config{Model: "m1"}, Source: c.source, Profile: c.profile,
				Chat: func(_ context.Context, req llm.Request) (*llm.Result, error) {
					asked = req.Config.Model
					return &llm.Result{Text: "ok"}, nil
				}}
			res, err := call.Handler().Sample(context.Background(), &pluginv1.SampleRequest{Messages: user, MaxTokens: 9})
			if c.model == "" {
				if hostCode(err) != c.code || !strings.Contains(err.Error(), c.inErr) || asked != "" {
					t.Fatalf("err %v (asked %q), want %v with %q and no model asked", err, asked, c.code, c.inErr)
				}
				return
			}
			if err != nil || asked != c.model || res.GetModel() != c.model {
				t.Fatalf("answer %v, %v: asked %q, want %q", res, err, asked, c.model)
			}
			if cheap.Provider.Params.MaxOutputTokens != nil {
				t.Error("the profile's config changed")
			}
		})
	}
}
