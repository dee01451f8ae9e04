package llm

import (
	"strings"
	"testing"
)

func TestDefaultCacheKey(t *testing.T) {
	a := DefaultCacheKey("https://x/v1", "m", "sys")
	tests := []struct {
		name string
		key  string
		same bool
	}{
		{"same input", DefaultCacheKey("https://x/v1", "m", "sys"), true},
		{"trailing slash", DefaultCacheKey("https://x/v1/", "m", "sys"), true},
		{"other model", DefaultCacheKey("https://x/v1", "m2", "sys"), false},
		{"other system", DefaultCacheKey("https://x/v1", "m", "sys2"), false},
		{"shifted boundary", DefaultCacheKey("https://x/v1", "ms", "ys"), false},
	}
	for _, tt := range tests {
		if (tt.key == a) != tt.same {
			t.Errorf("%s: %q vs %q", tt.name, tt.key, a)
		}
	}
	if !strings.HasPrefix(a, "agentcore-") || strings.Contains(a, "x/v1") {
		t.Errorf("key %q", a)
	}
}
