package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func TestToResult(t *testing.T) {
	type cyclic struct{ Self *cyclic }
	loop := &cyclic{}
	loop.Self = loop
	tests := []struct {
		name     string
		value    any
		err      error
		text     string // expected text output
		json     string // expected JSON output
		parts    int    // expected content parts
		errorHas string // expected error message part
		stop     bool
	}{
		{name: "string", value: "hi", text: "hi"},
		{name: "invalid utf-8 string", value: "a\xffb", text: "a\uFFFDb"},
		{name: "number", value: 3.5, json: "3.5"},
		{name: "nil", value: nil, json: "null"},
		{name: "struct", value: struct {
			A int `json:"a"`
		}{1}, json: `{"a":1}`},
		{name: "raw json", value: json.RawMessage(`[1,2]`), json: `[1,2]`},
		{name: "bad raw json", value: json.RawMessage(`[1,`), errorHas: "not valid JSON"},
		{name: "error", err: errors.New("nope"), errorHas: "nope"},
		{name: "stop", value: Stop("done"), text: "done", stop: true},
		{name: "stop pointer", value: &Result{Output: 1, Stop: true}, json: "1", stop: true},
		{name: "failed result", value: Result{Output: "bad input", Error: true}, text: "bad input", errorHas: "failure"},
		{name: "nested result", value: Result{Output: Result{}}, errorHas: "cannot hold another Result"},
		{name: "content", value: Content{Text("a"), Image("image/png", pngHeader), FileURL("application/pdf", "https://x.test/a.pdf")}, parts: 3},
		{name: "one part", value: Text("x"), parts: 1},
		{name: "part slice", value: []Part{Text("x"), Text("y")}, parts: 2},
		{name: "legacy image sniffed", value: Content{{Type: "image", Data: pngHeader}}, parts: 1},
		{name: "legacy image by url", value: Content{{Type: "image", URL: "https://x.test/a.jpg"}}, parts: 1},
		{name: "unknown part type", value: Content{{Type: "media", Data: pngHeader}}, errorHas: `type "media" is not allowed`},
		{name: "file without media type", value: Content{{Type: "file", Data: []byte("x")}}, errorHas: "no media type"},
		{name: "legacy audio not audio", value: Content{{Type: "audio", Data: []byte("plain text")}}, errorHas: "no media type"},
		{name: "file with both", value: Content{{Type: "file", MediaType: "a/b", Data: []byte("x"), URL: "https://x.test"}}, errorHas: "both data and a URL"},
		{name: "file with neither", value: Content{{Type: "file", MediaType: "a/b"}}, errorHas: "neither data nor a URL"},
		{name: "file url scheme", value: Content{FileURL("a/b", "file:///etc/passwd")}, errorHas: "not an http(s) or data URL"},
		{name: "bad media type", value: Content{File("not a type", []byte("x"), "")}, errorHas: "media type"},
		{name: "text part with data", value: Content{{Type: "text", Data: []byte("x")}}, errorHas: "text only"},
		{name: "empty content", value: Content{}, errorHas: "no parts"},
		{name: "channel", value: make(chan int), errorHas: "cannot be serialised"},
		{name: "func", value: func() {}, errorHas: "cannot be serialised"},
		{name: "cycle", value: loop, errorHas: "cannot be serialised"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := toResult(tt.value, tt.err)
			if tt.errorHas != "" {
				if !strings.Contains(r.GetError(), tt.errorHas) && !strings.Contains(r.GetText(), tt.errorHas) {
					t.Fatalf("error %q / text %q does not mention %q", r.GetError(), r.GetText(), tt.errorHas)
				}
				if r.GetError() == "" {
					t.Fatal("not an error result")
				}
			} else if r.GetError() != "" {
				t.Fatalf("unexpected error %q", r.GetError())
			}
			if tt.text != "" && r.GetText() != tt.text {
				t.Errorf("text = %q, want %q", r.GetText(), tt.text)
			}
			if tt.json != "" && r.GetJson() != tt.json {
				t.Errorf("json = %q, want %q", r.GetJson(), tt.json)
			}
			if got := len(r.GetContent().GetParts()); got != tt.parts {
				t.Errorf("parts = %d, want %d", got, tt.parts)
			}
			if r.GetStop() != tt.stop {
				t.Errorf("stop = %v", r.GetStop())
			}
		})
	}
	r := toResult(Content{{Type: "image", Data: pngHeader}}, nil)
	if mt := r.GetContent().GetParts()[0].GetFile().GetMediaType(); mt != "image/png" {
		t.Errorf("legacy image media type = %q", mt)
	}
}

