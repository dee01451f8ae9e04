package adaptertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// Payload is one event of a recorded stream, or a whole response body.
type Payload struct {
	// Name is the SSE event name; empty sends none.
	Name string
	// JSON is the payload; nil when it is not JSON (chat's [DONE]).
	JSON *Node
	// Raw is the data when JSON is nil.
	Raw string

	data []byte // JSON marshalled, kept so that shared payloads are written once
}

// Data is the payload's data.
func (p *Payload) Data() []byte {
	if p.JSON == nil {
		return []byte(p.Raw)
	}
	if p.data == nil {
		p.data = p.JSON.Marshal()
	}
	return p.data
}

// Type is the payload's "type" member, "" when it has none.
func (p *Payload) Type() string {
	s, _ := p.JSON.Get("type").String()
	return s
}

// NewEvent is a payload named after its JSON's "type" when named is set.
func NewEvent(named bool, n *Node) *Payload {
	p := &Payload{JSON: n}
	if named {
		p.Name = p.Type()
	}
	return p
}

// Recording is one recorded response: a stream's events or a whole body.
type Recording struct {
	Stream   bool
	Payloads []*Payload
}

// Bytes is the recording as its reader reads it: SSE for a stream, the
// body otherwise.
func (r Recording) Bytes() []byte {
	if !r.Stream {
		return r.Payloads[0].Data()
	}
	var b bytes.Buffer
	for _, p := range r.Payloads {
		b.Write(fakemodel.SSE(fakemodel.Event{Name: p.Name, Data: string(p.Data())}))
	}
	return b.Bytes()
}

// MapPayloads returns the recording with f applied to every JSON payload;
// f gets the payload's position and returns its JSON or a replacement.
func (r Recording) MapPayloads(f func(i int, n *Node) *Node) Recording {
	out := Recording{Stream: r.Stream, Payloads: make([]*Payload, len(r.Payloads))}
	for i, p := range r.Payloads {
		out.Payloads[i] = p
		if p.JSON == nil {
			continue
		}
		if n := f(i, p.JSON); n != p.JSON {
			out.Payloads[i] = &Payload{Name: p.Name, JSON: n}
		}
	}
	return out
}

// InsertPayload returns the recording with p inserted before position i.
func (r Recording) InsertPayload(i int, p *Payload) Recording {
	ps := make([]*Payload, 0, len(r.Payloads)+1)
	ps = append(ps, r.Payloads[:i]...)
	ps = append(ps, p)
	ps = append(ps, r.Payloads[i:]...)
	return Recording{Stream: r.Stream, Payloads: ps}
}

// SplitAt is a Protocol.Split for a recording of several responses (a tool
// loop, one response per turn): it cuts the stream before each event of
// type start.
func SplitAt(start string) func(Recording) []Recording {
	return func(rec Recording) []Recording {
		if !rec.Stream {
			return []Recording{rec}
		}
		var out []Recording
		for _, p := range rec.Payloads {
			if p.Type() == start || len(out) == 0 {
				out = append(out, Recording{Stream: true})
			}
			out[len(out)-1].Payloads = append(out[len(out)-1].Payloads, p)
		}
		return out
	}
}

// Variant is a mutated recording and what was done to it.
type Variant struct {
	Name string
	Rec  Recording
}

// Protocol is what MutationTest needs to know of one protocol adapter.
type Protocol struct {
	// Dirs are the directories under Fixtures holding the protocol's
	// recordings; every *.chunks.txt, *.sse and *.json in them is tested.
	Dirs []string
	// Named: *.chunks.txt events are sent with an event name, their "type".
	Named bool
	// Done is appended to every *.chunks.txt stream when set (chat's
	// [DONE], which the recordings leave out).
	Done string
	// Split cuts a recording holding several responses into them; nil
	// means one response per file.
	Split func(Recording) []Recording
	// Stream reads SSE bytes with the adapter's stream reader, returning
	// the chunks it emitted; Whole decodes a whole body.
	Stream func(data []byte) ([]*schema.Message, error)
	Whole  func(body []byte) ([]*schema.Message, error)
	// Opaque are member names whose values are data rather than protocol
	// structure (tool call arguments sent as JSON objects): fields are not
	// inserted into them.
	Opaque []string
	// UnknownEvent is an event of a type the protocol does not have, the
	// n-th one inserted. It is full of members a reader that does not
	// look at the type first would take for content.
	UnknownEvent func(n int) *Payload
	// RotateIDs are the paths (member names joined with ".") of ids that a
	// gateway may give a new value on every event (item ids, chunk ids);
	// empty when the protocol allows none.
	RotateIDs []string
	// Items each return variants with unknown items, content parts,
	// blocks or choices added the way the protocol allows it.
	Items []func(Recording) []Variant
}

