package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	rpccode "google.golang.org/genproto/googleapis/rpc/code"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/webhook"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Webhooks: a run whose config names a webhook (config.webhook, the
// agent's or the send's) has a summary of it posted when it ends
// (run.ended), and of each permission request it asks with on_permission
// (run.permission_requested), by the server's webhook.Sender: signed, in
// the background, retried. The summary says what GetRun says of the run
// but its result's text and output, its error's message and anything
// secret: a receiver reads the rest with GetRun, with its own credential.

// Event types of the webhooks.
const (
	hookRunEnded      = "run.ended"
	hookPermissionAsk = "run.permission_requested"
)

// newWebhooks returns the server's webhook sender, nil when the operator
// allowed no host (a config naming a webhook is then refused).
func (s *Server) newWebhooks() (*webhook.Sender, error) {
	w := s.cfg.Webhooks
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
	return webhook.New(webhook.Options{Key: key, Allow: allow, MaxAttempts: w.MaxAttempts, MaxElapsed: w.MaxElapsed,
		Backoff: w.Backoff, MaxBackoff: w.MaxBackoff, Timeout: w.Timeout, Logger: s.log.Named("webhook"),
		Registerer: s.tel.Registry(), TracerProvider: s.tel.TracerProvider()})
}

// Webhooks returns the server's webhook sender (nil when -webhook-allowed-hosts
// allows no host), for other listeners' notifications (A2A push).
func (s *Server) Webhooks() *webhook.Sender { return s.hooks }

// checkWebhook refuses a config (at field, e.g. "agent.config") whose
// webhook URL the operator does not allow.
func (s *Server) checkWebhook(c *agentv1.AgentConfig, field string) error {
	u := c.GetWebhook().GetUrl()
	if u == "" {
		return nil
	}
	err := errors.New("this server sends no webhooks (its operator allowed no host: -webhook-allowed-hosts)")
	if s.hooks != nil {
		err = s.hooks.Allowed(u)
	}
	if err != nil {
		return apierr.InvalidField(field+".webhook.url", "%v", err)
	}
	return nil
}

// runHook is where the webhooks of one run go.
type runHook struct {
	url          string
	onPermission bool
	// agentID is the agent's id as its client knows it.
	agentID string
}

// hookOf returns the webhook of a run of sess with the send's config
// override (nil: none), or nil when it has none.
func (s *Server) hookOf(sess *session, override *agentv1.AgentConfig) *runHook {
	if s.hooks == nil {
		return nil
	}
	c := agent.MergeConfig(sess.engine.StoredConfig(), override)
	if exp, err := sess.expand(c); err == nil {
		c = exp // a profile's defaults may name one
	}
	w := c.GetWebhook()
	if w.GetUrl() == "" {
		return nil
	}
	return &runHook{url: w.GetUrl(), onPermission: w.GetOnPermission(), agentID: agentID(sess.id)}
}

// withPermissionHook posts a run.permission_requested webhook, when the
// run's webhook asks for them, before asking.
func (s *Server) withPermissionHook(ask agent.PermissionFunc) agent.PermissionFunc {
	if s.hooks == nil {
		return ask
	}
	return func(ctx context.Context, req agent.PermissionRequest) agent.Decision {
		if h := runOptionsFrom(ctx).hook; h != nil && h.onPermission {
			s.postHook(h, "msg_"+req.RunID+"_permission_"+req.ToolCallID, hookPermissionAsk, map[string]any{
				"run_id": req.RunID, "agent_id": h.agentID, "tool_call_id": req.ToolCallID, "tool_name": req.ToolName, "step": req.Step,
			})
		}
		return ask(ctx, req)
	}
}

// hookTimeout bounds the read of a run's end for its webhook.
const hookTimeout = 5 * time.Second

// runEnded posts the run.ended webhook of a run whose end is stored.
func (s *Server) runEnded(h *runHook, runID string, end store.RunEnd) {
	ctx, cancel := context.WithTimeout(context.Background(), hookTimeout)
	defer cancel()
	r, err := s.store.GetRun(ctx, runID)
	if err != nil { // what the run's end said, without the store's times
		r = &store.Run{ID: runID, State: end.State, Result: end.Result, Error: end.Error, Ended: time.Now()}
	}
	s.postHook(h, "msg_"+runID+"_ended", hookRunEnded, runSummary(h, r))
}

// postHook hands one event to the sender; a refusal is logged and counted
// there.
func (s *Server) postHook(h *runHook, id, typ string, data map[string]any) {
	body, err := webhook.Event(typ, time.Now(), data)
	if err == nil {
		err = s.hooks.Enqueue(webhook.Message{URL: h.url, ID: id, Type: typ, Body: body})
	}
	if err != nil {
		s.log.Warn("webhook not sent", "id", id, "type", typ, "error", err)
	}
}

// runSummary is the data of a run.ended webhook: the run as GetRun shows
// it, but its result's text and output, its error's message and metadata.
func runSummary(h *runHook, r *store.Run) map[string]any {
	d := map[string]any{
		"run_id":   r.ID,
		"agent_id": h.agentID,
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
