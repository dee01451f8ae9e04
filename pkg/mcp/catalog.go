package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/durationpb"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// ReadResourceTool is the name (after the prefix) of the one tool that reads the server's resources.
const ReadResourceTool = "read_resource"

// kind says which MCP primitive a tool stands for.
type kind int

const (
	kindTool kind = iota
	kindPrompt
	kindResource
)

func (k kind) String() string {
	switch k {
	case kindPrompt:
		return "prompt"
	case kindResource:
		return "resources"
	default:
		return "tool"
	}
}

// entry is one tool the server yields: what it calls on the server, and its spec.
type entry struct {
	kind kind
	// target is the MCP tool or prompt name (empty for read_resource).
	target string
	spec   *pluginv1.ToolSpec
}

// catalog is everything a server yields, by tool name, in discovery order.
type catalog struct {
	byName map[string]entry
	order  []string
}

func (c *catalog) add(e entry) error {
	if c.byName == nil {
		c.byName = make(map[string]entry)
	}
	if prev, ok := c.byName[e.spec.Name]; ok {
		return fmt.Errorf("%s %q and %s %q both become the tool %q", prev.kind, prev.target, e.kind, e.target, e.spec.Name)
	}
	c.byName[e.spec.Name] = e
	c.order = append(c.order, e.spec.Name)
	return nil
}

// specs returns the tool specs in discovery order.
func (c *catalog) specs() []*pluginv1.ToolSpec {
	out := make([]*pluginv1.ToolSpec, len(c.order))
	for i, name := range c.order {
		out[i] = c.byName[name].spec
	}
	return out
}

// list asks the server for what it declares, and maps it to tools.
func list(ctx context.Context, session *sdk.ClientSession, def *Definition) (*catalog, error) {
	caps := &sdk.ServerCapabilities{}
	if res := session.InitializeResult(); res != nil && res.Capabilities != nil {
		caps = res.Capabilities
	}
	cat := &catalog{}
	if caps.Tools != nil {
		if err := addAll(cat, "tools", session.Tools(ctx, nil), func(t *sdk.Tool) (entry, error) { return toolEntry(def, t) }); err != nil {
			return nil, err
		}
	}
	if caps.Prompts != nil {
		if err := addAll(cat, "prompts", session.Prompts(ctx, nil), func(p *sdk.Prompt) (entry, error) { return promptEntry(def, p) }); err != nil {
			return nil, err
		}
	}
	if caps.Resources != nil {
		e, ok, err := resourceEntry(ctx, session, def)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := cat.add(e); err != nil {
				return nil, err
			}
		}
	}
	return cat, nil
}

