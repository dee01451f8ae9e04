package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// ev is a go test -json line.
func ev(action, pkg, test, output string) string {
	b, _ := json.Marshal(event{Action: action, Package: "example.com/m/" + pkg, Test: test, Output: output})
	return string(b)
}

// TestReport feeds go test -json streams to the report and checks what it
// prints: go test's output without -v, then the summary.
func TestReport(t *testing.T) {
	for _, c := range []struct {
		name    string
		verbose bool
		lines   []string
		want    string
	}{{
		name: "a passing package prints its ok line only",
		lines: []string{
			ev("start", "a", "", ""),
			ev("run", "a", "TestA", ""),
			ev("output", "a", "TestA", "=== RUN   TestA\n"),
			ev("output", "a", "TestA", "    a_test.go:3: hidden\n"),
			ev("output", "a", "TestA", "--- PASS: TestA (0.00s)\n"),
			ev("pass", "a", "TestA", ""),
			ev("output", "a", "", "PASS\n"),
			ev("output", "a", "", "ok  \texample.com/m/a\t0.1s\n"),
			ev("pass", "a", "", ""),
		},
		want: "ok  \texample.com/m/a\t0.1s\n" +
			"\ntests: 1 passed, 0 failed, 0 skipped, in 1 package (0s)\n",
	}, {
		name: "a failed subtest is printed under its parent, indented",
		lines: []string{
			ev("run", "a", "TestF", ""),
			ev("output", "a", "TestF", "=== RUN   TestF\n"),
			ev("output", "a", "TestF", "    a_test.go:5: before\n"),
			ev("run", "a", "TestF/sub", ""),
			ev("output", "a", "TestF/sub", "=== RUN   TestF/sub\n"),
			ev("output", "a", "TestF/sub", "    a_test.go:6: boom\n"),
			ev("output", "a", "TestF/sub", "        second line\n"),
			ev("output", "a", "TestF/sub", "--- FAIL: TestF/sub (0.00s)\n"),
			ev("fail", "a", "TestF/sub", ""),
			ev("run", "a", "TestF/ok", ""),
			ev("output", "a", "TestF/ok", "    a_test.go:7: fine\n"),
			ev("output", "a", "TestF/ok", "--- PASS: TestF/ok (0.00s)\n"),
			ev("pass", "a", "TestF/ok", ""),
			ev("output", "a", "TestF", "--- FAIL: TestF (0.00s)\n"),
			ev("fail", "a", "TestF", ""),
			ev("output", "a", "", "FAIL\n"),
			ev("output", "a", "", "FAIL\texample.com/m/a\t0.1s\n"),
			ev("fail", "a", "", ""),
		},
		want: "--- FAIL: TestF (0.00s)\n" +
			"    a_test.go:5: before\n" +
			"    --- FAIL: TestF/sub (0.00s)\n" +
			"        a_test.go:6: boom\n" +
			"            second line\n" +
			"FAIL\n" +
			"FAIL\texample.com/m/a\t0.1s\n" +
			"\ntests: 1 passed, 2 failed, 0 skipped, in 1 package (0s)\n" +
			"failed: ./a: TestF/sub\n" +
			"packages failed: ./a\n",
	}, {
		name: "skips are grouped by their reason, the last line they logged",
		lines: []string{
			ev("run", "a", "TestS", ""),
			ev("output", "a", "TestS", "    a_test.go:3: looked for the server\n"),
			ev("output", "a", "TestS", "    pgtest.go:35: AGENTCORE_TEST_POSTGRES is not set\n"),
			ev("output", "a", "TestS", "--- SKIP: TestS (0.00s)\n"),
			ev("skip", "a", "TestS", ""),
			ev("run", "a", "TestT", ""),
			ev("run", "a", "TestT/x", ""),
			ev("output", "a", "TestT/x", "    a_test.go:9: no chromium\n"),
			ev("skip", "a", "TestT/x", ""),
			ev("pass", "a", "TestT", ""),
			ev("run", "b", "TestU", ""),
			ev("output", "b", "TestU", "    b_test.go:4: AGENTCORE_TEST_POSTGRES is not set\n"),
			ev("skip", "b", "TestU", ""),
			ev("run", "b", "TestV", ""),
			ev("skip", "b", "TestV", ""),
		},
		want: "\ntests: 1 passed, 0 failed, 4 skipped, in 0 packages (0s)\n" +
			"skipped 4 tests, by reason:\n" +
			"  2   AGENTCORE_TEST_POSTGRES is not set\n      ./a: TestS; ./b: TestU\n" +
			"  1   no chromium\n      ./a: TestT/x\n" +
			"  1   no reason given\n      ./b: TestV\n",
	}, {
		name: "a test the binary died under is printed and failed",
		lines: []string{
			ev("run", "a", "TestHang", ""),
			ev("output", "a", "TestHang", "=== RUN   TestHang\n"),
			ev("output", "a", "TestHang", "    a_test.go:3: waiting\n"),
			ev("output", "a", "", "panic: test timed out after 1s\n"),
			ev("output", "a", "", "FAIL\texample.com/m/a\t1.0s\n"),
			ev("fail", "a", "", ""),
		},
		want: "panic: test timed out after 1s\n" +
			"FAIL\texample.com/m/a\t1.0s\n" +
			"--- FAIL: TestHang (did not end)\n" +
			"    a_test.go:3: waiting\n" +
			"\ntests: 0 passed, 1 failed, 0 skipped, in 1 package (0s)\n" +
			"failed: ./a: TestHang\n" +
			"packages failed: ./a\n",
	}, {
		name: "build errors and lines that are not events are printed as they are",
		lines: []string{
			`{"ImportPath":"example.com/m/b [example.com/m/b.test]","Action":"build-output","Output":"b/b.go:2:23: cannot use \"s\"\n"}`,
			`{"ImportPath":"example.com/m/b [example.com/m/b.test]","Action":"build-fail"}`,
			`{"Action":"output","Package":"example.com/m/b","Output":"FAIL\texample.com/m/b [build failed]\n"}`,
			`{"Action":"fail","Package":"example.com/m/b","FailedBuild":"example.com/m/b [example.com/m/b.test]"}`,
			"not json",
		},
		want: "b/b.go:2:23: cannot use \"s\"\n" +
			"FAIL\texample.com/m/b [build failed]\n" +
			"not json\n" +
			"\ntests: 0 passed, 0 failed, 0 skipped, in 1 package (0s)\n" +
			"packages failed: ./b (build failed)\n",
	}, {
		name:    "verbose prints every line",
		verbose: true,
		lines: []string{
			ev("run", "a", "TestA", ""),
			ev("output", "a", "TestA", "=== RUN   TestA\n"),
			ev("output", "a", "TestA", "    a_test.go:3: shown\n"),
			ev("output", "a", "TestA", "--- PASS: TestA (0.00s)\n"),
			ev("pass", "a", "TestA", ""),
			ev("output", "a", "", "PASS\n"),
			ev("pass", "a", "", ""),
		},
		want: "=== RUN   TestA\n    a_test.go:3: shown\n--- PASS: TestA (0.00s)\nPASS\n" +
			"\ntests: 1 passed, 0 failed, 0 skipped, in 1 package (0s)\n",
	}} {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			r := newReport(&out, c.verbose, "example.com/m")
			for _, l := range c.lines {
				r.line([]byte(l))
			}
			r.summary(100 * time.Millisecond)
			if out.String() != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), c.want)
			}
		})
	}
}

func TestVerboseFlag(t *testing.T) {
	for arg, want := range map[string]bool{"-v": true, "--v": true, "-v=true": true, "-count=1": false, "-v=false": false, "./...": false} {
		if got := verboseFlag(arg); got != want {
			t.Errorf("verboseFlag(%q) = %v, want %v", arg, got, want)
		}
	}
}
