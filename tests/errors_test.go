package tests

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// badRequestFields returns the BadRequest field paths of a status error.
func badRequestFields(err error) []string {
	st, _ := status.FromError(err)
	var out []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, f := range br.GetFieldViolations() {
				out = append(out, f.GetField())
			}
		}
	}
	return out
}

func errorInfo(err error) *errdetails.ErrorInfo {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei
		}
	}
	return nil
}

// wireStr is field num holding s, in protobuf's wire format.
func wireStr(num protowire.Number, s string) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), []byte(s))
}

// wireMsg is field num holding a message made of fields.
func wireMsg(num protowire.Number, fields ...[]byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), slices.Concat(fields...))
}

// invokeRaw sends req, raw bytes, to an AgentService method of the suite's
// server (a stream's first message when stream is set) and returns the
// call's error. The bytes go as the unknown fields of an empty message,
// which the protobuf runtime writes as they are: invalid UTF-8 included,
// which it refuses to encode in a string field.
func invokeRaw(ctx context.Context, method string, req []byte, stream bool) error {
	conn, err := grpc.NewClient(suite.server.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	method = "/agentcore.v1.AgentService/" + method
	raw := &emptypb.Empty{}
	raw.ProtoReflect().SetUnknown(req)
	if !stream {
		return conn.Invoke(ctx, method, raw, &emptypb.Empty{})
	}
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method)
	if err != nil {
		return err
	}
	_ = st.SendMsg(raw)
	return st.RecvMsg(&emptypb.Empty{})
}

