package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/pkg/tool/limits"
	"github.com/agentcore/agentcore/pkg/tool/schema"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// ErrNotConnected is a scan's error for a plugin that cannot describe its
// tools until a person connects what it serves (an MCP server that needs
// OAuth consent): the scan leaves its tools out, with a warning, instead
// of failing. A plugin says so by failing its Describe on the Session with
// FAILED_PRECONDITION.
var ErrNotConnected = errors.New("not connected")

// describe asks one plugin for its tools, leaving the process idle in its pool.
func (h *Host) describe(ctx context.Context, cmd Command) ([]*entry, error) {
	pl, err := h.poolFor(cmd, true)
	if err != nil {
		return nil, err
	}
	pr, err := pl.get(ctx, h.limitsFor(cmd, "", limits.Limits{}))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", cmd.source(), err)
	}
	limit := cmd.DescribeTimeout
	if limit <= 0 {
		limit = DefaultDescribeTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, limit)
	var resp *pluginv1.DescribeResponse
	if cmd.DescribeOnSession {
		resp, err = pr.describeSession(dctx, h.cfg.ScanHost, cmd.source())
	} else {
		resp, err = pr.rpc.Describe(dctx, &pluginv1.DescribeRequest{})
	}
	timedOut := dctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	cancel()
	if err != nil {
		pl.discard(pr)
		if timedOut {
			return nil, fmt.Errorf("plugin %s: Describe timed out after %s", cmd.source(), limit)
		}
		if cmd.DescribeOnSession && status.Code(err) == codes.FailedPrecondition {
			return nil, fmt.Errorf("plugin %s: %w: %s", cmd.source(), ErrNotConnected, status.Convert(err).Message())
		}
		return nil, fmt.Errorf("plugin %s: Describe failed: %w", cmd.source(), err)
	}
	// Kept ahead for the first call: warmed up like the processes refill
	// starts, unless none are to be started ahead.
	if h.cfg.MinIdle <= 0 || pr.warmUp() == nil {
		pl.put(pr)
	} else {
		pl.discard(pr)
	}
	pl.refill()
	if len(resp.GetTools()) == 0 {
		return nil, fmt.Errorf("plugin %s offers no tools", cmd.source())
	}
	var entries []*entry
	var errs []error
	names := map[string]bool{}
	for _, t := range resp.GetTools() {
		spec := Spec{
			Name:        t.GetName(),
			Description: t.GetDescription(),
			InputSchema: []byte(t.GetInputSchemaJson()),
			ReadOnly:    t.GetHints().GetReadOnly(),
			Idempotent:  t.GetHints().GetIdempotent(),
			Source:      cmd.source(),
		}
		if d := t.GetTimeout(); d != nil {
			spec.Timeout = durationOf(d)
		}
		spec.Limits = h.limitsFor(cmd, spec.Name, askedLimits(t.GetLimits()))
		if names[spec.Name] {
			errs = append(errs, fmt.Errorf("tool %q is described twice", spec.Name))
			continue
		}
		names[spec.Name] = true
		sch, err := schema.Compile(spec.Name, spec.InputSchema)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		entries = append(entries, &entry{spec: spec, schema: sch, pool: pl})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", cmd.source(), err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].spec.Name < entries[j].spec.Name })
	return entries, nil
}

func durationOf(d *durationpb.Duration) time.Duration {
	if err := d.CheckValid(); err != nil || d.AsDuration() < 0 {
		return 0
	}
	return d.AsDuration()
}

// describeSession runs Describe on the plugin's Session, answering its host
// requests with host (nil answers none) for the plugin of source. A plugin
// without Session is asked through the unary Describe. Ending ctx ends the
// session: the caller discards the process then.
func (pr *proc) describeSession(ctx context.Context, host *HostHandler, source string) (*pluginv1.DescribeResponse, error) {
	if pr.noSession {
		return pr.rpc.Describe(ctx, &pluginv1.DescribeRequest{})
	}
	if pr.sess == nil {
		s, err := pr.rpc.Session(pr.sessCtx)
		if err != nil {
			return nil, err
		}
		pr.sess = s
	}
	stop := context.AfterFunc(ctx, pr.sessCancel)
	defer stop()
	msg := &pluginv1.SessionRequest{Kind: &pluginv1.SessionRequest_Describe{Describe: &pluginv1.DescribeRequest{}}}
	if err := pr.sess.Send(msg); err != nil && err != io.EOF {
		return nil, err
	}
	var hc *hostCalls
	defer func() {
		if hc != nil {
			hc.end()
		}
	}()
	for first := true; ; first = false {
		msg, err := pr.sess.Recv()
		if err != nil {
			if first && status.Code(err) == codes.Unimplemented {
				pr.sess, pr.noSession = nil, true
				return pr.rpc.Describe(ctx, &pluginv1.DescribeRequest{})
			}
			if err == io.EOF {
				err = errors.New("the plugin ended its session")
			}
			return nil, err
		}
		if hr := msg.GetHostRequest(); hr != nil {
			if hc == nil {
				hc = newHostCalls(ctx, host, source, pr.sess.Send)
			}
			hc.serve(hr)
			continue
		}
		if d := msg.GetDescribe(); d != nil {
			return d, nil
		}
		return nil, fmt.Errorf("the plugin answered Describe on its session with %T", msg.GetKind())
	}
}
