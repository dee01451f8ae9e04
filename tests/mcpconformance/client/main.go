// Command client is agentcore's MCP client as the official MCP conformance
// suite drives one (conformance client --command): the suite starts it with
// the URL of the scenario's server as its last argument. It serves that
// server as agent-server does (an MCP definition, `toolhost mcp-serve`
// through pkg/tool's host: the real client), lists its tools and calls
// each one with arguments made from its schema. A server's elicitation is
// accepted with no fields, so that the schema's defaults apply (SEP-1034);
// a sampling request is answered with a fixed text. For the auth/*
// scenarios the definition gets an "oauth" block (oauth.go) and the client,
// as toolhost's host, keeps the credential in memory and does the
// authorization step itself. AGENTCORE_TOOLHOST is the toolhost binary. It
// exits 1 when the server cannot be served.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/tool"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return fmt.Errorf("usage: client SERVER_URL")
	}
	url := os.Args[len(os.Args)-1]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "mcpconformance")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	def := map[string]any{"transport": map[string]any{"type": "http", "url": url}}
	oauth, err := oauthBlock(os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT"), dir)
	if err != nil {
		return err
	}
	if oauth != nil {
		def["oauth"] = oauth
	}
	data, _ := json.Marshal(def)
	path := filepath.Join(dir, "server.mcp.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	creds := &vault{path: path}
	host := &tool.HostHandler{
		Elicit: func(context.Context, *pluginv1.ElicitRequest) (*pluginv1.ElicitResponse, error) {
			return &pluginv1.ElicitResponse{Action: pluginv1.ElicitAction_ELICIT_ACTION_ACCEPT, ContentJson: "{}"}, nil
		},
		Sample: func(context.Context, *pluginv1.SampleRequest) (*pluginv1.SampleResponse, error) {
			return &pluginv1.SampleResponse{Role: "assistant", Model: "conformance", StopReason: "endTurn",
				Content: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: "sampled"}}}}, nil
		},
		Credential: creds.answer,
	}
	h := tool.NewHost(tool.Config{Kinds: []tool.Kind{mcp.Kind(os.Getenv("AGENTCORE_TOOLHOST"))}, ScanHost: host})
	defer h.Close()
	set, err := h.Scan(ctx, dir)
	if err != nil {
		return err
	}
	for _, name := range set.Names() {
		spec, _ := set.Lookup(name)
		res := set.Execute(ctx, name, exampleInput(spec.InputSchema), tool.Options{HostHandler: host})
		fmt.Printf("%s: error=%v %s\n", name, res.Error, tool.OutputText(res.Output))
	}
	return nil
}

// exampleInput is an input for a schema: each required property a value
// of its type.
func exampleInput(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	sort.Strings(s.Required)
	in := map[string]any{}
	for i, name := range s.Required {
		switch s.Properties[name].Type {
		case "number", "integer":
			in[name] = i + 1
		case "boolean":
			in[name] = true
		case "array":
			in[name] = []any{}
		case "object":
			in[name] = map[string]any{}
		default:
			in[name] = "test"
		}
	}
	b, _ := json.Marshal(in)
	return b
}
