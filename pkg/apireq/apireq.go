// Package apireq holds the conventions of AgentService requests that are
// not one handler's: page sizes and page tokens, UpdateAgent's update mask,
// and the checks of a budget's limits. Its errors are statuses (pkg/apierr)
// naming the request's field.
package apireq

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// List paging.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// PageSize checks a page size: DefaultPageSize when unset, at most
// MaxPageSize.
func PageSize(n int32) (int, error) {
	switch {
	case n < 0:
		return 0, apierr.InvalidField("page_size", "must not be negative")
	case n == 0:
		return DefaultPageSize, nil
	case n > MaxPageSize:
		return MaxPageSize, nil
	}
	return int(n), nil
}

// HistoryPageToken says where the next page of a history starts, and how
// long the history was when it was made.
func HistoryPageToken(next, length int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("h1:" + strconv.Itoa(next) + ":" + strconv.Itoa(length)))
}

// HistoryPageStart reads a page token against a history of length n.
func HistoryPageStart(tok string, n int) (int, error) {
	bad := apierr.InvalidField("page_token", "not a token this server gave for this history")
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, bad
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 3 || parts[0] != "h1" {
		return 0, bad
	}
	start, err := strconv.Atoi(parts[1])
	length, lerr := strconv.Atoi(parts[2])
	if err != nil || lerr != nil || start < 0 || start > length {
		return 0, bad
	}
	if length > n {
		// The history was replaced by a shorter one since: the token's
		// place no longer means what it did.
		return 0, apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_HISTORY_CHANGED, "the history changed since this page token was given; start again without one")
	}
	return start, nil
}

// RunPageToken is the page token of the runs after r.
func RunPageToken(r *store.Run) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(r.Started.UnixMicro(), 10) + ":" + r.ID))
}

// RunCursor reads a page token of RunPageToken.
func RunCursor(tok string) (*store.Cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return nil, false
	}
	us, id, ok := strings.Cut(string(b), ":")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, false
	}
	return &store.Cursor{Started: time.UnixMicro(n), ID: id}, true
}

// Update is what an UpdateAgent request changes: the config it leaves the
// agent with, and which of the agent's selections it sets.
type Update struct {
	Config                            *agentv1.AgentConfig
	Tools, Skills, AgentTools, Budget bool
}

// ApplyMask applies UpdateAgent's agent a to the config cur along the
// update mask's paths: with none, a's config is merged into cur and each
// selection a holds is set; else only the paths named are (config,
// config.<field>, tools, skills, agent_tools, budget).
func ApplyMask(cur *agentv1.AgentConfig, a *agentv1.Agent, paths []string) (Update, error) {
	if len(paths) == 0 {
		return Update{Config: agent.MergeConfig(cur, a.GetConfig()), Tools: a.GetTools() != nil, Skills: a.GetSkills() != nil,
			AgentTools: len(a.GetAgentTools()) > 0, Budget: a.GetBudget() != nil}, nil
	}
	u := Update{Config: proto.Clone(cur).(*agentv1.AgentConfig)}
	for i, p := range paths {
		switch {
		case p == "tools":
			u.Tools = true
		case p == "skills":
			u.Skills = true
		case p == "agent_tools":
			u.AgentTools = true
		case p == "budget":
			u.Budget = true
		case p == "config":
			u.Config = proto.Clone(a.GetConfig()).(*agentv1.AgentConfig)
			if a.GetConfig() == nil {
				u.Config = &agentv1.AgentConfig{}
			}
		case strings.HasPrefix(p, "config."):
			if err := copyPath(u.Config.ProtoReflect(), a.GetConfig().ProtoReflect(), strings.Split(strings.TrimPrefix(p, "config."), ".")); err != "" {
				return Update{}, apierr.InvalidField("update_mask.paths["+strconv.Itoa(i)+"]", "%s", err)
			}
		default:
			return Update{}, apierr.InvalidField("update_mask.paths["+strconv.Itoa(i)+"]", "unknown path %q: want config, config.<field>, tools, skills, agent_tools or budget", p)
		}
	}
	return u, nil
}

// copyPath copies the field at path from src to dst (clearing it when unset
// in src); it returns what is wrong with the path, or "".
func copyPath(dst, src protoreflect.Message, path []string) string {
	fd := dst.Descriptor().Fields().ByName(protoreflect.Name(path[0]))
	if fd == nil {
		return "config has no field " + strconv.Quote(path[0])
	}
	if len(path) == 1 {
		if src.IsValid() && src.Has(fd) {
			dst.Set(fd, src.Get(fd))
		} else {
			dst.Clear(fd)
		}
		return ""
	}
	if fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() {
		return strconv.Quote(path[0]) + " has no sub-fields"
	}
	var sub protoreflect.Message
	if src.IsValid() && src.Has(fd) {
		sub = src.Get(fd).Message()
	} else {
		sub = dst.Get(fd).Message().Type().Zero()
	}
	return copyPath(dst.Mutable(fd).Message(), sub, path[1:])
}

// CheckBudget checks a budget's limits (field is where it sits): counts
// not negative, a wall time positive.
func CheckBudget(b *agentv1.Budget, field string) error {
	if b == nil {
		return nil
	}
	var vs []apierr.Violation
	for _, c := range []struct {
		name string
		set  bool
		v    float64
	}{
		{"input_tokens", b.InputTokens != nil, float64(b.GetInputTokens())},
		{"output_tokens", b.OutputTokens != nil, float64(b.GetOutputTokens())},
		{"model_requests", b.ModelRequests != nil, float64(b.GetModelRequests())},
		{"tool_calls", b.ToolCalls != nil, float64(b.GetToolCalls())},
		{"cost", b.Cost != nil, b.GetCost()},
	} {
		if c.set && c.v < 0 {
			vs = append(vs, apierr.Violation{Field: field + "." + c.name, Description: "must not be negative"})
		}
	}
	if w := b.GetWallTime(); w != nil && (w.CheckValid() != nil || w.AsDuration() <= 0) {
		vs = append(vs, apierr.Violation{Field: field + ".wall_time", Description: "must be a positive duration"})
	}
	if len(vs) > 0 {
		return apierr.Invalid(vs...)
	}
	return nil
}
