package tool

import (
	"fmt"
	"regexp"
	"strings"
)

// How many of a plugin's stderr lines an error shows: the first ones, the
// last ones, and the error headlines among those between.
const (
	excerptHead      = 8
	excerptTail      = 12
	excerptHeadlines = 3
)

// errorHeadline matches the line in which a runtime names an uncaught error:
// Node.js's "Error: Cannot find module 'x'", "TypeError [ERR_X]: …",
// Python's "ModuleNotFoundError: …", Go's "panic: …" and "fatal error: …".
var errorHeadline = regexp.MustCompile(`^(Uncaught )?[A-Za-z_.$]*(Error|Exception)( \[[A-Z0-9_]+\])?: |^(panic|fatal error): `)

// stderrExcerpt is what an error shows of a plugin's stderr: all of it when
// it is short; else its first lines, where a program that fails at start
// usually says why (Node.js's uncaught exception, whose stack and require
// stack then run on for dozens of lines; Go's panic), the error headlines
// among the lines between, and its last lines (Python's traceback ends with
// the exception). Each run of lines left out is one "… N lines …" line.
func stderrExcerpt(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= excerptHead+excerptTail {
		return strings.Join(lines, "\n")
	}
	out := append([]string(nil), lines[:excerptHead]...)
	skipped, kept := 0, 0
	for _, l := range lines[excerptHead : len(lines)-excerptTail] {
		if kept == excerptHeadlines || !errorHeadline.MatchString(l) {
			skipped++
			continue
		}
		out = append(out, omitted(skipped)...)
		out = append(out, l)
		skipped = 0
		kept++
	}
	out = append(out, omitted(skipped)...)
	return strings.Join(append(out, lines[len(lines)-excerptTail:]...), "\n")
}

// omitted is the line that stands for n lines left out, if n > 0.
func omitted(n int) []string {
	switch n {
	case 0:
		return nil
	case 1:
		return []string{"  … 1 line …"}
	}
	return []string{fmt.Sprintf("  … %d lines …", n)}
}
