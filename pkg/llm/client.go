package llm

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/texttool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Options configure a Client. Every field is optional.
type Options struct {
	// HTTPClient carries every request; nil means a new client with no timeout
	// (requestTimeout bounds requests instead) that keeps idle connections
	// for concurrent requests to the same endpoint (see IdleConnsPerHost).
	HTTPClient *http.Client
	// IdleConnsPerHost is how many idle connections the default HTTP client
	// keeps per model endpoint: as many as requests may run at once to one
	// endpoint, so that a burst of them finds its connections the next
	// time. Zero means MaxIdleConnsPerHost. Unused with HTTPClient.
	IdleConnsPerHost int
	// Logger receives retries and text-protocol fallbacks; nil discards.
	Logger hclog.Logger
	// Sleep waits d or until ctx ends; nil uses a timer. Tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1) that spreads backoffs; nil uses math/rand/v2.
	Jitter func() float64
	// Now tells the time; nil uses time.Now.
	Now func() time.Time
	// NewID makes ids for tool calls that come without one; nil makes random ids.
	NewID func() string
	// RetryMaxElapsed, when positive, bounds retrying for every config: it
	// is the time a config that sets none gets, and the most one may ask
	// for (a shared service must not retry forever).
	RetryMaxElapsed time.Duration
	// RetryMaxDelay, when positive, caps one backoff (Retry-After included)
	// whatever a config asks for.
	RetryMaxDelay time.Duration
}

// MaxIdleConnsPerHost is how many idle connections the default HTTP client
// keeps per model endpoint when Options.IdleConnsPerHost is zero. A service
// sends many requests at once to the same few endpoints; with net/http's
// default of 2, every connection beyond two is closed after its request and
// the next request dials again (a TCP and TLS handshake each, under load).
const MaxIdleConnsPerHost = 256

// Client asks models for responses. It holds the HTTP client and, for
// toolMode auto, the models found to reject native tools. It is safe for
// concurrent use; the zero value is not usable, call NewClient.
type Client struct {
	http   *http.Client
	log    hclog.Logger
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func() float64
	now    func() time.Time
	newID  func() string
	// maxElapsed and maxDelay are Options.RetryMaxElapsed and RetryMaxDelay.
	maxElapsed, maxDelay time.Duration

	mu       sync.Mutex
	textOnly map[string]bool // model key -> rejected native tools
}

