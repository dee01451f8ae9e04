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
	// Handler runs a call.
	Handler Handler

	err error // why the tool cannot be served, reported by Serve
}

// Option sets an optional property of a tool.
type Option func(*Tool)

// Timeout makes the host kill calls of the tool that run longer than d.
func Timeout(d time.Duration) Option { return func(t *Tool) { t.Timeout = d } }

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
