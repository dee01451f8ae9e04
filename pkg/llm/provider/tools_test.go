package provider

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"
)

type entry struct {
	Name   string          `json:"name"`
	Params json.RawMessage `json:"params,omitempty"`
}

// TestEncodeToolsKeepsEntries checks that a prepared tool is encoded once
// per protocol and an unprepared one on every request, with the same bytes.
func TestEncodeToolsKeepsEntries(t *testing.T) {
	prepared := &schema.ToolInfo{Name: "add"}
	if err := PrepareTool(prepared, json.RawMessage(`{"type":"object","x-keep":1}`)); err != nil {
		t.Fatal(err)
	}
	plain := &schema.ToolInfo{Name: "now"}
	tools := []*schema.ToolInfo{prepared, plain}
	calls := map[string]int{}
	encode := func(protocol string) []byte {
		t.Helper()
		list, err := EncodeTools(protocol, tools, func(t *schema.ToolInfo, params json.RawMessage) any {
			calls[protocol+"/"+t.Name]++
			return entry{Name: t.Name, Params: params}
		})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := list.MarshalJSON()
		return out
	}
	first := encode("a")
	if again := encode("a"); string(again) != string(first) {
		t.Errorf("second encoding %s, first %s", again, first)
	}
	encode("b")
	want := map[string]int{"a/add": 1, "a/now": 2, "b/add": 1, "b/now": 1}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("entries made: %v, want %v", calls, want)
	}
	const wantJSON = `[{"name":"add","params":{"type":"object","x-keep":1}},{"name":"now"}]`
	if string(first) != wantJSON {
		t.Errorf("EncodeTools = %s, want %s", first, wantJSON)
	}
	if p, err := ToolParameters(prepared); err != nil || string(p) != `{"type":"object","x-keep":1}` {
		t.Errorf("ToolParameters = %s, %v", p, err)
	}
}

// TestMarshalBodyEncoded checks that Encoded and ToolList values are copied
// into a body as they are and the result is the JSON encoding/json would
// make.
func TestMarshalBodyEncoded(t *testing.T) {
	tests := []struct {
		name string
		body map[string]any
	}{
		{"with other fields", map[string]any{"model": "m<&>", "tools": Encoded(`[{"a":1}]`), "n": 2}},
		{"alone", map[string]any{"tools": Encoded(`[]`)}},
		{"two", map[string]any{"z": Encoded(`{"b":[1,2]}`), "a": Encoded(`true`), "m": "x"}},
		{"empty", map[string]any{"z": Encoded(nil), "m": "x"}},
		{"tool list", map[string]any{"tools": ToolList{Entries: []json.RawMessage{[]byte(`{"a":1}`), []byte(`{"b":2}`)}}, "model": "m"}},
		{"wrapped tool list", map[string]any{"tools": ToolList{Prefix: `[{"d":`, Suffix: `}]`, Entries: []json.RawMessage{[]byte(`{"a":1}`)}}, "n": 1}},
		{"no tools", map[string]any{"tools": ToolList{}, "stream": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MarshalBody(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			plain := map[string]any{}
			for k, v := range tt.body {
				if e, ok := v.(json.Marshaler); ok {
					text, _ := e.MarshalJSON()
					v = json.RawMessage(text)
				}
				plain[k] = v
			}
			want, err := MarshalBody(plain)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("not JSON: %s", got)
			}
			_ = json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("MarshalBody = %s, want %s", got, want)
			}
		})
	}
}

// BenchmarkEncodeTools encodes the tools list of a request offering twelve
// prepared tools and the body it goes into, as every model request of an
// agent does.
func BenchmarkEncodeTools(b *testing.B) {
	var tools []*schema.ToolInfo
	for i := range 12 {
		ti := &schema.ToolInfo{Name: fmt.Sprintf("tool_%d", i), Desc: strings.Repeat("Does one thing well. ", 8)}
		params := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"` + strings.Repeat("a file ", 20) + `"}},"required":["path"]}`)
		if err := PrepareTool(ti, params); err != nil {
			b.Fatal(err)
		}
		tools = append(tools, ti)
	}
	mk := func(t *schema.ToolInfo, params json.RawMessage) any { return entry{Name: t.Name, Params: params} }
	b.ReportAllocs()
	for b.Loop() {
		list, err := EncodeTools("chat", tools, mk)

		if err != nil {
			b.Fatal(err)
		}
		if _, err := MarshalBody(map[string]any{"model": "m", "stream": true, "tools": list}); err != nil {
			b.Fatal(err)
		}
	}
}
