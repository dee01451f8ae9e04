package main

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"none", nil, exitOK},
		{"a setting", fmt.Errorf("%w: the CA file", errConfig), exitUsage},
		{"not the server's", errors.New("reading standard input"), exitError},
		{"invalid", &client.Error{Code: codes.InvalidArgument, Reason: client.ReasonInvalidArgument}, exitUsage},
		{"no agent", &client.Error{Code: codes.NotFound, Reason: client.ReasonAgentNotFound}, exitNotFound},
		{"events expired", &client.Error{Code: codes.OutOfRange}, exitNotFound},
		{"no token", &client.Error{Code: codes.Unauthenticated}, exitDenied},
		{"no access", &client.Error{Code: codes.PermissionDenied}, exitDenied},
		{"model refused the key", &client.Error{Code: codes.PermissionDenied, Kind: client.KindAuth, Reason: "AUTH"}, exitRunFailed},
		{"model rate limit", &client.Error{Code: codes.ResourceExhausted, Kind: client.KindLimit, Reason: "LIMIT"}, exitRunFailed},
		{"stopped", &client.Error{Code: codes.Aborted, Kind: client.KindAborted, Reason: "ABORTED"}, exitStopped},
		{"cancelled here", &client.Error{Code: codes.Canceled, Kind: client.KindAborted}, exitStopped},
		{"interrupted", &client.Error{Code: codes.Aborted, Reason: client.ReasonRunInterrupted}, exitStopped},
		{"unreachable", &client.Error{Code: codes.Unavailable}, exitUnreachable},
		{"busy", &client.Error{Code: codes.Aborted, Reason: client.ReasonAgentBusy}, exitRefused},
		{"exists", &client.Error{Code: codes.AlreadyExists, Reason: client.ReasonAgentExists}, exitRefused},
		{"no model", &client.Error{Code: codes.FailedPrecondition, Reason: client.ReasonNoModel}, exitRefused},
		{"a limit", &client.Error{Code: codes.ResourceExhausted, Reason: client.ReasonSessionLimit}, exitRefused},
		{"server fault", &client.Error{Code: codes.Internal}, exitError},
		{"wrapped", fmt.Errorf("send: %w", &client.Error{Code: codes.NotFound}), exitNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestParseAnswer(t *testing.T) {
	for _, tt := range []struct {
		line   string
		allow  bool
		reason string
		ok     bool
	}{
		{"y", true, "", true},
		{" Yes ", true, "", true},
		{"y, go", true, "", true},
		{"n", false, "", true},
		{"no", false, "", true},
		{"n not on prod", false, "not on prod", true},
		{"No: too risky ", false, "too risky", true},
		{"", false, "", false},
		{"maybe", false, "", false},
		{"yolo", false, "", false},
	} {
		allow, reason, ok := parseAnswer(tt.line)
		if allow != tt.allow || reason != tt.reason || ok != tt.ok {
			t.Errorf("parseAnswer(%q) = %v %q %v, want %v %q %v", tt.line, allow, reason, ok, tt.allow, tt.reason, tt.ok)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	for _, tt := range []struct {
		args []string
		pos  []string
		json bool
		n    int
	}{
		{[]string{"a", "task", "--json"}, []string{"a", "task"}, true, 0},
		{[]string{"--json", "a", "-n", "3", "task"}, []string{"a", "task"}, true, 3},
		{[]string{"a", "--", "--json", "-n"}, []string{"a", "--json", "-n"}, false, 0},
		{nil, nil, false, 0},
	} {
		fs := newFlagSet("t")
		asJSON := fs.Bool("json", false, "")
		n := fs.Int("n", 0, "")
		pos, err := parseInterspersed(fs, tt.args)
		if err != nil || !reflect.DeepEqual(pos, tt.pos) || *asJSON != tt.json || *n != tt.n {
			t.Errorf("%q: %q json=%v n=%d %v, want %q json=%v n=%d", tt.args, pos, *asJSON, *n, err, tt.pos, tt.json, tt.n)
		}
	}
	if _, err := parseInterspersed(newFlagSet("t"), []string{"a", "--bogus"}); err == nil {
		t.Error("an unknown flag after an argument was taken")
	}
}

func TestFlagValues(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want askFlag
	}{
		{"all", askFlag{all: true}},
		{"*", askFlag{all: true}},
		{"none", askFlag{}},
		{"", askFlag{}},
		{"shell, write_file,", askFlag{tools: []string{"shell", "write_file"}}},
	} {
		var a askFlag
		if err := a.Set(tt.in); err != nil || !reflect.DeepEqual(a, tt.want) {
			t.Errorf("--ask %q: %+v, want %+v", tt.in, a, tt.want)
		}
	}
	for in, want := range map[string]agentv1.RunState{
		"running": agentv1.RunState_RUN_STATE_RUNNING, "Stopped": agentv1.RunState_RUN_STATE_STOPPED,
		"RUN_STATE_FAILED": agentv1.RunState_RUN_STATE_FAILED, "unspecified": 0, "sleeping": 0,
	} {
		got, err := parseRunState(in)
		if got != want || (err != nil) != (want == 0) {
			t.Errorf("--state %q: %v %v, want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]agentv1.BusyPolicy{
		"": agentv1.BusyPolicy_BUSY_POLICY_UNSPECIFIED, "queue": agentv1.BusyPolicy_BUSY_POLICY_QUEUE,
		"reject": agentv1.BusyPolicy_BUSY_POLICY_REJECT, "wait": 0,
	} {
		got, err := parseBusy(in)
		if got != want || (err != nil) != (want == 0 && in != "") {
			t.Errorf("--busy %q: %v %v, want %v", in, got, err, want)
		}
	}
}

func TestConnectionSettings(t *testing.T) {
	vars := map[string]string{envAddr: "unix:/run/a.sock", envCA: "ca.pem", envTokenFile: "/t"}
	getenv := func(k string) string { return vars[k] }
	for _, tt := range []struct {
		name  string
		flags connFlags
		env   func(string) string
		want  connFlags
	}{
		{"defaults", connFlags{}, func(string) string { return "" }, connFlags{addr: defaultAddr}},
		{"the variables", connFlags{}, getenv, connFlags{addr: "unix:/run/a.sock", tokenFile: "/t", tls: true, ca: "ca.pem"}},
		{"flags win", connFlags{addr: "h:1", ca: "mine.pem"}, getenv, connFlags{addr: "h:1", tokenFile: "/t", tls: true, ca: "mine.pem"}},
		{"a server name implies TLS", connFlags{serverName: "x"}, func(string) string { return "" }, connFlags{addr: defaultAddr, tls: true, serverName: "x"}},
		{"AGENTCORE_TLS", connFlags{}, func(k string) string { return map[string]string{envTLS: "true"}[k] }, connFlags{addr: defaultAddr, tls: true}},
	} {
		if got := tt.flags.resolved(tt.env); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestPrinter(t *testing.T) {
	var b strings.Builder
	p := newPrinter(&b, false)
	ev := func(e *agentv1.Event) { p.event(e) }
	ev(&agentv1.Event{Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{Delta: &agentv1.ModelDeltaEvent_Text{Text: "Running it"}}}})
	ev(&agentv1.Event{Kind: &agentv1.Event_ModelResponse{ModelResponse: &agentv1.ModelResponseEvent{Text: "Running it"}}})
	ev(&agentv1.Event{Kind: &agentv1.Event_ToolCall{ToolCall: &agentv1.ToolCallEvent{ToolCallId: "c1", ToolName: "shell", Arguments: `{"command":"make"}`}}})
	ev(&agentv1.Event{Kind: &agentv1.Event_ToolOutput{ToolOutput: &agentv1.ToolOutputEvent{ToolCallId: "c1", ToolName: "shell", Data: "building\nlin"}}})
	ev(&agentv1.Event{Kind: &agentv1.Event_ToolOutput{ToolOutput: &agentv1.ToolOutputEvent{ToolCallId: "c1", ToolName: "shell", Data: "king"}}})
	out := strings.Repeat("line\n", maxResultLines+3)
	ev(&agentv1.Event{Kind: &agentv1.Event_ToolResult{ToolResult: &agentv1.ToolResultEvent{ToolCallId: "c1", ToolName: "shell", Error: true,
		Output: &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Text{Text: out}}}}})
	want := "Running it\n→ shell {\"command\":\"make\"}\n  shell│ building\n  shell│ linking\n✗ shell: \n" +
		strings.Repeat("  line\n", maxResultLines) + "… 3 more lines\n"
	if b.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", b.String(), want)
	}
}
