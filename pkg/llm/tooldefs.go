package llm

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// emptyObjectSchema is the input schema of a tool that declares none.
const emptyObjectSchema = `{"type":"object","properties":{}}`

// ToolDef is one tool's definition converted once into every form a model
// request needs: the eino definition (its input schema kept as JSON text and
// each protocol's encoding of it kept on first use) and the parsed schema the
// text tool protocol reads. A tool's definition does not change, so keep its
// ToolDef with the tool and build ToolSets from it. Immutable; safe for
// concurrent use.
type ToolDef struct {
	tool Tool
	info *schema.ToolInfo
}

// NewToolDef converts a tool's definition: its name, description and input
// JSON Schema as JSON text (empty means an object with no declared
// properties). The schema is sent to models as it is given, compacted.
func NewToolDef(name, description string, inputSchema json.RawMessage) (*ToolDef, error) {
	return newToolDef(name, description, inputSchema, nil)
}

// newToolDef converts a definition; parsed, when not nil, is inputSchema
// already parsed.
func newToolDef(name, description string, inputSchema json.RawMessage, parsed map[string]any) (*ToolDef, error) {
	if name == "" {
		return nil, &Error{Kind: KindRequest, Code: "invalid_tool", Message: "a tool has no name"}
	}
	bad := func(err error) error {
		return &Error{Kind: KindRequest, Code: "invalid_tool", Message: fmt.Sprintf("tool %q: the input schema cannot be used: %v", name, err), Err: err}
	}
	if len(bytes.TrimSpace(inputSchema)) == 0 {
		inputSchema = json.RawMessage(emptyObjectSchema)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, inputSchema); err != nil {
		return nil, bad(err)
	}
	if parsed == nil {
		if err := json.Unmarshal(compact.Bytes(), &parsed); err != nil {
			return nil, bad(err)
		}
		if parsed == nil {
			return nil, bad(fmt.Errorf("it is null, not an object"))
		}
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(compact.Bytes(), &js); err != nil {
		return nil, bad(err)
	}
	info := &schema.ToolInfo{Name: name, Desc: description, ParamsOneOf: schema.NewParamsOneOfByJSONSchema(&js)}
	if err := provider.PrepareTool(info, compact.Bytes()); err != nil {
		return nil, bad(err)
	}
	return &ToolDef{tool: Tool{Name: name, Description: description, Schema: parsed}, info: info}, nil
}

// Tool returns the tool as the text tool protocol reads it. Its Schema must
// not be changed.
func (d *ToolDef) Tool() Tool { return d.tool }

// ToolSet is the tools a request offers, each converted once (see ToolDef):
// building one copies pointers. Pass the same ToolSet with every request of
// a run. Immutable; safe for concurrent use.
type ToolSet struct {
	tools []Tool
	infos []*schema.ToolInfo
}

// NewToolSet returns the set of defs, in their order.
func NewToolSet(defs ...*ToolDef) *ToolSet {
	s := &ToolSet{tools: make([]Tool, len(defs)), infos: make([]*schema.ToolInfo, len(defs))}
	for i, d := range defs {
		s.tools[i], s.infos[i] = d.tool, d.info
	}
	return s
}

// Len returns the number of tools.
func (s *ToolSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}

// toolSetOf converts tools given as Request.Tools.
func toolSetOf(tools []Tool) (*ToolSet, error) {
	defs := make([]*ToolDef, 0, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, &Error{Kind: KindRequest, Code: "invalid_tool", Message: fmt.Sprintf("tool %d has no name", i)}
		}
		var raw json.RawMessage
		if t.Schema != nil {
			var err error
			if raw, err = json.Marshal(t.Schema); err != nil {
				return nil, &Error{Kind: KindRequest, Code: "invalid_tool", Message: fmt.Sprintf("tool %q: the input schema cannot be used: %v", t.Name, err), Err: err}
			}
		}
		d, err := newToolDef(t.Name, t.Description, raw, t.Schema)
		if err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	return NewToolSet(defs...), nil
}
