package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentcore/agentcore/pkg/tool/live"
	"github.com/agentcore/agentcore/pkg/tool/schema"
	"github.com/agentcore/agentcore/pkg/tool/truncate"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// entry is one tool of a Set: a plugin tool (pool) or an in-process one (fn).
type entry struct {
	spec   Spec
	schema *jsonschema.Schema
	pool   *pool
	fn     Func
	// decoders parse the inputs of its calls (see schema.Check).
	decoders schema.Decoders

	derived sync.Map // key → *derivation (see Set.Derived)
}

// derivation is a value derived from an entry's spec, made once.
type derivation struct {
	once sync.Once
	v    any
	err  error
}

// Set is an immutable collection of tools, found by name. It is safe for
// concurrent use. The zero Set and a nil *Set are empty.
type Set struct {
	tools map[string]*entry
	names []string // sorted
}

func setOf(entries []*entry) *Set {
	s := &Set{tools: make(map[string]*entry, len(entries))}
	for _, e := range entries {
		s.tools[e.spec.Name] = e
	}
	s.index()
	return s
}

func (s *Set) index() {
	s.names = make([]string, 0, len(s.tools))
	for n := range s.tools {
		s.names = append(s.names, n)
	}
	sort.Strings(s.names)
}

// InProcess returns a set holding one tool that runs fn in the host's own
// process (e.g. the built-in skill tool). Calls get the same validation,
// limiter, timeout, truncation and panic handling as plugin tools, but
// nothing can kill fn: it must return once its context is done.
func InProcess(spec Spec, fn Func) (*Set, error) {
	if spec.Source == "" {
		spec.Source = "builtin"
	}
	if len(spec.InputSchema) == 0 {
		spec.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	sch, err := schema.Compile(spec.Name, spec.InputSchema)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, fmt.Errorf("tool %q has no function", spec.Name)
	}
	return setOf([]*entry{{spec: spec, schema: sch, fn: fn}}), nil
}

// Merge returns the union of sets; a tool of a later set replaces an
// earlier tool of the same name. Nil sets are skipped.
func Merge(sets ...*Set) *Set {
	out := &Set{tools: map[string]*entry{}}
	for _, s := range sets {
		if s == nil {
			continue
		}
		for n, e := range s.tools {
			out.tools[n] = e
		}
	}
	out.index()
	return out
}

// Len returns the number of tools.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.names)
}

// Names returns the tool names, sorted.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.names...)
}

// Specs returns the tool specs, sorted by name.
func (s *Set) Specs() []Spec {
	if s == nil {
		return nil
	}
	out := make([]Spec, len(s.names))
	for i, n := range s.names {
		out[i] = s.tools[n].spec
	}
	return out
}

// Lookup returns the spec of the named tool.
func (s *Set) Lookup(name string) (Spec, bool) {
	if s == nil {
		return Spec{}, false
	}
	e, ok := s.tools[name]
	if !ok {
		return Spec{}, false
	}
	return e.spec, true
}

