package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json's TestEvent, with the
// build events of go test: build-output and build-fail).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
	// FailedBuild names the package whose build failed a package's tests.
	FailedBuild string
}

// test is one test or subtest, from its run event to its end.
type test struct {
	pkg, name string
	// head is its "--- FAIL: name (0.01s)" line; text what it printed
	// besides, the framing lines (=== RUN, PAUSE, CONT, NAME) left out.
	head, text string
	// result is pass, fail or skip; "" while it runs.
	result   string
	children []*test
}

// report reads go test's events, prints what go test prints without -v
// (everything with verbose), and counts what the summary says.
type report struct {
	out     io.Writer
	verbose bool
	module  string
	// running holds every test whose top-level test has not ended, by
	// package and name; a top-level test's end removes its tree.
	running map[[2]string]*test
	// top lists, per package, its top-level tests that have not ended.
	top map[string][]*test

	passed, failed, skipped int
	packages                int
	failedPackages          []string
	// skips lists skipped tests by reason; reasons keeps the reasons in the
	// order they first came.
	skips    map[string][]*test
	reasons  []string
	failures []*test
}

func newReport(out io.Writer, verbose bool, module string) *report {
	return &report{out: out, verbose: verbose, module: module,
		running: map[[2]string]*test{}, top: map[string][]*test{}, skips: map[string][]*test{}}
}

// line takes one line of go test's standard output: an event, or text
// that is not one (printed as it is).
func (r *report) line(b []byte) {
	var ev event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &ev) != nil {
		fmt.Fprintf(r.out, "%s\n", b)
		return
	}
	r.event(ev)
}

func (r *report) event(ev event) {
	switch {
	case ev.Action == "build-output":
		io.WriteString(r.out, ev.Output)
	case ev.Action == "build-fail":
	case ev.Test == "":
		r.packageEvent(ev)
	default:
		r.testEvent(ev)
	}
}

func (r *report) packageEvent(ev event) {
	switch ev.Action {
	case "output":
		if r.verbose || ev.Output != "PASS\n" {
			io.WriteString(r.out, ev.Output)
		}
	case "pass", "fail", "skip":
		r.packages++
		// Tests that never ended: the test binary died under them (a
		// panic in another goroutine, the -timeout).
		for _, t := range r.top[ev.Package] {
			r.end(t, "fail")
		}
		delete(r.top, ev.Package)
		if ev.Action == "fail" {
			name := r.pkgName(ev.Package)
			if ev.FailedBuild != "" {
				name += " (build failed)"
			}
			r.failedPackages = append(r.failedPackages, name)
		}
	}
}

func (r *report) testEvent(ev event) {
	key := [2]string{ev.Package, ev.Test}
	t := r.running[key]
	if t == nil {
		t = &test{pkg: ev.Package, name: ev.Test}
		r.running[key] = t
		parent := r.running[[2]string{ev.Package, parentName(ev.Test)}]
		if parent != nil && parent != t {
			parent.children = append(parent.children, t)
		} else {
			r.top[ev.Package] = append(r.top[ev.Package], t)
		}
	}
	switch ev.Action {
	case "output":
		if r.verbose {
			io.WriteString(r.out, ev.Output)
		}
		switch {
		case framing.MatchString(ev.Output):
		case strings.HasPrefix(ev.Output, "--- ") && strings.Contains(ev.Output, " "+ev.Test+" ("):
			t.head = ev.Output
		default:
			t.text += ev.Output
		}
	case "pass", "fail", "skip":
		if parentName(ev.Test) == "" || r.running[[2]string{ev.Package, parentName(ev.Test)}] == nil {
			r.end(t, ev.Action)
			return
		}
		r.count(t, ev.Action)
	}
}

// end ends a top-level test: it is counted (its subtests were as they
// ended), printed when it failed, and forgotten.
func (r *report) end(t *test, result string) {
	r.count(t, result)
	if result == "fail" && !r.verbose {
		r.print(t, 0)
	}
	r.forget(t)
	tops := r.top[t.pkg]
	for i, x := range tops {
		if x == t {
			r.top[t.pkg] = append(tops[:i], tops[i+1:]...)
			break
		}
	}
}

