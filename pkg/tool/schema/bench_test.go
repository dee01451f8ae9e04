package schema

import (
	"encoding/json"
	"testing"
)

// BenchmarkCheckInput: validating a small call input against its tool's
// compiled schema, as every call does before it reaches the plugin.
func BenchmarkCheckInput(b *testing.B) {
	spec := spec{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"the first number"},"b":{"type":"number","description":"the second number"}},"required":["a","b"],"additionalProperties":false}`)}
	sch, err := Compile(spec.Name, spec.InputSchema)
	if err != nil {
		b.Fatal(err)
	}
	input := json.RawMessage(`{"a":1,"b":2}`)
	var decoders Decoders
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(spec.Name, sch, spec.InputSchema, input, &decoders); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileSpec: compiling a tool's input schema.
func BenchmarkCompileSpec(b *testing.B) {
	spec := spec{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"the first number"},"b":{"type":"number","description":"the second number"}},"required":["a","b"],"additionalProperties":false}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(spec.Name, spec.InputSchema); err != nil {
			b.Fatal(err)
		}
	}
}
