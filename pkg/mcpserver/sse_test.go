package mcpserver

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
	post := func(session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	init := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	init.Body.Close()
	session := init.Header.Get("Mcp-Session-Id")
	defer func() {
		req, _ := http.NewRequest("DELETE", srv.URL, nil)
		req.Header.Set("Mcp-Session-Id", session)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	resp := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && len(lines) < 8 {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "data: {") {
			break
		}
	}
	got := strings.Join(lines, "\n")
	// retry, then the priming event (its id, empty data), then the answer with the next id.
	want := []string{"retry: 1000", "event: prime", "id: ", "data: \n", "\nid: ", `data: {"jsonrpc":"2.0","id":2,"result":{`}
	at := 0
	for _, w := range want {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Fatalf("the stream lacks %q after byte %d:\n%s", w, at, got)
		}
		at += i + len(w)
	}
}