// sendRaw runs one Send with a raw first message and returns the stream's end.
func sendRaw(ctx context.Context, first *agentv1.SendRequest) error {
	stream, err := suite.client.API().Send(ctx)
	if err != nil {
		return err
	}
	if first != nil {
		if err := stream.Send(first); err != nil {
			_, err = stream.Recv()
			return err
		}
	}
	_ = stream.CloseSend()
	for {
		if _, err := stream.Recv(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func TestInvalidInputs(t *testing.T) {
	t.Parallel()
	api := suite.client.API()
	a := newAgent(t, e2e.TwoTools, nil)
	start := func(s *agentv1.StartRun) *agentv1.SendRequest {
		return &agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: s}}
	}
	text := []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "hi"}}}
	badHistory := []*agentv1.Message{{Role: agentv1.Role_ROLE_TOOL, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "x"}}}}}
	tests := []struct {
		name  string
		call  func(ctx context.Context) error
		code  codes.Code
		field string // a BadRequest field, when the code is INVALID_ARGUMENT
	}{
		{"create: bad threshold", func(ctx context.Context) error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{CompactThreshold: proto.Float64(3)}}})
			return err
		}, codes.InvalidArgument, "agent.config.compact_threshold"},
		{"create: unknown tool", func(ctx context.Context) error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Tools: &agentv1.ToolSelection{Names: []string{"say_hello", "nope"}}}})
			return err
		}, codes.InvalidArgument, "agent.tools.names[1]"},
		{"create: unknown skill", func(ctx context.Context) error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Skills: &agentv1.SkillSelection{Names: []string{"nope"}}}})
			return err
		}, codes.InvalidArgument, "agent.skills.names[0]"},
		{"create: bad id", func(ctx context.Context) error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{AgentId: "no spaces allowed"})
			return err
		}, codes.InvalidArgument, "agent_id"},
		{"create: unknown profile", func(ctx context.Context) error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{Profile: proto.String("nope")}}})
			return err
		}, codes.InvalidArgument, "agent.config.profile"},
		{"create: bad history", func(ctx context.Context) error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{History: badHistory})
			return err
		}, codes.InvalidArgument, "history[0]"},
		{"create: existing id", func(ctx context.Context) error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{AgentId: a.ID})
			return err
		}, codes.AlreadyExists, ""},
		{"get: no id", func(ctx context.Context) error {
			_, err := api.GetAgent(ctx, &agentv1.GetAgentRequest{})
			return err
		}, codes.InvalidArgument, "agent_id"},
		{"get: unknown", func(ctx context.Context) error {
			_, err := api.GetAgent(ctx, &agentv1.GetAgentRequest{AgentId: "nobody"})
			return err
		}, codes.NotFound, ""},
		{"list: negative page", func(ctx context.Context) error {
			_, err := api.ListAgents(ctx, &agentv1.ListAgentsRequest{PageSize: -1})
			return err
		}, codes.InvalidArgument, "page_size"},
		{"list: bad token", func(ctx context.Context) error {
			_, err := api.ListAgents(ctx, &agentv1.ListAgentsRequest{PageToken: "!!"})
			return err
		}, codes.InvalidArgument, "page_token"},
		{"update: no agent", func(ctx context.Context) error {
			_, err := api.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{})
			return err
		}, codes.InvalidArgument, "agent"},
		{"update: bad mask", func(ctx context.Context) error {
			_, err := api.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{Agent: &agentv1.Agent{Id: a.ID}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"config.nope"}}})
			return err
		}, codes.InvalidArgument, "update_mask.paths[0]"},
		{"create: a base URL without a model", func(ctx context.Context) error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{BaseUrl: proto.String("https://api.example.com/v1")}}})
			return err
		}, codes.InvalidArgument, "agent.config.model"},
		{"create: invalid UTF-8", func(ctx context.Context) error {
			// CreateAgentRequest{agent: {config: {system: "ok\xffno"}}}
			return invokeRaw(ctx, "CreateAgent", wireMsg(2, wireMsg(2, wireStr(6, "ok\xffno"))), false)
		}, codes.InvalidArgument, "agent.config.system"},
		{"update: a base URL without a model", func(ctx context.Context) error {
			// The whole config replaced (else the agent keeps its profile,
			// which has a model), with a key of its own (the server's is for
			// its profile's endpoint only).
			_, err := api.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{Agent: &agentv1.Agent{Id: a.ID, Config: &agentv1.AgentConfig{
				BaseUrl: proto.String("https://api.example.com/v1"), ApiKey: proto.String("sk-own")}},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"config"}}})
			return err
		}, codes.InvalidArgument, "agent.config.model"},
		{"update: bad config", func(ctx context.Context) error {
			_, err := api.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{Agent: &agentv1.Agent{Id: a.ID, Config: &agentv1.AgentConfig{MaxSteps: proto.Int32(-2)}}})
			return err
		}, codes.InvalidArgument, "agent.config.max_steps"},
		{"delete: unknown", func(ctx context.Context) error {
			_, err := api.DeleteAgent(ctx, &agentv1.DeleteAgentRequest{AgentId: "nobody"})
			return err
		}, codes.NotFound, ""},
		{"send: no start", func(ctx context.Context) error {
			return sendRaw(ctx, &agentv1.SendRequest{Kind: &agentv1.SendRequest_Stop{Stop: &agentv1.StopRun{}}})
		}, codes.InvalidArgument, "start"},
		{"send: closed at once", func(ctx context.Context) error { return sendRaw(ctx, nil) }, codes.InvalidArgument, "start"},
		{"send: no agent id", func(ctx context.Context) error {
			return sendRaw(ctx, start(&agentv1.StartRun{Input: text}))
		}, codes.InvalidArgument, "start.agent_id"},
		{"send: unknown agent", func(ctx context.Context) error {
			return sendRaw(ctx, start(&agentv1.StartRun{AgentId: "nobody", Input: text}))
		}, codes.NotFound, ""},
		{"send: empty input", func(ctx context.Context) error {
			return sendRaw(ctx, start(&agentv1.StartRun{AgentId: a.ID}))
		}, codes.InvalidArgument, "start.input"},
		{"send: bad override", func(ctx context.Context) error {
			return sendRaw(ctx, start(&agentv1.StartRun{AgentId: a.ID, Input: text, Config: &agentv1.AgentConfig{RequestTimeout: durationpb.New(-time.Second)}}))
		}, codes.InvalidArgument, "start.config.request_timeout"},
		{"send: invalid UTF-8", func(ctx context.Context) error {
			// SendRequest{start: {agent_id, input: [{text: "\xc3"}]}}
			return invokeRaw(ctx, "Send", wireMsg(1, wireStr(1, a.ID), wireMsg(2, wireStr(1, "\xc3"))), true)
		}, codes.InvalidArgument, "start.input[0].text"},
		{"send: unknown tool", func(ctx context.Context) error {
			return sendRaw(ctx, start(&agentv1.StartRun{AgentId: a.ID, Input: text, Tools: &agentv1.ToolSelection{Names: []string{"nope"}}}))
		}, codes.InvalidArgument, "start.tools.names[0]"},
		{"send: bad history", func(ctx context.Context) error {
			return sendRaw(ctx, start(&agentv1.StartRun{AgentId: a.ID, Input: text, History: &agentv1.HistoryReplacement{Messages: badHistory}}))
		}, codes.InvalidArgument, "start.history.messages[0]"},
		{"stop: no id", func(ctx context.Context) error {
			_, err := api.Stop(ctx, &agentv1.StopRequest{})
			return err
		}, codes.InvalidArgument, "agent_id"},
		{"compact: nothing to compact", func(ctx context.Context) error {
			s, err := api.Compact(ctx, &agentv1.CompactRequest{AgentId: a.ID})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}, codes.FailedPrecondition, ""},
		{"history: unknown agent", func(ctx context.Context) error {
			_, err := api.GetHistory(ctx, &agentv1.GetHistoryRequest{AgentId: "nobody"})
			return err
		}, codes.NotFound, ""},
		{"set history: invalid UTF-8", func(ctx context.Context) error {
			// SetHistoryRequest{agent_id, messages: [{parts: [{text: "fine"}]}, {parts: [{text: "fine"}, {text: "\xfe"}]}]}
			ok := wireMsg(3, wireStr(1, "fine"))
			return invokeRaw(ctx, "SetHistory", slices.Concat(wireStr(1, a.ID), wireMsg(2, ok), wireMsg(2, ok, wireMsg(3, wireStr(1, "\xfe")))), false)
		}, codes.InvalidArgument, "messages[1].parts[1].text"},
		{"set history: malformed", func(ctx context.Context) error {
			_, err := api.SetHistory(ctx, &agentv1.SetHistoryRequest{AgentId: a.ID, Messages: badHistory})
			return err
		}, codes.InvalidArgument, "messages[0]"},
		{"preview: bad input", func(ctx context.Context) error {
			_, err := api.PreviewContext(ctx, &agentv1.PreviewContextRequest{AgentId: a.ID, Input: []*agentv1.Part{{}}})
			return err
		}, codes.InvalidArgument, "input[0]"},
		{"execute: no name", func(ctx context.Context) error {
			s, err := api.ExecuteTool(ctx, &agentv1.ExecuteToolRequest{})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}, codes.InvalidArgument, "name"},
		{"execute: unknown tool", func(ctx context.Context) error {
			s, err := api.ExecuteTool(ctx, &agentv1.ExecuteToolRequest{Name: "nope"})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}, codes.NotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(e2e.Context(t, 10*time.Second))
			if status.Code(err) != tt.code {
				t.Fatalf("code %v (%v), want %v", status.Code(err), err, tt.code)
			}
			if ei := errorInfo(err); ei == nil || ei.GetDomain() != "agentcore" || ei.GetReason() == "" {
				t.Errorf("no ErrorInfo with a stable reason: %v", err)
			}
			if tt.field == "" {
				return
			}
			fields := badRequestFields(err)
			found := false
			for _, f := range fields {
				found = found || f == tt.field || strings.HasPrefix(f, tt.field+".")
			}
			if !found {
				t.Errorf("BadRequest fields %v, want %q (%v)", fields, tt.field, err)
			}
		})
	}
}