type hello struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty"`
}

func TestNewDerivesSchemaAndDecodes(t *testing.T) {
	tl := New("hi", "Greets.", func(_ context.Context, in hello, emit Emit) (any, error) {
		emit("greeting")
		return strings.Repeat("hi "+in.Name+" ", max(in.Times, 1)), nil
	}, Timeout(time.Second), ReadOnly(), Idempotent())
	if tl.Timeout != time.Second || !tl.ReadOnly || !tl.Idempotent {
		t.Fatalf("options not applied: %+v", tl)
	}
	var schema struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
		Additional any                       `json:"additionalProperties"`
	}
	if err := json.Unmarshal(tl.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Properties["name"]["description"] != "who to greet" ||
		len(schema.Required) != 1 || schema.Required[0] != "name" || schema.Additional != false {
		t.Fatalf("schema = %s", tl.InputSchema)
	}
	var emitted []string
	v, err := tl.Handler(context.Background(), json.RawMessage(`{"name":"Bo","times":2}`), func(s string) { emitted = append(emitted, s) })
	if err != nil || v != "hi Bo hi Bo " || len(emitted) != 1 {
		t.Fatalf("handler = %v, %v, %v", v, err, emitted)
	}
	if _, err := tl.Handler(context.Background(), json.RawMessage(`{"name":1}`), func(string) {}); err == nil {
		t.Fatal("bad input decoded")
	}
	tl = New("x", "", func(context.Context, hello, Emit) (any, error) { return nil, nil }, Schema(json.RawMessage(`{"type":"object"}`)))
	if string(tl.InputSchema) != `{"type":"object"}` {
		t.Fatalf("Schema option: %s", tl.InputSchema)
	}
}