func (r *report) count(t *test, result string) {
	t.result = result
	switch result {
	case "pass":
		r.passed++
	case "skip":
		r.skipped++
		reason := skipReason(t.text)
		if _, ok := r.skips[reason]; !ok {
			r.reasons = append(r.reasons, reason)
		}
		r.skips[reason] = append(r.skips[reason], t)
	case "fail":
		r.failed++
		// A parent fails with its subtests: the summary names the ones
		// that failed themselves.
		for _, c := range t.children {
			if c.result == "fail" {
				return
			}
		}
		r.failures = append(r.failures, t)
	}
}

// print writes a failed test as go test does without -v: its result line,
// its output, then its failed subtests, each level indented four spaces
// (go test -json leaves the indentation out).
func (r *report) print(t *test, depth int) {
	indent := strings.Repeat("    ", depth)
	head := t.head
	if head == "" {
		head = fmt.Sprintf("--- FAIL: %s (did not end)\n", t.name)
	}
	io.WriteString(r.out, indent+head)
	for l := range strings.Lines(t.text) {
		io.WriteString(r.out, indent+l)
	}
	if t.text != "" && !strings.HasSuffix(t.text, "\n") {
		io.WriteString(r.out, "\n")
	}
	for _, c := range t.children {
		if c.result == "fail" || c.result == "" {
			r.print(c, depth+1)
		}
	}
}

func (r *report) forget(t *test) {
	delete(r.running, [2]string{t.pkg, t.name})
	for _, c := range t.children {
		r.forget(c)
	}
}

// summary prints the counts, the skipped tests by reason and the failed
// ones.
func (r *report) summary(elapsed time.Duration) {
	fmt.Fprintf(r.out, "\ntests: %d passed, %d failed, %d skipped, in %s (%s)\n",
		r.passed, r.failed, r.skipped, plural(r.packages, "package"), elapsed.Round(time.Second))
	if r.skipped > 0 {
		fmt.Fprintf(r.out, "skipped %s, by reason:\n", plural(r.skipped, "test"))
		for _, reason := range r.reasons {
			tests := r.skips[reason]
			fmt.Fprintf(r.out, "  %-3d %s\n      %s\n", len(tests), reason, r.names(tests, 4))
		}
	}
	if len(r.failures) > 0 {
		fmt.Fprintf(r.out, "failed: %s\n", r.names(r.failures, 20))
	}
	if len(r.failedPackages) > 0 {
		fmt.Fprintf(r.out, "packages failed: %s\n", strings.Join(r.failedPackages, ", "))
	}
}

// names lists tests by package, the first max of them and a count of the
// others: "./a: TestX, TestY; ./b: TestZ".
func (r *report) names(tests []*test, max int) string {
	var b strings.Builder
	last := ""
	for i, t := range tests {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(tests)-max)
			break
		}
		switch {
		case i == 0:
		case t.pkg == last:
			b.WriteString(", ")
		default:
			b.WriteString("; ")
		}
		if t.pkg != last || i == 0 {
			b.WriteString(r.pkgName(t.pkg) + ": ")
			last = t.pkg
		}
		b.WriteString(t.name)
	}
	return b.String()
}

// pkgName is a package's path relative to the module, as a pattern go test takes.
func (r *report) pkgName(pkg string) string {
	switch {
	case r.module == "":
		return pkg
	case pkg == r.module:
		return "."
	case strings.HasPrefix(pkg, r.module+"/"):
		return "./" + strings.TrimPrefix(pkg, r.module+"/")
	}
	return pkg
}

// framing matches the lines go test -json adds to say which test prints.
var framing = regexp.MustCompile(`^=== (RUN|PAUSE|CONT|NAME) `)

// logLine matches a line of t.Log, t.Skip or t.Error: file.go:12: message.
var logLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: (.*)$`)

// skipReason is the message a skipped test gave: its last logged line (the
// skip's own, usually), or a placeholder when it logged nothing.
func skipReason(text string) string {
	reason := "no reason given"
	for l := range strings.Lines(text) {
		if m := logLine.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
			reason = m[1]
		}
	}
	return reason
}

func parentName(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