func TestModelErrorKinds(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + closed.Addr().String() + "/v1"
	closed.Close()
	tests := []struct {
		name      string
		turn      fakemodel.Turn
		baseURL   string
		code      codes.Code
		reason    string
		retryable string
		status    string
	}{
		{"auth", fakemodel.Turn{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided: ` + e2e.TestKey + `","type":"invalid_request_error"}}`},
			"", codes.FailedPrecondition, "AUTH", "false", "401"},
		{"forbidden", fakemodel.Turn{Status: 403}, "", codes.FailedPrecondition, "AUTH", "false", "403"},
		{"limit", fakemodel.Turn{Status: 429}, "", codes.ResourceExhausted, "LIMIT", "true", "429"},
		{"timeout", fakemodel.Turn{Status: 408}, "", codes.DeadlineExceeded, "TIMEOUT", "true", "408"},
		{"server", fakemodel.Turn{Status: 503}, "", codes.Unavailable, "SERVER", "true", "503"},
		{"request", fakemodel.Turn{Status: 400}, "", codes.FailedPrecondition, "REQUEST", "false", "400"},
		{"unknown", fakemodel.Turn{Raw: []byte(`{"not":"a completion"}`), RawContentType: "application/json"}, "", codes.Unknown, "UNKNOWN", "false", "0"},
		{"network", fakemodel.Turn{}, deadURL, codes.Unavailable, "NETWORK", "true", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := &agentv1.AgentConfig{RetryMaxElapsed: durationpb.New(0), Stream: proto.Bool(tt.turn.Raw == nil)}
			if tt.baseURL != "" {
				cfg.BaseUrl, cfg.Model = proto.String(tt.baseURL), proto.String("m")
			}
			a := newAgent(t, func(int, *fakemodel.Request) fakemodel.Turn { return tt.turn }, cfg)
			_, err := a.Send(e2e.Context(t, 20*time.Second), "hi", client.Callbacks{})
			var ce *client.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err %v is not a client.Error", err)
			}
			if ce.Code != tt.code || string(ce.Reason) != tt.reason || string(ce.Kind) != strings.ToLower(tt.reason) {
				t.Fatalf("got code %v reason %q kind %q, want %v %q (%v)", ce.Code, ce.Reason, ce.Kind, tt.code, tt.reason, err)
			}
			raw := ceRaw(t, a)
			ei := errorInfo(raw)
			if ei.GetDomain() != "agentcore" || ei.GetMetadata()["retryable"] != tt.retryable || ei.GetMetadata()["status"] != tt.status {
				t.Errorf("ErrorInfo %v, want retryable %s status %s", ei, tt.retryable, tt.status)
			}
			if strings.Contains(err.Error(), e2e.TestKey) || strings.Contains(raw.Error(), e2e.TestKey) {
				t.Errorf("the API key is in the error: %v", err)
			}
		})
	}
}

