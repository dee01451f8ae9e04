package agent

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cloudwego/eino/components/model"

	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/window"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// A round's request goes to the config's model. When it fails, after that
// model's own retries, with an error of a kind the config falls back on
// (config.fallback.on), the same request goes to the first fallback model,
// and so on down the list, each model once; a FallbackEvent says so
// before each. The next round starts again with the main model. A
// fallback's answer is recorded as any other, its usage priced at its own
// model's price. When the last model fails too, or one fails with a kind
// that does not fall back, the round fails with an error naming every
// model's error. The history goes to a fallback as it is: pkg/llm leaves
// out the reasoning and provider data another protocol wrote.

// Fallback describes a request to a fallback model to an Observer.
type Fallback struct {
	// Index is 1 for the first fallback model, 2 for the second…
	Index int
	// FromProtocol and FromModel are the model whose request failed;
	// Kind is its error's kind.
	FromProtocol, FromModel string
	Kind                    llm.Kind
}

// roundModel is one model a round may ask.
type roundModel struct {
	cfg   *llm.Config
	model model.ToolCallingChatModel // a caller's eino model, nil for the config's endpoint
	conv  *llm.ConversionCache
	price Price
	// reached says that this model answered an earlier request of the run.
	reached bool
}

// ask sends a round's request, falling back as the config says; it returns
// the answer (set with err when a structured answer failed its schema)
// and the price of the model that gave it.
func (r *run) ask(ctx context.Context, step int, w *window.Context, tools *llm.ToolSet) (*llm.Result, Price, error) {
	m := roundModel{cfg: r.cfg, model: r.session.modelFor(r.cfg, false), conv: &r.conv, price: r.price, reached: step > 1}
	out, err := r.request(ctx, step, w, tools, m, nil)
	fb := r.cfg.Fallback
	if err == nil || ctx.Err() != nil || fb == nil {
		return out, m.price, err
	}
	failures := []modelFailure{{cfg: m.cfg, err: err}}
	for i := range fb.Models {
		e, ok := fb.FallsBack(err)
		if !ok {
			break
		}
		next := roundModel{cfg: r.cfg.FallbackConfig(i)}
		// A client's own endpoint has no price; a profile's or the main
		// endpoint's model has the server's.
		if own := fb.Models[i]; r.session.opts.Price != nil && (own.Profile != "" || own.BaseURL == "") {
			next.price, _ = r.session.opts.Price(next.cfg.Profile, next.cfg.Model)
		}
		r.info.Fallbacks++
		r.emit.fallback(step, i+1, e, m.cfg, next.cfg)
		info := &Fallback{Index: i + 1, FromProtocol: string(m.cfg.Protocol), FromModel: m.cfg.Model, Kind: e.Kind}
		r.session.opts.Logger.Info("model request failed; falling back", "agent", r.session.id, "run", r.id, "step", step,
			"from", m.cfg.Model, "to", next.cfg.Model, "kind", string(e.Kind))
		m = next
		out, err = r.request(ctx, step, w, tools, m, info)
		if err == nil || ctx.Err() != nil {
			return out, m.price, err
		}
		failures = append(failures, modelFailure{cfg: m.cfg, err: err, index: i + 1})
	}
	if len(failures) == 1 {
		return out, m.price, err
	}
	return out, m.price, allFailed(failures)
}

// request sends a round's request to one model, telling the Observer.
func (r *run) request(ctx context.Context, step int, w *window.Context, tools *llm.ToolSet, m roundModel, fb *Fallback) (*llm.Result, error) {
	obs := r.session.opts.Observer
	mc := r.modelCall(step, w, false)
	mc.Protocol, mc.Model, mc.Fallback = string(m.cfg.Protocol), m.cfg.Model, fb
	mctx := obs.ModelStarted(ctx, mc)
	out, err := r.session.opts.LLM.Chat(mctx, llm.Request{
		Config:          m.cfg,
		System:          w.System,
		Messages:        w.Messages,
		ToolSet:         tools,
		Model:           m.model,
		ConversionCache: m.conv,
		Reached:         m.reached, // the run's earlier requests were answered
		OnDelta: func(d llm.Delta) {
			if mc.FirstDelta.IsZero() {
				mc.FirstDelta = time.Now()
			}
			r.emit.delta(step, d)
		},
		OnRetry: func(rt llm.Retry) {
			r.emit.retry(rt, false)
			obs.ModelRetried(mctx, mc, rt)
		},
	})
	obs.ModelEnded(mctx, mc, out, err)
	return out, err
}

// modelFailure is the error of one model a round asked.
type modelFailure struct {
	cfg   *llm.Config
	err   error
	index int // 0 for the main model
}

// allFailed is the error of a round every model failed: the last model's
// error (its kind, status and code decide the send's status), its message
// naming each model and its error in turn.
func allFailed(fs []modelFailure) error {
	var last *llm.Error
	if !errors.As(fs[len(fs)-1].err, &last) {
		return fs[len(fs)-1].err // not a model's failure (a bad config, the journal): as it is
	}
	var b strings.Builder
	b.WriteString("every model failed: ")
	errs := make([]error, 0, len(fs))
	for i, f := range fs {
		if i > 0 {
			b.WriteString("; then ")
		}
		if f.index > 0 {
			b.WriteString("fallback " + strconv.Itoa(f.index) + ", ")
		}
		b.WriteString(describeModel(f.cfg) + ": " + f.err.Error())
		errs = append(errs, f.err)
	}
	out := *last
	out.Message, out.Endpoint, out.Err = b.String(), "", errors.Join(errs...)
	return &out
}

// describeModel names a model in an error: protocol, model, profile and host.
func describeModel(c *llm.Config) string {
	s := string(c.Protocol) + " model " + c.Model
	if c.Profile != "" {
		s += " (profile " + c.Profile + ")"
	}
	if h := baseURLHost(c.BaseURL); h != "" {
		s += " at " + h
	}
	return s
}

// modelRef names a model in an event.
func modelRef(c *llm.Config) *agentv1.ModelRef {
	return &agentv1.ModelRef{Profile: c.Profile, Model: c.Model, Protocol: string(c.Protocol), BaseUrlHost: baseURLHost(c.BaseURL)}
}

// baseURLHost is the host of a base URL (never its path or query, which may
// hold a key); "" when it has none.
func baseURLHost(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return ""
}

// fallback emits that a round goes to fallback model index.
func (e *emitter) fallback(step, index int, err *llm.Error, from, to *llm.Config) {
	if !e.on() {
		return
	}
	e.emit(&agentv1.Event{Kind: &agentv1.Event_Fallback{Fallback: &agentv1.FallbackEvent{
		Step: int32(step), Kind: ErrorKind(err.Kind), Message: err.Error(), Status: int32(err.Status),
		From: modelRef(from), To: modelRef(to), Index: int32(index),
	}}})
}
