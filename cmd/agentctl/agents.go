package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// runAgents lists the agents.
func runAgents(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "agents", "agents [--json]")
	asJSON := c.fs.Bool("json", false, "print each agent as a JSON object (protojson) on a line of its own")
	if _, code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	return withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		agents, err := cl.ListAgents(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			for _, a := range agents {
				if err := jsonLine(e.stdout, a); err != nil {
					return err
				}
			}
			return nil
		}
		w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "AGENT\tSTATE\tMESSAGES\tTOKENS\tRUN\tCREATED")
		for _, a := range agents {
			u := a.GetUsage()
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", a.GetId(),
				strings.ToLower(strings.TrimPrefix(a.GetState().String(), "AGENT_STATE_")), a.GetHistoryLength(),
				u.GetInputTokens()+u.GetOutputTokens(), a.GetRunId(), when(a.GetCreateTime()))
		}
		return w.Flush()
	})
}

// runCreate creates an agent.
func runCreate(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "create", "create [AGENT] [--system TEXT] [--tools NAMES] [--profile NAME] [--model NAME]")
	system := c.fs.String("system", "", "the system prompt (`TEXT`; \"-\": read it from stdin)")
	tools := c.fs.String("tools", "", "the tools it may use, `NAMES` separated by commas (default: every tool of the server)")
	profile := c.fs.String("profile", "", "the server's model profile it uses (`NAME`; default: the server's default)")
	model := c.fs.String("model", "", "the model `NAME`, within the profile")
	pos, code, ok := c.parse(args, 0, 1)
	if !ok {
		return code
	}
	opts := client.AgentOptions{Config: &agentv1.AgentConfig{}}
	if len(pos) == 1 {
		opts.ID = pos[0]
	}
	if *system != "" {
		text, err := readArg(e, *system)
		if err != nil {
			return e.fail(err)
		}
		opts.Config.System = proto.String(text)
	}
	if *profile != "" {
		opts.Config.Profile = proto.String(*profile)
	}
	if *model != "" {
		opts.Config.Model = proto.String(*model)
	}
	if *tools != "" {
		opts.Tools = []string{}
		for _, t := range strings.Split(*tools, ",") {
			if t = strings.TrimSpace(t); t != "" {
				opts.Tools = append(opts.Tools, t)
			}
		}
	}
	return withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		a, err := cl.CreateAgent(ctx, opts)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, a.ID)
		return nil
	})
}

// runDelete deletes an agent.
func runDelete(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "delete", "delete AGENT")
	pos, code, ok := c.parse(args, 1, 1)
	if !ok {
		return code
	}
	return withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		return cl.Agent(pos[0]).Delete(ctx)
	})
}

// runHistory prints an agent's history.
func runHistory(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "history", "history AGENT [--turns] [--labels zh|en] [--json]")
	turns := c.fs.Bool("turns", false, "group it into turns (a model response with its tool calls and their results)")
	labels := c.fs.String("labels", "en", "the labels of calls, results and summaries: en, or zh, as agent-core's History.render has them")
	asJSON := c.fs.Bool("json", false, "print each message (with --turns: each turn, an array) as JSON on a line of its own")
	pos, code, ok := c.parse(args, 1, 1)
	if !ok {
		return code
	}
	l := history.English()
	switch *labels {
	case "en":
	case "zh":
		l = history.Chinese()
	default:
		return usageError(e, fmt.Errorf("history: --labels %q: want zh or en", *labels))
	}
	return withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		a := cl.Agent(pos[0])
		if !*turns {
			msgs, err := a.History(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				for _, m := range msgs {
					if err := jsonLine(e.stdout, m); err != nil {
						return err
					}
				}
				return nil
			}
			if len(msgs) > 0 {
				fmt.Fprintln(e.stdout, history.RenderWith(msgs, l))
			}
			return nil
		}
		ts, err := a.Turns(ctx)
		if err != nil {
			return err
		}
		for i, t := range ts {
			if *asJSON {
				if err := jsonArray(e.stdout, t); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(e.stdout, "── turn %d\n%s\n", i+1, history.RenderWith(t, l))
		}
		return nil
	})
}
