package hostreq

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// hostCode is the HostError code of err, or -1.
func hostCode(err error) pluginv1.HostErrorCode {
	var he *tool.HostError
	if errors.As(err, &he) {
		return he.Code
	}
	return -1
}

// TestElicit: the request is an event before OnElicit is asked and its
// result one after; the answer reaches the tool as the plugin protocol's.
func TestElicit(t *testing.T) {
	content, _ := structpb.NewStruct(map[string]any{"name": "Ada"})
	for _, c := range []struct {
		name     string
		onElicit ElicitFunc
		schema   string
		cancel   bool
		code     pluginv1.HostErrorCode // of the error; -1: an answer
		action   pluginv1.ElicitAction
		content  string
		events   int
		timedOut bool
	}{
		{name: "no one to answer", code: pluginv1.HostErrorCode_HOST_ERROR_CODE_UNSUPPORTED},
		{name: "a schema that is not an object", onElicit: func(context.Context, ElicitationRequest) ElicitationAnswer { return ElicitationAnswer{} },
			schema: `[1]`, code: pluginv1.HostErrorCode_HOST_ERROR_CODE_INVALID},
		{name: "accepted", onElicit: func(_ context.Context, r ElicitationRequest) ElicitationAnswer {
			return ElicitationAnswer{Action: agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT, Content: content}
		}, schema: `{"type":"object"}`, code: -1, action: pluginv1.ElicitAction_ELICIT_ACTION_ACCEPT, content: `{"name":"Ada"}`, events: 2},
		{name: "accepted without content", onElicit: func(context.Context, ElicitationRequest) ElicitationAnswer {
			return ElicitationAnswer{Action: agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT}
		}, code: -1, action: pluginv1.ElicitAction_ELICIT_ACTION_ACCEPT, content: `{}`, events: 2},
		{name: "declined", onElicit: func(context.Context, ElicitationRequest) ElicitationAnswer {
			return ElicitationAnswer{Action: agentv1.ElicitationAction_ELICITATION_ACTION_DECLINE}
		}, code: -1, action: pluginv1.ElicitAction_ELICIT_ACTION_DECLINE, events: 2},
		{name: "timed out", onElicit: func(context.Context, ElicitationRequest) ElicitationAnswer {
			return ElicitationAnswer{Action: agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL, TimedOut: true}
		}, code: -1, action: pluginv1.ElicitAction_ELICIT_ACTION_CANCEL, events: 2, timedOut: true},
		{name: "no action", onElicit: func(context.Context, ElicitationRequest) ElicitationAnswer { return ElicitationAnswer{} },
			code: -1, action: pluginv1.ElicitAction_ELICIT_ACTION_CANCEL, events: 2},
		{name: "the call ended", onElicit: func(ctx context.Context, _ ElicitationRequest) ElicitationAnswer {
			<-ctx.Done()
			return ElicitationAnswer{Action: agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT, Content: content}
		}, cancel: true, code: pluginv1.HostErrorCode(-1), events: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var events []*agentv1.Event
			var asked ElicitationRequest
			call := &Call{RunID: "run_1", ToolCallID: "c1", ToolName: "ask", Emit: func(e *agentv1.Event) { events = append(events, e) }}
			if c.onElicit != nil {
				call.OnElicit = func(ctx context.Context, r ElicitationRequest) ElicitationAnswer {
					if len(events) != 1 || events[0].GetElicitationRequest().GetElicitationId() != r.ID {
						t.Errorf("OnElicit asked before its event: %v", events)
					}
					asked = r
					return c.onElicit(ctx, r)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			if c.cancel {
				cancel()
			}
			defer cancel()
			res, err := call.Handler().Elicit(ctx, &pluginv1.ElicitRequest{Message: "Who?", RequestedSchemaJson: c.schema})
			switch {
			case c.cancel:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err %v, want the call's end", err)
				}
			case c.code != -1:
				if hostCode(err) != c.code {
					t.Fatalf("err %v, want %v", err, c.code)
				}
			case err != nil:
				t.Fatal(err)
			case res.GetAction() != c.action || res.GetContentJson() != c.content:
				t.Errorf("answer %v, want %v %q", res, c.action, c.content)
			}
			if len(events) != c.events {
				t.Fatalf("%d events, want %d", len(events), c.events)
			}
			if c.events == 0 {
				return
			}
			req, end := events[0].GetElicitationRequest(), events[1].GetElicitationResult()
			if !strings.HasPrefix(req.GetElicitationId(), "c1~elicit-") || !IsElicitation(req.GetElicitationId()) || IsElicitation("c1") ||
				req.GetToolCallId() != "c1" || req.GetToolName() != "ask" || req.GetMessage() != "Who?" || asked.RunID != "run_1" {
				t.Errorf("request event %v, asked %+v", req, asked)
			}
			if end.GetElicitationId() != req.GetElicitationId() || end.GetTimedOut() != c.timedOut ||
				(c.cancel && end.GetAction() != agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL) {
				t.Errorf("result event %v", end)
			}
		})
	}
}

