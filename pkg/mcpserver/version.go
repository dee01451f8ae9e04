package mcpserver

import (
	"context"
	"net/http"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Headers of the streamable HTTP transport.
const (
	sessionHeader  = "Mcp-Session-Id"
	versionHeader  = "Mcp-Protocol-Version"
	initializeCall = "initialize"
)

// versions holds the protocol version each live session negotiated. A
// request of a session whose MCP-Protocol-Version header names an older
// version than the one negotiated is served as of the negotiated one: the
// session's version decides what its streams carry (the SDK reads the
// header, and primes a POST stream only for 2025-11-25 and later). A
// session's entry goes when the client deletes the session; at most
// maxVersions are kept (a client that never deletes its sessions cannot
// grow the map without bound: beyond it, new sessions are served as their
// headers say).
type versions struct {
	mu sync.Mutex
	m  map[string]string
}

// maxVersions bounds the sessions whose version is kept.
const maxVersions = 10000

// middleware records the version a session negotiates at initialize.
func (v *versions) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != initializeCall || err != nil {
			return res, err
		}
		ir, ok := res.(*sdk.InitializeResult)
		ss, sok := req.GetSession().(*sdk.ServerSession)
		if !ok || !sok || ss.ID() == "" || ir.ProtocolVersion == "" {
			return res, err
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.m == nil {
			v.m = make(map[string]string)
		}
		if _, known := v.m[ss.ID()]; known || len(v.m) < maxVersions {
			v.m[ss.ID()] = ir.ProtocolVersion
		}
		return res, err
	}
}

// wrap serves each request of a known session with the version it
// negotiated when its header names an older one, and forgets a session
// the client deletes.
func (v *versions) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionHeader)
		if id == "" {
			h.ServeHTTP(w, r)
			return
		}
		v.mu.Lock()
		negotiated := v.m[id]
		if r.Method == http.MethodDelete {
			delete(v.m, id)
		}
		v.mu.Unlock()
		// Versions are dates, YYYY-MM-DD: they sort as strings.
		if got := r.Header.Get(versionHeader); got != "" && negotiated != "" && got < negotiated {
			r = r.Clone(r.Context())
			r.Header.Set(versionHeader, negotiated)
		}
		h.ServeHTTP(w, r)
	})
}
