package agent

import (
	"context"
	"time"

	"github.com/agentcore/agentcore/pkg/agent/hostreq"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// hostHandler answers what tool call id of step asks its host while it
// runs (hostreq): the run's stream and OnElicit for the person behind the
// run; its permission mode, budget and model for sampling.
func (r *run) hostHandler(step int, id, name string) *tool.HostHandler {
	sp, _ := r.tools.set.Lookup(name)
	c := &hostreq.Call{RunID: r.id, ToolCallID: id, ToolName: name, Emit: r.emit.emit, OnElicit: r.onElicit, Credential: r.onCredential,
		Config: r.cfg, Redact: r.session.opts.RedactToolOutput, Source: sp.Source}
	c.Chat = func(ctx context.Context, req llm.Request) (*llm.Result, error) { return r.sample(ctx, step, id, req) }
	if r.session.opts.ExpandProfile != nil {
		c.Profile = func(p string) (*llm.Config, error) { return r.session.resolve(&agentv1.AgentConfig{Profile: &p}, true) }
	}
	if r.perm.asks(name) {
		c.Ask = func(ctx context.Context, reqID, args string) (bool, string) {
			r.emit.permissionRequest(reqID, name, args, false)
			d := r.perm.fn(ctx, PermissionRequest{RunID: r.id, Step: step, ToolCallID: reqID, ToolName: name, Arguments: args})
			return d.Allow, d.Reason
		}
	}
	return c.Handler()
}

// sample asks req.Config's model (the run's, or a profile's) for a tool's
// sampling request, as one more model request of the run's budget; its
// tokens count in the run's usage, the session's and the budget's, priced
// on the model that answered; the Observer sees it as a model request
// marked with the call's id. Calls of one round sample in parallel.
func (r *run) sample(ctx context.Context, step int, callID string, req llm.Request) (*llm.Result, error) {
	if be := r.budget.take(true); be != nil {
		return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED, Message: be.Error()}
	}
	req.Model = r.session.modelFor(req.Config, false)
	obs := r.session.opts.Observer
	mc := &ModelCall{Run: &r.info, Step: step, Protocol: string(req.Config.Protocol), Model: req.Config.Model, SamplingFor: callID,
		System: req.System, Messages: req.Messages, Start: time.Now()}
	ctx = obs.ModelStarted(ctx, mc)
	req.OnRetry = func(rt llm.Retry) { obs.ModelRetried(ctx, mc, rt) }
	out, err := r.session.opts.LLM.Chat(ctx, req)
	obs.ModelEnded(ctx, mc, out, err)
	if err != nil || out.Usage == nil {
		return out, err
	}
	r.sampleMu.Lock()
	addUsage(r.usage, out.Usage)
	r.sampleMu.Unlock()
	r.session.mu.Lock()
	addUsage(r.session.usage, out.Usage)
	r.session.mu.Unlock()
	price := r.price
	if c := req.Config; (c.Profile != r.cfg.Profile || c.Model != r.cfg.Model) && r.session.opts.Price != nil {
		price, _ = r.session.opts.Price(req.Config.Profile, req.Config.Model)
	}
	r.budget.spent(out.Usage, price)
	return out, nil
}
