package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/truncate"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestResult(t *testing.T) {
	png := []byte("\x89PNG")
	for _, tc := range []struct {
		name string
		in   tool.Result
		want string
	}{
		{"text", tool.Result{Output: tool.TextOutput("hi")}, `{"content":[{"type":"text","text":"hi"}]}`},
		{"json object", tool.Result{Output: tool.JSONOutput(json.RawMessage(`{"a":1}`))},
			`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`},
		{"json array", tool.Result{Output: tool.JSONOutput(json.RawMessage(`[1]`))}, `{"content":[{"type":"text","text":"[1]"}]}`},
		{"error", tool.Result{Output: tool.TextOutput("no"), Error: true}, `{"content":[{"type":"text","text":"no"}],"isError":true}`},
		{"stop", tool.Result{Output: tool.TextOutput("done"), Stop: true}, `{"_meta":{"agentcore/stop":true},"content":[{"type":"text","text":"done"}]}`},
		{"parts", tool.Result{Output: &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Content{Content: &agentv1.ContentParts{Parts: []*agentv1.Part{
			{Kind: &agentv1.Part_Text{Text: "cap"}},
			{Kind: &agentv1.Part_File{File: &agentv1.FilePart{MediaType: "image/png", Source: &agentv1.FilePart_Data{Data: png}}}},
			{Kind: &agentv1.Part_File{File: &agentv1.FilePart{MediaType: "audio/wav", Source: &agentv1.FilePart_Data{Data: png}}}},
			{Kind: &agentv1.Part_File{File: &agentv1.FilePart{MediaType: "application/pdf", Filename: "a.pdf", Source: &agentv1.FilePart_Data{Data: png}}}},
			{Kind: &agentv1.Part_Image{Image: &agentv1.FilePart{MediaType: "image/jpeg", Source: &agentv1.FilePart_Url{Url: "https://x.test/a.jpg"}}}},
		}}}}}, `{"content":[{"type":"text","text":"cap"},{"type":"image","mimeType":"image/png","data":"iVBORw=="},` +
			`{"type":"audio","mimeType":"audio/wav","data":"iVBORw=="},` +
			`{"type":"resource","resource":{"uri":"agentcore:file/a.pdf","mimeType":"application/pdf","blob":"iVBORw=="}},` +
			`{"type":"resource_link","mimeType":"image/jpeg","uri":"https://x.test/a.jpg","name":"part-4"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(Result(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}

// tools is a tool set with an in-process tool that streams and stops.
func tools(t *testing.T) *tool.Set {
	t.Helper()
	set, err := tool.InProcess(tool.Spec{Name: "wrap", Description: "Wraps up.", ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		func(ctx context.Context, input json.RawMessage, emit func(string)) (tool.Result, error) {
			emit("one")
			emit("two")
			return tool.Result{Output: tool.TextOutput("wrapped " + string(input)), Stop: true}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestHandler(t *testing.T) {
	set := tools(t)
	var mu sync.Mutex
	loaded := false
	h, err := NewHandler(Options{
		Tools: func() (*tool.Set, error) {
			mu.Lock()
			defer mu.Unlock()
			if !loaded {
				return nil, errors.New("tools are still loading")
			}
			return set, nil
		},
		Authenticate: func(_ context.Context, token string, _ *http.Request) (string, error) {
			if token != "good" {
				return "", errors.New("wrong token")
			}
			return "", nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	connect := func(token string) (*sdk.ClientSession, error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil)
		return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL,
			HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true}, nil)
	}

	if _, err := connect("bad"); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := connect("good"); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("while loading: %v", err)
	}
	mu.Lock()
	loaded = true
	mu.Unlock()
	cs, err := connect("good")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != 1 || list.Tools[0].Name != "wrap" || !list.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("tools/list: %v %v", list, err)
	}
	var progress []string
	var pmu sync.Mutex
	cs2, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			pmu.Lock()
			progress = append(progress, req.Params.Message+"@"+req.Params.Meta[MetaStream].(string))
			pmu.Unlock()
		},
	}).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{"good"}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	params := &sdk.CallToolParams{Name: "wrap", Arguments: map[string]int{"n": 1}}
	params.SetProgressToken("p1")
	res, err := cs2.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Meta[MetaStop] != true || res.Content[0].(*sdk.TextContent).Text != `wrapped {"n":1}` {
		t.Errorf("tools/call: %+v", res)
	}
	// The SDK runs notification handlers on a goroutine of their own: the
	// notifications, sent before the result, may be handled after it.
	got := func() string {
		pmu.Lock()
		defer pmu.Unlock()
		return strings.Join(progress, ",")
	}
	for deadline := time.Now().Add(5 * time.Second); got() != "one@output,two@output" && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if got() != "one@output,two@output" {
		t.Errorf("progress %v", got())
	}
	bad, err := cs2.CallTool(ctx, &sdk.CallToolParams{Name: "wrap", Arguments: map[string]string{"n": "x"}})
	if err != nil || !bad.IsError {
		t.Errorf("invalid input: %+v %v", bad, err)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestExecuteHook: Options.Execute runs each call, with the session's tenant
// and the options the handler built (live output included).
func TestExecuteHook(t *testing.T) {
	set := tools(t)
	var tenants []string
	h, err := NewHandler(Options{
		Tools:        func() (*tool.Set, error) { return set, nil },
		Authenticate: func(context.Context, string, *http.Request) (string, error) { return "tenant:alice", nil },
		Execute: func(ctx context.Context, tenant string, set *tool.Set, name string, input json.RawMessage, opts tool.Options) tool.Result {
			tenants = append(tenants, tenant)
			opts.Redact = func(s string) string { return strings.ReplaceAll(s, "1", "[one]") }
			return set.Execute(ctx, name, input, opts)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{"any"}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "wrap", Arguments: map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*sdk.TextContent).Text; got != `wrapped {"n":[one]}` || len(tenants) != 1 || tenants[0] != "tenant:alice" {
		t.Errorf("result %q, tenants %q", got, tenants)
	}
}

// observedKey marks the context Observe returns, to see that the tool runs in it.
type observedKey struct{}

// TestCallBoundsAndObserve checks that a call's output is capped by Limit
// (characters of text) and MaxBytes (the whole result, media included), and
// that Observe sees every call start (its context reaching the tool) and end
// with its result.
func TestCallBoundsAndObserve(t *testing.T) {
	long := strings.Repeat("a", 100) + strings.Repeat("z", 100)
	big := make([]byte, 10000)
	set, err := tool.InProcess(tool.Spec{Name: "big", Description: "Says a lot.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"image":{"type":"boolean"}}}`)},
		func(ctx context.Context, input json.RawMessage, _ func(string)) (tool.Result, error) {
			if ctx.Value(observedKey{}) != "yes" {
				return tool.Result{}, errors.New("the call does not run in Observe's context")
			}
			if strings.Contains(string(input), "true") {
				return tool.Result{Output: &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Content{Content: &agentv1.ContentParts{Parts: []*agentv1.Part{
					{Kind: &agentv1.Part_Text{Text: "chart"}},
					{Kind: &agentv1.Part_File{File: &agentv1.FilePart{MediaType: "image/png", Source: &agentv1.FilePart_Data{Data: big}}}},
				}}}}}, nil
			}
			return tool.Result{Output: tool.TextOutput(long)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var observed []string
	h, err := NewHandler(Options{
		Tools: func() (*tool.Set, error) { return set, nil },
		Limit: 50, MaxBytes: 1000,
		Observe: func(ctx context.Context, name string, input json.RawMessage) (context.Context, func(tool.Result)) {
			mu.Lock()
			observed = append(observed, "start "+name+" "+string(input))
			mu.Unlock()
			return context.WithValue(ctx, observedKey{}, "yes"), func(res tool.Result) {
				mu.Lock()
				defer mu.Unlock()
				observed = append(observed, "end "+name+" "+string(res.Outcome)+" "+tool.OutputText(res.Output)[:5])
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "big", Arguments: map[string]bool{"image": false}})
	if err != nil || res.IsError {
		t.Fatalf("text call: %+v %v", res, err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if want := truncate.Text(long, 50); text != want || !strings.HasPrefix(text, "aaaa") || !strings.HasSuffix(text, "zzzz") {
		t.Errorf("text not cut to the limit of 50:\n%q\nwant\n%q", text, want)
	}

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "big", Arguments: map[string]bool{"image": true}})
	if err != nil || res.IsError {
		t.Fatalf("image call: %+v %v", res, err)
	}
	b, _ := json.Marshal(res)
	if len(b) > 1000 || strings.Contains(string(b), `"type":"image"`) || !strings.Contains(string(b), "chart") {
		t.Errorf("result of %d bytes not capped to 1000 (the image dropped, the text kept): %.300s", len(b), b)
	}

	mu.Lock()
	defer mu.Unlock()
	want := []string{`start big {"image":false}`, "end big ok aaaaa", `start big {"image":true}`, "end big ok chart"}
	if strings.Join(observed, "\n") != strings.Join(want, "\n") {
		t.Errorf("observed\n%s\nwant\n%s", strings.Join(observed, "\n"), strings.Join(want, "\n"))
	}
}
