package server

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// newServer returns a Server with its (empty) tools loaded, closed at the end.
func newServer(t *testing.T, args ...string) *Server {
	t.Helper()
	cfg, err := config.Load(append([]string{"-tool-limits", "off", "-store", "memory"}, args...), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.LoadTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func textMessages(n, size int) []*agentv1.Message {
	var h []*agentv1.Message
	for i := range n {
		role := agentv1.Role_ROLE_USER
		if i%2 == 1 {
			role = agentv1.Role_ROLE_ASSISTANT
		}
		h = append(h, &agentv1.Message{Role: role, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: strings.Repeat(string(rune('a'+i%26)), size)}}}})
	}
	return h
}

func TestGetHistoryPages(t *testing.T) {
	const limit = 256 << 10
	s := newServer(t, "-max-message-bytes", "262144", "-max-tool-result-bytes", "64KiB")
	ctx := context.Background()
	h := textMessages(99, 10<<10) // about 1 MB: four responses' worth
	if _, err := s.CreateAgent(ctx, &agentv1.CreateAgentRequest{AgentId: "a", History: h}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		size     int32
		rendered bool
	}{{"as many as fit", 0, false}, {"page size", 7, false}, {"with turns and rendered text", 0, true}} {
		t.Run(tt.name, func(t *testing.T) {
			var got []*agentv1.Message
			tok, pages := "", 0
			for {
				resp, err := s.GetHistory(ctx, &agentv1.GetHistoryRequest{AgentId: "a", PageSize: tt.size, PageToken: tok,
					IncludeTurns: tt.rendered, IncludeRendered: tt.rendered})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if n := proto.Size(resp); n > limit {
					t.Fatalf("page %d: %d bytes, over the %d-byte limit", pages, n, limit)
				}
				if int(resp.GetStartIndex()) != len(got) || resp.GetHistoryLength() != 99 {
					t.Fatalf("page %d starts at %d of %d, want %d", pages, resp.GetStartIndex(), resp.GetHistoryLength(), len(got))
				}
				if tt.size > 0 && len(resp.GetMessages()) > int(tt.size) {
					t.Fatalf("page of %d messages, page size %d", len(resp.GetMessages()), tt.size)
				}
				if tt.rendered && (len(resp.GetTurns()) == 0 || !strings.Contains(resp.GetRendered(), "aaaa")) && pages == 1 {
					t.Fatalf("turns %d, rendered %.50q", len(resp.GetTurns()), resp.GetRendered())
				}
				got = append(got, resp.GetMessages()...)
				if tok = resp.GetNextPageToken(); tok == "" {
					break
				}
			}
			if pages < 4 || len(got) != len(h) {
				t.Fatalf("%d pages, %d messages", pages, len(got))
			}
			for i := range h {
				if !proto.Equal(got[i], h[i]) {
					t.Fatalf("message %d differs", i)
				}
			}
		})
	}

	// A small history comes whole, as it always did.
	if _, err := s.CreateAgent(ctx, &agentv1.CreateAgentRequest{AgentId: "small", History: textMessages(4, 10)}); err != nil {
		t.Fatal(err)
	}
	resp, err := s.GetHistory(ctx, &agentv1.GetHistoryRequest{AgentId: "small", IncludeRendered: true})
	if err != nil || len(resp.GetMessages()) != 4 || resp.GetNextPageToken() != "" || resp.GetRendered() != history.Render(textMessages(4, 10)) {
		t.Fatalf("small history: %v, %v", resp, err)
	}
	// Bad tokens, and a token for a history since replaced by a shorter one.
	if _, err := s.GetHistory(ctx, &agentv1.GetHistoryRequest{AgentId: "a", PageToken: "nonsense"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad token: %v", err)
	}
	first, _ := s.GetHistory(ctx, &agentv1.GetHistoryRequest{AgentId: "a", PageSize: 2})
	if _, err := s.SetHistory(ctx, &agentv1.SetHistoryRequest{AgentId: "a", Messages: textMessages(1, 10)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetHistory(ctx, &agentv1.GetHistoryRequest{AgentId: "a", PageToken: first.GetNextPageToken()}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("stale token: %v", err)
	}
	// One message larger than a response is cut to fit, with a note.
	if _, err := s.SetHistory(ctx, &agentv1.SetHistoryRequest{AgentId: "a", Messages: textMessages(1, 600<<10)}); err != nil {
		t.Fatal(err)
	}
	resp, err = s.GetHistory(ctx, &agentv1.GetHistoryRequest{AgentId: "a"})
	if err != nil || proto.Size(resp) > limit || !strings.Contains(resp.GetMessages()[0].GetParts()[0].GetText(), "larger than the server's limit") {
		t.Fatalf("oversized message: %d bytes, %v", proto.Size(resp), err)
	}
}

// rawCodec sends the bytes it is given as they are: a client that sends
// what the Go protobuf runtime would refuse to encode.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*(v.(*[]byte)))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*(v.(*[]byte)) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

func TestInvalidUTF8IsInvalidArgumentNamingTheField(t *testing.T) {
	s := newServer(t)
	gs := grpc.NewServer(s.Interceptors(false)...)
	agentv1.RegisterAgentServiceServer(gs, s)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	defer gs.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), []byte(s))
	}
	msg := func(num protowire.Number, body ...[]byte) []byte {
		var b []byte
		for _, x := range body {
			b = append(b, x...)
		}
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
	}
	ctx := context.Background()
	tests := []struct {
		name, method string
		req          []byte
		field        string
		stream       bool
	}{
		// CreateAgentRequest{agent: {config: {system: "\xff"}}}
		{"unary", "CreateAgent", msg(2, msg(2, str(6, "ok\xffno"))), "agent.config.system", false},
		// SetHistoryRequest{agent_id, messages: [ok, {parts: [ok, {text: "\xfe"}]}]}
		{"repeated", "SetHistory", append(str(1, "a"), append(msg(2, msg(3, str(1, "fine"))), msg(2, msg(3, str(1, "fine")), msg(3, str(1, "\xfe")))...)...), "messages[1].parts[1].text", false},
		// SendRequest{start: {agent_id: "a", input: [{text: "\xc3"}]}}
		{"stream", "Send", msg(1, str(1, "a"), msg(2, str(1, "\xc3"))), "start.input[0].text", true},
		// CreateAgentRequest{agent: {config: {provider: {headers: {"X-K": "\xff"}}}}}
		{"map value", "CreateAgent", msg(2, msg(2, msg(12, msg(10, str(1, "X-K"), str(2, "\xff"))))), `agent.config.provider.headers["X-K"]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := "/agentcore.v1.AgentService/" + tt.method
			var err error
			if tt.stream {
				var st grpc.ClientStream
				st, err = conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method, grpc.ForceCodecV2(rawCodec{}))
				if err == nil {
					req := tt.req
					_ = st.SendMsg(&req)
					var resp []byte
					err = st.RecvMsg(&resp)
				}
			} else {
				var resp []byte
				err = conn.Invoke(ctx, method, &tt.req, &resp, grpc.ForceCodecV2(rawCodec{}))
			}
			fields := badFields(err)
			if status.Code(err) != codes.InvalidArgument || len(fields) != 1 || fields[0] != tt.field {
				t.Fatalf("err = %v, fields %v; want INVALID_ARGUMENT naming %s", err, fields, tt.field)
			}
		})
	}
}

func TestConfigsThatCanNeverRun(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	base := "https://api.example.com/v1"
	_, err := s.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{BaseUrl: &base}}})
	if fields := badFields(err); status.Code(err) != codes.InvalidArgument || len(fields) != 1 || fields[0] != "agent.config.model" ||
		!strings.Contains(err.Error(), "api.example.com") {
		t.Fatalf("base URL without a model: %v", err)
	}
	model := "gpt"
	_, err = s.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{Model: &model}}})
	if fields := badFields(err); status.Code(err) != codes.InvalidArgument || len(fields) != 1 || fields[0] != "agent.config.base_url" {
		t.Fatalf("model without a base URL: %v", err)
	}
	// A config naming neither may still get both from a send: it is created.
	if _, err := s.CreateAgent(ctx, &agentv1.CreateAgentRequest{AgentId: "later"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{Agent: &agentv1.Agent{Id: "later", Config: &agentv1.AgentConfig{BaseUrl: &base}}})
	if fields := badFields(err); status.Code(err) != codes.InvalidArgument || len(fields) != 1 || fields[0] != "agent.config.model" {
		t.Fatalf("UpdateAgent to a base URL without a model: %v", err)
	}
}

// badFields are the fields a status's google.rpc.BadRequest names.
func badFields(err error) []string {
	var fields []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, f := range br.GetFieldViolations() {
				fields = append(fields, f.GetField())
			}
		}
	}
	return fields
}
