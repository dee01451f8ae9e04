package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// runTools lists the server's tools and skills.
func runTools(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "tools", "tools [--json]")
	asJSON := c.fs.Bool("json", false, "print the list as a JSON object (protojson): tools, skills and the limits mechanism")
	if _, code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	return withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		resp, err := cl.ListTools(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return jsonLine(e.stdout, resp)
		}
		w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "TOOL\tDESCRIPTION")
		for _, t := range resp.GetTools() {
			fmt.Fprintf(w, "%s\t%s\n", t.GetName(), clip(firstLine(t.GetDescription()), 100))
		}
		if len(resp.GetSkills()) > 0 {
			fmt.Fprintln(w, "\nSKILL\tDESCRIPTION")
			for _, s := range resp.GetSkills() {
				fmt.Fprintf(w, "%s\t%s\n", s.GetName(), clip(firstLine(s.GetDescription()), 100))
			}
		}
		return w.Flush()
	})
}

// errToolFailed is a tool's result that is an error: exit code 1.
var errToolFailed = errors.New("the tool failed")

// runExec runs one tool directly: its live output goes to stderr as it
// comes, its result to stdout.
func runExec(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "exec", "exec TOOL JSON [--limit N] [--json]")
	limit := c.fs.Int("limit", 0, "cut text output longer than `N` characters (0: the server's limit)")
	asJSON := c.fs.Bool("json", false, "print the output chunks and the result as JSON objects (protojson ExecuteToolResponse), one a line, on stdout")
	pos, code, ok := c.parse(args, 2, 2)
	if !ok {
		return code
	}
	text, err := readArg(e, pos[1])
	if err != nil {
		return e.fail(err)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(text), &input); err != nil || input == nil {
		return usageError(e, fmt.Errorf("exec: the input must be a JSON object, e.g. '{\"name\":\"Ming\"}'"))
	}
	if *limit < 0 {
		return usageError(e, fmt.Errorf("exec: --limit must not be negative"))
	}
	code = withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		onOutput := func(o *agentv1.ToolOutputChunk) {
			if *asJSON {
				_ = jsonLine(e.stdout, &agentv1.ExecuteToolResponse{Kind: &agentv1.ExecuteToolResponse_Output{Output: o}})
			} else {
				io.WriteString(e.stderr, o.GetData())
			}
		}
		res, err := cl.ExecuteTool(ctx, pos[0], input, *limit, onOutput)
		if err != nil {
			return err
		}
		if *asJSON {
			err = jsonLine(e.stdout, &agentv1.ExecuteToolResponse{Kind: &agentv1.ExecuteToolResponse_Result{Result: res}})
		} else {
			out := outputText(res.GetOutput())
			if !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			_, err = io.WriteString(e.stdout, out)
		}
		if err == nil && res.GetError() {
			err = errToolFailed
		}
		return err
	})
	return code
}