// Outcome is what a recording parses to: every field the mutation test
// compares.
type Outcome struct {
	Text, Reasoning string
	// Data is the message's reasoning provider data, which is sent back
	// with the history: Anthropic's thinking blocks with their signatures
	// and redacted thinking, the Responses reasoning items with their
	// encrypted content, Gemini's last thought signature.
	Data        map[string]string
	Calls       []OutcomeCall
	Finish, Raw string
	Usage       [6]int // input, output, total, cache read, cache write, reasoning
	Err         string // kind, code and message of a failure
}

// OutcomeCall is one tool call of an Outcome; Args are canonical JSON.
type OutcomeCall struct {
	ID, Name, Args, Type string
	// Data is the call's provider data: the freeform mark of a custom
	// call, Gemini's thought signature and call id.
	Data map[string]string
}

// Join concatenates streamed chunks as pkg/llm does: schema.ConcatMessages
// with the final chunk's usage kept whole.
func Join(chunks []*schema.Message) (*schema.Message, error) {
	if len(chunks) == 0 {
		return nil, errors.New("no chunks")
	}
	msg, err := schema.ConcatMessages(chunks)
	if err != nil {
		return nil, err
	}
	if last := chunks[len(chunks)-1].ResponseMeta; last != nil && msg.ResponseMeta != nil {
		msg.ResponseMeta.Usage = last.Usage
	}
	return msg, nil
}

// OutcomeOf summarises a parse.
func OutcomeOf(chunks []*schema.Message, err error) Outcome {
	if err == nil {
		var msg *schema.Message
		if msg, err = Join(chunks); err == nil {
			return outcomeOf(msg)
		}
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return Outcome{Err: fmt.Sprintf("%s %q: %s", pe.Kind, pe.Code, pe.Message)}
	}
	return Outcome{Err: "not a *provider.Error: " + err.Error()}
}

func outcomeOf(msg *schema.Message) Outcome {
	o := Outcome{Text: msg.Content, Reasoning: msg.ReasoningContent, Data: provider.StringMap(msg.Extra[provider.ExtraReasoningData])}
	for _, tc := range msg.ToolCalls {
		args := tc.Function.Arguments
		var v any
		if json.Unmarshal([]byte(args), &v) == nil {
			b, _ := json.Marshal(v)
			args = string(b)
		}
		o.Calls = append(o.Calls, OutcomeCall{ID: tc.ID, Name: tc.Function.Name, Args: args, Type: tc.Type,
			Data: provider.StringMap(tc.Extra[provider.ExtraToolCallData])})
	}
	if m := msg.ResponseMeta; m != nil {
		o.Finish = m.FinishReason
		if u := m.Usage; u != nil {
			o.Usage = [6]int{u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.PromptTokenDetails.CachedTokens, 0, u.CompletionTokensDetails.ReasoningTokens}
		}
	}
	o.Raw, _ = msg.Extra[provider.ExtraRawFinishReason].(string)
	o.Usage[4], _ = msg.Extra[provider.ExtraCacheWriteTokens].(int)
	return o
}

// kinds is the number of JSON types an inserted unknown field takes.
const kinds = 6

// unknownValue is the value of an inserted unknown field of JSON type k,
// and the type's name. The object and the array hold members a reader
// would take for content if it looked inside fields it does not know.
func unknownValue(k int) (name, value string) {
	switch k % kinds {
	case 0:
		return "string", `"MUTANT"`
	case 1:
		return "number", `12345.5`
	case 2:
		return "object", `{"type":"output_text","text":"MUTANT","delta":"MUTANT","index":0,"arguments":{"x":1},"content":[{"type":"text","text":"MUTANT"}]}`
	case 3:
		return "array", `[{"type":"text","text":"MUTANT"},1,null,"MUTANT"]`
	case 4:
		return "null", `null`
	}
	return "bool", `true`
}

// unknownKey is the name of inserted unknown fields.
const unknownKey = "x_agentcore_mutant"

// maxSites bounds the single-site variants of one recording: inserting one
// unknown field at each object of each event is a cross product (tens of
// thousands of variants for a long text stream), so the sites are sampled
// with an even stride, the stride's offset derived from the file name (a
// different but fixed sample per file, the same on every run). The
// all-at-once variants still put a field of each type in every object.
const maxSites = 240

