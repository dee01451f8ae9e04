package a2atool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// inputSchema is the tool's input: the task, and the remote task or
// context a call continues.
const inputSchema = `{"type":"object","properties":{` +
	`"task":{"type":"string","description":"what to ask the agent, in plain words"},` +
	`"task_id":{"type":"string","description":"the agent's task to continue: one that asked for input (its answer said so)"},` +
	`"context_id":{"type":"string","description":"the agent's conversation to continue (an earlier answer named it)"}},` +
	`"required":["task"],"additionalProperties":false}`

// Service serves one remote agent as the plugin protocol's
// ToolPluginService: what a plugin process (toolhost) needs.
type Service struct {
	pluginv1.UnimplementedToolPluginServiceServer
	def  *Definition
	http *http.Client
	// afterCancel runs once a cancelled call has cancelled its remote task.
	afterCancel func()
}

// NewService returns the plugin service of def. afterCancel, if set, runs
// once a cancelled call has cancelled its remote task (toolhost exits
// then, so that the host need not wait for its kill).
func NewService(def *Definition, afterCancel func()) *Service {
	return &Service{def: def, http: &http.Client{Transport: headers{def.Headers, http.DefaultTransport}}, afterCancel: afterCancel}
}

// headers adds the definition's headers to every request.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

// RoundTrip sends r with the headers.
func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.h {
			r.Header.Set(k, v)
		}
	}
	return h.next.RoundTrip(r)
}

// card reads the agent card.
func (s *Service) card(ctx context.Context) (*a2a.AgentCard, error) {
	card, err := agentcard.NewResolver(s.http).Resolve(ctx, s.def.Card, agentcard.WithPath(""))
	if err != nil {
		return nil, fmt.Errorf("a2a definition %s: reading the agent card %s: %w", s.def.Path, s.def.Card, err)
	}
	return card, nil
}

// Describe reads the card and offers the agent as one tool. An agent that
// cannot be reached is Unavailable, with the definition's path and the cause.
func (s *Service) Describe(ctx context.Context, _ *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, s.def.discoveryTimeout())
	defer cancel()
	card, err := s.card(ctx)
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	spec := &pluginv1.ToolSpec{Name: s.def.Name, Description: s.description(card), InputSchemaJson: inputSchema}
	if s.def.Timeout > 0 {
		spec.Timeout = durationpb.New(s.def.Timeout)
	}
	return &pluginv1.DescribeResponse{Tools: []*pluginv1.ToolSpec{spec}}, nil
}

// description is the definition's, or the card's description and skills.
func (s *Service) description(card *a2a.AgentCard) string {
	if s.def.Description != "" {
		return s.def.Description
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Hand a task to the remote agent %s: %s", card.Name, card.Description)
	for i, sk := range card.Skills {
		if i == 0 {
			b.WriteString("\nIts skills:")
		}
		fmt.Fprintf(&b, "\n- %s: %s", sk.Name, sk.Description)
	}
	return b.String()
}

// input is a call's input.
type input struct {
	Task      string `json:"task"`
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id"`
}

// Execute sends the task to the agent, streams its progress as output and
// answers with the task's result. A cancelled call cancels the remote task
// and ends with the context's status.
func (s *Service) Execute(req *pluginv1.ExecuteRequest, stream grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
	ctx := stream.Context()
	var in input
	if err := json.Unmarshal([]byte(req.GetInputJson()), &in); err != nil || strings.TrimSpace(in.Task) == "" {
		return sendResult(stream, errorResult("the input needs task, the text to send the agent"))
	}
	card, err := s.card(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		return sendResult(stream, errorResult(err.Error()))
	}
	if card.PreferredTransport == "" {
		card.PreferredTransport = a2a.TransportProtocolJSONRPC // the protocol's default
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(s.http))
	if err != nil {
		return sendResult(stream, errorResult(fmt.Sprintf("a2a agent %s: %v", card.Name, err)))
	}
	defer client.Destroy()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: in.Task})
	msg.TaskID, msg.ContextID = a2a.TaskID(in.TaskID), in.ContextID
	out := func(text string) {
		if text != "" {
			// A failed send means the host has gone; ctx ends the call.
			_ = stream.Send(&pluginv1.ExecuteResponse{Event: &pluginv1.ExecuteResponse_Output{Output: &pluginv1.OutputChunk{
				Stream: pluginv1.OutputStream_OUTPUT_STREAM_OUTPUT, Data: []byte(text)}}})
		}
	}
	r := &reply{}
	var callErr error
	for ev, err := range client.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg}) {
		if err != nil {
			callErr = err
			break
		}
		out(r.add(ev))
	}
	if ctx.Err() != nil {
		s.cancelRemote(client, r.taskID())
		return status.FromContextError(ctx.Err()).Err()
	}
	if callErr != nil {
		return sendResult(stream, errorResult(fmt.Sprintf("a2a agent %s: %v", card.Name, callErr)))
	}
	return sendResult(stream, r.result(card.Name))
}

// cancelRemote cancels the remote task of a cancelled call, bounded by
// CancelTimeout, then runs afterCancel.
func (s *Service) cancelRemote(client *a2aclient.Client, id a2a.TaskID) {
	if id != "" {
		ctx, cancel := context.WithTimeout(context.Background(), CancelTimeout)
		_, _ = client.CancelTask(ctx, &a2a.TaskIDParams{ID: id})
		cancel()
	}
	if s.afterCancel != nil {
		s.afterCancel()
	}
}

// reply gathers the agent's answer: a message, or a task as its events leave it.
type reply struct {
	message *a2a.Message
	task    *a2a.Task
}

