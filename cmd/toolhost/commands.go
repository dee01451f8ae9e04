package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentcore/agentcore/pkg/a2atool"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/limits"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// host is the tool host of one command with its limits mechanism.
type host struct {
	*tool.Host
	limits *limits.Controller
}

// Close kills the host's processes, then removes its limits' cgroups.
func (h host) Close() error { return errors.Join(h.Host.Close(), h.limits.Close()) }

// newHost returns the host of one command. It finds MCP server definitions
// as well as plugins, and serves each with this executable's mcp-serve.
// Tools run under the limits agent-server would give them with the same
// settings (tl: the -config file, the AGENTCORE_TOOL_* variables and the
// -tool-* flags), with the mechanism they name.
func newHost(e env, tl config.ToolLimits) (host, error) {
	self, err := os.Executable()
	if err != nil {
		return host{}, fmt.Errorf("finding toolhost's own executable, which serves MCP servers: %w", err)
	}
	mech, err := limits.ParseMechanism(tl.Mechanism)
	if err != nil {
		return host{}, err
	}
	lim, err := limits.New(limits.Options{Mechanism: mech, Logger: e.log})
	if err != nil {
		return host{}, fmt.Errorf("tool limits (-tool-limits %s): %w", mech, err)
	}
	h := tool.NewHost(tool.Config{Logger: e.log, Kinds: []tool.Kind{mcp.Kind(self), a2atool.Kind(self)}, Limits: lim, LimitPolicy: tool.LimitPolicyOf(tl),
		MinIdle: tool.DefaultMinIdle, PluginProcs: tool.DefaultPluginProcs})
	return host{Host: h, limits: lim}, nil
}

// parseFlags parses a command's flags, agent-server's tool limit settings
// among them (config.ToolFlags), and loads those settings.
func parseFlags(e env, fs *flag.FlagSet, args []string) (config.ToolLimits, error) {
	load := config.ToolFlags(fs)
	if err := fs.Parse(args); err != nil {
		return config.ToolLimits{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	return load(e.getenv)
}

// runList implements `toolhost list [--json] PATH...`.
func runList(ctx context.Context, e env, args []string) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print a JSON array")
	tl, err := parseFlags(e, fs, args)
	if err != nil {
		return fail(e, err)
	}
	if fs.NArg() == 0 {
		return fail(e, fmt.Errorf("%w: list needs at least one PATH", errUsage))
	}
	host, err := newHost(e, tl)
	if err != nil {
		return fail(e, err)
	}
	defer host.Close()
	set, err := host.Scan(ctx, fs.Args()...)
	if err != nil {
		return fail(e, err)
	}
	if *asJSON {
		items := []listItem{}
		for _, s := range set.Specs() {
			it := listItem{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema, Source: s.Source}
			if s.Timeout > 0 {
				t := protoDuration(s.Timeout)
				it.Timeout = &t
			}
			if l := tool.LimitsProto(s.Limits); l != nil {
				b, err := protojson.Marshal(l)
				if err != nil {
					return fail(e, err)
				}
				it.Limits = b
			}
			items = append(items, it)
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(items); err != nil {
			return fail(e, err)
		}
		return exitOK
	}
	fmt.Fprintln(e.stderr, "tool limits:", host.limits)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tTIMEOUT\tLIMITS\tDESCRIPTION")
	for _, s := range set.Specs() {
		timeout := "-"
		if s.Timeout > 0 {
			timeout = s.Timeout.String()
		}
		desc, _, _ := strings.Cut(s.Description, "\n")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Source, timeout, s.Limits, desc)
	}
	if err := tw.Flush(); err != nil {
		return fail(e, err)
	}
	return exitOK
}

// listItem is one tool in the output of `list --json`.
type listItem struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Source      string          `json:"source"`
	Timeout     *string         `json:"timeout"`
	// Limits are as ListTools gives them (agentcore.v1.ToolLimits in JSON).
	Limits json.RawMessage `json:"limits,omitempty"`
}

