package connect

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"time"

	"github.com/agentcore/agentcore/pkg/vault"
)

// completeTimeout bounds the callback's token request.
const completeTimeout = 30 * time.Second

// page is the callback's answer to the person's browser.
var page = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}h1{font-size:1.4em}</style>
</head><body data-outcome="{{.Outcome}}"><h1>{{.Title}}</h1><p>{{.Text}}</p></body></html>
`))

// answer writes the callback's page.
func answer(w http.ResponseWriter, code int, outcome, title, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer") // the page's URL holds the code
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.WriteHeader(code)
	_ = page.Execute(w, struct{ Outcome, Title, Text string }{outcome, title, text})
}

// ServeHTTP serves the callback route: GET CallbackPath?code&state&iss (or
// error&error_description), where the authorization server sends the
// person's browser. It needs no token: the state, sealed by the vault and
// matching the flow the caller's Connect left in the vault, says whose
// connection it finishes; it works once, until the flow expires.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		answer(w, http.StatusMethodNotAllowed, "refused", "Not allowed", "This address only takes the browser's return from an authorization server (GET).")
		return
	}
	q := r.URL.Query()
	st, err := s.openState(q.Get("state"))
	if err != nil {
		answer(w, http.StatusBadRequest, "refused", "This link does not work", err.Error())
		return
	}
	key := vault.Key{Tenant: st.Tenant, Subject: st.User, Server: st.Server}
	ctx, cancel := context.WithTimeout(r.Context(), completeTimeout)
	defer cancel()
	rec, claimed, err := s.claim(ctx, key, st)
	if err != nil {
		answer(w, http.StatusBadRequest, "refused", "This link does not work", err.Error())
		return
	}
	log := s.o.Log.With("server", st.Server, "tenant", st.Tenant, "user", st.User)
	if e := q.Get("error"); e != "" {
		log.Info("oauth connect declined at the authorization server", "error", e)
		answer(w, http.StatusBadRequest, "declined", "Not connected to "+st.Server,
			"The authorization server said: "+e+" "+q.Get("error_description")+". Connect again to retry.")
		return
	}
	if q.Get("code") == "" {
		answer(w, http.StatusBadRequest, "refused", "Not connected to "+st.Server, "The authorization server sent no code. Connect again.")
		return
	}
	out, err := s.o.Authorizer.Complete(ctx, st.Server, rec, q.Get("code"), q.Get("iss"))
	if err == nil && (out == nil || out.Token == nil) {
		err = errors.New("the OAuth client returned no token")
	}
	if err != nil {
		log.Warn("oauth connect failed", "error", err)
		answer(w, http.StatusBadGateway, "failed", "Not connected to "+st.Server, "Getting the token failed: "+err.Error()+". Connect again.")
		return
	}
	out.Pending = nil
	if _, err := s.o.Vault.Put(ctx, key, out, claimed); err != nil {
		log.Warn("oauth connect not stored", "error", err)
		answer(w, http.StatusConflict, "failed", "Not connected to "+st.Server, "The connection changed meanwhile (disconnected, or connected again). Connect again.")
		return
	}
	log.Info("oauth connected")
	if s.o.OnConnected != nil {
		s.o.OnConnected(ctx, key)
	}
	answer(w, http.StatusOK, "connected", "Connected to "+st.Server, "agent-server now holds the tokens for "+st.Server+". You can close this window.")
}

// openState opens a state parameter and checks its expiry.
func (s *Service) openState(text string) (state, error) {
	var st state
	if text == "" {
		return st, errors.New("it carries no state: it is not the return of a Connect")
	}
	plain, err := s.o.Vault.OpenNote(statePurpose, text)
	if err != nil || json.Unmarshal(plain, &st) != nil || st.Server == "" || st.Nonce == "" {
		return st, errors.New("its state was not made by this agent-server (or its vault keys changed). Connect again")
	}
	if time.Now().Unix() >= st.Expires {
		return st, errors.New("it expired (-connect-timeout). Connect again")
	}
	return st, nil
}

// claim takes the flow that st names from the vault, once: it returns the
// record as Connect left it (with the PKCE verifier) and the version of the
// record written without the flow, which the tokens then replace.
func (s *Service) claim(ctx context.Context, key vault.Key, st state) (*vault.Record, int64, error) {
	rec, e, err := s.o.Vault.Get(ctx, key)
	switch {
	case errors.Is(err, vault.ErrNotFound):
		return nil, 0, errors.New("no connect waits for it (disconnected meanwhile?). Connect again")
	case err != nil:
		return nil, 0, errors.New("the token vault failed: " + err.Error())
	}
	p := rec.Pending
	if p == nil || subtle.ConstantTimeCompare([]byte(p.Nonce), []byte(st.Nonce)) != 1 {
		return nil, 0, errors.New("it was used already, or a newer Connect replaced it. Connect again")
	}
	if !time.Now().Before(p.Expires) {
		return nil, 0, errors.New("it expired (-connect-timeout). Connect again")
	}
	without := *rec
	without.Pending = nil
	claimed, err := s.o.Vault.Put(ctx, key, &without, e.Version)
	if err != nil {
		return nil, 0, errors.New("it was used already, or a newer Connect replaced it. Connect again")
	}
	return rec, claimed.Version, nil
}
