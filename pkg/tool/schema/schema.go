// Package schema checks tool specs and call inputs: a tool's name, its
// input schema compiled, and each call's input parsed and validated, with
// errors written for the model to read.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ValidName is what a model accepts as a tool name.
var ValidName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Compile checks a tool's name and compiles its input schema.
func Compile(name string, inputSchema json.RawMessage) (*jsonschema.Schema, error) {
	if !ValidName.MatchString(name) {
		return nil, fmt.Errorf("tool name %q must match %s", name, ValidName)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(inputSchema))
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema is not JSON: %w", name, err)
	}
	root, ok := doc.(map[string]any)
	if !ok || root["type"] != "object" {
		return nil, fmt.Errorf(`tool %q: input schema must be an object schema ("type": "object" at its root)`, name)
	}
	c := jsonschema.NewCompiler()
	url := "urn:agentcore:tool:" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", name, err)
	}
	return sch, nil
}

// Check parses and validates a call's input. Empty input means {}. It
// returns the normalised input, or an error message written for the model.
// decoders, if not nil, is the pool of decoders to parse it with (see
// Decoders).
func Check(name string, sch *jsonschema.Schema, schemaJSON, input json.RawMessage, decoders *Decoders) (json.RawMessage, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	v, err := decoders.decode(input)
	if err != nil {
		return nil, fmt.Errorf("invalid input for tool %q: the arguments are not valid JSON (%v). Call it again with a JSON object matching its input schema: %s", name, err, schemaJSON)
	}
	if sch == nil {
		return input, nil
	}
	if err := sch.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		msg := err.Error()
		if errors.As(err, &ve) {
			msg = describe(ve)
		}
		return nil, fmt.Errorf("invalid input for tool %q:\n%s\nCall it again with input matching its schema: %s", name, msg, schemaJSON)
	}
	return input, nil
}

// Decoders keeps json.Decoders, with their buffers, for the inputs of
// one tool's calls. The zero value is ready; a nil pool makes a decoder
// for each input.
type Decoders struct{ p sync.Pool }

// decode parses input as jsonschema.UnmarshalJSON does (one JSON value,
// numbers as json.Number, nothing after it), with a decoder taken from
// the pool rather than made for each call. Input the pooled decoder does
// not take cleanly (an error of any kind), and large input, go to
// jsonschema.UnmarshalJSON itself, so that values, verdicts and error
// messages are the library's.
func (dp *Decoders) decode(input []byte) (any, error) {
	if dp == nil || len(input) > maxPooledInput {
		return jsonschema.UnmarshalJSON(bytes.NewReader(input))
	}
	d, _ := dp.p.Get().(*inputDecoder)
	if d == nil {
		d = &inputDecoder{}
		d.dec = json.NewDecoder(&d.src)
		d.dec.UseNumber()
	}
	d.src.b = input
	var v any
	err := d.dec.Decode(&v)
	if err == nil {
		_, err = d.dec.Token()
	}
	if err != io.EOF {
		// Not one clean value: the decoder may hold a broken stream's state,
		// so it is dropped, and the library says what is wrong.
		return jsonschema.UnmarshalJSON(bytes.NewReader(input))
	}
	d.src.b = nil
	dp.p.Put(d)
	return v, nil
}

// maxPooledInput bounds the input a pooled decoder reads, so that its
// buffer, kept in the pool, stays small.
const maxPooledInput = 16 << 10

// inputDecoder is a json.Decoder that reads what src is given: each
// decode hands it one input, read to its end.
type inputDecoder struct {
	src bytesSource
	dec *json.Decoder
}

// bytesSource reads b, then says io.EOF until it is given more.
type bytesSource struct{ b []byte }

func (s *bytesSource) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// describe lists the leaf errors of a validation error, one per line.
func describe(ve *jsonschema.ValidationError) string {
	var lines []string
	var walk func(u *jsonschema.OutputUnit)
	walk = func(u *jsonschema.OutputUnit) {
		if u.Error != nil && len(u.Errors) == 0 {
			at := u.InstanceLocation
			if at == "" {
				at = "(root)"
			}
			lines = append(lines, fmt.Sprintf("- at %s: %s", at, u.Error))
		}
		for i := range u.Errors {
			walk(&u.Errors[i])
		}
	}
	walk(ve.BasicOutput())
	if len(lines) == 0 {
		return "- " + ve.Error()
	}
	return strings.Join(lines, "\n")
}