// protoDuration formats d as protobuf's JSON form of a Duration ("1.5s").
func protoDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// runCall implements `toolhost call [--limit N] PATH... TOOL JSON`.
func runCall(ctx context.Context, e env, args []string) int {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	limit := fs.Int("limit", 0, "cut text output longer than N characters (0: no limit)")
	tl, err := parseFlags(e, fs, args)
	if err != nil {
		return fail(e, err)
	}
	rest := fs.Args()
	if len(rest) < 3 {
		return fail(e, fmt.Errorf("%w: call needs PATH... TOOL JSON", errUsage))
	}
	paths, name, input := rest[:len(rest)-2], rest[len(rest)-2], rest[len(rest)-1]
	if !json.Valid([]byte(input)) {
		return fail(e, fmt.Errorf("%w: the input %q is not valid JSON", errUsage, input))
	}
	if *limit < 0 {
		return fail(e, fmt.Errorf("%w: --limit must not be negative", errUsage))
	}
	host, err := newHost(e, tl)
	if err != nil {
		return fail(e, err)
	}
	defer host.Close()
	set, err := host.Scan(ctx, paths...)
	if err != nil {
		return fail(e, err)
	}
	pw := &prefixWriter{w: e.stderr}
	res := set.Execute(ctx, name, json.RawMessage(input), tool.Options{
		Limit:    *limit,
		OnOutput: pw.chunk,
	})
	pw.end()
	out := struct {
		Output any  `json:"output"`
		Error  bool `json:"error,omitempty"`
		Stop   bool `json:"stop,omitempty"`
	}{Output: outputJSON(res.Output), Error: res.Error, Stop: res.Stop}
	b, err := json.Marshal(out)
	if err != nil {
		return fail(e, err)
	}
	fmt.Fprintf(e.stdout, "%s\n", b)
	if res.Error {
		return exitError
	}
	return exitOK
}

// outputJSON renders an output in agent-core's shape: {type, value}.
func outputJSON(o *agentv1.ToolOutput) any {
	type part struct {
		Type      string `json:"type"`
		Text      string `json:"text,omitempty"`
		MediaType string `json:"mediaType,omitempty"`
		Data      []byte `json:"data,omitempty"`
		URL       string `json:"url,omitempty"`
		Filename  string `json:"filename,omitempty"`
	}
	type value struct {
		Type  string `json:"type"`
		Value any    `json:"value"`
	}
	switch v := o.GetValue().(type) {
	case *agentv1.ToolOutput_Json:
		return value{"json", json.RawMessage(v.Json)}
	case *agentv1.ToolOutput_Content:
		parts := []part{}
		for _, p := range v.Content.GetParts() {
			if f := p.GetFile(); f != nil {
				parts = append(parts, part{Type: "file", MediaType: f.GetMediaType(), Data: f.GetData(), URL: f.GetUrl(), Filename: f.GetFilename()})
				continue
			}
			parts = append(parts, part{Type: "text", Text: p.GetText()})
		}
		return value{"content", parts}
	}
	return value{"text", o.GetText()}
}

// prefixWriter writes chunks line by line, each line prefixed by its
// stream; a line cut by a chunk of another stream is ended first.
type prefixWriter struct {
	w      io.Writer
	stream agentv1.OutputStream
	mid    bool // inside a line of stream
}

func (p *prefixWriter) chunk(c tool.Chunk) {
	var buf bytes.Buffer
	if p.mid && c.Stream != p.stream {
		buf.WriteByte('\n')
		p.mid = false
	}
	p.stream = c.Stream
	label := "[" + streamName(c.Stream) + "] "
	for data := c.Data; data != ""; {
		if !p.mid {
			buf.WriteString(label)
		}
		line, rest, nl := strings.Cut(data, "\n")
		buf.WriteString(line)
		if nl {
			buf.WriteByte('\n')
		}
		p.mid = !nl
		data = rest
	}
	_, _ = p.w.Write(buf.Bytes())
}

// end finishes a pending line.
func (p *prefixWriter) end() {
	if p.mid {
		_, _ = io.WriteString(p.w, "\n")
		p.mid = false
	}
}

func streamName(s agentv1.OutputStream) string {
	switch s {
	case agentv1.OutputStream_OUTPUT_STREAM_STDOUT:
		return "stdout"
	case agentv1.OutputStream_OUTPUT_STREAM_STDERR:
		return "stderr"
	}
	return "output"
}
