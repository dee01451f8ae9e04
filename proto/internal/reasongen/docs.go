package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// The generated part of docs/errors.md lies between these lines; the rest
// of the page is written by hand.
const (
	docBegin = "<!-- BEGIN reasons: generated from proto/agentcore/v1/errors.proto by go run ./proto/internal/reasongen; do not edit -->"
	docEnd   = "<!-- END reasons -->"
)

// replaceDoc is page with its generated part replaced by the tables of secs.
func replaceDoc(page []byte, secs []section) ([]byte, error) {
	before, rest, ok := bytes.Cut(page, []byte(docBegin))
	_, after, ok2 := bytes.Cut(rest, []byte(docEnd))
	if !ok || !ok2 {
		return nil, fmt.Errorf("the page has no %q … %q lines to fill", docBegin, docEnd)
	}
	var b bytes.Buffer
	b.Write(before)
	b.WriteString(docBegin + "\n")
	writeTables(&b, secs)
	b.WriteString(docEnd)
	b.Write(after)
	return b.Bytes(), nil
}

// writeTables writes the codes table, then one table of reasons per section.
func writeTables(b *bytes.Buffer, secs []section) {
	b.WriteString("\n### Codes\n\n")
	b.WriteString("Each gRPC code, the HTTP status the gateway answers with (its own errors have theirs in their table), and the reasons that come with it.\n\n")
	b.WriteString("| gRPC code | HTTP | reasons |\n| --- | --- | --- |\n")
	for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
		var rs []string
		for _, s := range secs {
			for _, v := range s.Values {
				if mentions(v.Codes, c) {
					rs = append(rs, "`"+v.Wire+"`")
				}
			}
		}
		fmt.Fprintf(b, "| `%s` | %d | %s |\n", codeName(c), runtime.HTTPStatusFromCode(c), strings.Join(rs, ", "))
	}
	for _, s := range secs {
		fmt.Fprintf(b, "\n### %s\n\n", s.Title)
		if s.Text != "" {
			b.WriteString(s.Text + "\n\n")
		}
		b.WriteString("| reason | gRPC code | when, and what a client does |\n| --- | --- | --- |\n")
		for _, v := range s.Values {
			reason := "`" + v.Wire + "`"
			if kind, ok := agentv1.ErrorKind_value["ERROR_KIND_"+v.Wire]; ok && kind != 0 {
				reason += " (kind `" + strings.ToLower(v.Wire) + "`)"
			}
			fmt.Fprintf(b, "| %s | %s | %s |\n", reason, codeWord.ReplaceAllStringFunc(v.Codes, quoteCode), v.Text)
		}
	}
	b.WriteString("\n")
}

// quoteCode puts a gRPC code's name in backquotes, and leaves other words.
func quoteCode(w string) string {
	if _, ok := codeOf(w); ok {
		return "`" + w + "`"
	}
	return w
}

// mentions reports whether a value's codes name c.
func mentions(head string, c codes.Code) bool {
	for _, w := range codeWord.FindAllString(head, -1) {
		if got, ok := codeOf(w); ok && got == c {
			return true
		}
	}
	return false
}

// codeName is c's name in upper snake case, as the JSON of a google.rpc.Status
// has it: the enum has a reason of that name for every code but OK.
func codeName(c codes.Code) string {
	for n := range agentv1.ErrorReason_name {
		w := agentv1.ErrorReason(n).Wire()
		if got, ok := codeOf(w); ok && got == c {
			return w
		}
	}
	return c.String()
}
