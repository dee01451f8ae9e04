package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// TestHostRequests runs a real plugin (sdk/tool) whose tool asks its host
// during the call, over the Session: each request reaches the call's
// HostHandler, overlapping ones each get their own answer, a host without
// a handler or one that refuses is an error the tool reads, and a request
// left behind after the call's result is never answered.
func TestHostRequests(t *testing.T) {
	h := newHost(t, Config{MaxIdle: 1})
	set := scan(t, h, dirs.good)
	elicit := func(_ context.Context, r *pluginv1.ElicitRequest) (*pluginv1.ElicitResponse, error) {
		return &pluginv1.ElicitResponse{Action: pluginv1.ElicitAction_ELICIT_ACTION_ACCEPT,
			ContentJson: fmt.Sprintf(`{"name":%q}`, "to "+r.GetMessage())}, nil
	}
	sample := func(_ context.Context, r *pluginv1.SampleRequest) (*pluginv1.SampleResponse, error) {
		text := fmt.Sprintf("%d tokens for %s", r.GetMaxTokens(), r.GetMessages()[0].GetContent()[0].GetText())
		return &pluginv1.SampleResponse{Role: "assistant", Model: "m1", StopReason: "endTurn",
			Content: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: text}}}}, nil
	}
	denied := func(context.Context, *pluginv1.SampleRequest) (*pluginv1.SampleResponse, error) {
		return nil, &HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED, Message: "the user said no"}
	}
	failed := func(context.Context, *pluginv1.ElicitRequest) (*pluginv1.ElicitResponse, error) {
		return nil, errors.New("store down")
	}
	tests := []struct {
		name, input string
		host        *HostHandler
		want        []string
	}{
		{"elicit", `{"kind":"elicit"}`, &HostHandler{Elicit: elicit},
			[]string{`ELICIT_ACTION_ACCEPT {"name":"to question 0"}`}},
		{"overlapping elicitations", `{"kind":"elicit","n":3}`, &HostHandler{Elicit: elicit},
			[]string{`{"name":"to question 0"}`, `{"name":"to question 1"}`, `{"name":"to question 2"}`}},
		{"sample", `{"kind":"sample"}`, &HostHandler{Sample: sample}, []string{"m1 endTurn 7 tokens for hi"}},
		{"no handler", `{"kind":"elicit"}`, nil, []string{"HOST_ERROR_CODE_UNSUPPORTED", "no one to ask"}},
		{"no sample handler", `{"kind":"sample"}`, &HostHandler{Elicit: elicit}, []string{"HOST_ERROR_CODE_UNSUPPORTED", "no model"}},
		{"denied", `{"kind":"sample"}`, &HostHandler{Sample: denied}, []string{"HOST_ERROR_CODE_DENIED", "the user said no"}},
		{"failed", `{"kind":"elicit"}`, &HostHandler{Elicit: failed}, []string{"HOST_ERROR_CODE_FAILED", "store down"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := set.Execute(context.Background(), "host_ask", json.RawMessage(tt.input), Options{HostHandler: tt.host})
			got := OutputText(res.Output)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("result %q lacks %q", got, w)
				}
			}
		})
	}

	// A request sent after the result reaches no handler, and the process
	// serves the next call as usual.
	var asked atomic.Int32
	late := &HostHandler{Elicit: func(context.Context, *pluginv1.ElicitRequest) (*pluginv1.ElicitResponse, error) {
		asked.Add(1)
		return &pluginv1.ElicitResponse{Action: pluginv1.ElicitAction_ELICIT_ACTION_DECLINE}, nil
	}}
	if got := OutputText(set.Execute(context.Background(), "host_ask", json.RawMessage(`{"kind":"late"}`), Options{HostHandler: late}).Output); got != "left" {
		t.Fatalf("late: %q", got)
	}
	time.Sleep(50 * time.Millisecond)
	if got := OutputText(set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"next"}`), Options{HostHandler: late}).Output); got != "next" {
		t.Fatalf("the call after: %q", got)
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("a request sent after its call's result was answered (%d)", n)
	}
}

// TestHostRequestEndsWithTheCall: a handler still waiting when the call is
// stopped sees its context end, and Execute returns.
func TestHostRequestEndsWithTheCall(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	waiting := make(chan struct{})
	host := &HostHandler{Elicit: func(ctx context.Context, _ *pluginv1.ElicitRequest) (*pluginv1.ElicitResponse, error) {
		close(waiting)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-waiting
		cancel()
	}()
	res := set.Execute(ctx, "host_ask", json.RawMessage(`{"kind":"elicit"}`), Options{HostHandler: host})
	if !res.Error || !strings.Contains(OutputText(res.Output), "stopped") {
		t.Fatalf("result = %v", OutputText(res.Output))
	}
}
