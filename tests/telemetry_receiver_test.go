package tests

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// receiver is an OTLP trace receiver: the collector's TraceService from the
// OpenTelemetry proto module, served in the test's process.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string

	mu    sync.Mutex
	spans []recvSpan
	keys  []string // the api-key header of each export
}

// recvSpan is a received span with the service that sent it.
type recvSpan struct {
	service string
	*tracepb.Span
}

func (r *receiver) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	r.keys = append(r.keys, strings.Join(md.Get("api-key"), ","))
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, recvSpan{service, s})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// apiKeys returns the api-key header of each export received.
func (r *receiver) apiKeys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.keys...)
}

// trace returns the spans received for a trace id.
func (r *receiver) trace(id []byte) []recvSpan {
	return r.where(func(s recvSpan) bool { return string(s.GetTraceId()) == string(id) })
}

// where returns the spans received that keep holds for.
func (r *receiver) where(keep func(recvSpan) bool) []recvSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recvSpan
	for _, s := range r.spans {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// named waits until n spans named name have come (or 15 s passed) and
// returns those that came.
func (r *receiver) named(name string, n int) []recvSpan {
	return r.await(n, func(s recvSpan) bool { return s.GetName() == name })
}

// await waits until n spans that keep holds for have come (or 15 s passed)
// and returns those that came. A span comes in the export batch after it
// ends, so one that ends after another (its parent) may come later.
func (r *receiver) await(n int, keep func(recvSpan) bool) []recvSpan {
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out := r.where(keep)
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
	}
}

// children returns the spans of p's trace whose parent is p.
func (r *receiver) children(p recvSpan) []recvSpan {
	var out []recvSpan
	for _, s := range r.trace(p.GetTraceId()) {
		if string(s.GetParentSpanId()) == string(p.GetSpanId()) {
			out = append(out, s)
		}
	}
	return out
}

// runChildren returns the spans under the invoke_agent span of the agent's
// only run.
func (r *receiver) runChildren(t *testing.T, agentID string) []recvSpan {
	t.Helper()
	runs := r.named("invoke_agent "+agentID, 1)
	if len(runs) != 1 {
		t.Fatalf("%d invoke_agent spans for %s, want 1", len(runs), agentID)
	}
	return r.children(runs[0])
}

func startReceiver(t *testing.T) *receiver {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{addr: lis.Addr().String()}
	gs := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(gs, r)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gs.Serve(lis)
	}()
	t.Cleanup(func() {
		gs.Stop()
		<-done
	})
	return r
}

func spanNames(spans []recvSpan) []string {
	var names []string
	for _, s := range spans {
		names = append(names, s.GetName())
	}
	return names
}

// toolErrors checks the error.type and status of the execute_tool span of
// each tool, the only call of that tool the server made.
func toolErrors(t *testing.T, recv *receiver, want map[string]string) {
	t.Helper()
	for name, errType := range want {
		spans := recv.named("execute_tool "+name, 1)
		if len(spans) != 1 {
			t.Errorf("%d execute_tool %s spans, want 1", len(spans), name)
			continue
		}
		spanAttrs(t, spans[0], map[string]string{"gen_ai.tool.name": name, "error.type": errType})
		if c := spans[0].GetStatus().GetCode(); c != tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("execute_tool %s: status %v, want an error", name, c)
		}
	}
}

// contentAttrs are the span attributes that hold message content.
var contentAttrs = []string{"gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages",
	"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}

// noAttrs checks that a received span has none of the attributes keys.
func noAttrs(t *testing.T, s recvSpan, keys ...string) {
	t.Helper()
	for _, kv := range s.GetAttributes() {
		if slices.Contains(keys, kv.GetKey()) {
			t.Errorf("span %s has %s = %s", s.GetName(), kv.GetKey(), anyValue(kv.GetValue()))
		}
	}
}

// spanAttrs checks attributes of a received span, values as text (arrays
// as [a b]).
func spanAttrs(t *testing.T, s recvSpan, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, kv := range s.GetAttributes() {
		got[kv.GetKey()] = anyValue(kv.GetValue())
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %s: %s = %q, want %q", s.GetName(), k, got[k], v)
		}
	}
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, anyValue(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return ""
}
