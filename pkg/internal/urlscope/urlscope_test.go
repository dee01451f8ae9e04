package urlscope

import "testing"

// TestWithin pins the endpoint-binding rule: what lies within a base URL and what only looks so.
func TestWithin(t *testing.T) {
	const base = "https://api.example.com/v1"
	tests := []struct {
		u    string
		want bool
	}{
		{"https://api.example.com/v1", true},
		{"https://api.example.com/v1/", true},
		{"https://API.example.com:443/v1/deployments/x", true},
		{"https://api.example.com./v1", true},
		{"http://api.example.com/v1", false},
		{"https://api.example.com:8443/v1", false},
		{"https://api.example.com/v10", false},
		{"https://api.example.com/", false},
		{"https://api.example.com/v1/../admin", false},
		{"https://api.example.com/v1/%2e%2e/admin", false},
		{"https://api.example.com/v1%2f..%2fadmin", false},
		{"https://api.example.com/v1?x=1", false},
		{"https://api.example.com.evil.test/v1", false},
		{"https://user@api.example.com/v1", false},
		{"https://evil.test/v1", false},
	}
	for _, tc := range tests {
		if got := Within(tc.u, base); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.u, base, got, tc.want)
		}
	}
	if !Within("http://127.0.0.1:8080/anything", "http://127.0.0.1:8080") {
		t.Error("a base without a path allows every path of its host")
	}
}
