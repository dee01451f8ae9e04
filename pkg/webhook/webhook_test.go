package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/agentcore/agentcore/pkg/internal/syncbuf"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// receiver is an HTTP endpoint on 127.0.0.1 that answers each request with
// the next status of its script (200 once the script is used up) and keeps
// what it got.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []received
	// script is the statuses of the next answers; hold, when set, is
	// waited for before answering.
	script []int
	hold   chan struct{}
	header http.Header // headers of every answer
}

type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

func newReceiver(t *testing.T, script ...int) *receiver {
	r := &receiver{script: script, header: http.Header{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{header: req.Header.Clone(), body: body, at: time.Now()})
		status := http.StatusOK
		if len(r.script) > 0 {
			status, r.script = r.script[0], r.script[1:]
		}
		hold := r.hold
		for k, v := range r.header {
			w.Header()[k] = v
		}
		r.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-req.Context().Done():
			}
		}
		if status/100 == 3 {
			w.Header().Set("Location", "https://elsewhere.example/")
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// newSender returns a Sender allowed to post to the receivers, with fast
// retries, its registry and its log.
func newSender(t *testing.T, o Options, rs ...*receiver) (*Sender, *prometheus.Registry, *syncbuf.Buffer) {
	var hosts []string
	for _, r := range rs {
		hosts = append(hosts, r.srv.URL)
	}
	allow, err := ParseAllow(hosts)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	logs := &syncbuf.Buffer{}
	o.Key, o.Allow, o.Registerer = testKey, allow, reg
	o.Logger = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug})
	if o.Backoff == 0 {
		o.Backoff = 10 * time.Millisecond
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, reg, logs
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// value is a counter's value.
func value(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func deliveries(reg *prometheus.Registry, s *Sender, outcome string) float64 {
	return value(s.metrics.deliveries.WithLabelValues("test.event", outcome))
}

func TestDeliverSigned(t *testing.T) {
	r := newReceiver(t)
	s, reg, logs := newSender(t, Options{}, r)
	body := []byte(`{"type":"test.event","data":{"n":1}}`)
	err := s.Enqueue(Message{URL: r.srv.URL + "/hook?token=receiver-token-123", ID: "msg_fixed", Type: "test.event", Body: body,
		Header: http.Header{"X-Extra": {"yes"}, HeaderSignature: {"forged"}}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery", func() bool { return deliveries(reg, s, "delivered") == 1 })
	got := r.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	h := got[0].header
	if err := Verify(testKey, h, got[0].body, time.Now(), DefaultTolerance); err != nil {
		t.Fatalf("Verify: %v (headers %v)", err, h)
	}
	if h.Get(HeaderID) != "msg_fixed" || h.Get("X-Extra") != "yes" || h.Get("Content-Type") != "application/json" || string(got[0].body) != string(body) {
		t.Fatalf("request: %v %s", h, got[0].body)
	}
	if strings.Contains(logs.String(), "receiver-token-123") || strings.Contains(logs.String(), "/hook") {
		t.Fatalf("the log holds the URL's path or query:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "webhook delivered") {
		t.Fatalf("no log line for the attempt:\n%s", logs)
	}
}

func TestRetriesThenDelivers(t *testing.T) {
	r := newReceiver(t, 500, 503, 200)
	s, reg, logs := newSender(t, Options{MaxAttempts: 5}, r)
	if err := s.Enqueue(Message{URL: r.srv.URL, Type: "test.event", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery", func() bool { return deliveries(reg, s, "delivered") == 1 })
	got := r.requests()
	if len(got) != 3 {
		t.Fatalf("%d attempts, want 3", len(got))
	}
	if got[0].header.Get(HeaderID) != got[2].header.Get(HeaderID) || !strings.HasPrefix(got[0].header.Get(HeaderID), "msg_") {
		t.Fatalf("the id changed between attempts or is not made: %q, %q", got[0].header.Get(HeaderID), got[2].header.Get(HeaderID))
	}
	// The waits double: 10 ms then 20 ms, give or take a tenth.
	if d1, d2 := got[1].at.Sub(got[0].at), got[2].at.Sub(got[1].at); d1 < 9*time.Millisecond || d2 < 18*time.Millisecond {
		t.Fatalf("waits %v, %v: want about 10 ms then 20 ms", d1, d2)
	}
	for outcome, want := range map[string]float64{"5xx": 2, "2xx": 1} {
		if n := value(s.metrics.attempts.WithLabelValues("test.event", outcome)); n != want {
			t.Errorf("attempts %s = %v, want %v", outcome, n, want)
		}
	}
	if n := strings.Count(logs.String(), "webhook attempt failed; retrying"); n != 2 {
		t.Errorf("%d retry lines, want 2:\n%s", n, logs)
	}
}

func TestGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     Options
		script   []int
		attempts int
	}{
		{"attempts", Options{MaxAttempts: 3}, []int{500, 500, 500, 500, 500}, 3},
		{"elapsed", Options{MaxAttempts: 100, MaxElapsed: 50 * time.Millisecond, Backoff: 20 * time.Millisecond}, []int{500, 500, 500, 500, 500, 500}, 2},
		{"a redirect is not followed", Options{MaxAttempts: 2}, []int{302, 302, 302}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReceiver(t, tc.script...)
			s, reg, logs := newSender(t, tc.opts, r)
			if err := s.Enqueue(Message{URL: r.srv.URL, Type: "test.event", Body: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "giving up", func() bool { return deliveries(reg, s, "failed") == 1 })
			if n := len(r.requests()); n != tc.attempts {
				t.Fatalf("%d attempts, want %d", n, tc.attempts)
			}
			if !strings.Contains(logs.String(), "giving up") {
				t.Fatalf("no log line:\n%s", logs)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	r := newReceiver(t, 429, 200)
	r.header.Set("Retry-After", "1")
	s, reg, _ := newSender(t, Options{Backoff: time.Millisecond}, r)
	if err := s.Enqueue(Message{URL: r.srv.URL, Type: "test.event", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery", func() bool { return deliveries(reg, s, "delivered") == 1 })
	got := r.requests()
	if d := got[1].at.Sub(got[0].at); d < time.Second {
		t.Fatalf("retried after %v, before the receiver's Retry-After of 1 s", d)
	}
}

func TestEnqueueRefuses(t *testing.T) {
	r := newReceiver(t)
	r.hold = make(chan struct{})
	defer close(r.hold)
	s, reg, _ := newSender(t, Options{MaxPending: 1}, r)
	if err := s.Enqueue(Message{URL: "https://elsewhere.example/x", Type: "test.event"}); err == nil || !strings.Contains(err.Error(), "not among") {
		t.Fatalf("a URL not allowed: %v", err)
	}
	if err := s.Enqueue(Message{URL: r.srv.URL, Type: "test.event"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(Message{URL: r.srv.URL, Type: "test.event"}); !errors.Is(err, ErrFull) {
		t.Fatalf("past MaxPending: %v, want ErrFull", err)
	}
	if n := deliveries(reg, s, "refused"); n != 2 {
		t.Fatalf("refused = %v, want 2", n)
	}
}

// TestCloseDropsPending: Close waits for pending deliveries until its
// context ends, then drops them; the goroutines are gone (TestMain's
// goleak) and later messages are refused.
func TestCloseDropsPending(t *testing.T) {
	r := newReceiver(t, 500, 500, 500)
	s, reg, logs := newSender(t, Options{Backoff: time.Hour, MaxBackoff: time.Hour, MaxElapsed: 2 * time.Hour}, r)
	if err := s.Enqueue(Message{URL: r.srv.URL, Type: "test.event", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first attempt", func() bool { return len(r.requests()) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	began := time.Now()
	s.Close(ctx)
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if n := deliveries(reg, s, "dropped"); n != 1 {
		t.Fatalf("dropped = %v, want 1", n)
	}
	if !strings.Contains(logs.String(), "the server stops") {
		t.Fatalf("no log line for the drop:\n%s", logs)
	}
	if err := s.Enqueue(Message{URL: r.srv.URL, Type: "test.event"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

// TestCloseWaitsForDelivery: a delivery under way when Close is called
// finishes within Close's grace.
func TestCloseWaitsForDelivery(t *testing.T) {
	r := newReceiver(t, 500, 200)
	s, reg, _ := newSender(t, Options{Backoff: 50 * time.Millisecond}, r)
	if err := s.Enqueue(Message{URL: r.srv.URL, Type: "test.event", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Close(ctx)
	if n := deliveries(reg, s, "delivered"); n != 1 {
		t.Fatalf("delivered = %v, want 1 (Close waits for it)", n)
	}
}

// TestSharedRegistry: two Senders on one registry share its series.
func TestSharedRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	for range 2 {
		s, err := New(Options{Key: testKey, Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		s.Close(context.Background())
	}
	if _, err := New(Options{Key: []byte("short")}); err == nil {
		t.Fatal("a short key was taken")
	}
}
