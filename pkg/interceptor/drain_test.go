package interceptor

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestDrain checks the shutdown drain: calls pass and are counted until it
// closes; then new calls are refused UNAVAILABLE SHUTTING_DOWN while health
// calls still pass, Wait returns only once the running call has ended, and
// EndWatches ends a health Watch.
func TestDrain(t *testing.T) {
	d := NewDrain()
	call := func(method string) error {
		_, err := d.unary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: method},
			func(context.Context, any) (any, error) { return "ok", nil })
		return err
	}
	if err := call("/agentcore.v1.AgentService/ListAgents"); err != nil {
		t.Fatalf("before closing: %v", err)
	}
	release := make(chan struct{})
	running := make(chan error, 1)
	entered := make(chan struct{})
	go func() {
		running <- d.stream(nil, &fakeStream{ctx: context.Background()}, &grpc.StreamServerInfo{FullMethod: "/agentcore.v1.AgentService/Send"},
			func(any, grpc.ServerStream) error { close(entered); <-release; return nil })
	}()
	<-entered
	d.Close()

	err := call("/agentcore.v1.AgentService/ListAgents")
	if status.Code(err) != codes.Unavailable || reasonOf(err) != "SHUTTING_DOWN" {
		t.Errorf("a call after closing: %v (reason %q), want UNAVAILABLE SHUTTING_DOWN", err, reasonOf(err))
	}
	if err := call(healthPrefix + "Check"); err != nil {
		t.Errorf("a health check after closing: %v", err)
	}
	waited := make(chan struct{})
	go func() { d.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("wait returned while a call runs")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-running; err != nil {
		t.Errorf("the running call: %v", err)
	}
	<-waited

	watching := make(chan error, 1)
	go func() {
		watching <- d.stream(nil, &fakeStream{ctx: context.Background()}, &grpc.StreamServerInfo{FullMethod: healthPrefix + "Watch"},
			func(_ any, ss grpc.ServerStream) error { <-ss.Context().Done(); return ss.Context().Err() })
	}()
	d.EndWatches()
	if err := <-watching; err != context.Canceled {
		t.Errorf("a watch after EndWatches: %v, want it ended", err)
	}
}

// fakeStream is a server stream with a context and nothing to send or receive.
type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *fakeStream) Context() context.Context { return s.ctx }
