package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// compileSpec checks a spec and compiles its input schema.
func compileSpec(s Spec) (*jsonschema.Schema, error) {
	if !validName.MatchString(s.Name) {
		return nil, fmt.Errorf("tool name %q must match %s", s.Name, validName)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.InputSchema))
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema is not JSON: %w", s.Name, err)
	}
	root, ok := doc.(map[string]any)
	if !ok || root["type"] != "object" {
		return nil, fmt.Errorf(`tool %q: input schema must be an object schema ("type": "object" at its root)`, s.Name)
	}
	c := jsonschema.NewCompiler()
	url := "urn:agentcore:tool:" + s.Name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", s.Name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", s.Name, err)
	}
	return sch, nil
}

// checkInput parses and validates a call's input. Empty input means {}. It
// returns the normalised input, or an error message written for the model.
func checkInput(name string, sch *jsonschema.Schema, schemaJSON, input json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
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
