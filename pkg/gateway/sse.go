package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// The streaming routes written here rather than generated.
const (
	sendPath        = "/v1/agents/{agent_id}:send"
	compactPath     = "/v1/agents/{agent_id}:compact"
	executePath     = "/v1/tools/{name}:execute"
	attachPath      = "/v1/runs/{run_id}:attach"
	attachAgentPath = "/v1/agents/{agent_id}:attach"
)

// attachQuery keeps the path's fields of an AttachRequest from the query.
var attachQuery = utilities.NewDoubleArray([][]string{{"run_id"}, {"agent_id"}})

// headerWait bounds how long a streaming route waits for the call's first
// message before it answers 200: an error found when the call starts (a bad
// request, an unknown agent, a limit) comes within it and gets its own HTTP
// status; an error after it ends the event stream with an "error" event.
const headerWait = time.Second

// keepaliveEvery is how often an idle event stream gets a comment line, so
// that proxies and load balancers keep it open.
const keepaliveEvery = 15 * time.Second

// streamBuffer is how many messages may wait between the call and the HTTP
// response: the response is flushed when none waits, so a fast stream is
// written in batches and a slow one message by message.
const streamBuffer = 64

// recvFunc returns a call's next message; io.EOF ends the call well.
type recvFunc func() (proto.Message, error)

// send is POST /v1/agents/{agent_id}:send: the body is the StartRun, the
// answer the run's events. The send direction of the call stays open until
// the run ends, so permission requests wait for an answer (the run's
// permission route) rather than being denied; a client that goes away
// stops the run, as over gRPC.
func (g *gateway) send(w http.ResponseWriter, r *http.Request, params map[string]string) {
	start := &agentv1.StartRun{}
	if err := g.decodeBody(r, start); err != nil {
		g.errorHandler(r.Context(), g.api, g.json, w, r, err)
		return
	}
	start.AgentId = params["agent_id"]
	g.stream(w, r, agentv1.AgentService_Send_FullMethodName, sendPath, func(ctx context.Context) (recvFunc, error) {
		st, err := g.client.Send(ctx)
		if err != nil {
			return nil, err
		}
		// io.EOF means the call has already ended: its status comes from Recv.
		if err := st.Send(&agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: start}}); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return eventsOf(st.Recv), nil
	})
}

// compact is POST /v1/agents/{agent_id}:compact: the compaction's events.
func (g *gateway) compact(w http.ResponseWriter, r *http.Request, params map[string]string) {
	req := &agentv1.CompactRequest{}
	if err := g.decodeBody(r, req); err != nil {
		g.errorHandler(r.Context(), g.api, g.json, w, r, err)
		return
	}
	req.AgentId = params["agent_id"]
	g.stream(w, r, agentv1.AgentService_Compact_FullMethodName, compactPath, func(ctx context.Context) (recvFunc, error) {
		st, err := g.client.Compact(ctx, req)
		if err != nil {
			return nil, err
		}
		return eventsOf(st.Recv), nil
	})
}

// execute is POST /v1/tools/{name}:execute: output chunks, then the result,
// each an ExecuteToolResponse.
func (g *gateway) execute(w http.ResponseWriter, r *http.Request, params map[string]string) {
	req := &agentv1.ExecuteToolRequest{}
	if err := g.decodeBody(r, req); err != nil {
		g.errorHandler(r.Context(), g.api, g.json, w, r, err)
		return
	}
	req.Name = params["name"]
	g.stream(w, r, agentv1.AgentService_ExecuteTool_FullMethodName, executePath, func(ctx context.Context) (recvFunc, error) {
		st, err := g.client.ExecuteTool(ctx, req)
		if err != nil {
			return nil, err
		}
		return func() (proto.Message, error) { return st.Recv() }, nil
	})
}

// attach is GET /v1/runs/{run_id}:attach (or /v1/agents/{agent_id}:attach
// for the agent's latest run): the run's events after ?afterSeq=N, or after
// the Last-Event-ID a reconnecting EventSource sends, whichever is later.
// A run with no event left to send answers 204, which tells an EventSource
// to stop reconnecting.
func (g *gateway) attach(w http.ResponseWriter, r *http.Request, params map[string]string) {
	req := &agentv1.AttachRequest{RunId: params["run_id"], AgentId: params["agent_id"]}
	if err := runtime.PopulateQueryParameters(req, r.URL.Query(), attachQuery); err != nil {
		g.errorHandler(r.Context(), g.api, g.json, w, r, status.Errorf(codes.InvalidArgument, "%v", err))
		return
	}
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		seq, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || seq < 0 {
			g.errorHandler(r.Context(), g.api, g.json, w, r, badHeader("Last-Event-ID", "the seq of the last event received, a whole number"))
			return
		}
		req.AfterSeq = max(req.AfterSeq, seq)
	}
	pattern := attachPath
	if req.RunId == "" {
		pattern = attachAgentPath
	}
	g.streamFrom(w, r, agentv1.AgentService_Attach_FullMethodName, pattern, http.StatusNoContent, func(ctx context.Context) (recvFunc, error) {
		st, err := g.client.Attach(ctx, req)
		if err != nil {
			return nil, err
		}
		return eventsOf(st.Recv), nil
	})
}

