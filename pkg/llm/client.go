package llm

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/hashicorp/go-hclog"
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
	// RetryUnreachable, when positive, bounds the retrying of a request
	// whose every attempt failed to reach the service (Error.Unreachable)
	// and whose caller has not been answered yet (Request.Reached false):
	// a wrong base URL or a service that is down fails within it instead of
	// after RetryMaxElapsed. NoRetry fails such a request at its first
	// attempt; zero sets no bound of its own.
	RetryUnreachable time.Duration
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
	// maxElapsed, maxDelay and unreachable are Options.RetryMaxElapsed,
	// RetryMaxDelay and RetryUnreachable.
	maxElapsed, maxDelay, unreachable time.Duration

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

		maxElapsed:  opts.RetryMaxElapsed,
		maxDelay:    opts.RetryMaxDelay,
		unreachable: opts.RetryUnreachable,
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

// errNoConfig is returned by Chat when the request has no Config.
var errNoConfig = errors.New("llm: request has no Config")
