package gemini

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"path"
	"slices"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// Keys in the provider data maps.
const (
	signatureKey = "gemini.thought_signature"
	idKey        = "gemini.id"
)

// part is one part of a content, request or response.
type part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

type blob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileData struct {
	MIMEType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type functionCall struct {
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Args         json.RawMessage `json:"args,omitempty"`
	PartialArgs  []partialArg    `json:"partialArgs,omitempty"`
	WillContinue bool            `json:"willContinue,omitempty"`
}

type partialArg struct {
	JSONPath     string   `json:"jsonPath"`
	StringValue  *string  `json:"stringValue,omitempty"`
	NumberValue  *float64 `json:"numberValue,omitempty"`
	BoolValue    *bool    `json:"boolValue,omitempty"`
	NullValue    *string  `json:"nullValue,omitempty"`
	WillContinue bool     `json:"willContinue,omitempty"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type content struct {
	Role  string  `json:"role,omitempty"`
	Parts []*part `json:"parts"`
	// trailing parts go after Parts when the turn is complete (tool result
	// files after all functionResponse parts).
	trailing []*part
}

func responseRank(p *part) int {
	if p.FunctionResponse != nil {
		return 0
	}
	return 1
}

func textPart(s string) *part { return &part{Text: &s} }

// vendorTopLevel are vendor option keys that belong at the request top level.
var vendorTopLevel = map[string]bool{"safetySettings": true, "cachedContent": true, "labels": true, "toolConfig": true}

// buildRequest turns a call into the generateContent request body.
func buildRequest(cfg provider.Config, call provider.Call, input []*schema.Message) (map[string]any, error) {
	system, contents, err := convertMessages(input, cfg.SendReasoning)
	if err != nil {
		return nil, err
	}
	body := map[string]any{"contents": contents}
	if len(system) > 0 {
		body["systemInstruction"] = map[string]any{"parts": system}
	}

	gen := map[string]any{}
	p := call.Params
	setIf(gen, "temperature", p.Temperature)
	setIf(gen, "topP", p.TopP)
	setIf(gen, "topK", p.TopK)
	setIf(gen, "maxOutputTokens", p.MaxOutputTokens)
	setIf(gen, "seed", p.Seed)
	setIf(gen, "presencePenalty", p.PresencePenalty)
	setIf(gen, "frequencyPenalty", p.FrequencyPenalty)
	if len(p.Stop) > 0 {
		gen["stopSequences"] = p.Stop
	}
	if o := cfg.Output; o != nil {
		gen["responseMimeType"] = "application/json"
		if o.Schema != nil {
			gen["responseJsonSchema"] = o.Schema
		}
	}

	toolConfig := map[string]any{}
	if len(call.Tools) > 0 {
		decls, err := provider.EncodeTools(string(provider.ProtocolGemini), call.Tools, func(t *schema.ToolInfo, params json.RawMessage) any {
			d := map[string]any{"name": t.Name}
			if t.Desc != "" {
				d["description"] = t.Desc
			}
			if params != nil {
				d["parametersJsonSchema"] = params
			}
			return d
		})
		if err != nil {
			return nil, err
		}
		decls.Prefix, decls.Suffix = `[{"functionDeclarations":`, `}]`
		body["tools"] = decls
		if fc := callingConfig(call.ToolChoice); fc != nil {
			toolConfig["functionCallingConfig"] = fc
		}
	}

	for k, v := range cfg.VendorOptions {
		switch {
		case k == "structuredOutputs":
			// An AI SDK switch, not a request field: pkg/llm handles it.
		case k == "generationConfig":
			if m, ok := v.(map[string]any); ok {
				maps.Copy(gen, m)
			}
		case k == "retrievalConfig":
			toolConfig[k] = v
		case k == "toolConfig":
			if m, ok := v.(map[string]any); ok {
				maps.Copy(toolConfig, m)
			}
		case vendorTopLevel[k]:
			body[k] = v
		default:
			gen[k] = v
		}
	}
	if len(gen) > 0 {
		body["generationConfig"] = gen
	}
	if len(toolConfig) > 0 {
		body["toolConfig"] = toolConfig
	}
	maps.Copy(body, cfg.Body)
	return body, nil
}

func setIf[T any](m map[string]any, key string, v *T) {
	if v != nil {
		m[key] = *v
	}
}

// callingConfig maps the neutral tool choice; nil means not sent.
func callingConfig(c string) map[string]any {
	switch c {
	case "":
		return nil
	case "auto":
		return map[string]any{"mode": "AUTO"}
	case "required":
		return map[string]any{"mode": "ANY"}
	case "none":
		return map[string]any{"mode": "NONE"}
	default:
		return map[string]any{"mode": "ANY", "allowedFunctionNames": []string{c}}
	}
}

// callInfo is what a tool result needs from its call.
type callInfo struct{ name, id string }

// convertMessages splits eino messages into system parts and contents.
func convertMessages(input []*schema.Message, sendReasoning bool) ([]*part, []*content, error) {
	var system []*part
	var contents []*content
	calls := map[string]callInfo{}
	leading := true
	// add appends parts to the last content when it has the same role. Tool
	// result files wait in trailing until the run of results ends.
	add := func(role string, parts, trailing []*part, result bool) {
		if len(parts) == 0 && len(trailing) == 0 {
			return
		}
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			last := contents[n-1]
			if !result {
				last.Parts, last.trailing = append(last.Parts, last.trailing...), nil
			}
			last.Parts = append(last.Parts, parts...)
			last.trailing = append(last.trailing, trailing...)
			return
		}
		contents = append(contents, &content{Role: role, Parts: parts, trailing: trailing})
	}
	for i, m := range input {
		if m == nil {
			return nil, nil, provider.RequestError("gemini: message %d is nil", i)
		}
		if m.Role != schema.System {
			leading = false
		}
		switch m.Role {
		case schema.System:
			if m.Content == "" {
				continue
			}
			if leading {
				system = append(system, textPart(m.Content))
			} else {
				add("user", []*part{textPart(m.Content)}, nil, false)
			}
		case schema.User:
			parts, err := userParts(m)
			if err != nil {
				return nil, nil, err
			}
			add("user", parts, nil, false)
		case schema.Assistant:
			add("model", modelParts(m, sendReasoning, calls), nil, false)
		case schema.Tool:
			resp, files, err := toolResultParts(m, calls[m.ToolCallID])
			if err != nil {
				return nil, nil, err
			}
			add("user", []*part{resp}, files, true)
		default:
			return nil, nil, provider.RequestError("gemini: message %d has unknown role %q", i, m.Role)
		}
	}
	for _, c := range contents {
		c.Parts = append(c.Parts, c.trailing...)
		// A turn's functionResponse parts go first, right after the calls.
		slices.SortStableFunc(c.Parts, func(a, b *part) int {
			return cmp.Compare(responseRank(a), responseRank(b))
		})
	}
	return system, contents, nil
}

func userParts(m *schema.Message) ([]*part, error) {
	if len(m.UserInputMultiContent) == 0 {
		if m.Content == "" {
			return nil, nil
		}
		return []*part{textPart(m.Content)}, nil
	}
	return inputParts(m.UserInputMultiContent)
}

// inputParts maps content parts to text, inlineData and fileData parts.
func inputParts(in []schema.MessageInputPart) ([]*part, error) {
	var out []*part
	for _, p := range in {
		if p.Type == schema.ChatMessagePartTypeText {
			if p.Text != "" {
				out = append(out, textPart(p.Text))
			}
			continue
		}
		md, err := provider.MediaOf(p)
		if err != nil {
			return nil, provider.RequestError("gemini: %w", err)
		}
		if md.URL != "" {
			mt := md.MIMEType
			if mt == "" {
				mt, _, _ = strings.Cut(mime.TypeByExtension(path.Ext(strings.SplitN(md.URL, "?", 2)[0])), ";")
			}
			out = append(out, &part{FileData: &fileData{MIMEType: mt, FileURI: md.URL}})
			continue
		}
		if md.MIMEType == "" {
			return nil, provider.RequestError("gemini: inline %s without a MIME type", md.Kind)
		}
		out = append(out, &part{InlineData: &blob{MIMEType: md.MIMEType, Data: md.Data}})
	}
	return out, nil
}

// modelParts maps an assistant message and records its calls for the results.
func modelParts(m *schema.Message, sendReasoning bool, calls map[string]callInfo) []*part {
	var out []*part
	if sendReasoning && m.ReasoningContent != "" {
		out = append(out, &part{Text: &m.ReasoningContent, Thought: true})
	}
	if m.Content != "" {
		p := textPart(m.Content)
		if sendReasoning {
			p.ThoughtSignature = provider.StringMap(m.Extra[provider.ExtraReasoningData])[signatureKey]
		}
		out = append(out, p)
	}
	for _, tc := range m.ToolCalls {
		data := provider.StringMap(tc.Extra[provider.ExtraToolCallData])
		calls[tc.ID] = callInfo{name: tc.Function.Name, id: data[idKey]}
		out = append(out, &part{
			FunctionCall:     &functionCall{ID: data[idKey], Name: tc.Function.Name, Args: provider.ObjectArgs(tc.Function.Arguments)},
			ThoughtSignature: data[signatureKey],
		})
	}
	return out
}

// toolResultParts maps a tool message to a functionResponse part and the
// file parts that must follow the turn's responses.
func toolResultParts(m *schema.Message, call callInfo) (*part, []*part, error) {
	name := m.ToolName
	if name == "" {
		name = call.name
	}
	var output any = m.Content
	var files []*part
	if len(m.UserInputMultiContent) > 0 {
		var texts []string
		for _, p := range m.UserInputMultiContent {
			if p.Type == schema.ChatMessagePartTypeText {
				if p.Text != "" {
					texts = append(texts, p.Text)
				}
				continue
			}
			fp, err := inputParts([]schema.MessageInputPart{p})
			if err != nil {
				return nil, nil, err
			}
			files = append(files, fp...)
		}
		text := strings.Join(texts, "\n")
		if len(files) > 0 {
			if text != "" {
				text += "\n"
			}
			text += fmt.Sprintf("[%d file(s) returned by this call follow this response]", len(files))
			files = append([]*part{textPart(fmt.Sprintf("Files returned by tool %s (call %s):", name, m.ToolCallID))}, files...)
		}
		output = text
	} else {
		var v any
		if json.Unmarshal([]byte(m.Content), &v) == nil {
			output = v
		}
	}
	key := "output"
	if failed, _ := m.Extra[provider.ExtraToolError].(bool); failed {
		key = "error" // Gemini reads {"error": …} as a failed call
	}
	resp := &part{FunctionResponse: &functionResponse{ID: call.id, Name: name, Response: map[string]any{key: output}}}
	return resp, files, nil
}
