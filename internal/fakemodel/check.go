package fakemodel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
)

// A strict server (Strict) checks each chat and anthropic request against
// the rules the real APIs enforce on a conversation before it takes a
// turn: a request that breaks one gets the protocol's HTTP 400
// invalid-request reply naming the rule, as the API would answer, and
// takes no scripted turn. The rules are those a history carried from one
// protocol to another can break: roles and their order, tool calls
// answered by their results and results answering a call, the blocks each
// role may hold, signed thinking.

// checker is an encoder that can check a request's conversation.
type checker interface {
	check(req *Request) error
}

// Strict makes the server check every chat and anthropic request (above).
func (s *Server) Strict() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.strict = true
}

// Rejected returns the requests a strict server refused, with why.
func (s *Server) Rejected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.rejected...)
}

// refuse returns why a strict server refuses req (nil when it takes it),
// and records a refused request.
func (s *Server) refuse(enc encoder, req *Request) error {
	s.mu.Lock()
	strict := s.strict
	s.mu.Unlock()
	c, ok := enc.(checker)
	if !strict || !ok {
		return nil
	}
	err := c.check(req)
	if err == nil {
		return nil
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.rejected = append(s.rejected, string(req.Protocol)+": "+err.Error())
	s.mu.Unlock()
	return err
}

// anthropicToolID is what Anthropic accepts as a tool_use id.
var anthropicToolID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Thinking  *string         `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// blocks returns a message's content as blocks (a string is one text block).
func (m anthropicMessage) blocks() ([]anthropicBlock, error) {
	var text string
	if json.Unmarshal(m.Content, &text) == nil {
		return []anthropicBlock{{Type: "text", Text: &text}}, nil
	}
	var bs []anthropicBlock
	if err := json.Unmarshal(m.Content, &bs); err != nil {
		return nil, fmt.Errorf("content: want a string or a list of blocks")
	}
	return bs, nil
}

func (anthropicEncoder) check(req *Request) error {
	var body struct {
		Model     string             `json:"model"`
		MaxTokens int                `json:"max_tokens"`
		Messages  []anthropicMessage `json:"messages"`
		Tools     []json.RawMessage  `json:"tools"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	switch {
	case body.Model == "":
		return fmt.Errorf("model: Field required")
	case body.MaxTokens <= 0:
		return fmt.Errorf("max_tokens: Field required")
	case len(body.Messages) == 0:
		return fmt.Errorf("messages: at least one message is required")
	case body.Messages[0].Role != "user":
		return fmt.Errorf("messages.0.role: the first message must use the user role")
	}
	var pending []string // tool_use ids of the previous assistant message
	usedTools := false
	for i, m := range body.Messages {
		bs, err := m.blocks()
		if err != nil {
			return fmt.Errorf("messages.%d.%w", i, err)
		}
		if len(pending) > 0 && m.Role != "user" {
			return fmt.Errorf("messages.%d: tool_use ids were found without tool_result blocks immediately after: %v", i-1, pending)
		}
		answered := map[string]bool{}
		for j, b := range bs {
			where := fmt.Sprintf("messages.%d.content.%d", i, j)
			switch {
			case m.Role != "user" && m.Role != "assistant":
				return fmt.Errorf("messages.%d.role: Input should be 'user' or 'assistant'", i)
			case b.Type == "text":
				if b.Text == nil || *b.Text == "" {
					return fmt.Errorf("%s: text content blocks must be non-empty", where)
				}
			case b.Type == "image" || b.Type == "document":
			case b.Type == "tool_use" && m.Role == "assistant":
				usedTools = true
				if !anthropicToolID.MatchString(b.ID) {
					return fmt.Errorf("%s.id: String should match pattern '^[a-zA-Z0-9_-]+$'", where)
				}
				var obj map[string]any
				if b.Name == "" || json.Unmarshal(b.Input, &obj) != nil || obj == nil {
					return fmt.Errorf("%s: a tool_use block needs a name and an input object", where)
				}
			case b.Type == "tool_result" && m.Role == "user":
				usedTools = true
				if j != len(answered) {
					return fmt.Errorf("%s: tool_result blocks must come first in the user message's content", where)
				}
				answered[b.ToolUseID] = true
			case (b.Type == "thinking" || b.Type == "redacted_thinking") && m.Role == "assistant":
				if b.Type == "thinking" && b.Signature == "" {
					return fmt.Errorf("%s.signature: Field required", where)
				}
				if b.Type == "redacted_thinking" && b.Data == "" {
					return fmt.Errorf("%s.data: Field required", where)
				}
			default:
				return fmt.Errorf("%s: %s messages cannot hold %s blocks", where, m.Role, b.Type)
			}
		}
		for id := range answered {
			if !slices.Contains(pending, id) {
				return fmt.Errorf("messages.%d: unexpected tool_use_id found in tool_result blocks: %s. Each tool_result block must have a corresponding tool_use block in the previous message", i, id)
			}
		}
		for _, id := range pending {
			if !answered[id] {
				return fmt.Errorf("messages.%d: tool_use ids were found without tool_result blocks immediately after: %s", i-1, id)
			}
		}
		pending = nil
		if m.Role == "assistant" {
			for _, b := range bs {
				if b.Type == "tool_use" {
					pending = append(pending, b.ID)
				}
			}
		}
	}
	if usedTools && len(body.Tools) == 0 {
		return fmt.Errorf("tools: Requests which include tool_use or tool_result blocks must define tools")
	}
	return nil
}

func (chatEncoder) check(req *Request) error {
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if body.Model == "" || len(body.Messages) == 0 {
		return fmt.Errorf("model and messages are required")
	}
	var pending []string // tool call ids not yet answered
	for i, m := range body.Messages {
		if m.Role != "tool" && len(pending) > 0 {
			return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing %v", i, pending)
		}
		switch m.Role {
		case "system", "developer", "user":
		case "assistant":
			empty := len(m.Content) == 0 || string(m.Content) == "null" || string(m.Content) == `""`
			if empty && len(m.ToolCalls) == 0 {
				return fmt.Errorf("messages[%d]: an assistant message needs content or tool_calls", i)
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || c.Type != "function" || c.Function.Name == "" || !json.Valid([]byte(c.Function.Arguments)) {
					return fmt.Errorf("messages[%d].tool_calls: each call needs an id, type function, a name and JSON arguments", i)
				}
				pending = append(pending, c.ID)
			}
		case "tool":
			if !slices.Contains(pending, m.ToolCallID) {
				return fmt.Errorf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (%q is not one)", i, m.ToolCallID)
			}
			pending = slices.DeleteFunc(pending, func(id string) bool { return id == m.ToolCallID })
		default:
			return fmt.Errorf("messages[%d].role: unknown role %q", i, m.Role)
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing %v", pending)
	}
	return nil
}
