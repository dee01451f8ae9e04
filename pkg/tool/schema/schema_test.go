package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestDecoderPoolMatchesLibrary: a pooled decoder, handed inputs one after
// another (clean ones, broken ones, several values, trailing bytes), gives
// for each the value and the error jsonschema.UnmarshalJSON gives.
func TestDecoderPoolMatchesLibrary(t *testing.T) {
	inputs := []string{
		`{"text":"ping"}`,
		`{"a":1,"b":2.50,"big":123456789012345678901234567890}`,
		`  {"x": [1, "two", null, true, {"y": -0.0e+3}]}  ` + "\n",
		`{"a":1} {"b":2}`,
		`{"a":1}`,
		`{"a":1}x`,
		`{"a":`,
		`{"text":"ping"}`,
		`{"a":1,}`,
		`[1,2,3]`,
		`123`,
		`"a string"`,
		`null`,
		`{"a":"\u00e9\ud83d\ude00"}`,
		`{"a":"` + "\xff" + `"}`,
		`}`,
		`{"a":1}]`,
		`{"k":` + strings.Repeat(`"0123456789abcdef",`, 1200) + `"end"}`, // over maxPooledInput
		`{"last":true}`,
	}
	var pool Decoders
	for round := range 2 {
		for _, in := range inputs {
			want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(in)))
			got, gotErr := pool.decode([]byte(in))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round %d, %.40q: value %#v, the library's %#v", round, in, got, want)
			}
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Errorf("round %d, %.40q: error %v, the library's %v", round, in, gotErr, wantErr)
			}
		}
	}
}

// TestCheckInputVerdicts: checkInput's verdicts and messages are the same
// with a pool of decoders as without.
func TestCheckInputVerdicts(t *testing.T) {
	spec := spec{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"n":{"type":"integer"}},"required":["a"],"additionalProperties":false}`)}
	sch, err := Compile(spec.Name, spec.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var pool Decoders
	for _, in := range []string{`{"a":1}`, `{"a":"x"}`, `{"a":1,"n":1.0000000000000000001}`, `{"a":1,"n":2}`, `{"b":1}`, `{"a":1} {}`, `not json`, ``, `  `, `{"a":1}`} {
		want, wantErr := Check(spec.Name, sch, spec.InputSchema, json.RawMessage(in), nil)
		got, gotErr := Check(spec.Name, sch, spec.InputSchema, json.RawMessage(in), &pool)
		if string(got) != string(want) || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("%q: got %q, %v; without a pool %q, %v", in, got, gotErr, want, wantErr)
		}
	}
}

// spec is a tool's name and input schema, as the tests give them.
type spec struct {
	Name        string
	InputSchema json.RawMessage
}