// NewClient returns a Client.
func NewClient(opts Options) *Client {
	c := &Client{
		http:     opts.HTTPClient,
		log:      opts.Logger,
		sleep:    opts.Sleep,
		jitter:   opts.Jitter,
		now:      opts.Now,
		newID:    opts.NewID,
		textOnly: map[string]bool{},

		maxElapsed: opts.RetryMaxElapsed,
		maxDelay:   opts.RetryMaxDelay,
	}
	if c.http == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		idle := opts.IdleConnsPerHost
		if idle <= 0 {
			idle = MaxIdleConnsPerHost
		}
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 4*idle, idle
		c.http = &http.Client{Transport: t}
	}
	if c.log == nil {
		c.log = hclog.NewNullLogger()
	}
	if c.sleep == nil {
		c.sleep = sleepContext
	}
	if c.jitter == nil {
		c.jitter = rand.Float64
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.newID == nil {
		c.newID = randomID
	}
	return c
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func randomID() string {
	var b [12]byte
	_, _ = cryptorand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

// CloseIdleConnections closes the HTTP client's idle connections.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// TextProtocol reports whether toolMode auto has switched the model of cfg to
// the text tool protocol in this Client (its endpoint rejected native tools).
func (c *Client) TextProtocol(cfg *Config) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.textOnly[modelKey(cfg, nil)]
}

func (c *Client) isTextOnly(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.textOnly[key]
}

func (c *Client) setTextOnly(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.textOnly[key] = true
}

// modelKey names a model for the auto-mode memory.
func modelKey(cfg *Config, m model.ToolCallingChatModel) string {
	if m != nil {
		return fmt.Sprintf("instance:%T:%p", m, m)
	}
	return string(cfg.Protocol) + "\x00" + strings.TrimRight(cfg.BaseURL, "/") + "\x00" + cfg.Model
}

// Chat asks the model for one response to req.
//
// The response streams unless Config.Stream is false; the Result is the same
// either way. Retryable failures are retried with exponential backoff and
// jitter (honouring Retry-After), within RetryMaxDelay and RetryMaxElapsed;
// a failure after a delta reached OnDelta, a cancellation, and a structured
// output that fails its schema are never retried. RequestTimeout bounds each
// attempt. Errors are *Error, or *ConfigError for a config that cannot be
// used. When the structured output is invalid, Chat returns the Result
// (without Output) together with an *Error wrapping ErrInvalidOutput, so the
// caller can still keep the answer.
func (c *Client) Chat(ctx context.Context, req Request) (*Result, error) {
	cfg := req.Config
	if cfg == nil {
		return nil, errNoConfig
	}
	if err := c.check(req); err != nil {
		return nil, err
	}
	key := modelKey(cfg, req.Model)
	if req.ToolSet != nil {
		req.Tools = req.ToolSet.tools
	}
	hasTools := len(req.Tools) > 0
	text := hasTools && (cfg.ToolMode == ToolModeText ||
		cfg.ToolMode == ToolModeAuto && (!cfg.Capabilities.Tools || c.isTextOnly(key)))
	native := hasTools && !text && cfg.Capabilities.Tools

	msg, err := c.request(ctx, req, text, native)
	if err != nil && cfg.ToolMode == ToolModeAuto && native && toolsRejected(err) {
		c.setTextOnly(key)
		c.log.Info("endpoint rejected native tools; using the text tool protocol for this model",
			"protocol", cfg.Protocol, "model", cfg.Model, "error", err)
		text, native = true, false
		msg, err = c.request(ctx, req, true, false)
	}
	if err != nil {
		return nil, err
	}
	readText := hasTools && (text || cfg.ToolMode == ToolModeAuto && len(msg.ToolCalls) == 0)
	return c.result(cfg, req.Tools, msg, text, readText)
}

// check rejects a config that cannot be used as asked.
func (c *Client) check(req Request) error {
	cfg := req.Config
	if req.Model == nil {
		return cfg.RequireEndpoint()
	}
	v := &validator{}
	const why = "needs a connection this package creates; it cannot be used with a supplied model"
	if len(cfg.Provider.Body) > 0 {
		v.add("config.provider.body", why)
	}
	if cfg.Cache.Enabled && cfg.Cache.custom() {
		v.add("config.cache", "a custom cache object "+why)
	}
	if len(cfg.Provider.VendorOptions) > 0 {
		v.add("config.provider.provider_options", why)
	}
	const params = "a supplied eino model takes only temperature, top_p, max_output_tokens, stop and tool_choice"
	p := cfg.Provider.Params
	for field, set := range map[string]bool{
		"top_k": p.TopK != nil, "seed": p.Seed != nil,
		"presence_penalty": p.PresencePenalty != nil, "frequency_penalty": p.FrequencyPenalty != nil,
	} {
		if set {
			v.add("config.provider."+field, params)
		}
	}
	if _, ok := req.Model.(HeaderModel); len(cfg.Provider.Headers) > 0 && !ok {
		v.add("config.provider.headers", "the supplied model cannot take extra headers (it does not implement llm.HeaderModel)")
	}
	return v.err()
}

// request sends one request (with retries) and returns the response message.
func (c *Client) request(ctx context.Context, req Request, text, native bool) (*schema.Message, error) {
	cfg := req.Config
	system := req.System
	if system == "" {
		system = cfg.System
	}
	cv := &converter{caps: cfg.Capabilities, fallback: cfg.MediaFallback, text: text, cache: req.Conversions}
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
	return c.retry(ctx, cfg, req.OnRetry, once)
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
	case req.Conversions != nil:
		return req.Conversions.toolSet(req.Tools)
	}
	return toolSetOf(req.Tools)
}

