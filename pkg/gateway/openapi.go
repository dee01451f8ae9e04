package gateway

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI (2.0) document of the HTTP API: protoc-gen-openapiv2's
// output for agent_service.proto, finished by internal/openapigen with the
// server-sent-event routes (`make proto` writes it; `make lint` checks it).
//
//go:embed openapi.json
var openAPI []byte

// serveOpenAPI is GET /openapi.json.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openAPI)
}
