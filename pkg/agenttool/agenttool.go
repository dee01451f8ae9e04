// Package agenttool holds agents offered to a model as tools (an agent's
// agent_tools): their tool names and input schemas, the checks of their
// specs, the task a call hands to the agent and the answer it gets back.
// Running the agent is the server's: Build takes the function that does.
package agenttool

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/schema"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// DefaultSchema is the input of an agent tool without a schema of its own.
const DefaultSchema = `{"type":"object","properties":{"task":{"type":"string","description":"The task for the agent, with everything it needs to know."}},"required":["task"]}`

// Name is the tool name of an agent tool: its own, else its agent's id
// with what a tool name may not hold replaced by '_'.
func Name(at *agentv1.AgentTool) string {
	if at.GetName() != "" {
		return at.GetName()
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, at.GetAgentId())
}

// Build checks specs (field is where they sit in the request; an
// *agent.ValidationError says what is wrong) and returns their in-process
// tools, each calling the function call makes of its spec. An agent tool
// wins over a plugin tool of the same name.
func Build(specs []*agentv1.AgentTool, field string, call func(*agentv1.AgentTool) tool.Func) (*tool.Set, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	var vs []agent.FieldViolation
	bad := func(i int, sub, format string, args ...any) {
		vs = append(vs, agent.FieldViolation{Field: fmt.Sprintf("%s[%d]%s", field, i, sub), Description: fmt.Sprintf(format, args...)})
	}
	var sets []*tool.Set
	names := map[string]bool{}
	for i, at := range specs {
		name := Name(at)
		switch {
		case at.GetAgentId() == "":
			bad(i, ".agent_id", "required: the id of an agent of the same tenant")
			continue
		case !schema.ValidName.MatchString(name):
			bad(i, ".name", "%q is not a tool name: 1 to 64 letters, digits, '_' or '-'", name)
			continue
		case names[name]:
			bad(i, ".name", "another tool of this agent is named %q", name)
			continue
		case at.GetBusyPolicy() == agentv1.BusyPolicy_BUSY_POLICY_REPLACE:
			bad(i, ".busy_policy", "replace is not allowed: it would stop another caller's run of the agent; use queue or reject")
			continue
		}
		if _, ok := agentv1.BusyPolicy_name[int32(at.GetBusyPolicy())]; !ok {
			bad(i, ".busy_policy", "unknown busy policy %d", at.GetBusyPolicy())
			continue
		}
		names[name] = true
		schema := json.RawMessage(DefaultSchema)
		if at.GetInputSchema() != nil {
			b, err := protojson.Marshal(at.GetInputSchema())
			if err != nil {
				bad(i, ".input_schema", "%v", err)
				continue
			}
			schema = b
		}
		desc := at.GetDescription()
		if desc == "" {
			desc = "Hand a task to the agent " + at.GetAgentId() + "; it answers with the result."
		}
		set, err := tool.InProcess(tool.Spec{Name: name, Description: desc, InputSchema: schema, Source: "agent:" + at.GetAgentId()},
			call(proto.Clone(at).(*agentv1.AgentTool)))
		if err != nil {
			bad(i, ".input_schema", "%v", err)
			continue
		}
		sets = append(sets, set)
	}
	if len(vs) > 0 {
		return nil, &agent.ValidationError{Violations: vs}
	}
	return tool.Merge(sets...), nil
}

// Task is a call's arguments as the agent's input: the task of the default
// schema, else the arguments' JSON.
func Task(at *agentv1.AgentTool, input json.RawMessage) string {
	if at.GetInputSchema() == nil {
		var args struct {
			Task string `json:"task"`
		}
		if json.Unmarshal(input, &args) == nil && strings.TrimSpace(args.Task) != "" {
			return args.Task
		}
	}
	return string(input)
}

// Answer is the agent's result as its caller's tool result: the structured
// output as JSON, else the final text, with a note when the run ended
// before the model was done.
func Answer(name string, res *agent.Result) string {
	text := res.Text
	if res.Output != nil {
		if b, err := protojson.Marshal(res.Output); err == nil {
			text = string(b)
		}
	}
	switch res.Reason {
	case agentv1.EndReason_END_REASON_BUDGET:
		text += "\n\n[agent " + name + " stopped early: the budget of the run tree was reached]"
	case agentv1.EndReason_END_REASON_STEP_LIMIT:
		text += "\n\n[agent " + name + " stopped early: it reached its max_steps]"
	}
	return text
}
