package provider

import (
	"bytes"
	"encoding/json"
	"slices"
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

// EncodeTools returns the tools list of a request: each tool's entry, made
// by entry from the tool and its parameters (nil when it takes none) and
// encoded with encoding/json. A tool prepared with PrepareTool keeps its
// entry under protocol, so that the next request offering it copies bytes
// instead of encoding anew.
func EncodeTools(protocol string, tools []*schema.ToolInfo, entry func(t *schema.ToolInfo, params json.RawMessage) any) (ToolList, error) {
	entries := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		e, err := encodeTool(protocol, t, entry)
		if err != nil {
			return ToolList{}, err
		}
		entries[i] = e
	}
	return ToolList{Entries: entries}, nil
}

// ToolList is a tools list whose entries are encoded already: a JSON array
// of them, inside Prefix and Suffix when a protocol wraps it (Gemini's
// [{"functionDeclarations": ...}]). MarshalBody writes a top-level ToolList
// entry by entry into the body, where a joined list would be one more copy
// of every schema per request.
type ToolList struct {
	Prefix, Suffix string
	Entries        []json.RawMessage
}

// MarshalJSON returns the list as one JSON text.
func (l ToolList) MarshalJSON() ([]byte, error) { return l.appendTo(make([]byte, 0, l.size())), nil }

// size is the length of the list's JSON text.
func (l ToolList) size() int {
	n := len(l.Prefix) + len(l.Suffix) + 2 + max(len(l.Entries)-1, 0) // the brackets and commas
	for _, e := range l.Entries {
		n += len(e)
	}
	return n
}

func (l ToolList) appendTo(b []byte) []byte {
	b = append(b, l.Prefix...)
	b = append(b, '[')
	for i, e := range l.Entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	b = append(b, ']')
	return append(b, l.Suffix...)
}

// verbatim is a body value encoded already, which marshalMap writes as it is.
type verbatim interface {
	size() int
	appendTo([]byte) []byte
}

func (e Encoded) size() int { return max(len(e), len("null")) }

func (e Encoded) appendTo(b []byte) []byte {
	if len(e) == 0 {
		return append(b, "null"...)
	}
	return append(b, e...)
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

// bodyKeys is how many top-level keys a body holds without a slice of its own.
const bodyKeys = 24

// marshalMap encodes a map body as encoding/json does (keys in sorted
// order, then values compact without HTML escaping), its Encoded and
// ToolList values copied in as they are, their keys last. It writes the
// object itself and encodes each key and value into the same buffer, where
// encoding/json's map encoder would copy every key and value through
// reflection and sort them in a slice of its own.
func marshalMap(body map[string]any) ([]byte, error) {
	var kbuf, ebuf [bodyKeys]string
	keys, encoded := kbuf[:0], ebuf[:0]
	size := 512 // room for the rest of a short request: one allocation, not one per doubling
	for k, v := range body {
		if e, ok := v.(verbatim); ok {
			encoded = append(encoded, k)
			size += len(k) + e.size() + 4
		} else {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	slices.Sort(encoded)
	var buf bytes.Buffer
	buf.Grow(size)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// value writes v as encoding/json does, without the Encoder's newline.
	value := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
		return nil
	}
	key := func(k string) error {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		if plainKey(k) {
			buf.WriteByte('"')
			buf.WriteString(k)
			buf.WriteByte('"')
		} else if err := value(k); err != nil {
			return err
		}
		buf.WriteByte(':')
		return nil
	}
	buf.WriteByte('{')
	for _, k := range keys {
		if err := key(k); err != nil {
			return nil, err
		}
		if err := value(body[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range encoded {
		if err := key(k); err != nil {
			return nil, err
		}
		buf.Write(body[k].(verbatim).appendTo(buf.AvailableBuffer()))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// plainKey reports whether k is its own JSON string body: letters, digits,
// '_', '-' and '.', nothing encoding/json would escape.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
