package llm

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

func TestStructuredOutput(t *testing.T) {
	total := &OutputFormat{Kind: provider.OutputObject, Schema: map[string]any{
		"type": "object", "properties": map[string]any{"total": map[string]any{"type": "number"}}, "required": []any{"total"},
	}}
	names := &OutputFormat{Kind: provider.OutputArray, Schema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"},
	}}
	anyJSON := &OutputFormat{Kind: provider.OutputJSON}
	tests := []struct {
		name    string
		output  *OutputFormat
		turn    fakemodel.Turn
		want    string // protojson of Output; "" means nil
		invalid bool
	}{
		{"object", total, fakemodel.Turn{Text: `{"total":42}`}, `{"total":42}`, false},
		{"object in a code fence", total, fakemodel.Turn{Text: "```json\n{\"total\": 7}\n```"}, `{"total":7}`, false},
		{"array wrapped", names, fakemodel.Turn{Text: `{"elements":[{"name":"A"},{"name":"B"}]}`}, `[{"name":"A"},{"name":"B"}]`, false},
		{"array bare", names, fakemodel.Turn{Text: `[{"name":"A"}]`}, `[{"name":"A"}]`, false},
		{"any json", anyJSON, fakemodel.Turn{Text: `"just a string"`}, `"just a string"`, false},
		{"schema mismatch", total, fakemodel.Turn{Text: `{"total":"not a number"}`}, "", true},
		{"not JSON", total, fakemodel.Turn{Text: `The total is 42.`}, "", true},
		{"array element mismatch", names, fakemodel.Turn{Text: `{"elements":[{"name":1}]}`}, "", true},
		{"object expected, array given", total, fakemodel.Turn{Text: `[1]`}, "", true},
		{"tool round reads no output", total, fakemodel.Turn{Text: "checking", ToolCalls: []fakemodel.ToolCall{{ID: "c", Name: "add", Arguments: `{"a":1,"b":2}`}}}, "", false},
	}
	eachProtocol(t, func(t *testing.T, p provider.Protocol, stream bool) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				srv := fakemodel.StartTB(t)
				srv.Push(tt.turn, fakemodel.Turn{Text: `{"total":1}`})
				c, _ := newTestClient(t)
				cfg := testConfig(srv, p)
				cfg.Stream = stream
				cfg.Output = tt.output
				res, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Tools: []Tool{addTool}})
				if tt.invalid {
					var pe *Error
					if !errors.As(err, &pe) || pe.Kind != KindUnknown || pe.Code != "invalid_output" || pe.Retryable || !errors.Is(err, ErrInvalidOutput) {
						t.Fatalf("err = %#v", err)
					}
					if res == nil || res.Text != tt.turn.Text || res.Output != nil {
						t.Errorf("result with the invalid output = %+v", res)
					}
					if n := len(srv.Requests()); n != 1 {
						t.Errorf("an invalid output was retried: %d requests", n)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got := ""
				if res.Output != nil {
					b, _ := protojson.Marshal(res.Output)
					got = string(b)
				}
				if !sameJSON(got, tt.want) && got != tt.want {
					t.Errorf("output = %s, want %s", got, tt.want)
				}
				if res.Text != tt.turn.Text {
					t.Errorf("text = %q, want the raw answer %q", res.Text, tt.turn.Text)
				}
			})
		}
	})
}

func TestWireOutput(t *testing.T) {
	elem := map[string]any{"type": "string"}
	got := wireOutput(&OutputFormat{Kind: provider.OutputArray, Schema: elem})
	props, _ := got.Schema["properties"].(map[string]any)
	items, _ := props[arrayKey].(map[string]any)
	if got.Name != "output" || got.Schema["type"] != "object" || items["type"] != "array" || items["items"].(map[string]any)["type"] != "string" {
		t.Errorf("array output = %+v", got)
	}
	if o := wireOutput(&OutputFormat{Kind: provider.OutputObject, Name: "total", Schema: elem}); o.Name != "total" || o.Schema["type"] != "string" {
		t.Errorf("object output = %+v", o)
	}
}
