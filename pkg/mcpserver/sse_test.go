package mcpserver

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/tool"
)

// TestSSEPrimingAndRetry posts raw requests as a 2025-11-25 client does:
// the POST stream of a call starts with the retry field and a priming
// event (an id, no data) before the answer, whose event id is resumable.
func TestSSEPrimingAndRetry(t *testing.T) {
	set := tools(t)
	h, err := NewHandler(Options{Tools: func() (*tool.Set, error) { return set, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(session, version, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", version)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	tests := []struct {
		name       string
		negotiated string // the session's version, from initialize
		header     string // the version header of the later request
		primed     bool
	}{
		{"2025-11-25 session", "2025-11-25", "2025-11-25", true},
		// The conformance suite's server-sse-polling posts so: the
		// session's version decides.
		{"an older header in a 2025-11-25 session", "2025-11-25", "2025-03-26", true},
		// Clients of older versions do not expect events without data.
		{"2025-03-26 session", "2025-03-26", "2025-03-26", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			init := post("", tt.negotiated, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+tt.negotiated+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			// Read whole: a client that goes away cancels its request.
			_, _ = io.Copy(io.Discard, init.Body)
			init.Body.Close()
			session := init.Header.Get("Mcp-Session-Id")
			defer func() {
				req, _ := http.NewRequest("DELETE", srv.URL, nil)
				req.Header.Set("Mcp-Session-Id", session)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			note := post(session, tt.negotiated, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			_, _ = io.Copy(io.Discard, note.Body)
			note.Body.Close()

			// The SDK handles notifications/initialized after its 202: until
			// then a request is refused as made during initialization.
			var got string
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				got = readStream(t, post(session, tt.header, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
				if !strings.Contains(got, "during session initialization") || time.Now().After(deadline) {
					break
				}
			}
			// retry, then the priming event (its id, empty data), then the answer with the next id.
			want := []string{"retry: 1000", "event: prime", "id: ", "data: \n", "\nid: ", `data: {"jsonrpc":"2.0","id":2,"result":{`}
			if !tt.primed {
				if strings.Contains(got, "event: prime") {
					t.Fatalf("a %s session's stream is primed:\n%s", tt.negotiated, got)
				}
				want = []string{"retry: 1000", `data: {"jsonrpc":"2.0","id":2,"result":{`}
			}
			at := 0
			for _, w := range want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("the stream lacks %q after byte %d:\n%s", w, at, got)
				}
				at += i + len(w)
			}
		})
	}
}

// readStream reads an event stream answer up to its first data line.
func readStream(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, content type %q: %s", resp.StatusCode, ct, b)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && len(lines) < 8 {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "data: {") {
			break
		}
	}
	return strings.Join(lines, "\n")
}
