package telemetry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /metrics (the Prometheus text format, or OpenMetrics when
// asked for) and, with withPprof, the runtime profiles under /debug/pprof/.
func (t *Telemetry) Handler(withPprof bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{Registry: t.reg, EnableOpenMetrics: true}))
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		msg := "agent-server telemetry: /metrics"
		if withPprof {
			msg += ", /debug/pprof/"
		}
		_, _ = w.Write([]byte(msg + "\n"))
	})
	return mux
}

// Serve serves Handler(withPprof) on lis until ctx is done, then shuts the
// listener down, giving scrapes in flight a second to finish. It returns nil
// after a shutdown for ctx, or the error that stopped serving.
func (t *Telemetry) Serve(ctx context.Context, lis net.Listener, withPprof bool) error {
	srv := &http.Server{
		Handler:           t.Handler(withPprof),
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
