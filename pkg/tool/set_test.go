package tool

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
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
