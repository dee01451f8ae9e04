package chat

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
	for _, name := range []string{"anthropic-fallback-tool-call.sse", "openai-text.json"} {
		data, err := os.ReadFile(filepath.Join(adaptertest.Fixtures, "openai/chat", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":[{\"text\":\"a\"}],\"tool_calls\":[{\"function\":{\"arguments\":\"{\"}}]}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"error\":{\"code\":429,\"message\":\"x\"}}\n\n"))
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
