package adaptertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Node is a JSON value that keeps its object members in order, so that a
// mutated payload differs from the recorded one only where it was mutated.
// Nodes are never changed in place: the With and Insert methods return
// copies, so that variants share whatever they did not mutate.
type Node struct {
	// Kind is 'o' (object), 'a' (array) or 's' (a scalar: string, number,
	// bool or null).
	Kind byte
	// Keys are an object's member names; Elems its member values, or an
	// array's elements.
	Keys  []string
	Elems []*Node
	// Text is a scalar's JSON text.
	Text string
}

// ParseJSON reads one JSON value.
func ParseJSON(data []byte) (*Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return n, nil
}

// MustJSON parses a JSON literal of a test; it panics when s is not JSON.
func MustJSON(s string) *Node {
	n, err := ParseJSON([]byte(s))
	if err != nil {
		panic(fmt.Sprintf("adaptertest.MustJSON(%q): %v", s, err))
	}
	return n
}

func parseNode(dec *json.Decoder) (*Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := &Node{Kind: 'a'}
		if v == '{' {
			n.Kind = 'o'
		}
		for dec.More() {
			if n.Kind == 'o' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.Keys = append(n.Keys, k.(string))
			}
			e, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.Elems = append(n.Elems, e)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return Str(v), nil
	case json.Number:
		return &Node{Kind: 's', Text: v.String()}, nil
	case bool:
		return &Node{Kind: 's', Text: strconv.FormatBool(v)}, nil
	case nil:
		return &Node{Kind: 's', Text: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// Str is a JSON string.
func Str(s string) *Node {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return &Node{Kind: 's', Text: string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))}
}

// Num is a JSON number.
func Num(i int) *Node { return &Node{Kind: 's', Text: strconv.Itoa(i)} }

// Marshal writes the value as compact JSON.
func (n *Node) Marshal() []byte {
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes()
}

func (n *Node) write(b *bytes.Buffer) {
	switch n.Kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(Str(k).Text)
			b.WriteByte(':')
			n.Elems[i].write(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range n.Elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	default:
		b.WriteString(n.Text)
	}
}

// Get returns an object's member, nil when n is not an object or has none.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != 'o' {
		return nil
	}
	for i, k := range n.Keys {
		if k == key {
			return n.Elems[i]
		}
	}
	return nil
}

// String returns a JSON string's value; ok is false for anything else.
func (n *Node) String() (string, bool) {
	if n == nil || n.Kind != 's' || len(n.Text) == 0 || n.Text[0] != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal([]byte(n.Text), &s) == nil
}

// Int returns a JSON number's integer value; ok is false for anything else.
func (n *Node) Int() (int, bool) {
	if n == nil || n.Kind != 's' {
		return 0, false
	}
	i, err := strconv.Atoi(n.Text)
	return i, err == nil
}

// With returns a copy of object n with member key set to v: replaced in
// place when n has it, else added at the front or at the end.
func (n *Node) With(key string, v *Node, front bool) *Node {
	c := &Node{Kind: 'o', Keys: append([]string(nil), n.Keys...), Elems: append([]*Node(nil), n.Elems...)}
	for i, k := range c.Keys {
		if k == key {
			c.Elems[i] = v
			return c
		}
	}
	if front {
		c.Keys = append([]string{key}, c.Keys...)
		c.Elems = append([]*Node{v}, c.Elems...)
	} else {
		c.Keys = append(c.Keys, key)
		c.Elems = append(c.Elems, v)
	}
	return c
}

// Insert returns a copy of array n with v inserted at i (clamped to the
// array's ends).
func (n *Node) Insert(i int, v *Node) *Node {
	i = max(0, min(i, len(n.Elems)))
	elems := make([]*Node, 0, len(n.Elems)+1)
	elems = append(elems, n.Elems[:i]...)
	elems = append(elems, v)
	elems = append(elems, n.Elems[i:]...)
	return &Node{Kind: 'a', Elems: elems}
}

// Map returns n with f applied to every object in it, children first, in
// the pre-order in which Objects counts them: f gets the object (its
// members already mapped) and its number, and returns it or a
// replacement. Members named in skip are data, not protocol structure (tool
// arguments held as JSON objects): they are neither mapped nor counted.
// Unchanged subtrees are shared with n.
func (n *Node) Map(skip map[string]bool, f func(obj *Node, index int) *Node) *Node {
	count := 0
	return n.mapNode(skip, f, &count)
}

// Objects counts the objects Map visits.
func (n *Node) Objects(skip map[string]bool) int {
	count := 0
	n.mapNode(skip, func(o *Node, _ int) *Node { return o }, &count)
	return count
}

func (n *Node) mapNode(skip map[string]bool, f func(*Node, int) *Node, count *int) *Node {
	if n.Kind == 's' {
		return n
	}
	index := *count
	if n.Kind == 'o' {
		*count++
	}
	var elems []*Node
	for i, e := range n.Elems {
		if n.Kind == 'o' && skip[n.Keys[i]] {
			continue
		}
		m := e.mapNode(skip, f, count)
		if m != e {
			if elems == nil {
				elems = append([]*Node(nil), n.Elems...)
			}
			elems[i] = m
		}
	}
	out := n
	if elems != nil {
		out = &Node{Kind: n.Kind, Keys: n.Keys, Elems: elems}
	}
	if n.Kind == 'o' {
		return f(out, index)
	}
	return out
}

// At returns the value at path (member names, and element numbers for
// arrays), nil when there is none.
func (n *Node) At(path ...string) *Node {
	for _, step := range path {
		switch {
		case n == nil:
			return nil
		case n.Kind == 'a':
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(n.Elems) {
				return nil
			}
			n = n.Elems[i]
		default:
			n = n.Get(step)
		}
	}
	return n
}

// Update returns n with the value at path replaced by f's result (f gets
// nil when there is none; an object member is then added at the end). A
// path through something that is not there leaves n as it is.
func (n *Node) Update(path []string, f func(*Node) *Node) *Node {
	if len(path) == 0 {
		return f(n)
	}
	switch {
	case n == nil:
		return n
	case n.Kind == 'a':
		i, err := strconv.Atoi(path[0])
		if err != nil || i < 0 || i >= len(n.Elems) {
			return n
		}
		v := n.Elems[i].Update(path[1:], f)
		if v == n.Elems[i] {
			return n
		}
		c := &Node{Kind: 'a', Elems: append([]*Node(nil), n.Elems...)}
		c.Elems[i] = v
		return c
	case n.Kind == 'o':
		old := n.Get(path[0])
		if old == nil && len(path) > 1 {
			return n
		}
		v := old.Update(path[1:], f)
		if v == old || v == nil {
			return n
		}
		return n.With(path[0], v, false)
	}
	return n
}
