package main

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

// TestFormFields: a form's fields come required first, each group by name,
// with their prompts; answers are read as the field's type says.
func TestFormFields(t *testing.T) {
	schema, err := structpb.NewStruct(map[string]any{"type": "object", "required": []any{"name", "age"},
		"properties": map[string]any{
			"name":  map[string]any{"type": "string", "description": "Your name"},
			"age":   map[string]any{"type": "integer"},
			"size":  map[string]any{"type": "string", "enum": []any{"s", "m", "l"}, "default": "m"},
			"ratio": map[string]any{"type": "number"},
			"ok":    map[string]any{"type": "boolean", "default": true},
		}})
	if err != nil {
		t.Fatal(err)
	}
	fields := formFields(schema)
	var prompts []string
	for _, f := range fields {
		prompts = append(prompts, f.prompt())
	}
	want := []string{"age (integer; required): ", "name (string; required): ", "ok (boolean; enter for true): ",
		"ratio (number): ", `size (string; one of s, m, l; enter for "m"): `}
	if !reflect.DeepEqual(prompts, want) {
		t.Errorf("prompts %q\nwant    %q", prompts, want)
	}
	if fields[1].description != "Your name" {
		t.Errorf("name's description %q", fields[1].description)
	}
	byName := map[string]formField{}
	for _, f := range fields {
		byName[f.name] = f
	}
	tests := []struct {
		field, in string
		want      any // nil: refused
	}{
		{"age", "42", int64(42)},
		{"age", "4.2", nil},
		{"ratio", "0.5", 0.5},
		{"ratio", "half", nil},
		{"ok", "no", false},
		{"ok", "Y", true},
		{"ok", "maybe", nil},
		{"size", "l", "l"},
		{"size", "xl", nil},
		{"name", "Ada", "Ada"},
	}
	for _, tt := range tests {
		got, err := byName[tt.field].value(tt.in)
		if tt.want == nil {
			if err == nil {
				t.Errorf("%s %q: %v, want an error", tt.field, tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s %q: %v (%T), %v; want %v", tt.field, tt.in, got, got, err, tt.want)
		}
	}
}