// Derived returns the value derive makes from the named tool's spec,
// calling derive once per tool and key: layers above keep their forms of a
// tool's definition (the model layer's conversion of its schema, a listing)
// with the tool, shared by every set that holds it, for as long as the tool
// is loaded. key is compared with ==, as a context key is (use a value of an
// unexported type); derive must depend on the spec alone. An unknown name is
// an error.
func (s *Set) Derived(name string, key any, derive func(Spec) (any, error)) (any, error) {
	var e *entry
	if s != nil {
		e = s.tools[name]
	}
	if e == nil {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	d, ok := e.derived.Load(key)
	if !ok {
		d, _ = e.derived.LoadOrStore(key, &derivation{})
	}
	dv := d.(*derivation)
	dv.once.Do(func() { dv.v, dv.err = derive(e.spec) })
	return dv.v, dv.err
}

// Select returns the subset of the named tools; an unknown name is an error
// that names it and the known tools.
func (s *Set) Select(names ...string) (*Set, error) {
	var picked []*entry
	for _, n := range names {
		if s == nil || s.tools[n] == nil {
			return nil, fmt.Errorf("unknown tool %q; known tools: %s", n, s.known())
		}
		picked = append(picked, s.tools[n])
	}
	return setOf(picked), nil
}

func (s *Set) known() string {
	if s.Len() == 0 {
		return "(none)"
	}
	return strings.Join(s.names, ", ")
}

// Execute runs one call of the named tool and returns its result; every
// failure is a result with Error set, never a Go error: an unknown tool
// (the result names the known ones), input that is not valid JSON or does
// not match the tool's schema (the result says what is wrong and shows the
// schema), a timeout or cancellation (the process group is killed at once),
// a crash (exit status and the tail of stderr), a panic, an invalid result.
// Live output goes to opts.OnOutput before Execute returns, bounded and
// coalesced by opts.Live. With opts.Redact, both are cleaned of what it
// removes.
func (s *Set) Execute(ctx context.Context, name string, input json.RawMessage, opts Options) Result {
	if on, redact := opts.OnOutput, opts.Redact; on != nil && redact != nil {
		opts.OnOutput = func(ch Chunk) {
			ch.Data = redact(ch.Data)
			on(ch)
		}
	}
	ctx, onOutput, endLive := live.Start(ctx, opts.Live, opts.OnOutput)
	opts.OnOutput = onOutput
	res := s.execute(ctx, name, input, opts)
	endLive()
	if res.Outcome == "" {
		res.Outcome = OutcomeOK
		if res.Error {
			res.Outcome = OutcomeError
		}
	}
	return res
}

func (s *Set) execute(ctx context.Context, name string, input json.RawMessage, opts Options) Result {
	e := (*entry)(nil)
	if s != nil {
		e = s.tools[name]
	}
	if e == nil {
		return errorResult(fmt.Sprintf("unknown tool %q; the available tools are: %s", name, s.known()))
	}
	input, err := schema.Check(name, e.schema, e.spec.InputSchema, input, &e.decoders)
	if err != nil {
		return errorResult(err.Error())
	}
	if err := opts.Limiter.acquire(ctx); err != nil {
		return outcome(errorResult(fmt.Sprintf("tool %q was stopped while waiting for its turn: %v", name, err)), OutcomeKilled)
	}
	defer opts.Limiter.release()

	start := time.Now()
	var res Result
	if e.fn != nil {
		res = runInProcess(ctx, e, input, opts)
	} else {
		res = e.pool.run(ctx, e, input, opts)
	}
	res.Output = truncate.Bytes(truncate.Output(RedactOutput(res.Output, opts.Redact), opts.Limit), opts.MaxBytes)
	res.Duration = time.Since(start)
	return res
}

func runInProcess(ctx context.Context, e *entry, input json.RawMessage, opts Options) (res Result) {
	ctx, cancel := callContext(ctx, e.spec)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			res = outcome(errorResult(fmt.Sprintf("tool %q panicked: %v\n\n%s", e.spec.Name, p, debug.Stack())), OutcomeCrash)
		}
		if ctx.Err() != nil {
			res = stoppedResult(ctx, e)
		}
	}()
	// emit may be called from the function's goroutines: calls are
	// serialised, and those after the function returned are dropped.
	var mu sync.Mutex
	returned := false
	defer func() {
		mu.Lock()
		returned = true
		mu.Unlock()
	}()
	emit := func(text string) {
		mu.Lock()
		defer mu.Unlock()
		if opts.OnOutput != nil && !returned && ctx.Err() == nil {
			opts.OnOutput(Chunk{Stream: agentv1.OutputStream_OUTPUT_STREAM_OUTPUT, Data: strings.ToValidUTF8(text, "\uFFFD")})
		}
	}
	if opts.OnStart != nil {
		opts.OnStart()
	}
	r, err := e.fn(ctx, input, emit)
	if err != nil {
		return errorResult(err.Error())
	}
	if r.Output == nil {
		r.Output = TextOutput("")
	}
	return r
}
