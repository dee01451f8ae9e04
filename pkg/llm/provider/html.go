package provider

import (
	"bytes"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// A proxy, a load balancer or a web server at a wrong base URL answers
// with an HTML page: its whole markup makes a useless error message, so
// FromStatus keeps its title, or else its first line of text.

// maxHTMLSummary bounds the text kept from an HTML error page.
const maxHTMLSummary = 300

// isHTML reports whether an error body is an HTML page: its Content-Type
// says so, or it starts with a tag.
func isHTML(h http.Header, body []byte) bool {
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	b := bytes.TrimSpace(body)
	return bytes.HasPrefix(b, []byte("<")) && !bytes.HasPrefix(b, []byte("<?xml version")) ||
		bytes.HasPrefix(bytes.ToLower(b), []byte("<!doctype html"))
}

// htmlSummary returns an HTML page's title, or else its first line of
// visible text (outside script and style), on one line and bounded; ""
// when the page has neither.
func htmlSummary(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body))
	var first string
	skip := "" // the script or style element being skipped
	for {
		switch z.Next() {
		case html.ErrorToken:
			return oneLine(first)
		case html.StartTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "title":
				if z.Next() == html.TextToken {
					if t := oneLine(string(z.Text())); t != "" {
						return t
					}
				}
			case "script", "style":
				skip = string(name)
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == skip {
				skip = ""
			}
		case html.TextToken:
			if first == "" && skip == "" {
				for _, line := range strings.Split(string(z.Text()), "\n") {
					if line = strings.TrimSpace(line); line != "" {
						first = line
						break
					}
				}
			}
		}
	}
}

// oneLine joins s's words with single spaces and bounds it.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxHTMLSummary {
		return s
	}
	n := maxHTMLSummary
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
