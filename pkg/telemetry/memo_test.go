package telemetry

import (
	"fmt"
	"testing"
)

// TestMemo pins that a memo makes a value once per key (the last key or
// an older one), and past its bound makes values without keeping them.
func TestMemo(t *testing.T) {
	made := map[string]int{}
	mk := func(k string) *string {
		made[k]++
		v := "v:" + k
		return &v
	}
	c := memo[string, *string]{bound: 3}
	first := map[string]*string{}
	for _, k := range []string{"a", "a", "b", "a", "c", "b", "c"} {
		v := c.get(k, mk)
		if *v != "v:"+k {
			t.Fatalf("get(%q) = %q", k, *v)
		}
		if p, ok := first[k]; ok && p != v {
			t.Errorf("get(%q) made a new value", k)
		}
		first[k] = v
	}
	if fmt.Sprint(made) != "map[a:1 b:1 c:1]" {
		t.Errorf("made %v, want each key once", made)
	}
	// Full: a fourth key is made at each use, the others still come from the map.
	c.get("d", mk)
	c.get("d", mk)
	c.get("a", mk)
	if made["d"] != 2 || made["a"] != 1 {
		t.Errorf("past the bound: made %v, want d twice and a once", made)
	}
}
