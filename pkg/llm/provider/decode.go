package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bytedance/sonic"
	sonicdec "github.com/bytedance/sonic/decoder"
)

// Decode decodes a response body, stream chunk or event into v the way every
// adapter reads the wire: unknown fields are ignored whatever their JSON
// type, and a known field whose JSON type is not the one v declares is left
// empty (its zero value; a pointer to a zero value). Only text that is not JSON is an
// error. Adapters decode an event's type first and then, into a struct of
// that type's fields, only what the type needs; Decode is both steps.
//
// It uses sonic's encoding/json-compatible configuration (strings copied
// out of data) at about three times encoding/json's speed: decoding is most
// of the cost of reading a stream. A type mismatch, rare on real streams,
// is decoded again by encoding/json, whose rule for it (skip the field, go
// on) is the documented one.
func Decode(data []byte, v any) error {
	err := sonic.ConfigStd.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var mismatch *sonicdec.MismatchTypeError
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &mismatch) && !errors.As(err, &typeErr) {
		return err
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
	}
	err = json.Unmarshal(data, v)
	if errors.As(err, &typeErr) {
		return nil
	}
	return err
}

// Type reads the "type" member of a JSON object: the first decoding step of
// an event or item. It is "" when data has none or it is not a string.
func Type(data []byte) (string, error) {
	var t struct {
		Type string `json:"type"`
	}
	err := Decode(data, &t)
	return t.Type, err
}

// JSONText is a member that should be JSON text in a string (tool call
// arguments) but that some servers send as the JSON value itself: a string
// is its content, any other value its compact JSON text, null or absent "".
type JSONText string

// UnmarshalJSON reads either shape; it never fails on a valid JSON value.
func (t *JSONText) UnmarshalJSON(b []byte) error {
	b = trimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*t = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = JSONText(s)
	default:
		c, _ := compactJSON(b)
		*t = JSONText(c)
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func compactJSON(b []byte) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// maxEventPrefix bounds how much of an unreadable event's data its error
// quotes.
const maxEventPrefix = 24

// UnreadableEvent is the unknown error for a stream event whose data is not
// JSON. Its message names the event: its number in the stream (1 for the
// first), its SSE event name when it had one, and the first bytes of its
// data, quoted. That tells a proxy's HTML page, a gateway's plain-text
// error or a cut event apart in a log, and is too short to repeat a
// message (or a key a broken gateway echoes) whole. what starts the message
// ("anthropic: ", or "" where the package's messages name no protocol).
func UnreadableEvent(what string, n int, name string, data []byte, err error) *Error {
	var b strings.Builder
	b.WriteString(what)
	b.WriteString("stream event ")
	b.WriteString(strconv.Itoa(n))
	if name != "" {
		b.WriteString(" (")
		b.WriteString(strconv.Quote(name))
		b.WriteString(")")
	}
	b.WriteString(" is not JSON; its data begins ")
	end := min(len(data), maxEventPrefix)
	// Cut at a rune's start (invalid bytes are quoted as escapes anyway).
	for k := 0; k < utf8.UTFMax-1 && end < len(data) && end > 0 && !utf8.RuneStart(data[end]); k++ {
		end--
	}
	b.WriteString(strconv.Quote(string(data[:end])))
	if end < len(data) {
		b.WriteString("…")
	}
	return Unknown(b.String(), err)
}
