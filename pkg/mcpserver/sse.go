package mcpserver

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SSE streams of the handler (SEP-1699): each POST stream starts with
// a priming event, an id and no data, which the SDK sends when it has an
// event store, so that a client whose stream broke can resume it with
// Last-Event-ID; and every stream says how long a client should wait
// before reconnecting (the SSE retry field), which the SDK does not.

const (
	// reconnectAfter is the SSE retry field of every stream.
	reconnectAfter = time.Second
	// eventStoreBytes bounds the events kept for resumption, of every
	// session together (the oldest go first).
	eventStoreBytes = 8 << 20
)

// newEventStore is the event store of a handler: in memory, bounded.
func newEventStore() sdk.EventStore {
	s := sdk.NewMemoryEventStore(nil)
	s.SetMaxBytes(eventStoreBytes)
	return s
}

// withRetry sends the SSE retry field at the start of every event stream h answers.
func withRetry(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&retryWriter{ResponseWriter: w}, r)
	})
}

// retryWriter writes the retry field before the first bytes of an event
// stream's body; other bodies pass untouched.
type retryWriter struct {
	http.ResponseWriter
	started bool
}

func (w *retryWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.started = true
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			if _, err := w.ResponseWriter.Write([]byte("retry: " + strconv.FormatInt(reconnectAfter.Milliseconds(), 10) + "\n")); err != nil {
				return 0, err
			}
		}
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes the stream, which the SDK does after each event.
func (w *retryWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *retryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
