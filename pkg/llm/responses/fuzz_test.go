package responses

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// FuzzStream feeds arbitrary bytes to the stream and whole-body decoders:
// they must never panic, and every failure must be a *provider.Error.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"openai-custom-tool.1.json", "openai-phase.1.json"} {
		data, err := os.ReadFile(filepath.Join(adaptertest.Fixtures, "openai/responses", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"custom_tool_call\",\"id\":\"ct\",\"call_id\":\"c\",\"name\":\"n\"}}\n\n" +
		"data: {\"type\":\"response.custom_tool_call_input.delta\",\"item_id\":\"ct\",\"delta\":\"a\\\"b\"}\n\n" +
		"data: {\"type\":\"response.output_text.done\",\"item_id\":\"m\",\"text\":\"hi\"}\n\n" +
		"data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[]}}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\",\"error\":{\"code\":\"server_error\",\"message\":\"x\"}}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := sse.NewReader(context.Background(), bytes.NewReader(in))
		err := readStream(context.Background(), r, func(*schema.Message) bool { return true })
		var pe *provider.Error
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("stream error %v (%T) is not a *provider.Error", err, err)
		}
		if _, err := decodeWhole(in); err != nil && !errors.As(err, &pe) {
			t.Fatalf("body error %v (%T) is not a *provider.Error", err, err)
		}
	})
}
