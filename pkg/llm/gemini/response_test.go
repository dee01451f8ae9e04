package gemini

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestPartialArgs checks how streamed partialArgs become the arguments.
func TestPartialArgs(t *testing.T) {
	tests := []struct {
		name    string
		partial string // the partialArgs of successive chunks, as JSON arrays
		want    string
	}{
		{"string in pieces", `[[{"jsonPath":"$.q","stringValue":"hel","willContinue":true}],[{"jsonPath":"$.q","stringValue":"lo"}]]`, `{"q":"hello"}`},
		{"scalars", `[[{"jsonPath":"$.n","numberValue":2.5},{"jsonPath":"$.b","boolValue":true},{"jsonPath":"$.z","nullValue":"NULL_VALUE"}]]`,
			`{"n":2.5,"b":true,"z":null}`},
		{"nested and arrays", `[[{"jsonPath":"$.a.b","stringValue":"x"},{"jsonPath":"$.items[1].name","stringValue":"y"},{"jsonPath":"$['odd key']","numberValue":1}]]`,
			`{"a":{"b":"x"},"items":[null,{"name":"y"}],"odd key":1}`},
		{"two strings one after the other", `[[{"jsonPath":"$.a","stringValue":"1"},{"jsonPath":"$.a","stringValue":"2"}]]`, `{"a":"2"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chunks [][]partialArg
			if err := json.Unmarshal([]byte(tt.partial), &chunks); err != nil {
				t.Fatal(err)
			}
			a := &assembler{}
			a.functionCall(&functionCall{Name: "f", WillContinue: true}, "")
			for _, c := range chunks {
				a.functionCall(&functionCall{PartialArgs: c, WillContinue: true}, "")
			}
			out := a.functionCall(&functionCall{}, "")
			if len(out) != 1 || len(out[0].ToolCalls) != 1 {
				t.Fatalf("closing the call gave %+v", out)
			}
			var got, want any
			_ = json.Unmarshal([]byte(out[0].ToolCalls[0].Function.Arguments), &got)
			_ = json.Unmarshal([]byte(tt.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("arguments = %s, want %s", out[0].ToolCalls[0].Function.Arguments, tt.want)
			}
		})
	}
}
