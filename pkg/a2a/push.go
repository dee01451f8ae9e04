package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"
	"google.golang.org/grpc/metadata"

	"github.com/agentcore/agentcore/pkg/webhook"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Bounds of the push notification configurations kept in memory.
const (
	maxPushConfigsPerTask = 10
	maxPushTasks          = 1000
)

// Pusher delivers A2A push notifications: agent-server's webhook machinery
// (signed, retried with backoff, only to the operator's allowed hosts).
type Pusher interface {
	// Check refuses a URL the server may not call (e.g. a host outside the
	// allowed ones), with a message for the client.
	Check(url string) error
	// Push delivers task (as the notification's JSON body) to cfg.URL,
	// with cfg.Token and cfg.Auth as the client asked. It must not block:
	// delivery, retries and their logs are the Pusher's.
	Push(cfg a2a.PushConfig, task *a2a.Task)
}

// pushConfigs holds the push notification configurations of the tasks.
type pushConfigs struct {
	mu      sync.Mutex
	byTask  map[a2a.TaskID][]a2a.PushConfig
	watched map[a2a.TaskID]bool
}

func newPushConfigs() *pushConfigs {
	return &pushConfigs{byTask: map[a2a.TaskID][]a2a.PushConfig{}, watched: map[a2a.TaskID]bool{}}
}

// checkPush refuses a push configuration when the server sends none, or to a URL it may not call.
func (rh *requestHandler) checkPush(cfg *a2a.PushConfig) error {
	if rh.h.opts.Push == nil {
		return a2a.ErrPushNotificationNotSupported
	}
	if cfg.URL == "" {
		return fmt.Errorf("%w: pushNotificationConfig.url is required", a2a.ErrInvalidParams)
	}
	if err := rh.h.opts.Push.Check(cfg.URL); err != nil {
		return fmt.Errorf("%w: pushNotificationConfig.url: %v", a2a.ErrInvalidParams, err)
	}
	return nil
}

// watch adds cfg to the task's configurations and, unless it is watched
// already, follows its run, pushing the task whenever it waits for input
// and once it ends.
func (rh *requestHandler) watch(id a2a.TaskID, cfg a2a.PushConfig) {
	h := rh.h
	h.push.mu.Lock()
	defer h.push.mu.Unlock()
	if cfg.ID == "" {
		cfg.ID = string(id)
	}
	list := h.push.byTask[id]
	for i, c := range list {
		if c.ID == cfg.ID {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	h.push.byTask[id] = append(list, cfg)
	if h.push.watched[id] {
		return
	}
	h.push.watched[id] = true
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer func() {
			h.push.mu.Lock()
			delete(h.push.watched, id)
			delete(h.push.byTask, id)
			h.push.mu.Unlock()
		}()
		rh.pushWatch(metadata.NewOutgoingContext(h.ctx, rh.md), id)
	}()
}

// pushWatch follows the task's run from its start and pushes the task, as
// its events leave it, each time the run waits for input and when it ends.
func (rh *requestHandler) pushWatch(ctx context.Context, id a2a.TaskID) {
	st, err := rh.h.client.Attach(ctx, &agentv1.AttachRequest{RunId: string(id)})
	if err != nil {
		return
	}
	t := &translator{task: a2a.TaskInfo{TaskID: id, ContextID: rh.agentID}}
	task := &a2a.Task{ID: id, ContextID: rh.agentID}
	for {
		resp, err := st.Recv()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, io.EOF) {
				rh.pushTask(apply(task, t.ended(err)))
			}
			return
		}
		evs, final := t.event(resp.GetEvent())
		for _, e := range evs {
			task = apply(task, e)
		}
		if final {
			rh.pushTask(task)
		}
	}
}

// pushTask sends the task to its configurations.
func (rh *requestHandler) pushTask(task *a2a.Task) {
	rh.h.push.mu.Lock()
	cfgs := append([]a2a.PushConfig(nil), rh.h.push.byTask[task.ID]...)
	rh.h.push.mu.Unlock()
	for _, c := range cfgs {
		rh.h.opts.Push.Push(c, task)
	}
}