// ceRaw repeats the agent's failing send through the raw API to read the status details.
func ceRaw(t *testing.T, a *client.Agent) error {
	t.Helper()
	return sendRaw(e2e.Context(t, 20*time.Second), &agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: &agentv1.StartRun{
		AgentId: a.ID, Input: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "again"}}},
	}}})
}

func TestNoSecretsInGetAgent(t *testing.T) {
	t.Parallel()
	cfg := &agentv1.AgentConfig{ApiKey: proto.String("sk-client-given-secret"), Provider: &agentv1.ProviderOptions{Headers: map[string]string{"X-Token": "header-secret"}}}
	a := newAgent(t, e2e.TwoTools, cfg)
	for _, get := range []func() (proto.Message, error){
		func() (proto.Message, error) { return a.Get(e2e.Context(t, 5*time.Second)) },
		func() (proto.Message, error) {
			return suite.client.API().ListAgents(e2e.Context(t, 5*time.Second), &agentv1.ListAgentsRequest{})
		},
	} {
		m, err := get()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := proto.Marshal(m)
		for _, secret := range []string{"sk-client-given-secret", "header-secret", e2e.TestKey} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%q returned in %T", secret, m)
			}
		}
	}
	// Plugins inherit the server's environment, but not the key's variable.
	res, err := suite.client.ExecuteTool(e2e.Context(t, 10*time.Second), "shell", map[string]any{"command": "env"}, 0, nil)
	if err != nil || res.GetError() {
		t.Fatalf("shell env: %v %v", res, err)
	}
	if out := res.GetOutput().GetJson(); strings.Contains(out, e2e.TestKey) || !strings.Contains(out, "PATH=") {
		t.Errorf("a tool sees the API key in its environment (or env printed nothing): %.200s", out)
	}
	st, _ := a.Get(e2e.Context(t, 5*time.Second))
	if em := st.GetEffectiveModel(); !st.GetHasApiKey() || em.GetProfile() != "default" || !em.GetFollowsDefault() {
		t.Errorf("has_api_key %v, effective model %v", st.GetHasApiKey(), em)
	}
}

func TestRetryEventsAndRedaction(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	a := newAgent(t, func(int, *fakemodel.Request) fakemodel.Turn {
		if calls.Add(1) == 1 {
			return fakemodel.Turn{Status: 503, ErrorBody: `{"error":{"message":"overloaded, key ` + e2e.TestKey + `","type":"server_error"}}`}
		}
		return fakemodel.Turn{Text: "fine now"}
	}, &agentv1.AgentConfig{RetryMaxDelay: durationpb.New(10 * time.Millisecond)})
	var retries []*agentv1.RetryEvent
	res, err := a.Send(e2e.Context(t, 20*time.Second), "hi", client.Callbacks{
		OnRetry: func(e *agentv1.RetryEvent) { retries = append(retries, e) },
	})
	if err != nil || res.Text != "fine now" {
		t.Fatalf("send: %+v %v", res, err)
	}
	if len(retries) != 1 || retries[0].GetAttempt() != 1 || retries[0].GetKind() != agentv1.ErrorKind_ERROR_KIND_SERVER || retries[0].GetStatus() != 503 {
		t.Fatalf("retry events: %v", retries)
	}
	if strings.Contains(retries[0].GetMessage(), e2e.TestKey) || !strings.Contains(retries[0].GetMessage(), "[redacted]") {
		t.Errorf("the retry event's message: %q", retries[0].GetMessage())
	}
}
