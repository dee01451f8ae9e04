package webhook

import (
	"strings"
	"testing"
)

func TestAllow(t *testing.T) {
	a, err := ParseAllow([]string{"hooks.example.com", "pinned.example.com:8443", "*.corp.example",
		"https://api.example.net/agentcore", "http://127.0.0.1:9000", " "})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url string
		err string // "" when allowed
	}{
		{"https://hooks.example.com/run-ended", ""},
		{"https://HOOKS.example.com.:444/x?token=abc", ""},
		{"http://hooks.example.com/x", "plain http"},
		{"https://hooks.example.com.evil.test/x", "not among"},
		{"https://pinned.example.com:8443/x", ""},
		{"https://pinned.example.com/x", "not among"},
		{"https://a.corp.example/x", ""},
		{"https://a.b.corp.example/x", ""},
		{"https://corp.example/x", "not among"},
		{"https://evilcorp.example/x", "not among"},
		{"https://api.example.net/agentcore/hooks?x=1", ""},
		{"https://api.example.net/agentcorex", "not among"},
		{"https://api.example.net/other", "not among"},
		{"http://127.0.0.1:9000/hook", ""},
		{"http://127.0.0.1:9001/hook", "plain http"},
		{"https://user:pw@hooks.example.com/x", "credentials"},
		{"https://hooks.example.com/x#frag", "fragment"},
		{"https://hooks.example.com/a/../b", "dot segments"},
		{"https://hooks.example.com/a%2fb", "dot segments"},
		{"ftp://hooks.example.com/x", "scheme"},
		{"/relative", "absolute"},
		{"hooks.example.com/x", "absolute"},
	} {
		err := a.Check(tc.url)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Check(%q) = %v, want an error with %q", tc.url, err, tc.err)
		}
	}
	if err := (*Allow)(nil).Check("https://hooks.example.com/x"); err == nil || !strings.Contains(err.Error(), "no host") {
		t.Errorf("an empty list allows nothing; got %v", err)
	}
}

func TestParseAllowRejects(t *testing.T) {
	for _, e := range []string{"ftp://x.example", "https://user@x.example", "https://x.example/?q=1", "x.example/path", "*", "https://"} {
		if _, err := ParseAllow([]string{e}); err == nil {
			t.Errorf("ParseAllow(%q) took it", e)
		}
	}
}
