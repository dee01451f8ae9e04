// Package catalog holds what a server offers its agents: every tool found
// in the tool directories and MCP definitions, and every skill. A reload
// swaps the catalog whole; sessions keep the sets they were made with until
// their next send.
package catalog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/skill"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Catalog is one scan's tools and skills. It is never changed.
type Catalog struct {
	Tools  *tool.Set
	Skills *skill.Set

	// list is ListTools' response, made once and never changed after.
	listOnce sync.Once
	list     *agentv1.ListToolsResponse
	listErr  error
	made     atomic.Pointer[agentv1.ListToolsResponse]
}

// Scanner finds the tools of tool directories and MCP definitions
// (tool.Host).
type Scanner interface {
	Scan(ctx context.Context, paths ...string) (*tool.Set, error)
}

// Holder holds the current catalog and serialises reloads. The zero value
// holds none.
type Holder struct {
	reload sync.Mutex // one scan at a time
	mu     sync.RWMutex
	cur    *Catalog // nil until the first load
}

// Get returns the current catalog, nil before the first load.
func (h *Holder) Get() *Catalog {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.cur
}

// Load scans the tool paths and skill directories and makes what it finds
// the current catalog; it returns the new catalog and the one it replaced.
// On error the current catalog stays.
func (h *Holder) Load(ctx context.Context, sc Scanner, toolPaths, skillDirs []string) (cur, old *Catalog, err error) {
	h.reload.Lock()
	defer h.reload.Unlock()
	tools, err := sc.Scan(ctx, toolPaths...)
	if err != nil {
		return nil, nil, fmt.Errorf("scan tools: %w", err)
	}
	skills, err := skill.Scan(ctx, skillDirs...)
	if err != nil {
		return nil, nil, fmt.Errorf("scan skills: %w", err)
	}
	cur = &Catalog{Tools: tools, Skills: skills}
	h.mu.Lock()
	old, h.cur = h.cur, cur
	h.mu.Unlock()
	return cur, old, nil
}

// SelectTools resolves a tool selection against the catalog; field names
// the selection in errors (an *agent.ValidationError). Unset means every
// tool.
func (c *Catalog) SelectTools(sel *agentv1.ToolSelection, field string) (*tool.Set, error) {
	if sel == nil || sel.GetAll() {
		return c.Tools, nil
	}
	for i, n := range sel.GetNames() {
		if _, ok := c.Tools.Lookup(n); !ok {
			return nil, invalid(field, i, "no tool %q on this server (it has %s)", n, strings.Join(c.Tools.Names(), ", "))
		}
	}
	return c.Tools.Select(sel.GetNames()...)
}

// SelectSkills resolves a skill selection, as SelectTools. Unset means none.
func (c *Catalog) SelectSkills(sel *agentv1.SkillSelection, field string) (*skill.Set, error) {
	if sel == nil {
		return nil, nil
	}
	if sel.GetAll() {
		return c.Skills, nil
	}
	for i, n := range sel.GetNames() {
		if _, ok := c.Skills.Get(n); !ok {
			return nil, invalid(field, i, "no skill %q on this server (it has %s)", n, strings.Join(c.Skills.Names(), ", "))
		}
	}
	return c.Skills.Select(sel.GetNames()...)
}

func invalid(field string, i int, format string, args ...any) error {
	return &agent.ValidationError{Violations: []agent.FieldViolation{{
		Field: field + ".names[" + strconv.Itoa(i) + "]", Description: fmt.Sprintf(format, args...)}}}
}

// List returns the catalog's ListTools response, made once (then fresh
// reports true) and shared by every call: it must not be changed.
func (c *Catalog) List(limitsMechanism string) (resp *agentv1.ListToolsResponse, fresh bool, err error) {
	c.listOnce.Do(func() {
		c.list, c.listErr = c.makeList(limitsMechanism)
		if fresh = c.listErr == nil; fresh {
			c.made.Store(c.list)
		}
	})
	return c.list, fresh, c.listErr
}

// Made returns the ListTools response List made, if it made one.
func (c *Catalog) Made() *agentv1.ListToolsResponse { return c.made.Load() }

func (c *Catalog) makeList(limitsMechanism string) (*agentv1.ListToolsResponse, error) {
	resp := &agentv1.ListToolsResponse{LimitsMechanism: limitsMechanism}
	for _, name := range c.Tools.Names() {
		// Made once per tool and shared by every response: never changed.
		info, err := c.Tools.Derived(name, toolInfoKey{}, func(spec tool.Spec) (any, error) { return toolInfo(spec) })
		if err != nil {
			return nil, err
		}
		resp.Tools = append(resp.Tools, info.(*agentv1.ToolInfo))
	}
	for _, sk := range c.Skills.List() {
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
