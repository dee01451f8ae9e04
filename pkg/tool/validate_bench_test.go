package tool

import (
	"encoding/json"
	"testing"
)

// BenchmarkCheckInput: validating a small call input against its tool's
// compiled schema, as every call does before it reaches the plugin.
func BenchmarkCheckInput(b *testing.B) {
	spec := Spec{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"the first number"},"b":{"type":"number","description":"the second number"}},"required":["a","b"],"additionalProperties":false}`)}
	sch, err := compileSpec(spec)
	if err != nil {
		b.Fatal(err)
	}
	input := json.RawMessage(`{"a":1,"b":2}`)
	var decoders decoderPool
	b.ReportAllocs()
	for b.Loop() {
		if _, err := checkInput(spec.Name, sch, spec.InputSchema, input, &decoders); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileSpec: compiling a tool's input schema.
func BenchmarkCompileSpec(b *testing.B) {
	spec := Spec{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"the first number"},"b":{"type":"number","description":"the second number"}},"required":["a","b"],"additionalProperties":false}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileSpec(spec); err != nil {
			b.Fatal(err)
		}
	}
}