// TestSample: permission first when asked, the request's prompt and limits
// over the config's, the model's errors as the plugin protocol's.
func TestSample(t *testing.T) {
	user := []*pluginv1.SampleMessage{{Role: "user", Content: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: "hi"}}}}}
	ok := func(_ context.Context, req llm.Request) (*llm.Result, error) {
		return &llm.Result{Text: "said " + req.Messages[0].GetParts()[0].GetText(), FinishReason: "length"}, nil
	}
	for _, c := range []struct {
		name  string
		req   *pluginv1.SampleRequest
		ask   func(context.Context, string, string) (bool, string)
		chat  func(context.Context, llm.Request) (*llm.Result, error)
		code  pluginv1.HostErrorCode // -1: an answer
		text  string
		inErr string
	}{
		{name: "no messages", req: &pluginv1.SampleRequest{}, chat: ok, code: pluginv1.HostErrorCode_HOST_ERROR_CODE_INVALID},
		{name: "an unknown role", req: &pluginv1.SampleRequest{Messages: []*pluginv1.SampleMessage{{Role: "system"}}}, chat: ok,
			code: pluginv1.HostErrorCode_HOST_ERROR_CODE_INVALID, inErr: `"system"`},
		{name: "denied", req: &pluginv1.SampleRequest{Messages: user}, chat: ok,
			ask: func(context.Context, string, string) (bool, string) { return false, "not today" }, code: pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED, inErr: "not today"},
		{name: "over the budget", req: &pluginv1.SampleRequest{Messages: user}, chat: func(context.Context, llm.Request) (*llm.Result, error) {
			return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED, Message: "budget"}
		}, code: pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED, inErr: "budget"},
		{name: "the model failed", req: &pluginv1.SampleRequest{Messages: user}, chat: func(context.Context, llm.Request) (*llm.Result, error) {
			return nil, errors.New("401 for key sk-secret")
		}, code: pluginv1.HostErrorCode_HOST_ERROR_CODE_FAILED, inErr: "401 for key [redacted]"},
		{name: "allowed", req: &pluginv1.SampleRequest{Messages: user, SystemPrompt: "Be brief.", MaxTokens: 5, Temperature: proto.Float64(0.5), StopSequences: []string{"."}},
			ask: func(_ context.Context, id, args string) (bool, string) {
				if !strings.HasPrefix(id, "c1~sample-") || !strings.Contains(args, "Be brief.") {
					return false, "asked " + id + " " + args
				}
				return true, ""
			}, chat: func(ctx context.Context, req llm.Request) (*llm.Result, error) {
				p := req.Config.Provider.Params
				if req.System != "Be brief." || *p.MaxOutputTokens != 5 || *p.Temperature != 0.5 || p.Stop[0] != "." || req.Config.Output != nil {
					return nil, errors.New("the request's parameters were not applied")
				}
				return ok(ctx, req)
			}, code: -1, text: "said hi"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := &llm.Config{Model: "m1", System: "the agent's", Output: &llm.OutputFormat{}}
			call := &Call{ToolCallID: "c1", ToolName: "t", Config: cfg, Ask: c.ask, Chat: c.chat,
				Redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[redacted]") }}
			res, err := call.Handler().Sample(context.Background(), c.req)
			if c.code != -1 {
				if hostCode(err) != c.code || !strings.Contains(err.Error(), c.inErr) {
					t.Fatalf("err %v, want %v with %q", err, c.code, c.inErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.GetContent()[0].GetText() != c.text || res.GetModel() != "m1" || res.GetStopReason() != "maxTokens" || res.GetRole() != "assistant" {
				t.Errorf("answer %v", res)
			}
			if cfg.System != "the agent's" || cfg.Provider.Params.MaxOutputTokens != nil {
				t.Errorf("the run's config changed: %+v", cfg)
			}
		})
	}
}
