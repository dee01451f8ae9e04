package provider

import (
	"bytes"
	"encoding/json"
	"sort"
	"sync"

	"github.com/cloudwego/eino/schema"
)

// ExtraToolWire is the schema.ToolInfo.Extra key under which PrepareTool
// keeps a tool's wire forms (an unexported type: only this package reads it).
const ExtraToolWire = "agentcore.tool_wire"

// toolWire is a prepared tool's wire forms: its parameters as JSON Schema
// text, made once, and its entry in each protocol's tools list, made on the
// first request of that protocol.
type toolWire struct {
	params json.RawMessage // nil: the tool takes no parameters

	mu      sync.Mutex
	entries map[string]json.RawMessage // protocol → encoded entry
}

// PrepareTool readies t for being offered in many requests: its parameters
// are kept as JSON (params, compact JSON Schema text; nil derives them once
// from t.ParamsOneOf), and each protocol's encoding of the tool is kept in
// t.Extra the first time a request encodes it (see EncodeTools and
// ToolParameters). Call it before t is shared; t must not change after.
func PrepareTool(t *schema.ToolInfo, params json.RawMessage) error {
	if params == nil {
		var err error
		if params, err = toolParameters(t); err != nil {
			return err
		}
	}
	if t.Extra == nil {
		t.Extra = map[string]any{}
	}
	t.Extra[ExtraToolWire] = &toolWire{params: params}
	return nil
}

func wireOf(t *schema.ToolInfo) *toolWire {
	w, _ := t.Extra[ExtraToolWire].(*toolWire)
	return w
}

// Encoded is JSON text made once and sent as it is: MarshalBody writes a
// top-level value of this type without checking and compacting it again, as
// encoding/json would do on every request.
type Encoded []byte

// MarshalJSON returns e as it is.
func (e Encoded) MarshalJSON() ([]byte, error) { return e, nil }

// EncodeTools returns the tools list of a request: the JSON array of each
// tool's entry, made by entry from the tool and its parameters (nil when it
// takes none) and encoded with encoding/json. A tool prepared with
// PrepareTool keeps its entry under protocol, so that the next request
// offering it copies bytes instead of encoding anew.
func EncodeTools(protocol string, tools []*schema.ToolInfo, entry func(t *schema.ToolInfo, params json.RawMessage) any) (Encoded, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, t := range tools {
		if i > 0 {
			buf.WriteByte(',')
		}
		e, err := encodeTool(protocol, t, entry)
		if err != nil {
			return nil, err
		}
		buf.Write(e)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

func encodeTool(protocol string, t *schema.ToolInfo, entry func(*schema.ToolInfo, json.RawMessage) any) (json.RawMessage, error) {
	w := wireOf(t)
	if w != nil {
		w.mu.Lock()
		e, ok := w.entries[protocol]
		w.mu.Unlock()
		if ok {
			return e, nil
		}
	}
	params, err := ToolParameters(t)
	if err != nil {
		return nil, err
	}
	e, err := MarshalBody(entry(t, params))
	if err != nil {
		return nil, RequestError("tool %q: %w", t.Name, err)
	}
	if w != nil {
		w.mu.Lock()
		if w.entries == nil {
			w.entries = map[string]json.RawMessage{}
		}
		w.entries[protocol] = e
		w.mu.Unlock()
	}
	return e, nil
}

func hasEncoded(body map[string]any) bool {
	for _, v := range body {
		if _, ok := v.(Encoded); ok {
			return true
		}
	}
	return false
}

// marshalWithEncoded encodes body with its Encoded values copied in as they
// are, their keys last.
func marshalWithEncoded(body map[string]any) ([]byte, error) {
	rest := make(map[string]any, len(body))
	var keys []string
	for k, v := range body {
		if _, ok := v.(Encoded); ok {
			keys = append(keys, k)
		} else {
			rest[k] = v
		}
	}
	sort.Strings(keys)
	out, err := encode(rest)
	if err != nil {
		return nil, err
	}
	out = out[:len(out)-1] // the closing brace
	for _, k := range keys {
		if len(out) > 1 {
			out = append(out, ',')
		}
		name, err := encode(k)
		if err != nil {
			return nil, err
		}
		out = append(out, name...)
		out = append(out, ':')
		if v := body[k].(Encoded); len(v) > 0 {
			out = append(out, v...)
		} else {
			out = append(out, "null"...)
		}
	}
	return append(out, '}'), nil
}
