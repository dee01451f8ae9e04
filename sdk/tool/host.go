package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// ErrNoHost is returned by Elicit, Sample and Ask when the call's host
// answers no requests: outside a handler, through a host that predates
// them, or when the host runs the call through Execute instead of Session.
var ErrNoHost = errors.New("the host of this call answers no requests")

// HostError is the host's refusal of a request: Code says why (e.g.
// HOST_ERROR_CODE_UNSUPPORTED when the call runs outside a run with a
// person or a model to ask, HOST_ERROR_CODE_DENIED when the permission mode
// refused it).
type HostError struct {
	Code    pluginv1.HostErrorCode
	Message string
}

func (e *HostError) Error() string {
	return fmt.Sprintf("the host did not answer (%s): %s", e.Code, e.Message)
}

// Elicitation is the person's answer to Elicit.
type Elicitation struct {
	// Action is ELICIT_ACTION_ACCEPT (Content holds the form),
	// ELICIT_ACTION_DECLINE or ELICIT_ACTION_CANCEL (also when no one
	// answered in time).
	Action pluginv1.ElicitAction
	// Content is the accepted form, a JSON object with the schema's
	// defaults filled in; nil otherwise.
	Content json.RawMessage
}

// Elicit asks the person behind the run a question while the call runs:
// message is shown with a form whose fields schema describes (a JSON Schema
// of an object with primitive properties). It waits until the person
// answers, no one answered within the host's timeout (CANCEL), or ctx ends.
func Elicit(ctx context.Context, message string, schema json.RawMessage) (Elicitation, error) {
	res, err := Ask(ctx, &pluginv1.HostRequest{Kind: &pluginv1.HostRequest_Elicit{Elicit: &pluginv1.ElicitRequest{
		Message: message, RequestedSchemaJson: string(schema)}}})
	if err != nil {
		return Elicitation{}, err
	}
	e := res.GetElicit()
	if e == nil {
		return Elicitation{}, fmt.Errorf("the host answered an elicitation with %T", res.GetKind())
	}
	out := Elicitation{Action: e.GetAction()}
	if e.GetContentJson() != "" {
		out.Content = json.RawMessage(e.GetContentJson())
	}
	return out, nil
}

// Sample asks the run's model for a message, under the run's permission
// mode and budget; what it spends counts in the run's usage.
func Sample(ctx context.Context, req *pluginv1.SampleRequest) (*pluginv1.SampleResponse, error) {
	res, err := Ask(ctx, &pluginv1.HostRequest{Kind: &pluginv1.HostRequest_Sample{Sample: req}})
	if err != nil {
		return nil, err
	}
	s := res.GetSample()
	if s == nil {
		return nil, fmt.Errorf("the host answered a sampling request with %T", res.GetKind())
	}
	return s, nil
}

// Ask sends any request to the call's host and waits for its answer (its
// id is set here): the kinds Elicit and Sample do not cover yet. A
// HostError answer is returned as a *HostError.
func Ask(ctx context.Context, req *pluginv1.HostRequest) (*pluginv1.HostResponse, error) {
	l, _ := ctx.Value(hostKey{}).(*hostLink)
	if l == nil {
		return nil, ErrNoHost
	}
	res, err := l.ask(ctx, req)
	if err != nil {
		return nil, err
	}
	if he := res.GetError(); he != nil {
		return nil, &HostError{Code: he.GetCode(), Message: he.GetMessage()}
	}
	return res, nil
}

type hostKey struct{}

// errCallEnded fails the requests still waiting when their call ends.
var errCallEnded = errors.New("the call ended before its host answered")

// hostLink carries one call's requests to its host on the Session, and
// the host's answers back to whoever waits for them.
type hostLink struct {
	send func(*pluginv1.HostRequest) error // sends on the Session

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan *pluginv1.HostResponse
	ended   bool
}

func newHostLink(send func(*pluginv1.HostRequest) error) *hostLink {
	return &hostLink{send: send, waiting: map[uint64]chan *pluginv1.HostResponse{}}
}

func (l *hostLink) ask(ctx context.Context, req *pluginv1.HostRequest) (*pluginv1.HostResponse, error) {
	ch := make(chan *pluginv1.HostResponse, 1)
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return nil, errCallEnded
	}
	l.next++
	id := l.next
	l.waiting[id] = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.waiting, id)
		l.mu.Unlock()
	}()
	req.Id = id
	if err := l.send(req); err != nil {
		return nil, fmt.Errorf("sending to the host: %w", err)
	}
	select {
	case res, ok := <-ch:
		if !ok {
			return nil, errCallEnded
		}
		return res, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// deliver hands the host's answer to its request; one nobody waits for
// (its asker gave up) is dropped.
func (l *hostLink) deliver(res *pluginv1.HostResponse) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ch, ok := l.waiting[res.GetId()]; ok {
		ch <- res
		delete(l.waiting, res.GetId())
	}
}

// end fails the requests still waiting, and any later one.
func (l *hostLink) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	for id, ch := range l.waiting {
		close(ch)
		delete(l.waiting, id)
	}
}

// Credential asks the call's host for the OAuth credential of the one MCP
// server this process serves (load, save or authorize): only the MCP host
// process, toolhost, does.
func Credential(ctx context.Context, req *pluginv1.CredentialRequest) (*pluginv1.CredentialResponse, error) {
	res, err := Ask(ctx, &pluginv1.HostRequest{Kind: &pluginv1.HostRequest_Credential{Credential: req}})
	if err != nil {
		return nil, err
	}
	c := res.GetCredential()
	if c == nil {
		return nil, fmt.Errorf("the host answered a credential request with %T", res.GetKind())
	}
	return c, nil
}