// MutationTest parses every recording of p and variants of it, and checks
// that each variant parses to the same Outcome (text, reasoning, tool calls
// and arguments, usage, finish reason; or the same error) as the recording:
//
//   - for each JSON type, an unknown field of that type in every object of
//     every payload (at the front of each object for half the types, at the
//     end for the others), and then single fields at sampled (object,
//     payload) sites, one per variant;
//   - an unknown event between every two events, and at the start;
//   - an unknown event after the last one (after the terminal event,
//     [DONE] or message_stop: data a reader must not need to read, and
//     for Gemini, whose stream ends with the body, one it must skip);
//   - ids rotated on every event where the protocol allows it;
//   - the protocol's unknown items, content parts, blocks or choices;
//   - all of these at once.
//
// Generated ids (a call the server sent without one) are compared by
// whether they are set, not by value.
//
// The recordings are those under Fixtures (pkg/llm/testdata/fixtures, the
// repository's copy of the shared recordings plus the hand-written ones);
// the adapters' own testdata hold request bodies only.
func MutationTest(t *testing.T, p Protocol) {
	t.Helper()
	files, err := p.files()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no recordings in %v", p.Dirs)
	}
	total := 0
	for _, file := range files {
		name, _ := filepath.Rel(Fixtures, file)
		recs, err := p.load(file)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, rec := range recs {
			label := name
			if len(recs) > 1 {
				label = fmt.Sprintf("%s#%d", name, i+1)
			}
			t.Run(label, func(t *testing.T) {
				total += p.check(t, label, rec)
			})
		}
	}
	t.Logf("%d recordings, %d variants", len(files), total)
}

// files are p's recording files, sorted.
func (p Protocol) files() ([]string, error) {
	var files []string
	for _, dir := range p.Dirs {
		for _, ext := range []string{"*.chunks.txt", "*.sse", "*.json"} {
			m, err := filepath.Glob(filepath.Join(Fixtures, dir, ext))
			if err != nil {
				return nil, err
			}
			files = append(files, m...)
		}
	}
	sort.Strings(files)
	return files, nil
}

// Load reads a fixture file (a path under Fixtures) as the recordings it
// holds.
func (p Protocol) Load(name string) ([]Recording, error) {
	return p.load(filepath.Join(Fixtures, name))
}

// load reads a fixture file as the recordings it holds.
func (p Protocol) load(file string) ([]Recording, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var rec Recording
	switch {
	case strings.HasSuffix(file, ".json"):
		n, err := ParseJSON(data)
		if err != nil {
			return nil, err
		}
		return []Recording{{Payloads: []*Payload{{JSON: n}}}}, nil
	case strings.HasSuffix(file, ".sse"):
		rec.Stream = true
		r := sse.NewReader(context.Background(), bytes.NewReader(data))
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			pl := &Payload{Name: ev.Type}
			if n, err := ParseJSON(ev.Data); err == nil {
				pl.JSON = n
			} else {
				pl.Raw = string(ev.Data)
			}
			rec.Payloads = append(rec.Payloads, pl)
		}
	default:
		rec.Stream = true
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			n, err := ParseJSON([]byte(line))
			if err != nil {
				return nil, err
			}
			rec.Payloads = append(rec.Payloads, NewEvent(p.Named, n))
		}
		if p.Done != "" {
			rec.Payloads = append(rec.Payloads, &Payload{Raw: p.Done})
		}
	}
	if p.Split != nil {
		return p.Split(rec), nil
	}
	return []Recording{rec}, nil
}

// Parse is the outcome of one recording.
func (p Protocol) Parse(rec Recording) Outcome {
	if rec.Stream {
		return OutcomeOf(p.Stream(rec.Bytes()))
	}
	return OutcomeOf(p.Whole(rec.Bytes()))
}

// check runs the variants of one recording and returns how many ran.
func (p Protocol) check(t *testing.T, label string, rec Recording) int {
	want := p.Parse(rec)
	// Ids the reader makes up differ from one parse to the next.
	again := p.Parse(rec)
	made := map[int]bool{}
	for i := range want.Calls {
		if i < len(again.Calls) && again.Calls[i].ID != want.Calls[i].ID {
			made[i] = true
		}
	}
	norm := func(o Outcome) Outcome {
		o.Calls = append([]OutcomeCall(nil), o.Calls...)
		for i := range o.Calls {
			if made[i] && o.Calls[i].ID != "" {
				o.Calls[i].ID = "(made up)"
			}
		}
		return o
	}
	want = norm(want)
	failures := 0
	variants := p.variants(label, rec)
	for _, v := range variants {
		got := norm(p.Parse(v.Rec))
		if reflect.DeepEqual(got, want) {
			continue
		}
		failures++
		if failures <= 3 {
			t.Errorf("variant %q: %s", v.Name, diff(got, want))
		}
	}
	if failures > 3 {
		t.Errorf("%d of %d variants differ", failures, len(variants))
	}
	return len(variants)
}

