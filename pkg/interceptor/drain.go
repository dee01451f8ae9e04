package interceptor

import (
	"context"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// healthPrefix is the method prefix of the gRPC health service.
const healthPrefix = "/grpc.health.v1.Health/"

// Drain lets the gRPC server keep its listener, and so answer health
// probes on new connections (liveness SERVING, readiness NOT_SERVING),
// through a graceful shutdown: once closed (Close), every new call but the health
// service's is refused UNAVAILABLE SHUTTING_DOWN, and Wait returns when the
// calls already running have ended. Health calls are not counted: a Watch
// lasts as long as its client wants, or until EndWatches.
type Drain struct {
	mu      sync.Mutex
	closing bool
	calls   sync.WaitGroup

	watches    context.Context // done once EndWatches is called
	endWatches context.CancelFunc
}

// NewDrain returns a drain taking calls.
func NewDrain() *Drain {
	d := &Drain{}
	d.watches, d.endWatches = context.WithCancel(context.Background())
	return d
}

// ServerOptions returns the interceptors that count and, once closed,
// refuse calls; they go first, before authentication.
func (d *Drain) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(d.unary), grpc.ChainStreamInterceptor(d.stream)}
}

// enter counts a call of method, or refuses it once closed; counted calls
// must leave.
func (d *Drain) enter(method string) (counted bool, err error) {
	if strings.HasPrefix(method, healthPrefix) {
		return false, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return false, refuse(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN, "the server is shutting down; retry on another replica or once it is back")
	}
	d.calls.Add(1)
	return true, nil
}

func (d *Drain) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	counted, err := d.enter(info.FullMethod)
	if err != nil {
		return nil, err
	}
	if counted {
		defer d.calls.Done()
	}
	return handler(ctx, req)
}

func (d *Drain) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if info.FullMethod == healthPrefix+"Watch" {
		// Ended by EndWatches, so that a graceful stop need not wait for it.
		ctx, cancel := context.WithCancel(ss.Context())
		defer cancel()
		defer context.AfterFunc(d.watches, cancel)()
		return handler(srv, &drainedStream{ServerStream: ss, ctx: ctx})
	}
	counted, err := d.enter(info.FullMethod)
	if err != nil {
		return err
	}
	if counted {
		defer d.calls.Done()
	}
	return handler(srv, ss)
}

// Close refuses every new call but health's from now on.
func (d *Drain) Close() {
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
}

// Wait returns once Close was called and every counted call has ended.
func (d *Drain) Wait() { d.calls.Wait() }

// EndWatches ends every health Watch, now and from now on.
func (d *Drain) EndWatches() { d.endWatches() }

// drainedStream is a health Watch whose context ends with EndWatches.
type drainedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *drainedStream) Context() context.Context { return s.ctx }
