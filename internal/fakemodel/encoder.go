package fakemodel

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// encoder speaks one protocol: it says which paths it serves and writes a
// Turn in that protocol's wire format.
//
// Adding a protocol is adding one file: it defines its encoder type and one
// exported method on protocols returning it, e.g.
//
//	func (protocols) Anthropic() encoder { return anthropicEncoder{} }
//
// Start collects every such method, so no list has to be edited and the
// package holds no registry variable.
type encoder interface {
	// protocol names the protocol, recorded as Request.Protocol.
	protocol() provider.Protocol
	// match reports whether the encoder serves path (without a leading /v1).
	match(path string) bool
	// streaming reports whether req asks for a stream.
	streaming(req *Request) bool
	// reply renders t as a whole (non-streaming) success body. A
	// t.StreamError is rendered as the protocol's error body.
	reply(req *Request, t Turn) ([]byte, error)
	// events renders t as the stream's events, the terminal event last; with
	// t.StreamError the stream ends with the protocol's error event(s)
	// instead of the terminal event.
	events(req *Request, t Turn) []Event
	// errorBody renders the body of an HTTP error with status and message.
	errorBody(status int, message string) []byte
}

// protocols carries one method per protocol file, each returning that
// protocol's encoder.
type protocols struct{}

// collectEncoders calls every method of protocols that returns an encoder.
func collectEncoders() ([]encoder, error) {
	v := reflect.ValueOf(protocols{})
	encoderType := reflect.TypeFor[encoder]()
	var out []encoder
	seen := map[provider.Protocol]bool{}
	for i := range v.NumMethod() {
		m := v.Method(i)
		if m.Type().NumIn() != 0 || m.Type().NumOut() != 1 || m.Type().Out(0) != encoderType {
			continue
		}
		enc, _ := m.Call(nil)[0].Interface().(encoder)
		if enc == nil {
			continue
		}
		if seen[enc.protocol()] {
			return nil, fmt.Errorf("fakemodel: two encoders for protocol %q", enc.protocol())
		}
		seen[enc.protocol()] = true
		out = append(out, enc)
	}
	return out, nil
}

// splitArgs cuts tool arguments into two deltas at a rune boundary, so that
// clients must join pieces.
func splitArgs(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	i := len(s) / 2
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	if i == 0 {
		return []string{s}
	}
	return []string{s[:i], s[i:]}
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// mustJSON marshals v, which encoders build from maps, slices, strings,
// numbers and booleans only, so it cannot fail.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
