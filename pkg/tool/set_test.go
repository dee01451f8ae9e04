package tool

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type testKey struct{}

// TestDerived checks that a derived value is made once per tool and key,
// shared by the sets that hold the tool, also when asked at once.
func TestDerived(t *testing.T) {
	noop := func(context.Context, json.RawMessage, func(string)) (Result, error) { return Result{}, nil }
	a, err := InProcess(Spec{Name: "a"}, noop)
	if err != nil {
		t.Fatal(err)
	}
	b, err := InProcess(Spec{Name: "b"}, noop)
	if err != nil {
		t.Fatal(err)
	}
	all := Merge(a, b)
	sub, err := all.Select("a")
	if err != nil {
		t.Fatal(err)
	}
	var made atomic.Int32
	derive := func(s Spec) (any, error) {
		made.Add(1)
		return "form of " + s.Name, nil
	}
	var wg sync.WaitGroup
	for _, s := range []*Set{a, all, sub, a, all, sub} {
		wg.Go(func() {
			v, err := s.Derived("a", testKey{}, derive)
			if err != nil || v != "form of a" {
				t.Errorf("Derived = %v, %v", v, err)
			}
		})
	}
	wg.Wait()
	if n := made.Load(); n != 1 {
		t.Errorf("derived %d times, want once", n)
	}
	if v, _ := all.Derived("b", testKey{}, derive); v != "form of b" || made.Load() != 2 {
		t.Errorf("b: %v after %d derivations", v, made.Load())
	}
	if _, err := sub.Derived("b", testKey{}, derive); err == nil {
		t.Error("a tool outside the set was derived")
	}
}

func TestMergeSelectAndInProcess(t *testing.T) {
	mk := func(name, text string) *Set {
		s, err := InProcess(Spec{Name: name, Description: text}, func(context.Context, json.RawMessage, func(string)) (Result, error) {
			return Result{Output: TextOutput(text)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	set := Merge(mk("a", "first"), nil, mk("b", "b"), mk("a", "second"))
	if got := strings.Join(set.Names(), ","); got != "a,b" {
		t.Fatalf("names = %s", got)
	}
	if s, _ := set.Lookup("a"); s.Description != "second" || s.Source != "builtin" {
		t.Fatalf("a = %+v", s)
	}
	res := set.Execute(context.Background(), "a", nil, Options{})
	if OutputText(res.Output) != "second" {
		t.Fatalf("a returned %v", res.Output)
	}
	sub, err := set.Select("b")
	if err != nil || sub.Len() != 1 {
		t.Fatalf("Select = %v, %v", sub, err)
	}
	if _, err := set.Select("b", "zzz"); err == nil || !strings.Contains(err.Error(), `"zzz"`) || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("Select unknown: %v", err)
	}
	if _, err := InProcess(Spec{Name: "bad name"}, nil); err == nil {
		t.Fatal("InProcess accepted a bad name")
	}
	var empty *Set
	if empty.Len() != 0 || !empty.Execute(context.Background(), "x", nil, Options{}).Error {
		t.Fatal("nil set")
	}
}

func TestInProcessSemantics(t *testing.T) {
	set := Merge(
		mustInProcess(t, Spec{Name: "slow", Timeout: 50 * time.Millisecond, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, _ json.RawMessage, emit func(string)) (Result, error) {
				emit("waiting")
				<-ctx.Done()
				return Result{Output: TextOutput("late")}, nil
			}),
		mustInProcess(t, Spec{Name: "boom"}, func(context.Context, json.RawMessage, func(string)) (Result, error) {
			panic("in-process boom")
		}),
		mustInProcess(t, Spec{Name: "typed", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
			func(_ context.Context, in json.RawMessage, _ func(string)) (Result, error) {
				return Result{Output: JSONOutput(in), Stop: true}, nil
			}),
	)
	var chunks []Chunk
	res := set.Execute(context.Background(), "slow", nil, Options{OnOutput: func(c Chunk) { chunks = append(chunks, c) }})
	if !res.Error || !strings.Contains(OutputText(res.Output), "timed out after 50ms") || len(chunks) != 1 || chunks[0].Data != "waiting" {
		t.Fatalf("slow = %+v, chunks %v", res, chunks)
	}
	if res := set.Execute(context.Background(), "boom", nil, Options{}); !res.Error || !strings.Contains(OutputText(res.Output), "in-process boom") {
		t.Fatalf("boom = %+v", res)
	}
	if res := set.Execute(context.Background(), "typed", json.RawMessage(`{"n":"x"}`), Options{}); !res.Error || !strings.Contains(OutputText(res.Output), "/n") {
		t.Fatalf("typed bad = %+v", res)
	}
	if res := set.Execute(context.Background(), "typed", json.RawMessage(`{"n":2}`), Options{}); res.Error || !res.Stop || OutputText(res.Output) != `{"n":2}` {
		t.Fatalf("typed = %+v", res)
	}
}

func mustInProcess(t *testing.T, spec Spec, fn Func) *Set {
	t.Helper()
	s, err := InProcess(spec, fn)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