// streamOnce makes one streaming request, hands each delta to onDelta and
// returns the whole message. delivered says whether any delta reached onDelta.
func streamOnce(ctx context.Context, m model.ToolCallingChatModel, msgs []*schema.Message, opts []model.Option, onDelta func(Delta)) (*schema.Message, bool, error) {
	if s, ok := m.(provider.Streamer); ok {
		return streamEach(ctx, s, msgs, opts, onDelta)
	}
	sr, err := m.Stream(ctx, msgs, opts...)
	if err != nil {
		return nil, false, err
	}
	defer sr.Close()
	var chunks []*schema.Message
	delivered := false
	for {
		chunk, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, delivered, err
		}
		if chunk == nil {
			continue
		}
		chunks = append(chunks, chunk)
		if onDelta != nil && emit(chunk, onDelta) {
			delivered = true
		}
	}
	if len(chunks) == 0 {
		return nil, delivered, provider.Unknown("the stream ended without a response", nil)
	}
	msg, err := concat(chunks)
	return msg, delivered, err
}

// streamEach is streamOnce for a model that streams to a callback, which
// spares a goroutine and a channel handoff per chunk.
func streamEach(ctx context.Context, s provider.Streamer, msgs []*schema.Message, opts []model.Option, onDelta func(Delta)) (*schema.Message, bool, error) {
	var chunks []*schema.Message
	delivered := false
	err := s.StreamEach(ctx, msgs, func(chunk *schema.Message) bool {
		if chunk == nil {
			return true
		}
		chunks = append(chunks, chunk)
		if onDelta != nil && emit(chunk, onDelta) {
			delivered = true
		}
		return true
	}, opts...)
	if err != nil {
		return nil, delivered, err
	}
	if len(chunks) == 0 {
		return nil, delivered, provider.Unknown("the stream ended without a response", nil)
	}
	msg, err := concat(chunks)
	return msg, delivered, err
}

// emit hands a chunk's deltas to onDelta and reports whether there were any.
func emit(chunk *schema.Message, onDelta func(Delta)) bool {
	sent := false
	if chunk.ReasoningContent != "" {
		onDelta(Delta{Reasoning: chunk.ReasoningContent})
		sent = true
	}
	if chunk.Content != "" {
		onDelta(Delta{Text: chunk.Content})
		sent = true
	}
	for i, tc := range chunk.ToolCalls {
		idx := i
		if tc.Index != nil {
			idx = *tc.Index
		}
		onDelta(Delta{ToolCall: &ToolCallDelta{Index: idx, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		sent = true
	}
	return sent
}

// concat joins streamed chunks into one message. Extra maps are merged here
// (last value wins, reasoning data maps merged) because eino's concatenation
// cannot join every value type adapters put there; usage comes from the
// chunk that reports it, reasoning tokens included.
func concat(chunks []*schema.Message) (*schema.Message, error) {
	plain := make([]*schema.Message, len(chunks))
	extra := map[string]any{}
	reasoningData := map[string]string{}
	var usage *schema.TokenUsage
	for i, ch := range chunks {
		cp := *ch
		for k, v := range ch.Extra {
			if k == provider.ExtraReasoningData {
				for dk, dv := range provider.StringMap(v) {
					reasoningData[dk] += dv
				}
				continue
			}
			extra[k] = v
		}
		cp.Extra = nil
		if ch.ResponseMeta != nil && ch.ResponseMeta.Usage != nil {
			usage = ch.ResponseMeta.Usage
		}
		plain[i] = &cp
	}
	msg, err := schema.ConcatMessages(plain)
	if err != nil {
		return nil, provider.Unknown("cannot join the streamed response: "+err.Error(), err)
	}
	if len(reasoningData) > 0 {
		extra[provider.ExtraReasoningData] = reasoningData
	}
	if len(extra) > 0 {
		msg.Extra = extra
	}
	if usage != nil {
		if msg.ResponseMeta == nil {
			msg.ResponseMeta = &schema.ResponseMeta{}
		}
		u := *usage
		msg.ResponseMeta.Usage = &u
	}
	return msg, nil
}

// retry runs once until it succeeds or fails for good. Every failed
// attempt is logged at WARN.
func (c *Client) retry(ctx context.Context, cfg *Config, onRetry func(Retry), once func(context.Context) (*schema.Message, bool, error)) (*schema.Message, error) {
	start := c.now()
	maxElapsed := c.elapsedBound(cfg)
	for attempt := 1; ; attempt++ {
		msg, delivered, err := c.attempt(ctx, cfg.RequestTimeout, once)
		if err == nil {
			return msg, nil
		}
		if ctx.Err() != nil {
			return nil, cancelled(ctx, err)
		}
		pe := asError(err)
		if pe.Retryable && !transientStatus(pe.Status) {
			pe.Retryable = false
		}
		if !pe.Retryable || delivered || maxElapsed == NoRetry {
			c.logAttempt(cfg, attempt, pe, "not retried")
			return nil, pe
		}
		delay := c.backoff(cfg, attempt, pe.RetryAfter)
		if maxElapsed > 0 && c.now().Sub(start)+delay > maxElapsed {
			c.logAttempt(cfg, attempt, pe, "giving up: retried for "+c.now().Sub(start).Round(time.Millisecond).String()+
				", and the next wait would pass retry_max_elapsed ("+maxElapsed.String()+")")
			return nil, pe
		}
		c.logAttempt(cfg, attempt, pe, "retrying in "+delay.Round(time.Millisecond).String())
		if onRetry != nil {
			onRetry(Retry{Attempt: attempt, Err: pe, Delay: delay})
		}
		if err := c.sleep(ctx, delay); err != nil || ctx.Err() != nil {
			return nil, cancelled(ctx, pe)
		}
	}
}

// attempt makes one request within the request timeout.
func (c *Client) attempt(ctx context.Context, timeout time.Duration, once func(context.Context) (*schema.Message, bool, error)) (*schema.Message, bool, error) {
	actx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeoutCause(ctx, timeout, provider.ErrRequestTimeout)
		defer cancel()
	}
	msg, delivered, err := once(actx)
	if err == nil && msg == nil {
		err = provider.Unknown("the model returned no message", nil)
	}
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), provider.ErrRequestTimeout) {
		pe := asError(err)
		if pe.Kind != KindTimeout {
			pe = &Error{Kind: KindTimeout, Retryable: true, Message: fmt.Sprintf("model request timed out after %v", timeout), Err: err}
		}
		return nil, delivered, pe
	}
	return msg, delivered, err
}

