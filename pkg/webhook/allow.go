package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/agentcore/agentcore/pkg/internal/urlscope"
)

// Allow is where the operator lets webhooks go (agent-server's
// -webhook-allowed-hosts). An entry is one of:
//
//   - a host name or IP address, "hooks.example.com": https URLs to that
//     host, on any port;
//   - a host with a port, "hooks.example.com:8443": https URLs to that
//     host and port;
//   - a wildcard, "*.example.com" (with or without a port): https URLs to
//     any host below example.com (not example.com itself);
//   - a URL, "https://hooks.example.com/agentcore/" or
//     "http://127.0.0.1:9000": URLs within it, as a model profile's
//     allowed_base_urls (same scheme, host and port, a path under its
//     path). Plain http is allowed only by such an entry.
//
// Whatever the entry, a URL with user info (credentials), a fragment, or a
// path with dot segments or escaped slashes is refused. A nil or empty
// Allow allows nothing.
type Allow struct {
	entries []allowEntry
}

// allowEntry is one parsed entry: a URL prefix (base), or a host pattern
// (host, with suffix for a wildcard, and port "" for any).
type allowEntry struct {
	base string
	host string
	// suffix: host is ".example.com" and matches any name ending so.
	suffix bool
	port   string
}

// ParseAllow reads the entries of -webhook-allowed-hosts (empty entries are
// skipped).
func ParseAllow(entries []string) (*Allow, error) {
	a := &Allow{}
	var errs []error
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		ent, err := parseEntry(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("webhook allowed host %q: %w", e, err))
			continue
		}
		a.entries = append(a.entries, ent)
	}
	return a, errors.Join(errs...)
}

func parseEntry(e string) (allowEntry, error) {
	if strings.Contains(e, "://") {
		u, err := url.Parse(e)
		switch {
		case err != nil:
			return allowEntry{}, err
		case u.Scheme != "http" && u.Scheme != "https":
			return allowEntry{}, errors.New("the scheme must be http or https")
		case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
			return allowEntry{}, errors.New("want scheme://host[:port][/path], without user info, query or fragment")
		}
		return allowEntry{base: e}, nil
	}
	host, port := e, ""
	if h, p, err := net.SplitHostPort(e); err == nil {
		host, port = h, p
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	ent := allowEntry{host: host, port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		ent.host, ent.suffix = "."+rest, true
	}
	if ent.host == "" || ent.host == "." || strings.ContainsAny(ent.host, "/*@?#[] ") {
		return allowEntry{}, errors.New("want a host, host:port, *.domain or a URL")
	}
	return ent, nil
}

// Empty reports whether nothing is allowed.
func (a *Allow) Empty() bool { return a == nil || len(a.entries) == 0 }

// Check returns nil when raw is an absolute http(s) URL that the entries
// allow, else an error saying why not, fit for a client (it names no
// entry: the list is the operator's).
func (a *Allow) Check(raw string) error {
	if a.Empty() {
		return errors.New("this server sends no webhooks (its operator allowed no host: -webhook-allowed-hosts)")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return errors.New("not an absolute http(s) URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("the scheme must be https (or http where the operator allowed it)")
	case u.User != nil:
		return errors.New("a webhook URL may not carry credentials (user info)")
	case u.Fragment != "":
		return errors.New("a webhook URL may not have a fragment")
	case !urlscope.CleanPath(u):
		return errors.New("the path has dot segments or escaped slashes")
	}
	noQuery := *u
	noQuery.RawQuery, noQuery.ForceQuery = "", false
	for _, e := range a.entries {
		if e.allows(u, noQuery.String()) {
			return nil
		}
	}
	if u.Scheme == "http" {
		return fmt.Errorf("plain http to %s is not allowed on this server (-webhook-allowed-hosts)", u.Host)
	}
	return fmt.Errorf("host %s is not among the hosts this server sends webhooks to (-webhook-allowed-hosts)", u.Host)
}

func (e allowEntry) allows(u *url.URL, noQuery string) bool {
	if e.base != "" {
		return urlscope.Within(noQuery, e.base)
	}
	if u.Scheme != "https" {
		return false
	}
	if e.port != "" {
		if _, port, _ := net.SplitHostPort(urlscope.HostPort(u)); port != e.port {
			return false
		}
	}
	host := urlscope.Hostname(u)
	if e.suffix {
		return strings.HasSuffix(host, e.host) && len(host) > len(e.host)
	}
	return host == e.host
}
