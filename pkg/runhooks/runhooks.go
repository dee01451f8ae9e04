// Package runhooks posts the webhooks of runs: a run whose config names a
// webhook (config.webhook, the agent's or the send's) has a summary of it
// posted when it ends (run.ended), and, with on_permission, each
// permission request it makes (run.permission_requested), by a
// webhook.Sender: signed, in the background, retried (docs/webhooks.md).
// The summary says what GetRun says of the run but its result's text and
// output, its error's message and anything secret: a receiver reads the
// rest with GetRun, with its own credential.
package runhooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	rpccode "google.golang.org/genproto/googleapis/rpc/code"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/webhook"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Event types.
const (
	RunEnded            = "run.ended"
	PermissionRequested = "run.permission_requested"
)

// Hooks posts the webhooks of a server's runs. A nil *Hooks (no host
// allowed) posts none; its methods do nothing.
type Hooks struct {
	sender *webhook.Sender
	log    hclog.Logger
}

// New returns the hooks of cfg.Webhooks, nil when the operator allowed no
// host (-webhook-allowed-hosts).
func New(cfg *config.Config, log hclog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (*Hooks, error) {
	w := cfg.Webhooks
	if len(w.AllowedHosts) == 0 {
		return nil, nil
	}
	allow, err := webhook.ParseAllow(w.AllowedHosts)
	if err != nil {
		return nil, err
	}
	key, err := webhook.ParseSecret(w.Secret)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	s, err := webhook.New(webhook.Options{Key: key, Allow: allow, MaxAttempts: w.MaxAttempts, MaxElapsed: w.MaxElapsed,
		Backoff: w.Backoff, MaxBackoff: w.MaxBackoff, Timeout: w.Timeout, Logger: log, Registerer: reg, TracerProvider: tp})
	if err != nil {
		return nil, err
	}
	return &Hooks{sender: s, log: log}, nil
}

// Sender returns the sender of the hooks (nil for nil hooks), for other
// notifications (A2A push).
func (h *Hooks) Sender() *webhook.Sender {
	if h == nil {
		return nil
	}
	return h.sender
}

// Close gives the webhooks still pending up to grace, then drops them.
func (h *Hooks) Close(grace time.Duration) {
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	h.sender.Close(ctx)
}

// Target is where the webhooks of one run go.
type Target struct {
	url          string
	onPermission bool
	// agentID is the agent's id as its client knows it.
	agentID string
}

// Target returns the webhook of a run of the agent agentID whose stored
// config is stored and whose send's override is override (nil: none),
// expanded with its profiles by expand (a profile's defaults may name
// one); nil when it has none.
func (h *Hooks) Target(expand func(*agentv1.AgentConfig) (*agentv1.AgentConfig, error), stored, override *agentv1.AgentConfig, agentID string) *Target {
	if h == nil {
		return nil
	}
	c := agent.MergeConfig(stored, override)
	if exp, err := expand(c); err == nil {
		c = exp
	}
	w := c.GetWebhook()
	if w.GetUrl() == "" {
		return nil
	}
	return &Target{url: w.GetUrl(), onPermission: w.GetOnPermission(), agentID: agentID}
}

// Asking returns ask, posting a run.permission_requested webhook before
// each request when t asks for them.
func (h *Hooks) Asking(t *Target, ask agent.PermissionFunc) agent.PermissionFunc {
	if h == nil || t == nil || !t.onPermission {
		return ask
	}
	return func(ctx context.Context, req agent.PermissionRequest) agent.Decision {
		h.post(t, "msg_"+req.RunID+"_permission_"+req.ToolCallID, PermissionRequested, map[string]any{
			"run_id": req.RunID, "agent_id": t.agentID, "tool_call_id": req.ToolCallID, "tool_name": req.ToolName, "step": req.Step,
		})
		return ask(ctx, req)
	}
}

// readTimeout bounds the read of a run's end for its webhook.
const readTimeout = 5 * time.Second

// Ended posts the run.ended webhook of a run whose end is stored, as
// getRun reads it (end, when it cannot).
func (h *Hooks) Ended(t *Target, end store.RunEnd, getRun func(context.Context, string) (*store.Run, error)) {
	if h == nil || t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	r, err := getRun(ctx, end.RunID)
	if err != nil {
		r = &store.Run{ID: end.RunID, State: end.State, Result: end.Result, Error: end.Error, Ended: time.Now()}
	}
	h.post(t, "msg_"+end.RunID+"_ended", RunEnded, summary(t, r))
}

// post hands one event to the sender; a refusal is logged and counted
// there.
func (h *Hooks) post(t *Target, id, typ string, data map[string]any) {
	body, err := webhook.Event(typ, time.Now(), data)
	if err == nil {
		err = h.sender.Enqueue(webhook.Message{URL: t.url, ID: id, Type: typ, Body: body})
	}
	if err != nil && !errors.Is(err, webhook.ErrClosed) {
		h.log.Warn("webhook not sent", "id", id, "type", typ, "error", err)
	}
}

// summary is the data of a run.ended webhook: the run as GetRun shows it,
// but its result's text and output, its error's message and metadata.
func summary(t *Target, r *store.Run) map[string]any {
	d := map[string]any{
		"run_id":   r.ID,
		"agent_id": t.agentID,
		"state":    enumWord(r.State.String(), "RUN_STATE_"),
		"attempts": r.Attempts,
	}
	if !r.Started.IsZero() {
		d["start_time"] = r.Started.UTC().Format(time.RFC3339Nano)
		d["duration_ms"] = r.Ended.Sub(r.Started).Milliseconds()
	}
	if !r.Ended.IsZero() {
		d["end_time"] = r.Ended.UTC().Format(time.RFC3339Nano)
	}
	if r.ParentRunID != "" {
		d["parent_run_id"], d["root_run_id"], d["depth"] = r.ParentRunID, r.RootRunID, r.Depth
	}
	if res := r.Result; res != nil {
		d["end_reason"] = enumWord(res.GetReason().String(), "END_REASON_")
		d["steps"] = res.GetSteps()
		u := res.GetUsage()
		d["usage"] = map[string]int64{"input_tokens": u.GetInputTokens(), "output_tokens": u.GetOutputTokens(),
			"total_tokens": u.GetTotalTokens(), "cache_read_tokens": u.GetCacheReadTokens(),
			"cache_write_tokens": u.GetCacheWriteTokens(), "reasoning_tokens": u.GetReasoningTokens()}
		if ru := res.GetRunUsage(); ru != nil {
			d["model_requests"], d["tool_calls"], d["child_runs"] = ru.GetModelRequests(), ru.GetToolCalls(), ru.GetChildRuns()
			if ru.GetCost() != 0 {
				d["cost"] = ru.GetCost()
			}
		}
	}
	if e := r.Error; e != nil {
		d["error"] = map[string]string{"code": rpccode.Code(e.GetCode()).String(), "reason": e.GetReason()}
	}
	return d
}

// enumWord is an enum value's name without its prefix, in lower case:
// RUN_STATE_SUCCEEDED is "succeeded".
func enumWord(name, prefix string) string {
	return strings.ToLower(strings.TrimPrefix(name, prefix))
}
