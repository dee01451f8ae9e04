package llm

import (
	"fmt"

	"github.com/cloudwego/eino/components/model"

	"github.com/agentcore/agentcore/pkg/llm/anthropic"
	"github.com/agentcore/agentcore/pkg/llm/chat"
	"github.com/agentcore/agentcore/pkg/llm/gemini"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/responses"
)

// newAdapter builds the protocol adapter for one request.
func newAdapter(p provider.Protocol, cfg provider.Config) (model.ToolCallingChatModel, error) {
	var (
		m   model.ToolCallingChatModel
		err error
	)
	switch p {
	case provider.ProtocolChat:
		m, err = chat.New(cfg)
	case provider.ProtocolResponses:
		m, err = responses.New(cfg)
	case provider.ProtocolAnthropic:
		m, err = anthropic.New(cfg)
	case provider.ProtocolGemini:
		m, err = gemini.New(cfg)
	default:
		return nil, &Error{Kind: KindRequest, Code: "unknown_protocol", Message: fmt.Sprintf("unknown protocol %q", p)}
	}
	if err != nil {
		return nil, asError(err)
	}
	return m, nil
}
