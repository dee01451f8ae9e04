package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// elicitation is a tool's request for input waiting for the person's
// answer in a chat.
type elicitation struct {
	ctx   context.Context // ends with the run
	req   *agentv1.ElicitationRequestEvent
	reply chan client.Elicited
}

// elicit asks the person whether to answer a tool's request for input:
// accept (then each field of its form), decline or cancel.
func (s *chat) elicit(q elicitation) (client.Elicited, error) {
	fmt.Fprintf(s.u, "? %s asks: %s\n", q.req.GetToolName(), q.req.GetMessage())
	for {
		line, err := s.u.ask(q.ctx, "answer? [a]ccept, [d]ecline or [c]ancel ", false)
		if errors.Is(err, errInterrupted) {
			return client.Elicited{}, err
		}
		if err != nil { // the run ended, or the input did
			return client.CancelElicitation(), nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "a", "accept", "y", "yes":
			content, err := s.form(q)
			if errors.Is(err, errInterrupted) {
				return client.Elicited{}, err
			}
			if err != nil {
				return client.CancelElicitation(), nil
			}
			return client.Accept(content), nil
		case "d", "decline", "n", "no":
			return client.DeclineElicitation(), nil
		case "c", "cancel":
			return client.CancelElicitation(), nil
		}
		fmt.Fprintln(s.u, "answer a (accept and fill in the form), d (decline) or c (cancel)")
	}
}

// formField is one field of an elicitation's form (a property of its
// flat object schema).
type formField struct {
	name, typ, description string
	required               bool
	def                    *structpb.Value
	enum                   []string
}

// formFields are the schema's fields, the required ones first, each group
// by name.
func formFields(schema *structpb.Struct) []formField {
	required := map[string]bool{}
	for _, v := range schema.GetFields()["required"].GetListValue().GetValues() {
		required[v.GetStringValue()] = true
	}
	var fields []formField
	for name, v := range schema.GetFields()["properties"].GetStructValue().GetFields() {
		p := v.GetStructValue().GetFields()
		f := formField{name: name, typ: p["type"].GetStringValue(), required: required[name], def: p["default"]}
		f.description = p["description"].GetStringValue()
		if f.description == "" {
			f.description = p["title"].GetStringValue()
		}
		for _, e := range p["enum"].GetListValue().GetValues() {
			f.enum = append(f.enum, e.GetStringValue())
		}
		fields = append(fields, f)
	}
	slices.SortFunc(fields, func(a, b formField) int {
		if a.required != b.required {
			if a.required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return fields
}

// prompt is how a field is asked for: its name, type, choices and default.
func (f formField) prompt() string {
	var notes []string
	if f.typ != "" {
		notes = append(notes, f.typ)
	}
	if len(f.enum) > 0 {
		notes = append(notes, "one of "+strings.Join(f.enum, ", "))
	}
	if f.required {
		notes = append(notes, "required")
	}
	if f.def != nil {
		b, _ := json.Marshal(f.def.AsInterface())
		notes = append(notes, "enter for "+string(b))
	}
	return fmt.Sprintf("%s (%s): ", f.name, strings.Join(notes, "; "))
}

// value reads an answer to the field as its type says.
func (f formField) value(s string) (any, error) {
	switch f.typ {
	case "number":
		return strconv.ParseFloat(s, 64)
	case "integer":
		return strconv.ParseInt(s, 10, 64)
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("answer y or n")
	}
	if len(f.enum) > 0 && !slices.Contains(f.enum, s) {
		return nil, fmt.Errorf("answer one of %s", strings.Join(f.enum, ", "))
	}
	return s, nil
}

// form asks for each field of the request's form. A field left empty is
// left out: the server fills in its default.
func (s *chat) form(q elicitation) (map[string]any, error) {
	content := map[string]any{}
	for _, f := range formFields(q.req.GetRequestedSchema()) {
		if f.description != "" {
			fmt.Fprintf(s.u, "  %s: %s\n", f.name, f.description)
		}
		for {
			line, err := s.u.ask(q.ctx, "  "+f.prompt(), false)
			if err != nil {
				return nil, err
			}
			in := strings.TrimSpace(line)
			if in == "" {
				if f.required && f.def == nil {
					fmt.Fprintln(s.u, "  a value is needed")
					continue
				}
				break
			}
			v, err := f.value(in)
			if err != nil {
				fmt.Fprintf(s.u, "  %v\n", err)
				continue
			}
			content[f.name] = v
			break
		}
	}
	return content, nil
}

// runRespond answers a run's elicitation request (a tool's request for
// input) from anywhere: accept with the form's values, decline or cancel.
func runRespond(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "respond", "respond RUN ELICITATION (--accept JSON | --decline | --cancel) [--json]")
	accept := c.fs.String("accept", "", "accept, with the form's values as a JSON object (fields left out get the schema's defaults)")
	decline := c.fs.Bool("decline", false, "decline the request")
	cancel := c.fs.Bool("cancel", false, "cancel (dismiss) the request")
	asJSON := c.fs.Bool("json", false, "print the values the tool got as a JSON object")
	pos, code, ok := c.parse(args, 2, 2)
	if !ok {
		return code
	}
	var answer client.Elicited
	switch {
	case *accept != "" && !*decline && !*cancel:
		var content map[string]any
		if err := json.Unmarshal([]byte(*accept), &content); err != nil || content == nil {
			return usageError(e, fmt.Errorf("respond: --accept wants a JSON object of the form's values (%q)", *accept))
		}
		answer = client.Accept(content)
	case *decline && *accept == "" && !*cancel:
		answer = client.DeclineElicitation()
	case *cancel && *accept == "" && !*decline:
		answer = client.CancelElicitation()
	default:
		return usageError(e, errors.New("respond: give one of --accept JSON, --decline or --cancel"))
	}
	return withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		got, err := cl.RespondElicitation(ctx, pos[0], pos[1], answer)
		if err != nil {
			return err
		}
		if *asJSON {
			b, err := json.Marshal(got)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, string(b))
			return nil
		}
		fmt.Fprintf(e.stdout, "%s %s\n", actionName(answer.Action), pos[1])
		return nil
	})
}

// actionName is how an elicitation's answer is said.
func actionName(a agentv1.ElicitationAction) string {
	switch a {
	case agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT:
		return "accepted"
	case agentv1.ElicitationAction_ELICITATION_ACTION_DECLINE:
		return "declined"
	}
	return "cancelled"
}