// OnSetTaskPushConfig sets a push notification configuration of a task.
func (rh *requestHandler) OnSetTaskPushConfig(ctx context.Context, p *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	if err := rh.checkPush(&p.Config); err != nil {
		return nil, err
	}
	if _, err := rh.run(ctx, p.TaskID); err != nil {
		return nil, err
	}
	rh.h.push.mu.Lock()
	n, tasks := len(rh.h.push.byTask[p.TaskID]), len(rh.h.push.byTask)
	rh.h.push.mu.Unlock()
	if n >= maxPushConfigsPerTask || (n == 0 && tasks >= maxPushTasks) {
		return nil, fmt.Errorf("%w: too many push notification configurations (at most %d per task, %d tasks)", a2a.ErrServerError, maxPushConfigsPerTask, maxPushTasks)
	}
	rh.watch(p.TaskID, p.Config)
	out := *p
	if out.Config.ID == "" {
		out.Config.ID = string(p.TaskID)
	}
	return &out, nil
}

// OnGetTaskPushConfig returns one push notification configuration of a task.
func (rh *requestHandler) OnGetTaskPushConfig(ctx context.Context, p *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	list, err := rh.OnListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: p.TaskID})
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if p.ConfigID == "" || c.Config.ID == p.ConfigID {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w: task %s has no push notification configuration %q", a2a.ErrInvalidParams, p.TaskID, p.ConfigID)
}

// OnListTaskPushConfig lists the push notification configurations of a task.
func (rh *requestHandler) OnListTaskPushConfig(ctx context.Context, p *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	if rh.h.opts.Push == nil {
		return nil, a2a.ErrPushNotificationNotSupported
	}
	if _, err := rh.run(ctx, p.TaskID); err != nil {
		return nil, err
	}
	rh.h.push.mu.Lock()
	defer rh.h.push.mu.Unlock()
	out := []*a2a.TaskPushConfig{}
	for _, c := range rh.h.push.byTask[p.TaskID] {
		out = append(out, &a2a.TaskPushConfig{TaskID: p.TaskID, Config: c})
	}
	return out, nil
}

// OnDeleteTaskPushConfig removes a push notification configuration of a task.
func (rh *requestHandler) OnDeleteTaskPushConfig(ctx context.Context, p *a2a.DeleteTaskPushConfigParams) error {
	if rh.h.opts.Push == nil {
		return a2a.ErrPushNotificationNotSupported
	}
	if _, err := rh.run(ctx, p.TaskID); err != nil {
		return err
	}
	rh.h.push.mu.Lock()
	defer rh.h.push.mu.Unlock()
	list := rh.h.push.byTask[p.TaskID]
	for i, c := range list {
		if c.ID == p.ConfigID {
			rh.h.push.byTask[p.TaskID] = append(list[:i], list[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%w: task %s has no push notification configuration %q", a2a.ErrInvalidParams, p.TaskID, p.ConfigID)
}

// PushType is the webhook type of an A2A push notification (logs, metrics, spans).
const PushType = "a2a.task"

// WebhookPusher sends push notifications with agent-server's webhook
// machinery: each is the task's JSON, posted by s (signed, retried,
// only to the hosts its operator allows), with the client's token in
// X-A2A-Notification-Token and, when the client gave Bearer credentials
// for its endpoint, those in Authorization.
func WebhookPusher(s *webhook.Sender) Pusher { return webhookPusher{s} }

type webhookPusher struct{ s *webhook.Sender }

// Check refuses a URL outside the allowed hosts.
func (p webhookPusher) Check(url string) error { return p.s.Allowed(url) }

// Push enqueues the task's notification; a refusal (too many pending) is
// the Sender's to log and count.
func (p webhookPusher) Push(cfg a2a.PushConfig, task *a2a.Task) {
	body, err := json.Marshal(task)
	if err != nil {
		return
	}
	h := http.Header{}
	if cfg.Token != "" {
		h.Set("X-A2A-Notification-Token", cfg.Token)
	}
	if a := cfg.Auth; a != nil && a.Credentials != "" && slices.ContainsFunc(a.Schemes, func(s string) bool { return strings.EqualFold(s, "bearer") }) {
		h.Set("Authorization", "Bearer "+a.Credentials)
	}
	_ = p.s.Enqueue(webhook.Message{URL: cfg.URL, Type: PushType, Body: body, Header: h})
}