// addAll adds an entry for each listed item.
func addAll[T any](cat *catalog, what string, items iter.Seq2[*T, error], toEntry func(*T) (entry, error)) error {
	for item, err := range items {
		if err != nil {
			return fmt.Errorf("listing %s: %w", what, err)
		}
		e, err := toEntry(item)
		if err == nil {
			err = cat.add(e)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func toolEntry(def *Definition, tool *sdk.Tool) (entry, error) {
	schema := []byte(`{"type":"object"}`)
	if tool.InputSchema != nil {
		var err error
		if schema, err = json.Marshal(tool.InputSchema); err != nil {
			return entry{}, fmt.Errorf("tool %q: input schema: %w", tool.Name, err)
		}
	}
	spec := newSpec(def, tool.Name, tool.Description, string(schema))
	if a := tool.Annotations; a != nil {
		spec.Hints = &pluginv1.ToolHints{ReadOnly: a.ReadOnlyHint, Idempotent: a.ReadOnlyHint || a.IdempotentHint}
	}
	return entry{kind: kindTool, target: tool.Name, spec: spec}, nil
}

func promptEntry(def *Definition, prompt *sdk.Prompt) (entry, error) {
	props := make(map[string]any, len(prompt.Arguments))
	required := []string{}
	for _, arg := range prompt.Arguments {
		prop := map[string]any{"type": "string"}
		if arg.Description != "" {
			prop["description"] = arg.Description
		}
		if arg.Title != "" {
			prop["title"] = arg.Title
		}
		props[arg.Name] = prop
		if arg.Required {
			required = append(required, arg.Name)
		}
	}
	schema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		schema["required"] = required
	}
	data, err := json.Marshal(schema)
	if err != nil {
		return entry{}, fmt.Errorf("prompt %q: %w", prompt.Name, err)
	}
	desc := prompt.Description
	if desc == "" {
		desc = fmt.Sprintf("Returns the prompt %q.", prompt.Name)
	}
	spec := newSpec(def, prompt.Name, desc, string(data))
	spec.Hints = &pluginv1.ToolHints{ReadOnly: true, Idempotent: true}
	return entry{kind: kindPrompt, target: prompt.Name, spec: spec}, nil
}

// resourceEntry builds the read_resource tool, whose description lists what
// can be read; ok is false when the server has no resources and no templates.
func resourceEntry(ctx context.Context, session *sdk.ClientSession, def *Definition) (e entry, ok bool, err error) {
	var lines []string
	for r, err := range session.Resources(ctx, nil) {
		if err != nil {
			return entry{}, false, fmt.Errorf("listing resources: %w", err)
		}
		lines = append(lines, "- "+describeResource(r.URI, r.Name, r.Title, r.Description, r.MIMEType))
	}
	var templates []string
	for t, err := range session.ResourceTemplates(ctx, nil) {
		if err != nil {
			if isMethodNotFound(err) { // templates are optional
				break
			}
			return entry{}, false, fmt.Errorf("listing resource templates: %w", err)
		}
		templates = append(templates, "- "+describeResource(t.URITemplate, t.Name, t.Title, t.Description, t.MIMEType))
	}
	if len(lines) == 0 && len(templates) == 0 {
		return entry{}, false, nil
	}
	var desc strings.Builder
	desc.WriteString("Reads a resource of this MCP server by its URI.")
	if len(lines) > 0 {
		desc.WriteString("\nAvailable resources:\n")
		desc.WriteString(strings.Join(lines, "\n"))
	}
	if len(templates) > 0 {
		desc.WriteString("\nURI templates (fill in each {placeholder}):\n")
		desc.WriteString(strings.Join(templates, "\n"))
	}
	const schema = `{"type":"object","properties":{"uri":{"type":"string","description":"The URI of the resource to read."}},"required":["uri"]}`
	spec := newSpec(def, ReadResourceTool, desc.String(), schema)
	spec.Hints = &pluginv1.ToolHints{ReadOnly: true, Idempotent: true}
	return entry{kind: kindResource, spec: spec}, true, nil
}

// describeResource is one line of the read_resource description.
func describeResource(uri, name, title, description, mimeType string) string {
	var b strings.Builder
	b.WriteString(uri)
	label := title
	if label == "" && name != uri {
		label = name
	}
	if label != "" {
		b.WriteString(" (" + label + ")")
	}
	if description != "" {
		b.WriteString(": " + oneLine(description))
	}
	if mimeType != "" {
		b.WriteString(" [" + mimeType + "]")
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func newSpec(def *Definition, name, description, schema string) *pluginv1.ToolSpec {
	spec := &pluginv1.ToolSpec{
		Name:            toolName(def.Prefix, name),
		Description:     description,
		InputSchemaJson: schema,
	}
	if def.CallTimeout > 0 {
		spec.Timeout = durationpb.New(def.CallTimeout)
	}
	return spec
}

// toolName is prefix+name made a valid plugin tool name: characters outside
// [a-zA-Z0-9_-] become _, and it is cut to 64 bytes.
func toolName(prefix, name string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range name {
		if !nameRune(r) {
			r = '_'
		}
		b.WriteRune(r)
	}
	out := b.String()
	if out == "" {
		out = "_"
	}
	if len(out) > maxNameLen {
		out = out[:maxNameLen]
	}
	return out
}

func isMethodNotFound(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == jsonrpc.CodeMethodNotFound
}

// names lists the tool names of a catalog, sorted, for "unknown tool" messages.
func (c *catalog) names() []string {
	out := slices.Clone(c.order)
	slices.Sort(out)
	return out
}
