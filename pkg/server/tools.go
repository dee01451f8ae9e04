package server

import (
	"context"
	"encoding/json"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/catalog"
	"github.com/agentcore/agentcore/pkg/skill"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// LoadTools scans the tool directories, MCP definitions and skill
// directories and makes what it finds the server's catalog. On error the
// previous catalog stays.
func (s *Server) LoadTools(ctx context.Context) error {
	paths := append(append([]string{}, s.cfg.ToolDirs...), s.cfg.MCP...)
	cur, old, err := s.tools.Load(ctx, s.host, paths, s.cfg.SkillDirs)
	if err != nil {
		return err
	}
	if old != nil {
		if list := old.Made(); list != nil {
			s.frozen.Forget(list) // a call still sending it encodes it itself
		}
	}
	tools, skills := cur.Tools, cur.Skills
	s.log.Info("tools loaded", "tools", tools.Len(), "skills", skills.Len())
	switch {
	case len(paths) == 0:
		s.log.Warn("no tool directory: agents have no tools to call; give -tool-dir (AGENTCORE_TOOL_DIRS, tool_dirs) a folder of tool plugins, e.g. bin/plugins after make build")
	case tools.Len() == 0:
		s.log.Warn("no tools found: agents have no tools to call; the tool paths hold no executable plugin", "paths", paths)
	}
	return nil
}

// catalog returns the current catalog, or UNAVAILABLE while the first scan runs.
func (s *Server) catalog() (*catalog.Catalog, error) {
	c := s.tools.Get()
	if c == nil {
		return nil, apierr.Failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_TOOLS_NOT_LOADED, "tools are still loading; retry shortly (the health service reports SERVING once they are)")
	}
	return c, nil
}

// selectTools resolves a tool selection against the catalog (field names
// it in errors, as an INVALID_ARGUMENT status).
func selectTools(c *catalog.Catalog, sel *agentv1.ToolSelection, field string) (*tool.Set, error) {
	set, err := c.SelectTools(sel, field)
	return set, apierr.FromError(err)
}

// selectSkills is selectTools for skills.
func selectSkills(c *catalog.Catalog, sel *agentv1.SkillSelection, field string) (*skill.Set, error) {
	set, err := c.SelectSkills(sel, field)
	return set, apierr.FromError(err)
}

// ListTools lists every tool and skill the server offers.
func (s *Server) ListTools(ctx context.Context, _ *agentv1.ListToolsRequest) (*agentv1.ListToolsResponse, error) {
	c, err := s.catalog()
	if err != nil {
		return nil, err
	}
	// One response per catalog, shared by every call and never changed; its
	// encoding is made once too (the schemas' structpb encoding was most of
	// a call's cost).
	list, fresh, err := c.List(s.limits.String())
	if fresh {
		s.frozen.Freeze(list)
	}
	return list, err
}

// ExecuteTool runs one tool directly: its output chunks, then its result.
func (s *Server) ExecuteTool(req *agentv1.ExecuteToolRequest, stream agentv1.AgentService_ExecuteToolServer) error {
	if req.GetName() == "" {
		return apierr.InvalidField("name", "required: the tool to run")
	}
	if req.GetLimit() < 0 {
		return apierr.InvalidField("limit", "must not be negative")
	}
	c, err := s.catalog()
	if err != nil {
		return err
	}
	if _, ok := c.Tools.Lookup(req.GetName()); !ok {
		return apierr.Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_TOOL_NOT_FOUND, "no tool %q; the server has %v", req.GetName(), c.Tools.Names())
	}
	input := json.RawMessage("{}")
	if req.GetInput() != nil {
		b, err := protojson.Marshal(req.GetInput())
		if err != nil {
			return apierr.InvalidField("input", "%v", err)
		}
		input = b
	}
	ctx := stream.Context()
	// The server's max_tool_output is the default and ceiling of limit.
	limit := int(req.GetLimit())
	if server := s.cfg.Limits.MaxToolOutput; server > 0 && (limit == 0 || limit > server) {
		limit = server
	}
	var sendErr error
	tctx, ended := s.observeTool(ctx, req.GetName(), input)
	res := c.Tools.Execute(tctx, req.GetName(), input, tool.Options{
		Limit:    limit,
		MaxBytes: int(s.cfg.Limits.MaxToolResultBytes),
		OnOutput: func(ch tool.Chunk) {
			if sendErr != nil {
				return
			}
			sendErr = stream.Send(&agentv1.ExecuteToolResponse{Kind: &agentv1.ExecuteToolResponse_Output{
				Output: &agentv1.ToolOutputChunk{Stream: ch.Stream, Data: ch.Data},
			}})
		},
	})
	ended(res)
	if sendErr != nil {
		return sendErr
	}
	if err := ctx.Err(); err != nil {
		return apierr.FromError(err)
	}
	return stream.Send(&agentv1.ExecuteToolResponse{Kind: &agentv1.ExecuteToolResponse_Result{Result: &agentv1.DirectToolResult{
		Output: res.Output, Error: res.Error, Stop: res.Stop, Duration: durationpb.New(res.Duration),
	}}})
}

// observeTool starts the span of a tool call made directly (not by a run's
// model) and returns its context and the function that ends it and counts
// the call in the tool metrics: ExecuteTool's calls and the MCP listener's
// are observed alike.
func (s *Server) observeTool(ctx context.Context, name string, input json.RawMessage) (context.Context, func(tool.Result)) {
	call := &agent.ToolCall{Name: name, Known: true, Arguments: string(input), Start: time.Now()}
	tctx := s.tel.ToolStarted(ctx, call)
	return tctx, func(res tool.Result) { s.tel.ToolEnded(tctx, call, res) }
}

// ReloadTools rescans tools and skills; only an admin tenant may.
func (s *Server) ReloadTools(ctx context.Context, _ *agentv1.ReloadToolsRequest) (*agentv1.ReloadToolsResponse, error) {
	if err := s.requireAdmin(ctx, "ReloadTools"); err != nil {
		return nil, err
	}
	if err := s.LoadTools(ctx); err != nil {
		return nil, apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_RELOAD_FAILED, "reload failed, the previous tools stay: %v", err)
	}
	c := s.tools.Get()
	return &agentv1.ReloadToolsResponse{Tools: int32(c.Tools.Len()), Skills: int32(c.Skills.Len())}, nil
}
