package gateway

import (
	"embed"
	"io/fs"
	"net/http"
)

// consoleFiles are the web console: plain ES modules and CSS, no build step.
//
//go:embed console
var consoleFiles embed.FS

// consolePolicy lets the console's pages load only the console's own files
// and call only this server: model and tool output it shows is text, never
// markup, and no other page may frame it.
const consolePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// consoleHandler serves the console's files.
func consoleHandler() http.Handler {
	sub, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic(err) // the embedded tree always has the folder
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the console is read with GET", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", consolePolicy)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