// variants builds every variant of one recording.
func (p Protocol) variants(label string, rec Recording) []Variant {
	skip := map[string]bool{}
	for _, k := range p.Opaque {
		skip[k] = true
	}
	var out []Variant
	for k := range kinds {
		name, _ := unknownValue(k)
		out = append(out, Variant{"unknown " + name + " field in every object", p.allFields(rec, skip, k)})
	}
	// Single sites, sampled.
	type site struct{ payload, object int }
	var sites []site
	for i, pl := range rec.Payloads {
		if pl.JSON != nil {
			for j := range pl.JSON.Objects(skip) {
				sites = append(sites, site{i, j})
			}
		}
	}
	stride, offset := 1, 0
	if len(sites) > maxSites {
		stride = (len(sites) + maxSites - 1) / maxSites
		h := fnv.New32a()
		h.Write([]byte(label))
		offset = int(h.Sum32() % uint32(stride))
	}
	for k := offset; k < len(sites); k += stride {
		s := sites[k]
		kind := s.payload + s.object
		front := kind/kinds%2 == 0
		_, text := unknownValue(kind)
		val := MustJSON(text)
		v := rec.MapPayloads(func(i int, n *Node) *Node {
			if i != s.payload {
				return n
			}
			return n.Map(skip, func(o *Node, j int) *Node {
				if j == s.object {
					return o.With(unknownKey, val, front)
				}
				return o
			})
		})
		out = append(out, Variant{fmt.Sprintf("unknown field in object %d of payload %d", s.object, s.payload), v})
	}
	if rec.Stream && p.UnknownEvent != nil {
		out = append(out, Variant{"unknown events between all events", p.unknownEvents(rec)},
			Variant{"an unknown event after the last event", p.trailingEvent(rec)})
	}
	if rec.Stream && len(p.RotateIDs) > 0 {
		out = append(out, Variant{"ids rotated on every event", p.rotate(rec)})
	}
	for _, items := range p.Items {
		out = append(out, items(rec)...)
	}
	// Everything at once.
	all := p.allFields(rec, skip, 2)
	if rec.Stream && p.UnknownEvent != nil {
		all = p.trailingEvent(p.unknownEvents(all))
	}
	if rec.Stream && len(p.RotateIDs) > 0 {
		all = p.rotate(all)
	}
	for _, items := range p.Items {
		if vs := items(all); len(vs) > 0 {
			all = vs[len(vs)/2].Rec
		}
	}
	return append(out, Variant{"all mutations at once", all})
}

// allFields puts an unknown field of JSON type k in every object.
func (p Protocol) allFields(rec Recording, skip map[string]bool, k int) Recording {
	_, text := unknownValue(k)
	val := MustJSON(text)
	front := k%2 == 0
	return rec.MapPayloads(func(_ int, n *Node) *Node {
		return n.Map(skip, func(o *Node, _ int) *Node { return o.With(unknownKey, val, front) })
	})
}

// unknownEvents puts an unknown event before every event.
func (p Protocol) unknownEvents(rec Recording) Recording {
	out := Recording{Stream: true}
	for i, pl := range rec.Payloads {
		out.Payloads = append(out.Payloads, p.UnknownEvent(i), pl)
	}
	return out
}

// trailingEvent puts an unknown event after the last event.
func (p Protocol) trailingEvent(rec Recording) Recording {
	return rec.InsertPayload(len(rec.Payloads), p.UnknownEvent(len(rec.Payloads)))
}

// rotate gives every id at the paths in RotateIDs a new value on every
// event.
func (p Protocol) rotate(rec Recording) Recording {
	return rec.MapPayloads(func(i int, n *Node) *Node {
		for j, path := range p.RotateIDs {
			n = n.Update(strings.Split(path, "."), func(v *Node) *Node {
				if _, ok := v.String(); !ok {
					return v
				}
				return Str(fmt.Sprintf("rotated_%d_%d", i, j))
			})
		}
		return n
	})
}

// diff names the fields in which got differs from want, values shortened.
func diff(got, want Outcome) string {
	short := func(v any) string {
		s := fmt.Sprintf("%+v", v)
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		return s
	}
	var out []string
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			out = append(out, fmt.Sprintf("%s = %s, want %s", g.Type().Field(i).Name, short(g.Field(i).Interface()), short(w.Field(i).Interface())))
		}
	}
	return strings.Join(out, "; ")
}

// ReadSSE makes a Protocol.Stream of an adapter's stream reader: the bytes
// are read as an SSE body and the chunks the reader emits are returned.
func ReadSSE(read func(ctx context.Context, r *sse.Reader, emit func(*schema.Message) bool) error) func([]byte) ([]*schema.Message, error) {
	return func(data []byte) ([]*schema.Message, error) {
		ctx := context.Background()
		r := sse.NewReader(ctx, bytes.NewReader(data))
		defer r.Close()
		var out []*schema.Message
		err := read(ctx, r, func(m *schema.Message) bool { out = append(out, m); return true })
		return out, err
	}
}
