package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestCORS(t *testing.T) {
	tests := []struct {
		name      string
		origins   []string
		method    string
		origin    string
		preflight bool
		answered  bool   // cors wrote the answer
		refused   bool   // as refused
		allow     string // Access-Control-Allow-Origin
	}{
		{"no origin header", nil, "GET", "", false, false, false, ""},
		{"same origin", nil, "POST", "http://api.example:8080", false, false, false, ""},
		{"other origin, none allowed", nil, "POST", "https://evil.example", false, true, true, ""},
		{"preflight, none allowed", nil, "OPTIONS", "https://evil.example", true, true, true, ""},
		{"allowed origin", []string{"https://app.example"}, "GET", "https://app.example", false, false, false, "https://app.example"},
		{"allowed origin, other case", []string{"https://App.example"}, "GET", "https://app.example", false, false, false, "https://app.example"},
		{"allowed preflight", []string{"https://app.example"}, "OPTIONS", "https://app.example", true, true, false, "https://app.example"},
		{"another origin", []string{"https://app.example"}, "POST", "https://app.example:444", false, true, true, ""},
		{"any origin", []string{"*"}, "POST", "https://anything.example", false, false, false, "*"},
		{"null origin", []string{"https://app.example"}, "POST", "null", false, true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newCORS(tt.origins)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(tt.method, "http://api.example:8080/v1/agents", nil)
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if tt.preflight {
				r.Header.Set("Access-Control-Request-Method", "POST")
			}
			w := httptest.NewRecorder()
			refused := false
			answered := c.handle(w, r, func(string) { refused = true })
			if answered != tt.answered || refused != tt.refused || w.Header().Get("Access-Control-Allow-Origin") != tt.allow {
				t.Errorf("answered %t refused %t allow %q", answered, refused, w.Header().Get("Access-Control-Allow-Origin"))
			}
			if tt.preflight && !tt.refused && (w.Code != http.StatusNoContent || !strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "Authorization")) {
				t.Errorf("preflight answer %d %v", w.Code, w.Header())
			}
		})
	}
	if _, err := newCORS([]string{"app.example"}); err == nil {
		t.Error("an origin without a scheme was accepted")
	}
}

func TestCodeReason(t *testing.T) {
	for c, want := range map[codes.Code]string{
		codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN", codes.InvalidArgument: "INVALID_ARGUMENT",
		codes.DeadlineExceeded: "DEADLINE_EXCEEDED", codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
		codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
		codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED", codes.OutOfRange: "OUT_OF_RANGE",
		codes.Unimplemented: "UNIMPLEMENTED", codes.Internal: "INTERNAL", codes.Unavailable: "UNAVAILABLE",
		codes.DataLoss: "DATA_LOSS", codes.Unauthenticated: "UNAUTHENTICATED",
		codes.OK: "", // not an error: no reason
	} {
		if got := codeReason(c).Wire(); got != want {
			t.Errorf("%v: %q, want %q", c, got, want)
		}
	}
}

func TestEventWriter(t *testing.T) {
	g := &gateway{json: jsonMarshaler()}
	w := httptest.NewRecorder()
	out := newEventWriter(w, g)
	ev := &agentv1.Event{Seq: 7, RunId: "run_1", Time: timestamppb.New(timestamppb.Now().AsTime()),
		Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{Step: 1, Delta: &agentv1.ModelDeltaEvent_Text{Text: "two\nlines"}}}}
	if err := out.message(ev); err != nil {
		t.Fatal(err)
	}
	if err := out.message(&agentv1.ExecuteToolResponse{}); err != nil {
		t.Fatal(err)
	}
	if err := out.fail(status.New(codes.Unavailable, "gone")); err != nil {
		t.Fatal(err)
	}
	if err := out.comment("keepalive"); err != nil {
		t.Fatal(err)
	}
	_ = out.flush()
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("answer %d %v", w.Code, w.Header())
	}
	blocks := strings.Split(w.Body.String(), "\n\n")
	if len(blocks) != 5 || blocks[4] != "" {
		t.Fatalf("want 4 blocks, each ended by a blank line: %q", w.Body.String())
	}
	if !strings.HasPrefix(blocks[0], "id: 7\ndata: {") || strings.Count(blocks[0], "\n") != 1 || !strings.Contains(blocks[0], `two\nlines`) {
		t.Errorf("run event: %q", blocks[0])
	}
	if !strings.HasPrefix(blocks[1], "data: {") {
		t.Errorf("a message without seq has no id: %q", blocks[1])
	}
	if !strings.HasPrefix(blocks[2], "event: error\ndata: {") || !strings.Contains(blocks[2], `"reason":"UNAVAILABLE"`) {
		t.Errorf("error event: %q", blocks[2])
	}
	if blocks[3] != ": keepalive" {
		t.Errorf("comment: %q", blocks[3])
	}
}
