// Command testsum runs go test -json with the flags and packages it is
// given and prints what go test prints without -v (each package's line, a
// failed test's output, build errors), then a summary: how many tests
// passed, failed and were skipped, the skipped ones grouped by the reason
// they gave, the failed ones by name. With -v among its arguments it prints
// every line, as go test -v does, then the summary. Its exit status is go
// test's. make test, unit and e2e run the suite through it, so that a test
// skipped for a missing runtime (PostgreSQL, Node.js, chromium) is not
// silent.
//
// Usage:
//
//	testsum [go test flags] [packages]
//
// $GO names the go command (default go).
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout))
}

// run runs go test -json with args, reports to out and returns the exit
// status to end with.
func run(args []string, out io.Writer) int {
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, args...)...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 1
	}
	// A Ctrl-C reaches go test too (the terminal signals the whole process
	// group); testsum passes on what is sent to it alone, and stays to print
	// the summary of what ran.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 1
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	r := newReport(out, slices.ContainsFunc(args, verboseFlag), modulePath("go.mod"))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		r.line(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum: reading go test's output:", err)
		_, _ = io.Copy(io.Discard, stdout)
	}
	err = cmd.Wait()
	r.summary(time.Since(start))
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "testsum: go test:", err)
		return 1
	}
}

// verboseFlag reports whether a go test argument is -v (or -v=true).
func verboseFlag(arg string) bool {
	switch strings.TrimPrefix(arg, "-") {
	case "-v", "v", "-v=true", "v=true":
		return true
	}
	return false
}

// modulePath is the module line of the go.mod at path, "" when there is
// none: the summary names packages relative to it.
func modulePath(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
