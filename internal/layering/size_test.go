package layering

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The sizes the house keeps to: a package small enough to read as one
// room, the handlers thin, a file that holds one concept.
const (
	maxPackageLines = 3500 // non-test, non-generated lines of a package
	maxServerLines  = 3000 // of pkg/server
	maxFileLines    = 600  // of any non-generated Go file, tests included
)

// generated reports whether a Go file's text says it is generated (the
// "Code generated ... DO NOT EDIT." line of the go command's convention).
func generated(text []byte) bool {
	for sc := bufio.NewScanner(bytes.NewReader(text)); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			return true
		}
		if strings.HasPrefix(line, "package ") {
			return false
		}
	}
	return false
}

// TestSizes fails on a package over maxPackageLines (pkg/server over
// maxServerLines) and on a file over maxFileLines, generated code apart.
func TestSizes(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{.Dir}} {{join .GoFiles ","}},{{join .IgnoredGoFiles ","}} {{join .TestGoFiles ","}},{{join .XTestGoFiles ","}}`,
		module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	count := func(dir, name string) (lines int, gen bool) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("\n")), generated(b)
	}
	packages := 0
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
		dir, code, tests := f[1], f[2], ""
		if len(f) > 3 {
			tests = f[3]
		}
		packages++
		total := 0
		for _, list := range []string{code, tests} {
			for _, name := range strings.Split(list, ",") {
				if name == "" {
					continue
				}
				n, gen := count(dir, name)
				if gen {
					continue
				}
				if n > maxFileLines {
					t.Errorf("%s/%s has %d lines, over %d: split it by concept", rel, name, n, maxFileLines)
				}
				if list == code && !strings.HasSuffix(name, "_test.go") {
					total += n
				}
			}
		}
		limit := maxPackageLines
		if rel == "pkg/server" {
			limit = maxServerLines
		}
		if total > limit {
			t.Errorf("%s has %d lines of code, over %d: move a concept into a package of its own", rel, total, limit)
		}
	}
	if packages < 30 {
		t.Fatalf("go list gave %d packages, want the whole module:\n%s", packages, out)
	}
}