func TestNewServerChecksTools(t *testing.T) {
	ok := Raw("ok", "", json.RawMessage(`{"type":"object"}`), func(context.Context, json.RawMessage, Emit) (any, error) { return nil, nil })
	tests := []struct {
		name  string
		tools []Tool
		want  string
	}{
		{"none", nil, "no tools"},
		{"bad name", []Tool{{Name: "a b", InputSchema: ok.InputSchema, Handler: ok.Handler}}, "must match"},
		{"duplicate", []Tool{ok, ok}, "defined twice"},
		{"no handler", []Tool{{Name: "x", InputSchema: ok.InputSchema}}, "no handler"},
		{"not json", []Tool{{Name: "x", InputSchema: json.RawMessage(`{`), Handler: ok.Handler}}, "not a JSON object"},
		{"not object", []Tool{{Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`), Handler: ok.Handler}}, `"type": "object"`},
		{"underivable", []Tool{New("x", "", func(context.Context, chan int, Emit) (any, error) { return nil, nil })}, "deriving the input schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newServer(tt.tools)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	s, err := newServer([]Tool{ok, Raw("b", "B", ok.InputSchema, ok.Handler, Timeout(2*time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := s.Describe(context.Background(), &pluginv1.DescribeRequest{})
	if len(resp.GetTools()) != 2 || resp.GetTools()[1].GetTimeout().AsDuration() != 2*time.Second {
		t.Fatalf("Describe = %v", resp)
	}
}

func TestRunUnknownToolAndPanic(t *testing.T) {
	s, err := newServer([]Tool{Raw("boom", "", json.RawMessage(`{"type":"object"}`), func(_ context.Context, in json.RawMessage, _ Emit) (any, error) {
		var args []string
		_ = json.Unmarshal(in, &args) // "{}" is no array: args stays empty
		return args[0], nil           // the handler's bug: a runtime panic
	})})
	if err != nil {
		t.Fatal(err)
	}
	c := &call{}
	if r := s.run(context.Background(), c, &pluginv1.ExecuteRequest{Tool: "nope"}); !strings.Contains(r.GetError(), `unknown tool "nope"; this plugin offers: boom`) {
		t.Fatalf("unknown = %v", r)
	}
	r := s.run(context.Background(), c, &pluginv1.ExecuteRequest{Tool: "boom", InputJson: "{}"})
	if !strings.Contains(r.GetError(), "panicked: runtime error: index out of range [0] with length 0") || !strings.Contains(r.GetError(), "tool_test.go") ||
		strings.Contains(r.GetError(), "sdk/tool.(*server)") {
		t.Fatalf("panic = %v", r.GetError())
	}
}

func TestExitCode(t *testing.T) {
	if ExitCode(nil) != 0 || ExitCode(errors.New("x")) != -1 {
		t.Fatal("ExitCode")
	}
}

// funcService is a ToolPluginServiceServer whose Execute is a function.
type funcService struct {
	pluginv1.UnimplementedToolPluginServiceServer
	execute func(*pluginv1.ExecuteRequest, grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error
}

func (f funcService) Execute(req *pluginv1.ExecuteRequest, s grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
	return f.execute(req, s)
}

func TestServeServiceRunsExecute(t *testing.T) {
	chunk := func(text string) *pluginv1.ExecuteResponse {
		return &pluginv1.ExecuteResponse{Event: &pluginv1.ExecuteResponse_Output{Output: &pluginv1.OutputChunk{
			Stream: pluginv1.OutputStream_OUTPUT_STREAM_OUTPUT, Data: []byte(text)}}}
	}
	result := func(text string) *pluginv1.ExecuteResponse {
		return &pluginv1.ExecuteResponse{Event: &pluginv1.ExecuteResponse_Result{Result: &pluginv1.ToolResult{
			Output: &pluginv1.ToolResult_Text{Text: text}}}}
	}
	tests := []struct {
		name    string
		execute func(*pluginv1.ExecuteRequest, grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error
		want    string // the messages sent, then the result
	}{
		{"chunks then result", func(req *pluginv1.ExecuteRequest, s grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
			_ = s.Send(chunk("a"))
			_ = s.SendMsg(chunk("b"))
			return s.Send(result("done " + req.GetTool()))
		}, "chunk a|chunk b|result done x"},
		{"later messages dropped", func(_ *pluginv1.ExecuteRequest, s grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
			_ = s.Send(result("first"))
			if err := s.Send(chunk("late")); err == nil {
				return errors.New("a chunk after the result was taken")
			}
			_ = s.Send(result("second"))
			return nil
		}, "result first"},
		{"error without result", func(*pluginv1.ExecuteRequest, grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
			return status.Error(codes.Internal, "backend down")
		}, `error tool "x" failed: backend down`},
		{"nothing", func(*pluginv1.ExecuteRequest, grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
			return nil
		}, `error tool "x" ended without a result`},
		{"panic", func(*pluginv1.ExecuteRequest, grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
			panic("oops")
		}, `error tool "x" panicked: oops`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &server{svc: funcService{execute: tt.execute}}
			var got []string
			err := s.serveCall(t.Context(), &pluginv1.ExecuteRequest{Tool: "x"}, func(r *pluginv1.ExecuteResponse) error {
				switch ev := r.GetEvent().(type) {
				case *pluginv1.ExecuteResponse_Output:
					got = append(got, "chunk "+string(ev.Output.GetData()))
				case *pluginv1.ExecuteResponse_Result:
					if e := ev.Result.GetError(); e != "" {
						got = append(got, "error "+strings.SplitN(e, "\n", 2)[0])
					} else {
						got = append(got, "result "+ev.Result.GetText())
					}
				}
				return nil
			}, nil)
			if err != nil || strings.Join(got, "|") != tt.want {
				t.Fatalf("sent %q (%v), want %q", strings.Join(got, "|"), err, tt.want)
			}
		})
	}
}

func TestLimitsAreDescribed(t *testing.T) {
	noop := func(context.Context, struct{}, Emit) (any, error) { return nil, nil }
	srv, err := newServer([]Tool{
		New("plain", "No limits asked for.", noop),
		New("big", "Asks for more.", noop, WithLimits(Limits{MemoryBytes: 2 << 30, MaxProcesses: 64, CPUTime: time.Minute, MaxOpenFiles: 4096})),
	})
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]*pluginv1.ToolSpec{}
	for _, s := range srv.specs {
		specs[s.GetName()] = s
	}
	if specs["plain"].GetLimits() != nil {
		t.Errorf("plain asks for limits: %v", specs["plain"].GetLimits())
	}
	l := specs["big"].GetLimits()
	if l.GetMemoryBytes() != 2<<30 || l.GetMaxProcesses() != 64 || l.GetCpuTime().AsDuration() != time.Minute || l.GetMaxOpenFiles() != 4096 {
		t.Errorf("big's limits = %v", l)
	}
}

func TestCapResult(t *testing.T) {
	long := strings.Repeat("a", 5000) + strings.Repeat("z", 5000)
	r := capResult(toResult(long, nil), 2000)
	text := r.GetText()
	if len(text) > 2000 || !strings.HasPrefix(text, "aaa") || !strings.HasSuffix(text, "zzz") || !strings.Contains(text, "cut from the middle by the tool") {
		t.Fatalf("text: %d bytes %.100q", len(text), text)
	}
	if r := capResult(toResult(map[string]string{"k": long}, nil), 2000); r.GetText() == "" || r.GetJson() != "" {
		t.Fatalf("cut JSON is not text: %v", r)
	}
	small := toResult("ok", nil)
	if capResult(small, 2000) != small || capResult(toResult(long, nil), 0).GetText() != long {
		t.Fatal("a result was changed that needed no cut")
	}
	img := capResult(toResult(Content{Text("caption"), Image("image/png", append(pngHeader, make([]byte, 5000)...))}, nil), 1000)
	parts := img.GetContent().GetParts()
	if len(parts) != 2 || parts[0].GetText() != "caption" || !strings.Contains(parts[1].GetText(), "image/png file of") {
		t.Fatalf("content: %v", parts)
	}
}

// A handler reads its call's id, idempotency key and attempt from its ctx.
func TestCallInfo(t *testing.T) {
	s, err := newServer([]Tool{Raw("who", "", json.RawMessage(`{"type":"object"}`), func(ctx context.Context, _ json.RawMessage, _ Emit) (any, error) {
		c := CallInfo(ctx)
		return fmt.Sprintf("%s %s %d", c.ID, c.IdempotencyKey, c.Attempt), nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  *pluginv1.ExecuteRequest
		want string
	}{
		{&pluginv1.ExecuteRequest{Tool: "who", CallId: "call_1", IdempotencyKey: "run_1/call_1", Attempt: 2}, "call_1 run_1/call_1 2"},
		{&pluginv1.ExecuteRequest{Tool: "who"}, "  0"},
	} {
		if got := s.run(context.Background(), &call{}, tc.req).GetText(); got != tc.want {
			t.Errorf("CallInfo = %q, want %q", got, tc.want)
		}
	}
	if c := CallInfo(context.Background()); c != (Call{}) {
		t.Errorf("CallInfo outside a handler = %+v", c)
	}
}
