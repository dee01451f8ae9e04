package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/skill"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// catalog is what the server offers: every tool found in the tool
// directories and MCP definitions, and every skill. A reload swaps it whole;
// sessions keep the sets they were made with until their next send.
type catalog struct {
	tools  *tool.Set
	skills *skill.Set

	// list is ListTools' response, made once per catalog and never changed
	// after: the codec sends its encoding, frozen (Server.frozen).
	listOnce sync.Once
	list     *agentv1.ListToolsResponse
	listErr  error
}

// toolState holds the current catalog and serialises reloads.
type toolState struct {
	reload sync.Mutex // one scan at a time
	mu     sync.RWMutex
	cur    *catalog // nil until the first load
}

func (t *toolState) get() *catalog {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.cur
}

// LoadTools scans the tool directories, MCP definitions and skill
// directories and makes what it finds the server's catalog. On error the
// previous catalog stays.
func (s *Server) LoadTools(ctx context.Context) error {
	s.tools.reload.Lock()
	defer s.tools.reload.Unlock()
	paths := append(append([]string{}, s.cfg.ToolDirs...), s.cfg.MCP...)
	tools, err := s.host.Scan(ctx, paths...)
	if err != nil {
		return fmt.Errorf("scan tools: %w", err)
	}
	skills, err := skill.Scan(ctx, s.cfg.SkillDirs...)
	if err != nil {
		return fmt.Errorf("scan skills: %w", err)
	}
	s.tools.mu.Lock()
	old := s.tools.cur
	s.tools.cur = &catalog{tools: tools, skills: skills}
	s.tools.mu.Unlock()
	if old != nil && old.list != nil {
		s.frozen.Forget(old.list) // a call still sending it encodes it itself
	}
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
func (s *Server) catalog() (*catalog, error) {
	c := s.tools.get()
	if c == nil {
		return nil, failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_TOOLS_NOT_LOADED, "tools are still loading; retry shortly (the health service reports SERVING once they are)")
	}
	return c, nil
}

// selectTools resolves a tool selection against the catalog; field names
// the selection in errors. Unset means every tool.
func selectTools(c *catalog, sel *agentv1.ToolSelection, field string) (*tool.Set, error) {
	if sel == nil || sel.GetAll() {
		return c.tools, nil
	}
	for i, n := range sel.GetNames() {
		if _, ok := c.tools.Lookup(n); !ok {
			return nil, invalidField(field+".names["+strconv.Itoa(i)+"]", "no tool %q on this server (it has %s)", n, strings.Join(c.tools.Names(), ", "))
		}
	}
	return c.tools.Select(sel.GetNames()...)
}

// selectSkills resolves a skill selection. Unset means none.
func selectSkills(c *catalog, sel *agentv1.SkillSelection, field string) (*skill.Set, error) {
	if sel == nil {
		return nil, nil
	}
	if sel.GetAll() {
		return c.skills, nil
	}
	for i, n := range sel.GetNames() {
		if _, ok := c.skills.Get(n); !ok {
			return nil, invalidField(field+".names["+strconv.Itoa(i)+"]", "no skill %q on this server (it has %s)", n, strings.Join(c.skills.Names(), ", "))
		}
	}
	return c.skills.Select(sel.GetNames()...)
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
	c.listOnce.Do(func() {
		c.list, c.listErr = s.listTools(c)
		if c.listErr == nil {
			s.frozen.Freeze(c.list)
		}
	})
	return c.list, c.listErr
}

// listTools makes the catalog's ListTools response.
func (s *Server) listTools(c *catalog) (*agentv1.ListToolsResponse, error) {
	resp := &agentv1.ListToolsResponse{LimitsMechanism: s.limits.String()}
	for _, name := range c.tools.Names() {
		// Made once per tool and shared by every response: never changed.
		info, err := c.tools.Derived(name, toolInfoKey{}, func(spec tool.Spec) (any, error) { return toolInfo(spec) })
		if err != nil {
			return nil, err
		}
		resp.Tools = append(resp.Tools, info.(*agentv1.ToolInfo))
	}
	for _, sk := range c.skills.List() {
		resp.Skills = append(resp.Skills, &agentv1.SkillInfo{Name: sk.Name, Description: sk.Description, Source: sk.Path})
	}
	return resp, nil
}

// toolInfoKey is the tool.Set.Derived key of a tool's ListTools entry.
type toolInfoKey struct{}

func toolInfo(spec tool.Spec) (*agentv1.ToolInfo, error) {
	info := &agentv1.ToolInfo{
		Name: spec.Name, Description: spec.Description, Source: spec.Source,
		ReadOnly: spec.ReadOnly, Idempotent: spec.Idempotent,
	}
	if len(spec.InputSchema) > 0 {
		info.InputSchema = &structpb.Struct{}
		if err := protojson.Unmarshal(spec.InputSchema, info.InputSchema); err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", spec.Name, err)
		}
	}
	if spec.Timeout > 0 {
		info.Timeout = durationpb.New(spec.Timeout)
	}
	info.Limits = tool.LimitsProto(spec.Limits)
	return info, nil
}

// ExecuteTool runs one tool directly: its output chunks, then its result.
func (s *Server) ExecuteTool(req *agentv1.ExecuteToolRequest, stream agentv1.AgentService_ExecuteToolServer) error {
	if req.GetName() == "" {
		return invalidField("name", "required: the tool to run")
	}
	if req.GetLimit() < 0 {
		return invalidField("limit", "must not be negative")
	}
	c, err := s.catalog()
	if err != nil {
		return err
	}
	if _, ok := c.tools.Lookup(req.GetName()); !ok {
		return failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_TOOL_NOT_FOUND, "no tool %q; the server has %v", req.GetName(), c.tools.Names())
	}
	input := json.RawMessage("{}")
	if req.GetInput() != nil {
		b, err := protojson.Marshal(req.GetInput())
		if err != nil {
			return invalidField("input", "%v", err)
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
	res := c.tools.Execute(tctx, req.GetName(), input, tool.Options{
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
		return toStatus(err)
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
		return nil, failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_RELOAD_FAILED, "reload failed, the previous tools stay: %v", err)
	}
	c := s.tools.get()
	return &agentv1.ReloadToolsResponse{Tools: int32(c.tools.Len()), Skills: int32(c.skills.Len())}, nil
}
