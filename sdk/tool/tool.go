// Package tool is what a Go tool plugin imports. A plugin is an executable
// that offers one or more tools to agentcore; its main function describes the
// tools and serves them:
//
//	type greeting struct {
//		Name string `json:"name" jsonschema:"who to greet"`
//	}
//
//	func main() {
//		tool.Serve(tool.New("say_hello", "Greets someone by name.",
//			func(ctx context.Context, in greeting, emit tool.Emit) (any, error) {
//				return "Hello, " + in.Name + "!", nil
//			}))
//	}
//
// The host (agent-server, toolhost) starts the binary as a hashicorp/go-plugin
// plugin, runs one call per process at a time, and kills the whole process
// group to stop a call. While a call runs, everything the process writes to
// its standard output and error (fmt.Println, log, commands started with
// [Run]) reaches the host as that call's output, tagged stdout or stderr, and
// all of it arrives before the call's result.
//
// When the host traces (OpenTelemetry), a handler's ctx carries the host's
// span of the call (execute_tool) as a remote parent: spans the tool starts
// from ctx with its own OpenTelemetry SDK join the host's trace, commands
// started with [Run] get TRACEPARENT and TRACESTATE, and [TraceContext]
// returns the W3C fields to pass on by hand. This package links only the
// OpenTelemetry propagation API, never an SDK.
//
// A plugin whose tools are known only at run time (toolhost serving an MCP
// server) implements the plugin protocol's service itself and serves it with
// [ServeService], which gives its calls the same stdio, ordering and
// process-group handling.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Emit sends a piece of live output for the running call (stream "output").
// It is safe to call from several goroutines; after the call has returned
// it does nothing.
type Emit func(text string)

// Handler is the body of a tool with raw JSON input. The returned value is
// the result: see [Serve] for how values become results. A non-nil error
// becomes an error result carrying the error's text.
type Handler func(ctx context.Context, input json.RawMessage, emit Emit) (any, error)

// Tool is one tool a plugin offers. Build it with [New] or [Raw].
type Tool struct {
	// Name is how the model calls the tool: ^[a-zA-Z0-9_-]{1,64}$, unique in the plugin.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// InputSchema is the JSON Schema of the input; its root must be an object schema.
	InputSchema json.RawMessage
	// Timeout, when positive, makes the host kill a call that runs longer.
	Timeout time.Duration
	// ReadOnly hints that the tool does not change its environment.
	ReadOnly bool
	// Idempotent hints that repeating a call with the same input has no further effect.
	Idempotent bool
	// Limits are the resources the tool asks for (see WithLimits).
	Limits Limits
	// Handler runs a call.
	Handler Handler

	err error // why the tool cannot be served, reported by Serve
}

// Option sets an optional property of a tool.
type Option func(*Tool)

// Timeout makes the host kill calls of the tool that run longer than d.
func Timeout(d time.Duration) Option { return func(t *Tool) { t.Timeout = d } }

// Limits are the resources a tool's calls may use: the process serving a
// call and every process it starts, together. A zero field asks for the
// host's default; the host caps what a tool asks for with its own maximums,
// and its operator may override both. A call over its memory, process or
// CPU time limit is killed and its result says which limit it exceeded;
// past its open files, a process gets EMFILE.
type Limits struct {
	// MemoryBytes is the memory of the whole process tree.
	MemoryBytes uint64
	// MaxProcesses is how many processes and threads the tree may hold (a
	// Go plugin alone runs about ten threads).
	MaxProcesses uint32
	// CPUTime is the CPU time, user plus system, of one call.
	CPUTime time.Duration
	// MaxOpenFiles is the most file descriptors each process may hold.
	MaxOpenFiles uint32
}

// WithLimits asks the host to run the tool's calls under l, e.g.
// tool.WithLimits(tool.Limits{MemoryBytes: 2 << 30}) for a tool that needs
// more memory than the host's default.
func WithLimits(l Limits) Option { return func(t *Tool) { t.Limits = l } }

// ReadOnly marks the tool as not changing its environment.
func ReadOnly() Option { return func(t *Tool) { t.ReadOnly = true } }

// Idempotent marks the tool as safe to repeat with the same input.
func Idempotent() Option { return func(t *Tool) { t.Idempotent = true } }

// Schema replaces the tool's input schema, e.g. to add enums or bounds to a
// schema derived by [New].
func Schema(schema json.RawMessage) Option { return func(t *Tool) { t.InputSchema = schema } }

// New returns a tool whose input is decoded into In. The input schema is
// derived from In (a struct, usually): properties from the json tags, fields
// without omitempty required, the jsonschema tag as a property's description,
// no other properties allowed.
func New[In any](name, description string, fn func(ctx context.Context, in In, emit Emit) (any, error), opts ...Option) Tool {
	t := Tool{Name: name, Description: description}
	schema, err := jsonschema.For[In](nil)
	if err == nil {
		t.InputSchema, err = json.Marshal(schema)
	}
	if err != nil {
		t.err = fmt.Errorf("deriving the input schema: %w", err)
	}
	t.Handler = func(ctx context.Context, input json.RawMessage, emit Emit) (any, error) {
		var in In
		if len(input) > 0 {
			if err := json.Unmarshal(input, &in); err != nil {
				return nil, fmt.Errorf("invalid input: %w", err)
			}
		}
		return fn(ctx, in, emit)
	}
	for _, o := range opts {
		o(&t)
	}
	return t
}

// Raw returns a tool with an explicit input schema and raw JSON input.
func Raw(name, description string, schema json.RawMessage, fn Handler, opts ...Option) Tool {
	t := Tool{Name: name, Description: description, InputSchema: schema, Handler: fn}
	for _, o := range opts {
		o(&t)
	}
	return t
}