// backoff is the wait before retry number attempt: the server's Retry-After
// when given, else base·2^(attempt-1); either capped by RetryMaxDelay, and
// the exponential one spread by jitter over its upper half.
func (c *Client) backoff(cfg *Config, attempt int, retryAfter time.Duration) time.Duration {
	maxDelay := c.delayBound(cfg)
	d := retryAfter
	if d <= 0 {
		d = cfg.RetryBaseDelay
		for i := 1; i < attempt && d < maxDelay && d < 24*time.Hour; i++ {
			d *= 2
		}
		d = min(d, maxDelay)
		return max(d/2+time.Duration(c.jitter()*float64(d/2)), 0)
	}
	return max(min(d, maxDelay), 0)
}

// asError makes any error a *Error. Errors from a caller's eino model that
// are not *Error count as network failures when they come from the
// transport, else as unknown.
func asError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return provider.FromTransport(context.Background(), err)
	}
	return &Error{Kind: KindUnknown, Message: err.Error(), Err: err}
}

// cancelled is the error of a request whose caller's context ended.
func cancelled(ctx context.Context, err error) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Kind: KindTimeout, Message: "the caller's deadline passed", Err: err}
	}
	return &Error{Kind: KindAborted, Message: "request cancelled", Err: err}
}

// result turns the response message into a Result.
func (c *Client) result(cfg *Config, tools []Tool, msg *schema.Message, text, readText bool) (*Result, error) {
	res := &Result{Reasoning: msg.ReasoningContent, TextProtocol: text}
	res.ResponseModel, _ = msg.Extra[provider.ExtraResponseModel].(string)
	if msg.ResponseMeta != nil {
		res.FinishReason = msg.ResponseMeta.FinishReason
	}
	res.Usage = usageOf(msg)
	var parts []*agentv1.Part
	data := provider.StringMap(msg.Extra[provider.ExtraReasoningData])
	if msg.ReasoningContent != "" || len(data) > 0 {
		parts = append(parts, &agentv1.Part{Kind: &agentv1.Part_Reasoning{Reasoning: &agentv1.ReasoningPart{Text: msg.ReasoningContent, ProviderData: data}}})
	}
	var calls []*agentv1.Part
	for _, tc := range msg.ToolCalls {
		part := &agentv1.ToolCallPart{Id: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if part.Id == "" {
			part.Id = c.newID()
		}
		if d := provider.StringMap(tc.Extra[provider.ExtraToolCallData]); len(d) > 0 {
			part.ProviderData = copyMap(d)
		}
		if strings.TrimSpace(part.Arguments) == "" {
			part.Arguments = "{}"
		}
		if problem := argumentsProblem(part); problem != "" {
			res.InvalidToolCalls = append(res.InvalidToolCalls, InvalidToolCall{
				ID: part.Id, Name: part.Name, Arguments: part.Arguments,
				Feedback: "The arguments of your call to " + part.Name + " are not a valid JSON object (" + problem + "). Call the tool again with valid JSON arguments.",
			})
		} else {
			res.ToolCalls = append(res.ToolCalls, part)
		}
		calls = append(calls, &agentv1.Part{Kind: &agentv1.Part_ToolCall{ToolCall: part}})
	}
	res.Text = msg.Content
	if readText && strings.TrimSpace(msg.Content) != "" {
		reply := texttool.Parse(msg.Content, tools, texttool.Options{Loose: text})
		res.Text = reply.Text
		for _, call := range reply.Calls {
			part := &agentv1.ToolCallPart{Id: c.newID(), Name: call.Name, Arguments: call.Arguments}
			if call.Invalid() {
				part.Arguments = call.Raw
				res.InvalidToolCalls = append(res.InvalidToolCalls, InvalidToolCall{ID: part.Id, Name: call.Name, Arguments: call.Raw, Feedback: call.Feedback()})
			} else {
				res.ToolCalls = append(res.ToolCalls, part)
			}
			calls = append(calls, &agentv1.Part{Kind: &agentv1.Part_ToolCall{ToolCall: part}})
		}
		if len(reply.Calls) > 0 {
			res.TextProtocol = true
			if res.FinishReason == "" || res.FinishReason == provider.FinishStop {
				res.FinishReason = provider.FinishToolCalls
			}
		}
	}
	if res.Text != "" {
		parts = append(parts, &agentv1.Part{Kind: &agentv1.Part_Text{Text: res.Text}})
	}
	parts = append(parts, calls...)
	res.Message = &agentv1.Message{
		Role:         agentv1.Role_ROLE_ASSISTANT,
		Parts:        parts,
		CreateTime:   timestamppb.New(c.now()),
		Usage:        res.Usage,
		FinishReason: res.FinishReason,
	}
	if cfg.Output != nil && len(calls) == 0 {
		out, err := parseOutput(cfg.Output, res.Text)
		if err != nil {
			return res, err
		}
		res.Output = out
	}
	return res, nil
}

// argumentsProblem says why a native call's arguments cannot be run, or ""
// when they can: a JSON object, or, for a call to a custom (freeform) tool,
// the JSON string holding the model's free text.
func argumentsProblem(c *agentv1.ToolCallPart) string {
	if provider.IsFreeform(c.GetProviderData()) {
		var s string
		if json.Unmarshal([]byte(c.GetArguments()), &s) == nil {
			return ""
		}
	}
	return objectProblem(c.GetArguments())
}

// objectProblem says why text is not a JSON object, or "" when it is one.
func objectProblem(text string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	if obj == nil {
		return "null is not an object"
	}
	return ""
}

// usageOf reads the normalised usage of a response.
func usageOf(msg *schema.Message) *agentv1.Usage {
	u := &agentv1.Usage{}
	if msg.ResponseMeta != nil && msg.ResponseMeta.Usage != nil {
		t := msg.ResponseMeta.Usage
		u.InputTokens = int64(t.PromptTokens)
		u.OutputTokens = int64(t.CompletionTokens)
		u.TotalTokens = int64(t.TotalTokens)
		u.CacheReadTokens = int64(t.PromptTokenDetails.CachedTokens)
		u.ReasoningTokens = int64(t.CompletionTokensDetails.ReasoningTokens)
	}
	u.CacheWriteTokens = toInt64(msg.Extra[provider.ExtraCacheWriteTokens])
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}
