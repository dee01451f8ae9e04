package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// probeUsage documents `agent-server probe`.
const probeUsage = `usage: agent-server probe [-service NAME] [-timeout D] [-tls-ca FILE] [-tls-server-name NAME] ADDR

Asks the gRPC health service of the agent-server at ADDR (host:port or
unix:PATH) and exits 0 when it is SERVING, 1 otherwise: a Kubernetes exec
probe without grpc-health-probe. -service "" (the default) is readiness:
SERVING once the tools are loaded, NOT_SERVING during shutdown; -service
liveness is SERVING for as long as the server runs.
`

// runProbe implements `agent-server probe`.
func runProbe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, probeUsage) }
	service := fs.String("service", "", "health service name: \"\" (readiness) or liveness")
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	caFile := fs.String("tls-ca", "", "PEM CA file: connect with TLS, trusting it")
	serverName := fs.String("tls-server-name", "", "TLS server name to verify (default: ADDR's host)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	addr := fs.Arg(0)
	if p, ok := strings.CutPrefix(addr, "unix:"); ok && !strings.HasPrefix(p, "//") {
		addr = "unix://" + p
	}
	creds := insecure.NewCredentials()
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			fmt.Fprintln(stderr, "probe:", err)
			return 1
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			fmt.Fprintf(stderr, "probe: %s holds no PEM certificate\n", *caFile)
			return 1
		}
		creds = credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: *serverName, MinVersion: tls.VersionTLS12})
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		fmt.Fprintln(stderr, "probe:", err)
		return 1
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: *service})
	if err != nil {
		fmt.Fprintln(stderr, "probe:", err)
		return 1
	}
	fmt.Fprintln(stdout, resp.GetStatus())
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return 1
	}
	return 0
}