// badHeader is the INVALID_ARGUMENT of a request header, named as a field.
func badHeader(name, want string) error {
	st := status.New(codes.InvalidArgument, "invalid request: header "+name+": want "+want)
	if d, err := st.WithDetails(&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: name, Description: "want " + want}}},
		&errdetails.ErrorInfo{Domain: agentv1.ErrorDomain, Reason: agentv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT.Wire()}); err == nil {
		st = d
	}
	return st.Err()
}

// eventsOf reads the run events a stream's messages wrap.
func eventsOf[M interface{ GetEvent() *agentv1.Event }](recv func() (M, error)) recvFunc {
	return func() (proto.Message, error) {
		m, err := recv()
		if err != nil {
			return nil, err
		}
		return m.GetEvent(), nil
	}
}

// received is one result of a call's Recv.
type received struct {
	msg proto.Message
	err error
}

// stream answers a request with the messages of the call open starts, as
// server-sent events. The call ends with the request: when the client goes
// away, its context is cancelled.
func (g *gateway) stream(w http.ResponseWriter, r *http.Request, method, pattern string, open func(context.Context) (recvFunc, error)) {
	g.streamFrom(w, r, method, pattern, http.StatusOK, open)
}

// streamFrom is stream, answering empty with the status given when the
// call ends well before its first message.
func (g *gateway) streamFrom(w http.ResponseWriter, r *http.Request, method, pattern string, empty int, open func(context.Context) (recvFunc, error)) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ctx, err := runtime.AnnotateContext(ctx, g.api, r, method, runtime.WithHTTPPathPattern(pattern))
	if err != nil {
		g.errorHandler(ctx, g.api, g.json, w, r, err)
		return
	}
	recv, err := open(ctx)
	if err != nil {
		g.errorHandler(ctx, g.api, g.json, w, r, err)
		return
	}
	// One goroutine receives, this one writes: it ends when the call does,
	// and the call ends with ctx, cancelled before this function returns.
	msgs := make(chan received, streamBuffer)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := recv()
			select {
			case msgs <- received{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		cancel()
		<-done
	}()

	var first *received
	timer := time.NewTimer(headerWait)
	select {
	case m := <-msgs:
		first = &m
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
		return
	}
	timer.Stop()
	if first != nil && first.err != nil && !errors.Is(first.err, io.EOF) {
		g.errorHandler(ctx, g.api, g.json, w, r, first.err)
		return
	}
	if first != nil && errors.Is(first.err, io.EOF) && empty != http.StatusOK {
		w.WriteHeader(empty)
		return
	}
	out := newEventWriter(w, g)
	if first != nil {
		if errors.Is(first.err, io.EOF) {
			_ = out.flush()
			return
		}
		if out.message(first.msg) != nil {
			return
		}
	}
	keepalive := time.NewTicker(keepaliveEvery)
	defer keepalive.Stop()
	for {
		if len(msgs) == 0 && out.flush() != nil {
			return
		}
		select {
		case m := <-msgs:
			switch {
			case errors.Is(m.err, io.EOF):
				_ = out.flush()
				return
			case m.err != nil:
				_ = out.fail(status.Convert(m.err))
				_ = out.flush()
				return
			}
			if out.message(m.msg) != nil {
				return
			}
		case <-keepalive.C:
			if out.comment("keepalive") != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// eventWriter writes server-sent events to an HTTP response.
type eventWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	g       *gateway
	buf     bytes.Buffer // one event's lines
	scratch []byte       // one event's JSON (appendEventJSON)
}

// newEventWriter answers 200 with an event stream.
func newEventWriter(w http.ResponseWriter, g *gateway) *eventWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not hold events back
	w.WriteHeader(http.StatusOK)
	return &eventWriter{w: w, rc: http.NewResponseController(w), g: g}
}

// message writes one event: id the seq of a run event, data the message's JSON.
func (e *eventWriter) message(m proto.Message) error {
	id := ""
	ev, isEvent := m.(*agentv1.Event)
	if isEvent {
		id = strconv.FormatInt(ev.GetSeq(), 10)
		if data, ok := appendEventJSON(e.scratch[:0], ev); ok {
			e.scratch = data
			return e.event(id, "", data)
		}
	}
	data, err := e.g.json.Marshal(m)
	if err != nil {
		return e.fail(status.Convert(err))
	}
	return e.event(id, "", data)
}

// fail writes the "error" event whose data is the status that ended the call.
func (e *eventWriter) fail(st *status.Status) error {
	return e.event("", "error", e.g.statusJSON(st, agentv1.ErrorReason_ERROR_REASON_UNSPECIFIED))
}

// comment writes a comment line, which clients ignore.
func (e *eventWriter) comment(text string) error {
	_, err := io.WriteString(e.w, ": "+text+"\n\n")
	return err
}

func (e *eventWriter) event(id, name string, data []byte) error {
	b := &e.buf
	b.Reset()
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	// JSON without indentation is one line; a line break would still be
	// kept, as the next data line.
	for line := range bytes.Lines(data) {
		b.WriteString("data: ")
		b.Write(bytes.TrimRight(line, "\r\n"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := e.w.Write(b.Bytes())
	return err
}

func (e *eventWriter) flush() error {
	return e.rc.Flush()
}
