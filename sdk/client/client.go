// Package client is a Go client for agentcore's AgentService that feels like
// agent-core, the JavaScript library whose semantics agentcore follows:
// create an agent, Send a task with callbacks, Stop, read and restore its
// history.
//
//	c, err := client.Dial("127.0.0.1:50051")
//	defer c.Close()
//	agent, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("…")}})
//	res, err := agent.Send(ctx, "say hello to Ming", client.Callbacks{
//		OnToolResult: func(e *agentv1.ToolResultEvent) { fmt.Println(e.GetToolName()) },
//	})
//	fmt.Println(res.Reason) // END_REASON_NO_TOOL, END_REASON_TOOL_STOP or END_REASON_STEP_LIMIT
//
// Every error of a call is an *Error carrying the gRPC code, the model
// error kind (a Kind constant: agent-core's auth, limit, timeout, server,
// network, request, unknown, aborted) and the server's reason (a Reason
// constant, e.g. e.Reason == ReasonAgentBusy; docs/errors.md says what each
// means).
package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Client talks to one agent-server.
type Client struct {
	api  agentv1.AgentServiceClient
	conn *grpc.ClientConn // nil when the caller owns the connection
}

// Option configures Dial.
type Option func(*dialOptions)

type dialOptions struct {
	token string
	tls   *tls.Config
	extra []grpc.DialOption
}

// WithToken sends `authorization: Bearer token` with every call.
func WithToken(token string) Option { return func(o *dialOptions) { o.token = token } }

// WithTLS connects with TLS (add client certificates for mutual TLS).
func WithTLS(c *tls.Config) Option { return func(o *dialOptions) { o.tls = c } }

// WithDialOptions adds gRPC dial options.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *dialOptions) { o.extra = append(o.extra, opts...) }
}

// Dial connects to target: host:port, or unix:PATH for a unix socket.
// Without WithTLS the connection is plaintext, as for a sidecar on
// localhost or a unix socket.
func Dial(target string, opts ...Option) (*Client, error) {
	var o dialOptions
	for _, opt := range opts {
		opt(&o)
	}
	creds := insecure.NewCredentials()
	if o.tls != nil {
		creds = credentials.NewTLS(o.tls)
	}
	dopts := append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, o.extra...)
	if o.token != "" {
		dopts = append(dopts, grpc.WithPerRPCCredentials(bearer{token: o.token, secure: o.tls != nil}))
	}
	conn, err := grpc.NewClient(target, dopts...)
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", target, err)
	}
	return &Client{api: agentv1.NewAgentServiceClient(conn), conn: conn}, nil
}

// New returns a Client over a connection the caller owns.
func New(conn grpc.ClientConnInterface) *Client {
	return &Client{api: agentv1.NewAgentServiceClient(conn)}
}

// API returns the generated client, for what this package does not wrap.
func (c *Client) API() agentv1.AgentServiceClient { return c.api }

// Close closes the connection Dial made.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// bearer is the per-call bearer token.
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false so that a token also works over a unix
// socket or localhost, where a sidecar runs without TLS.
func (b bearer) RequireTransportSecurity() bool { return false }

// AgentOptions describe a new agent (agent-core's Agent.create options).
type AgentOptions struct {
	// ID is the agent's id; empty: generated.
	ID string
	// Config is the model configuration; nil: the server's default profile.
	Config *agentv1.AgentConfig
	// Tools names the tools the agent may use; nil: every server tool.
	Tools []string
	// Skills names the skills the agent may use; nil: none. AllSkills: every one.
	Skills    []string
	AllSkills bool
	// History is the initial history.
	History []*agentv1.Message
	// AgentTools are other agents this agent may call as tools (child runs).
	AgentTools []*agentv1.AgentTool
	// Budget is the default budget of the run trees this agent starts.
	Budget *agentv1.Budget
}

// CreateAgent creates an agent.
func (c *Client) CreateAgent(ctx context.Context, o AgentOptions) (*Agent, error) {
	a := &agentv1.Agent{Config: o.Config, AgentTools: o.AgentTools, Budget: o.Budget}
	if o.Tools != nil {
		a.Tools = &agentv1.ToolSelection{Names: o.Tools}
	}
	if o.AllSkills || o.Skills != nil {
		a.Skills = &agentv1.SkillSelection{All: o.AllSkills, Names: o.Skills}
	}
	resp, err := c.api.CreateAgent(ctx, &agentv1.CreateAgentRequest{AgentId: o.ID, Agent: a, History: o.History})
	if err != nil {
		return nil, asError(err)
	}
	return &Agent{c: c, ID: resp.GetAgent().GetId()}, nil
}

// Agent returns a handle to an existing agent.
func (c *Client) Agent(id string) *Agent { return &Agent{c: c, ID: id} }

// ListAgents lists every agent, following pages.
func (c *Client) ListAgents(ctx context.Context) ([]*agentv1.Agent, error) {
	var out []*agentv1.Agent
	req := &agentv1.ListAgentsRequest{PageSize: 1000}
	for {
		resp, err := c.api.ListAgents(ctx, req)
		if err != nil {
			return nil, asError(err)
		}
		out = append(out, resp.GetAgents()...)
		if resp.GetNextPageToken() == "" {
			return out, nil
		}
		req.PageToken = resp.GetNextPageToken()
	}
}

// ListTools lists the server's tools and skills.
func (c *Client) ListTools(ctx context.Context) (*agentv1.ListToolsResponse, error) {
	resp, err := c.api.ListTools(ctx, &agentv1.ListToolsRequest{})
	return resp, asError(err)
}

// ExecuteTool runs one tool directly (agent-core's Agent.tool.execute):
// input is any value that marshals to a JSON object; onOutput, if set, gets
// the live output; limit > 0 cuts long text output from the middle.
func (c *Client) ExecuteTool(ctx context.Context, name string, input any, limit int, onOutput func(*agentv1.ToolOutputChunk)) (*agentv1.DirectToolResult, error) {
	in, err := toStruct(input)
	if err != nil {
		return nil, fmt.Errorf("client: tool input: %w", err)
	}
	stream, err := c.api.ExecuteTool(ctx, &agentv1.ExecuteToolRequest{Name: name, Input: in, Limit: int64(limit)})
	if err != nil {
		return nil, asError(err)
	}
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return nil, &Error{Message: "the stream ended without a result"}
		}
		if err != nil {
			return nil, asError(err)
		}
		if out := resp.GetOutput(); out != nil && onOutput != nil {
			onOutput(out)
		}
		if r := resp.GetResult(); r != nil {
			return r, nil
		}
	}
}

// ReloadTools asks the server to rescan its tools and skills.
func (c *Client) ReloadTools(ctx context.Context) (*agentv1.ReloadToolsResponse, error) {
	resp, err := c.api.ReloadTools(ctx, &agentv1.ReloadToolsRequest{})
	return resp, asError(err)
}

func toStruct(v any) (*structpb.Struct, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case *structpb.Struct:
		return t, nil
	case map[string]any:
		return structpb.NewStruct(t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("want a JSON object: %w", err)
	}
	return s, nil
}
