package llm

import (
	"errors"
	"strings"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// toolWords name the tools field and its relatives in error messages.
var toolWords = map[string]bool{
	"tool": true, "tools": true, "tool_calls": true, "tool_call": true, "tool_choice": true,
	"function_call": true, "function_calling": true, "functions": true,
}

// refusals are how endpoints say a field or feature is not accepted.
var refusals = []string{
	"not support", "unsupported", "doesn't support", "does not support", "do not support",
	"unrecognized", "unrecognised", "unknown field", "unknown parameter", "unknown argument",
	"unknown name", "unknown key", "extra inputs", "extra fields", "not permitted", "not allowed",
	"not enabled", "not available", "no endpoints found", "requires --", "is disabled",
}

// toolsRejected reports whether err says the endpoint refused the request because
// of its tools field (for example "tools is not supported for this model",
// "Unrecognized request argument supplied: tools", "model does not support
// tools"). Only request errors (other 4xx) qualify; an unrelated 400 such as
// "context length exceeded" does not.
func toolsRejected(err error) bool {
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindRequest {
		return false
	}
	msg := strings.ToLower(pe.Message + " " + pe.Code)
	if !mentionsTools(msg) {
		return false
	}
	for _, r := range refusals {
		if strings.Contains(msg, r) {
			return true
		}
	}
	return false
}

func mentionsTools(msg string) bool {
	if strings.Contains(msg, "function calling") || strings.Contains(msg, "tool use") || strings.Contains(msg, "tool calling") {
		return true
	}
	words := strings.FieldsFunc(msg, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for _, w := range words {
		if toolWords[w] {
			return true
		}
	}
	return false
}
