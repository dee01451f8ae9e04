// Package servetest runs agent-server in-process for tests: Start runs
// serve.Run on a configuration made from flags and an environment, as the
// agent-server command would, and hands back the address to dial. It is
// test support for this module's tests that need a whole server (the
// serving layer's, the durable runs', the SDK's), internal so that nothing
// outside the module depends on it.
package servetest

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/serve"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Start runs serve.Run in the background with args and env; it returns the
// address once the server listens ("unix:PATH" for a unix socket) and a
// function that stops the server and returns Run's error. The store is
// memory unless args name one: no test writes into the developer's home.
func Start(t testing.TB, args []string, env map[string]string) (target string, stop func() error) {
	t.Helper()
	cfg, err := config.Load(append([]string{"-store", "memory"}, args...), func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, cfg, io.Discard, nil, func(a net.Addr) { addr <- a }) }()
	var a net.Addr
	select {
	case a = <-addr:
	case err := <-done:
		cancel()
		t.Fatalf("Run: %v", err)
	}
	target = a.String()
	if a.Network() == "unix" {
		target = "unix:" + target
	}
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return 20s after its context ended")
			return nil
		}
	}
	return target, stop
}

// WaitServing waits until the health service on conn reports AgentService
// SERVING, for up to 10 s.
func WaitServing(t testing.TB, conn *grpc.ClientConn) {
	t.Helper()
	hc := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: agentv1.AgentService_ServiceDesc.ServiceName})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving: %v %v", resp, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
