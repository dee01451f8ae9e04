package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// ErrInvalidOutput marks a final answer that is not valid structured output:
// not JSON, or JSON that fails the schema. The *Error that carries it has kind
// unknown (the service answered with success, but the answer has the wrong
// shape) and is never retried.
var ErrInvalidOutput = errors.New("structured output does not match the schema")

// arrayKey is the property arrays are wrapped in, as provider.Output documents.
const arrayKey = "elements"

// compileSchema compiles a JSON Schema held as a map. References to other
// documents are refused, so a schema from a client never reads files or the
// network.
func compileSchema(s map[string]any) (*jsonschema.Schema, error) {
	// Round-trip through JSON so every number is what the compiler expects.
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	const loc = "agentcore:output.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// refuseLoader loads nothing: schemas must be self-contained.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external references are not allowed (%s)", url)
}

// wireOutput is the structured output request sent to the adapter: arrays
// wrapped as an object, a default name.
func wireOutput(o *OutputFormat) *provider.Output {
	out := &provider.Output{Kind: o.Kind, Name: o.Name, Description: o.Description, Schema: o.Schema}
	if out.Name == "" {
		out.Name = "output"
	}
	if o.Kind == provider.OutputArray {
		out.Schema = map[string]any{
			"type":                 "object",
			"properties":           map[string]any{arrayKey: map[string]any{"type": "array", "items": o.Schema}},
			"required":             []any{arrayKey},
			"additionalProperties": false,
		}
	}
	return out
}

// ParseOutput reads a final text as the structured output o asks for and
// validates it. An array may come wrapped ({"elements": […]}) or bare.
func ParseOutput(o *OutputFormat, text string) (*structpb.Value, error) {
	body := strings.TrimSpace(text)
	if strings.HasPrefix(body, "```") {
		body = strings.TrimSpace(strings.TrimSuffix(body[strings.IndexByte(body+"\n", '\n'):], "```"))
	}
	value, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		return nil, invalidOutput("the answer is not JSON: %v", err)
	}
	if o.Kind == provider.OutputArray {
		if obj, ok := value.(map[string]any); ok {
			if inner, ok := obj[arrayKey]; ok && len(obj) == 1 {
				value = inner
			}
		}
		if _, ok := value.([]any); !ok {
			return nil, invalidOutput("the answer is not a JSON array")
		}
	}
	if o.Kind == provider.OutputObject {
		if _, ok := value.(map[string]any); !ok {
			return nil, invalidOutput("the answer is not a JSON object")
		}
	}
	if o.Schema != nil {
		sch, err := compileSchema(o.Schema)
		if err != nil {
			return nil, &Error{Kind: provider.KindRequest, Code: "invalid_output_schema", Message: "the output schema is not valid: " + err.Error(), Err: err}
		}
		items := []any{value}
		if o.Kind == provider.OutputArray {
			items = value.([]any)
		}
		for i, item := range items {
			if err := sch.Validate(item); err != nil {
				where := ""
				if o.Kind == provider.OutputArray {
					where = fmt.Sprintf("element %d: ", i)
				}
				return nil, invalidOutput("%s%v", where, err)
			}
		}
	}
	out, err := structpb.NewValue(value)
	if err != nil {
		return nil, invalidOutput("the answer cannot be represented: %v", err)
	}
	return out, nil
}

func invalidOutput(format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{
		Kind:    provider.KindUnknown,
		Code:    "invalid_output",
		Message: "structured output: " + msg,
		Err:     fmt.Errorf("%w: %s", ErrInvalidOutput, msg),
	}
}
