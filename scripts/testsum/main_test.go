package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunGoTest runs the real go test -json on a module of a passing, a
// skipped and a failing test and a package that does not build: go test's
// exit status comes back, and the summary names each.
func TestRunGoTest(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.26\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) { t.Log(\"quiet\") }\n\nfunc TestSkip(t *testing.T) { t.Skip(\"no widget here (make widgets)\") }\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestFail(t *testing.T) { t.Run(\"sub\", func(t *testing.T) { t.Error(\"boom\") }) }\n",
		"c/c.go":      "package c\n\nfunc X() int { return \"s\" }\n",
		"c/c_test.go": "package c\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, c := range []struct {
		pkgs   string
		status int
		want   []string
		absent []string
	}{
		{"./a", 0, []string{"ok  \texample.com/m/a", "tests: 1 passed, 0 failed, 1 skipped, in 1 package",
			"skipped 1 test, by reason:\n  1   no widget here (make widgets)\n      ./a: TestSkip\n"}, []string{"quiet", "=== RUN"}},
		{"./...", 1, []string{"--- FAIL: TestFail (", "    --- FAIL: TestFail/sub (", "        b_test.go:5: boom\n",
			"tests: 1 passed, 2 failed, 1 skipped, in 3 packages", "failed: ./b: TestFail/sub\n",
			"packages failed: ", "./c (build failed)", "c/c.go:3:23"}, []string{"quiet"}},
	} {
		var out strings.Builder
		status := run([]string{"-count=1", c.pkgs}, &out)
		if status != c.status {
			t.Errorf("go test %s: status %d, want %d\n%s", c.pkgs, status, c.status, out.String())
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("go test %s: the output lacks %q:\n%s", c.pkgs, w, out.String())
			}
		}
		for _, a := range c.absent {
			if strings.Contains(out.String(), a) {
				t.Errorf("go test %s: the output has %q:\n%s", c.pkgs, a, out.String())
			}
		}
	}
}
