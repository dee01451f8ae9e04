package main

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// section is a group of reasons: a comment in the enum that stands alone
// (a blank line after it), whose first line is its title.
type section struct {
	Title  string
	Text   string // the rest of the comment, one paragraph
	Values []value
}

// value is one reason of the enum.
type value struct {
	Name   string // ERROR_REASON_AGENT_BUSY
	Number int32
	Wire   string // AGENT_BUSY
	Codes  string // what the comment says before its first ": ", e.g. "ABORTED, or UNAVAILABLE in a stored run"
	Text   string // the rest of the comment
	Doc    []string
}

var valueLine = regexp.MustCompile(`^(ERROR_REASON_[A-Z0-9_]+)\s*=\s*(\d+);$`)

// parse reads the ErrorReason enum of errors.proto: its sections and values
// with their comments. Every value of the compiled enum must be there with
// the same number, and every code a comment names must be a gRPC code.
func parse(src []byte) ([]section, error) {
	var (
		out     []section
		comment []string
		in      bool
	)
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "enum ErrorReason {":
			in, comment = true, nil
		case !in:
		case line == "}":
			in = false
		case strings.HasPrefix(line, "//"):
			comment = append(comment, strings.TrimSpace(strings.TrimPrefix(line, "//")))
		case line == "":
			if len(comment) > 0 {
				title, text := splitTitle(comment)
				out = append(out, section{Title: title, Text: text})
			}
			comment = nil
		default:
			m := valueLine.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("errors.proto: cannot read %q in enum ErrorReason", line)
			}
			n, _ := strconv.ParseInt(m[2], 10, 32)
			v := value{Name: m[1], Number: int32(n), Wire: agentv1.ErrorReason(n).Wire(), Doc: comment}
			comment = nil
			if n == 0 {
				continue
			}
			if len(out) == 0 {
				return nil, fmt.Errorf("errors.proto: %s comes before any section", v.Name)
			}
			var err error
			if v.Codes, v.Text, err = splitCodes(strings.Join(v.Doc, " ")); err != nil {
				return nil, fmt.Errorf("errors.proto: %s: %w", v.Name, err)
			}
			out[len(out)-1].Values = append(out[len(out)-1].Values, v)
		}
	}
	return out, check(out)
}

// splitTitle is a section comment's first line and the rest as one paragraph.
func splitTitle(comment []string) (string, string) {
	return comment[0], strings.TrimSpace(strings.Join(comment[1:], " "))
}

// codeWord is an upper-case word of a value's codes, e.g. FAILED_PRECONDITION.
var codeWord = regexp.MustCompile(`\b[A-Z][A-Z_]{1,}\b`)

// splitCodes is a value's comment cut at its first ": " into the codes it
// names and the rest. Each upper-case word before it but HTTP must be a
// gRPC code's name.
func splitCodes(doc string) (string, string, error) {
	head, text, ok := strings.Cut(doc, ": ")
	if !ok {
		return "", "", fmt.Errorf("the comment %q does not open with its gRPC code and a colon", doc)
	}
	for _, w := range codeWord.FindAllString(head, -1) {
		if _, ok := codeOf(w); !ok && w != "HTTP" {
			return "", "", fmt.Errorf("%q is not a gRPC code (in %q)", w, head)
		}
	}
	return head, text, nil
}

// codeOf is the gRPC code whose name in upper snake case is name.
func codeOf(name string) (codes.Code, bool) {
	var c codes.Code
	if err := c.UnmarshalJSON([]byte(strconv.Quote(name))); err != nil || c == codes.OK {
		return 0, false
	}
	return c, true
}

// check fails when the parsed values are not exactly the compiled enum's.
func check(secs []section) error {
	seen := map[string]bool{}
	for _, s := range secs {
		for _, v := range s.Values {
			if n, ok := agentv1.ErrorReason_value[v.Name]; !ok || n != v.Number {
				return fmt.Errorf("errors.proto has %s = %d, the generated code does not: run make proto", v.Name, v.Number)
			}
			seen[v.Name] = true
		}
	}
	for name, n := range agentv1.ErrorReason_value {
		if n != 0 && !seen[name] {
			return fmt.Errorf("%s was not read from errors.proto (each value needs a comment, in a section)", name)
		}
	}
	return nil
}
