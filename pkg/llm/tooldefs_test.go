package llm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// toolSchema has a keyword eino's schema type does not know ("x-unit") and
// an empty sub-schema, which a trip through it would drop or rewrite.
const toolSchema = `{
  "type": "object",
  "properties": {"deg": {"type": "number", "x-unit": "celsius"}, "any": {}},
  "required": ["deg"]
}`

// sentParams returns the parameters of every tool in a recorded request
// body, by tool name, for protocol p.
func sentParams(t *testing.T, p provider.Protocol, body map[string]any) map[string]any {
	t.Helper()
	tools, _ := body["tools"].([]any)
	out := map[string]any{}
	for _, x := range tools {
		m, _ := x.(map[string]any)
		switch p {
		case provider.ProtocolChat:
			f, _ := m["function"].(map[string]any)
			out[f["name"].(string)] = f["parameters"]
		case provider.ProtocolResponses:
			out[m["name"].(string)] = m["parameters"]
		case provider.ProtocolAnthropic:
			out[m["name"].(string)] = m["input_schema"]
		case provider.ProtocolGemini:
			decls, _ := m["functionDeclarations"].([]any)
			for _, d := range decls {
				dm := d.(map[string]any)
				out[dm["name"].(string)] = dm["parametersJsonSchema"]
			}
		}
	}
	return out
}

// TestToolSetOnTheWire sends a ToolSet through every protocol, twice (the
// second request copies the kept encodings), and checks that each tool's
// schema arrives as the tool gave it.
func TestToolSetOnTheWire(t *testing.T) {
	temp, err := NewToolDef("temp", "Sets the temperature.", json.RawMessage(toolSchema))
	if err != nil {
		t.Fatal(err)
	}
	now, err := NewToolDef("now", "The time.", nil)
	if err != nil {
		t.Fatal(err)
	}
	set := NewToolSet(temp, now)
	var want map[string]any
	if err := json.Unmarshal([]byte(toolSchema), &want); err != nil {
		t.Fatal(err)
	}
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			c, _ := newTestClient(t)
			cfg := testConfig(srv, p)
			for i := range 2 {
				srv.Push(fakemodel.Turn{Text: "ok"})
				if _, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), ToolSet: set}); err != nil {
					t.Fatal(err)
				}
				got := sentParams(t, p, srv.Requests()[i].JSON())
				if !reflect.DeepEqual(got["temp"], want) {
					t.Errorf("request %d: temp's schema = %v, want %v", i+1, got["temp"], want)
				}
				if _, ok := got["now"]; !ok || len(got) != 2 {
					t.Errorf("request %d: tools sent = %v", i+1, got)
				}
			}
			if a, b := srv.Requests()[0].Body, srv.Requests()[1].Body; string(a) != string(b) {
				t.Errorf("the second request differs:\n%s\n%s", a, b)
			}
		})
	}
}

// TestToolSetTextProtocol offers a ToolSet to a model without native tools:
// the instructions list the tool with its schema and a call is read back.
func TestToolSetTextProtocol(t *testing.T) {
	temp, err := NewToolDef("temp", "Sets the temperature.", json.RawMessage(toolSchema))
	if err != nil {
		t.Fatal(err)
	}
	srv := fakemodel.StartTB(t)
	srv.Push(fakemodel.Turn{Text: "<tool_call>\n{\"name\": \"temp\", \"arguments\": {\"deg\": 21}}\n</tool_call>"})
	c, _ := newTestClient(t)
	cfg := testConfig(srv, provider.ProtocolChat)
	cfg.ToolMode = ToolModeText
	res, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), ToolSet: NewToolSet(temp)})
	if err != nil {
		t.Fatal(err)
	}
	if body := string(srv.Requests()[0].Body); !strings.Contains(body, "x-unit") || strings.Contains(body, `"tools"`) {
		t.Errorf("request = %s", body)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].GetName() != "temp" {
		t.Errorf("calls = %v, invalid = %v", res.ToolCalls, res.InvalidToolCalls)
	}
}

func TestNewToolDefRejects(t *testing.T) {
	tests := []struct {
		name, tool, schema string
	}{
		{"no name", "", `{"type":"object"}`},
		{"not JSON", "t", `{"type":`},
		{"null", "t", `null`},
		{"not an object", "t", `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewToolDef(tt.tool, "", json.RawMessage(tt.schema))
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindRequest || pe.Code != "invalid_tool" {
				t.Errorf("err = %v, want an invalid_tool request error", err)
			}
		})
	}
}
