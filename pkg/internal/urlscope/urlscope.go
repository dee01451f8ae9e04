// Package urlscope says whether a URL lies within another: the rule that
// binds a server-held secret to the endpoints an operator named (a model
// profile's base URLs, the hosts webhooks may go to), so that a client
// choosing a URL cannot step outside them with another port, a look-alike
// host or a path that climbs out.
package urlscope

import (
	"net"
	"net/url"
	"path"
	"strings"
)

// Within reports whether u is base or below it: the same scheme, host and
// port (default ports made explicit) and a path under base's path, segment
// by segment. A path with dot segments or escaped slashes or dots, a query,
// a fragment or credentials is never within (unless it is base exactly).
func Within(u, base string) bool {
	if u == base {
		return true
	}
	cu, err := url.Parse(u)
	if err != nil || cu.User != nil || cu.RawQuery != "" || cu.Fragment != "" || cu.Opaque != "" {
		return false
	}
	bu, err := url.Parse(base)
	if err != nil {
		return false
	}
	if !strings.EqualFold(cu.Scheme, bu.Scheme) || HostPort(cu) != HostPort(bu) {
		return false
	}
	if !CleanPath(cu) {
		return false
	}
	bp := strings.TrimSuffix(path.Clean("/"+bu.Path), "/")
	cp := path.Clean("/" + cu.Path)
	return cp == bp || bp == "" || strings.HasPrefix(cp, bp+"/")
}

// CleanPath reports whether u's path has no dot segments and no escaped
// slashes, backslashes or dots, which a server may read as another path
// than the one compared.
func CleanPath(u *url.URL) bool {
	raw := strings.ToLower(u.EscapedPath())
	if strings.Contains(raw, "%2f") || strings.Contains(raw, "%2e") || strings.Contains(raw, "%5c") || strings.Contains(u.Path, "\\") {
		return false
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// HostPort is the URL's host in lower case with its port, the scheme's
// default when absent.
func HostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return net.JoinHostPort(Hostname(u), port)
}

// Hostname is the URL's host name in lower case, without a trailing dot.
func Hostname(u *url.URL) string {
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}
