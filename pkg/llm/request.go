package llm

import (
	"context"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// check rejects a config that cannot be used as asked.
func (c *Client) check(req Request) error {
	cfg := req.Config
	if req.Model == nil {
		return cfg.RequireEndpoint()
	}
	problems := &validator{}
	const why = "needs a connection this package creates; it cannot be used with a supplied model"
	if len(cfg.Provider.Body) > 0 {
		problems.add("config.provider.body", why)
	}
	if cfg.Cache.Enabled && cfg.Cache.custom() {
		problems.add("config.cache", "a custom cache object "+why)
	}
	if len(cfg.Provider.VendorOptions) > 0 {
		problems.add("config.provider.provider_options", why)
	}
	const params = "a supplied eino model takes only temperature, top_p, max_output_tokens, stop and tool_choice"
	p := cfg.Provider.Params
	for field, set := range map[string]bool{
		"top_k": p.TopK != nil, "seed": p.Seed != nil,
		"presence_penalty": p.PresencePenalty != nil, "frequency_penalty": p.FrequencyPenalty != nil,
	} {
		if set {
			problems.add("config.provider."+field, params)
		}
	}
	if _, ok := req.Model.(HeaderModel); len(cfg.Provider.Headers) > 0 && !ok {
		problems.add("config.provider.headers", "the supplied model cannot take extra headers (it does not implement llm.HeaderModel)")
	}
	return problems.err()
}

// request sends one request (with retries) and returns the response message.
func (c *Client) request(ctx context.Context, req Request, text, native bool) (*schema.Message, error) {
	cfg := req.Config
	system := req.System
	if system == "" {
		system = cfg.System
	}
	cv := &converter{caps: cfg.Capabilities, fallback: cfg.MediaFallback, text: text, cache: req.ConversionCache}
	if req.Model == nil { // a caller's model speaks whatever it speaks
		cv.protocol = cfg.Protocol
	}
	if text {
		cv.tools = req.Tools
	}
	msgs, err := cv.convert(system, req.Messages)
	if err != nil {
		return nil, err
	}
	m, opts, err := c.model(req, native)
	if err != nil {
		return nil, err
	}
	once := func(ctx context.Context) (*schema.Message, bool, error) {
		if !cfg.Stream {
			msg, err := m.Generate(ctx, msgs, opts...)
			return msg, false, err
		}
		return streamOnce(ctx, m, msgs, opts, req.OnDelta)
	}
	return c.retry(ctx, cfg, req, once)
}

// model returns the chat model for one request, with tools bound when native.
func (c *Client) model(req Request, native bool) (model.ToolCallingChatModel, []model.Option, error) {
	cfg := req.Config
	var infos []*schema.ToolInfo
	if native {
		set, err := toolSet(req)
		if err != nil {
			return nil, nil, err
		}
		infos = set.infos
	}
	choice := ""
	if native && cfg.Capabilities.ToolChoice {
		choice = cfg.Provider.ToolChoice
		if choice == "" {
			choice = "auto"
		}
	}
	if req.Model != nil {
		m := req.Model
		var err error
		if hm, ok := m.(HeaderModel); ok && len(cfg.Provider.Headers) > 0 {
			if m, err = hm.WithHeaders(cfg.Provider.Headers); err != nil {
				return nil, nil, &Error{Kind: KindRequest, Message: "the supplied model refused the headers: " + err.Error(), Err: err}
			}
		}
		if native {
			if m, err = m.WithTools(infos); err != nil {
				return nil, nil, &Error{Kind: KindRequest, Message: "the supplied model refused the tools: " + err.Error(), Err: err}
			}
		}
		return m, einoOptions(cfg.Provider.Params, choice), nil
	}
	pc := provider.Config{
		BaseURL:        cfg.BaseURL,
		APIKey:         cfg.APIKey,
		Model:          cfg.Model,
		HTTPClient:     c.http,
		Headers:        cfg.Provider.Headers,
		Body:           requestBody(cfg),
		Params:         cfg.Provider.Params,
		ToolChoice:     choice,
		OmitToolChoice: !cfg.Capabilities.ToolChoice,
		Cache:          cacheFor(cfg),
		VendorOptions:  cfg.Provider.VendorOptions[vendorOf(cfg.Protocol)],
		SendReasoning:  cfg.Capabilities.Reasoning,
	}
	if cfg.Output != nil && cfg.Capabilities.StructuredOutput {
		pc.Output = wireOutput(cfg.Output)
	}
	m, err := newAdapter(cfg.Protocol, pc)
	if err != nil {
		return nil, nil, err
	}
	if native {
		if m, err = m.WithTools(infos); err != nil {
			return nil, nil, &Error{Kind: KindRequest, Message: "cannot bind the tools: " + err.Error(), Err: err}
		}
	}
	return m, nil, nil
}

// einoOptions expresses generation parameters as eino common options, for a
// caller's model.
func einoOptions(p provider.Params, choice string) []model.Option {
	var opts []model.Option
	if p.Temperature != nil {
		opts = append(opts, model.WithTemperature(float32(*p.Temperature)))
	}
	if p.TopP != nil {
		opts = append(opts, model.WithTopP(float32(*p.TopP)))
	}
	if p.MaxOutputTokens != nil {
		opts = append(opts, model.WithMaxTokens(*p.MaxOutputTokens))
	}
	if len(p.Stop) > 0 {
		opts = append(opts, model.WithStop(p.Stop))
	}
	switch choice {
	case "":
	case "auto":
		opts = append(opts, model.WithToolChoice(schema.ToolChoiceAllowed))
	case "none":
		opts = append(opts, model.WithToolChoice(schema.ToolChoiceForbidden))
	case "required":
		opts = append(opts, model.WithToolChoice(schema.ToolChoiceForced))
	default:
		opts = append(opts, model.WithToolChoice(schema.ToolChoiceForced, choice))
	}
	return opts
}

// vendorOf names the provider_options block a protocol reads.
func vendorOf(p provider.Protocol) string {
	switch p {
	case provider.ProtocolAnthropic:
		return "anthropic"
	case provider.ProtocolGemini:
		return "google"
	}
	return "openai"
}

// toolSet returns the request's tools converted: its ToolSet, else its
// Tools converted now (or kept from the run's last request).
func toolSet(req Request) (*ToolSet, error) {
	switch {
	case req.ToolSet != nil:
		return req.ToolSet, nil
	case req.ConversionCache != nil:
		return req.ConversionCache.toolSet(req.Tools)
	}
	return toolSetOf(req.Tools)
}
