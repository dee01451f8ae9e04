package gateway

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// corsMaxAge is how long, in seconds, a browser may keep a preflight's answer.
const corsMaxAge = "600"

// corsHeaders are the request headers a page may send cross-origin.
const corsHeaders = "Authorization, Content-Type, Last-Event-ID, Grpc-Timeout, Traceparent, Tracestate, X-Agentcore-User"

// corsMethods are the methods the API's routes use.
const corsMethods = "GET, POST, PUT, PATCH, DELETE"

// cors answers cross-origin requests from the configured origins: none by
// default, so a page elsewhere cannot call the API from a user's browser.
// Credentials (cookies) are never allowed: the API takes a bearer token.
type cors struct {
	any     bool
	origins map[string]bool
}

func newCORS(origins []string) (cors, error) {
	c := cors{origins: map[string]bool{}}
	for _, o := range origins {
		if o == "*" {
			c.any = true
			continue
		}
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return cors{}, errors.New("gateway: CORS origin " + o + ": want scheme://host[:port] or *")
		}
		c.origins[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	return c, nil
}

func (c cors) allowed(origin string) bool {
	return origin != "" && (c.any || c.origins[strings.ToLower(origin)])
}

// sameOrigin says whether origin is the page's own, the server's host.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// handle sets the CORS headers of a request from an allowed origin and
// answers preflight requests itself; it returns true when it has answered.
// A request that a browser sent from another page, not allowed, is refused
// before it runs (refuse writes the answer): CORS alone would only hide the
// answer from the page, and a form posted to a server on localhost would
// still start a run.
func (c cors) handle(w http.ResponseWriter, r *http.Request, refuse func(origin string)) bool {
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	h := w.Header()
	h.Add("Vary", "Origin")
	if !c.allowed(origin) {
		if origin != "" && !sameOrigin(origin, r) || preflight {
			refuse(origin)
			return true
		}
		return false
	}
	if c.any {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
	}
	if !preflight {
		return false
	}
	h.Set("Access-Control-Allow-Methods", corsMethods)
	h.Set("Access-Control-Allow-Headers", corsHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
	return true
}