// add folds an event in and returns the live output it makes: status
// messages and artifact text as they come.
func (r *reply) add(ev a2a.Event) string {
	switch ev := ev.(type) {
	case *a2a.Message:
		r.message = ev
	case *a2a.Task:
		r.task = ev
		if m := ev.Status.Message; m != nil {
			return line(text(m.Parts))
		}
	case *a2a.TaskStatusUpdateEvent:
		if r.task == nil {
			r.task = &a2a.Task{ID: ev.TaskID, ContextID: ev.ContextID}
		}
		r.task.Status = ev.Status
		if m := ev.Status.Message; m != nil {
			return line(text(m.Parts))
		}
	case *a2a.TaskArtifactUpdateEvent:
		if r.task == nil {
			r.task = &a2a.Task{ID: ev.TaskID, ContextID: ev.ContextID}
		}
		r.addArtifact(ev)
		return line(text(ev.Artifact.Parts))
	}
	return ""
}

// addArtifact adds an artifact, or appends its parts to the one of its id.
func (r *reply) addArtifact(ev *a2a.TaskArtifactUpdateEvent) {
	if ev.Append {
		for _, a := range r.task.Artifacts {
			if a.ID == ev.Artifact.ID {
				a.Parts = append(a.Parts, ev.Artifact.Parts...)
				return
			}
		}
	}
	art := *ev.Artifact
	r.task.Artifacts = append(r.task.Artifacts, &art)
}

// taskID is the remote task's id, once known.
func (r *reply) taskID() a2a.TaskID {
	if r.task == nil {
		return ""
	}
	return r.task.ID
}

// result is the call's result: the message's parts, or the task's
// artifacts when it completed, its question when it asks for input, an
// error when it failed.
func (r *reply) result(agent string) *pluginv1.ToolResult {
	if r.message != nil {
		return partsResult(r.message.Parts)
	}
	t := r.task
	if t == nil {
		return errorResult(fmt.Sprintf("a2a agent %s answered with neither a message nor a task", agent))
	}
	said := ""
	if m := t.Status.Message; m != nil {
		said = text(m.Parts)
	}
	switch t.Status.State {
	case a2a.TaskStateCompleted:
		var parts a2a.ContentParts
		for _, a := range t.Artifacts {
			parts = append(parts, a.Parts...)
		}
		if len(parts) == 0 && t.Status.Message != nil {
			parts = t.Status.Message.Parts
		}
		return partsResult(parts)
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Text{Text: fmt.Sprintf(
			"The agent %s needs more from you (%s): %s\nTo answer, call this tool again with task_id %q and context_id %q.",
			agent, t.Status.State, said, t.ID, t.ContextID)}}
	case a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled:
		return errorResult(fmt.Sprintf("a2a agent %s: the task %s was %s: %s", agent, t.ID, t.Status.State, said))
	}
	return errorResult(fmt.Sprintf("a2a agent %s: the answer ended while the task %s was %s", agent, t.ID, t.Status.State))
}

// partsResult maps A2A parts to a result: text alone as text, data as
// JSON text, files as file parts.
func partsResult(parts a2a.ContentParts) *pluginv1.ToolResult {
	var out []*pluginv1.ContentPart
	files := false
	for _, p := range parts {
		switch p := p.(type) {
		case a2a.TextPart:
			out = append(out, &pluginv1.ContentPart{Part: &pluginv1.ContentPart_Text{Text: p.Text}})
		case a2a.DataPart:
			b, _ := json.Marshal(p.Data)
			out = append(out, &pluginv1.ContentPart{Part: &pluginv1.ContentPart_Text{Text: string(b)}})
		case a2a.FilePart:
			if f := filePart(p); f != nil {
				files = true
				out = append(out, &pluginv1.ContentPart{Part: &pluginv1.ContentPart_File{File: f}})
			}
		}
	}
	if !files {
		var texts []string
		for _, p := range out {
			texts = append(texts, p.GetText())
		}
		return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Text{Text: strings.Join(texts, "\n")}}
	}
	return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Content{Content: &pluginv1.ContentParts{Parts: out}}}
}

// filePart is the plugin protocol's file of an A2A file, nil when it has no content.
func filePart(p a2a.FilePart) *pluginv1.FilePart {
	switch f := p.File.(type) {
	case a2a.FileBytes:
		data, err := base64.StdEncoding.DecodeString(f.Bytes)
		if err != nil {
			return nil
		}
		return &pluginv1.FilePart{MediaType: mediaType(f.MimeType), Filename: f.Name, Source: &pluginv1.FilePart_Data{Data: data}}
	case a2a.FileURI:
		return &pluginv1.FilePart{MediaType: mediaType(f.MimeType), Filename: f.Name, Source: &pluginv1.FilePart_Url{Url: f.URI}}
	}
	return nil
}

// mediaType is t, or application/octet-stream when the agent gave none.
func mediaType(t string) string {
	if t == "" {
		return "application/octet-stream"
	}
	return t
}

// text joins the text parts.
func text(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if t, ok := p.(a2a.TextPart); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// line ends a non-empty text with a newline.
func line(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// errorResult is a failed call whose output is the message.
func errorResult(msg string) *pluginv1.ToolResult {
	return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Text{Text: msg}, Error: msg}
}

// sendResult ends the call with res.
func sendResult(stream grpc.ServerStreamingServer[pluginv1.ExecuteResponse], res *pluginv1.ToolResult) error {
	return stream.Send(&pluginv1.ExecuteResponse{Event: &pluginv1.ExecuteResponse_Result{Result: res}})
}
