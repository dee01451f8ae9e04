package llm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

func TestToolsRejected(t *testing.T) {
	req := func(msg string) error { return &provider.Error{Kind: provider.KindRequest, Status: 400, Message: msg} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"plain refusal", req("tools is not supported for this model"), true},
		{"tool_calls variant", req("tool_calls is not supported"), true},
		{"openai unrecognized argument", req("Unrecognized request argument supplied: tools"), true},
		{"ollama", req(`registry.ollama.ai/library/gemma:2b does not support tools`), true},
		{"gemini unknown name", req(`Invalid JSON payload received. Unknown name "tools": Cannot find field.`), true},
		{"function calling not enabled", req("Function calling is not enabled for models/gemma-3"), true},
		{"pydantic extra inputs", req("tools: Extra inputs are not permitted"), true},
		{"vllm tool choice", req(`"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`), true},
		{"openrouter", &provider.Error{Kind: provider.KindRequest, Status: 404, Message: "No endpoints found that support tool use"}, true},
		{"wrapped", fmt.Errorf("chat: %w", req("tools are not supported")), true},
		{"context length", req("context length exceeded"), false},
		{"bad tool schema", req("Invalid 'tools[0].function.name': string does not match pattern"), false},
		{"server malfunction", &provider.Error{Kind: provider.KindServer, Status: 500, Message: "internal server malfunction, tools not supported"}, false},
		{"malfunction word", req("request unsupported: malfunction"), false},
		{"not a provider error", errors.New("tools is not supported"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := toolsRejected(tt.err); got != tt.want {
			t.Errorf("%s: toolsRejected = %v, want %v", tt.name, got, tt.want)
		}
	}
}
