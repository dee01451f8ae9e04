// Package auth decides who is calling agent-server. A bearer token or a
// verified client certificate maps to a tenant: the owner of agents, with
// its limits, the model profiles it may use and whether it is an admin.
//
// Every front end (the gRPC service, an MCP listener, an HTTP gateway)
// authenticates a call with Authenticator.Authenticate (gRPC),
// AuthenticateHTTP or Check, and hands the tenant to the handlers in the
// call's context (NewContext, FromContext). Tenants come from a tokens file
// that Reload reads again without dropping anything in flight; without one,
// the single bearer token of earlier versions (or none) stands for one
// admin tenant, DefaultTenant.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// DefaultTenant is the id of the tenant of a server without a tokens file
// (and of the single bearer token beside one): an admin without limits of
// its own. Stores keep it as the empty string.
const DefaultTenant = ""

// ErrUnauthenticated is wrapped by every error of a call that carries no
// valid credential.
var ErrUnauthenticated = errors.New("unauthenticated")

// Tenant is who a call acts for. A Tenant is never changed once made: a
// reload makes new ones.
type Tenant struct {
	// ID names the tenant; DefaultTenant ("") for the default one.
	ID string
	// Admin may call administrative methods (ReloadTools).
	Admin bool
	// MaxAgents bounds the agents the tenant holds at once; 0: only the server's limit.
	MaxAgents int
	// MaxConcurrentRuns bounds the tenant's sends running at once; 0: only the server's limit.
	MaxConcurrentRuns int
	// Profiles are the model profiles the tenant may use: nil means every
	// profile, an empty list none.
	Profiles []string
	// Budget is the budget of the tenant's run trees when neither the send
	// nor the agent gives one; nil: none.
	Budget *agentv1.Budget
}

// AllowsProfile reports whether the tenant may use the named profile.
func (t *Tenant) AllowsProfile(name string) bool {
	return t.Profiles == nil || slices.Contains(t.Profiles, name)
}

// Name is the tenant's id for logs: "default" for DefaultTenant.
func (t *Tenant) Name() string {
	if t.ID == DefaultTenant {
		return "default"
	}
	return t.ID
}

// Options configure an Authenticator.
type Options struct {
	// Token is the single bearer token: it authenticates DefaultTenant.
	Token string
	// TokensFile names the tenants file (YAML or JSON; see ParseTenants).
	TokensFile string
	// Profiles are the server's profile names: a tenant naming another one
	// fails the load. Nil skips the check.
	Profiles []string
}

// Authenticator maps credentials to tenants. It is safe for concurrent use;
// Reload swaps its tenants atomically.
type Authenticator struct {
	opts   Options
	reload sync.Mutex // one Reload at a time
	cur    atomic.Pointer[table]
}

// table is one generation of tenants and the credentials that name them.
type table struct {
	tokens []tokenEntry
	certs  map[string]*Tenant // "subject:" or "san:" + value
	byID   map[string]*Tenant
}

type tokenEntry struct {
	digest [sha256.Size]byte
	tenant *Tenant
}

// New reads the tokens file, if any, and returns the Authenticator.
func New(opts Options) (*Authenticator, error) {
	a := &Authenticator{opts: opts}
	if _, err := a.Reload(); err != nil {
		return nil, err
	}
	return a, nil
}

// Required reports whether calls need a credential: false when there is
// neither a token nor a tokens file, and everyone is DefaultTenant.
func (a *Authenticator) Required() bool {
	return a.opts.Token != "" || a.opts.TokensFile != ""
}

// Reload reads the tokens file again and, when it is valid, makes its
// tenants current; on error the previous tenants stay. Calls already
// authenticated keep the tenant they got. It returns the number of tenants.
func (a *Authenticator) Reload() (int, error) {
	a.reload.Lock()
	defer a.reload.Unlock()
	t := &table{certs: map[string]*Tenant{}, byID: map[string]*Tenant{}}
	if a.opts.Token != "" || a.opts.TokensFile == "" {
		def := &Tenant{ID: DefaultTenant, Admin: true}
		t.byID[def.ID] = def
		if a.opts.Token != "" {
			t.tokens = append(t.tokens, tokenEntry{digest: sha256.Sum256([]byte(a.opts.Token)), tenant: def})
		}
	}
	if a.opts.TokensFile != "" {
		specs, err := ReadTenants(a.opts.TokensFile, a.opts.Profiles)
		if err != nil {
			return 0, err
		}
		if err := t.add(specs); err != nil {
			return 0, fmt.Errorf("tokens file %s: %w", a.opts.TokensFile, err)
		}
	}
	a.cur.Store(t)
	return len(t.byID), nil
}

// add puts the tenants of a file into t, refusing a credential that names two tenants.
func (t *table) add(specs []TenantSpec) error {
	for _, s := range specs {
		if _, dup := t.byID[s.Tenant.ID]; dup {
			return fmt.Errorf("tenants.%s: named twice", s.Tenant.ID)
		}
		tn := s.Tenant
		t.byID[tn.ID] = &tn
		for _, d := range s.TokenDigests {
			for _, e := range t.tokens {
				if e.digest == d {
					return fmt.Errorf("tenants.%s: a token of tenant %q too (a token names one tenant)", tn.ID, e.tenant.Name())
				}
			}
			t.tokens = append(t.tokens, tokenEntry{digest: d, tenant: &tn})
		}
		for _, k := range s.certKeys() {
			if other, dup := t.certs[k]; dup {
				return fmt.Errorf("tenants.%s: client certificate %s names tenant %q too", tn.ID, k, other.Name())
			}
			t.certs[k] = &tn
		}
	}
	return nil
}

// Lookup returns the current tenant of that id.
func (a *Authenticator) Lookup(id string) (*Tenant, bool) {
	t, ok := a.cur.Load().byID[id]
	return t, ok
}

// Check returns the tenant a call acts for, given its bearer token (empty:
// none) and the leaf of its verified client certificate chain (nil: none).
// A token, when given, decides: a wrong one is refused even with a good
// certificate. Without a token the certificate's subject or a SAN decides.
// When the server needs no credential at all, everyone is DefaultTenant.
// Errors wrap ErrUnauthenticated and say what is missing, never a secret.
func (a *Authenticator) Check(token string, cert *x509.Certificate) (*Tenant, error) {
	t := a.cur.Load()
	if !a.Required() {
		return t.byID[DefaultTenant], nil
	}
	if token != "" {
		d := sha256.Sum256([]byte(token))
		var found *Tenant
		for _, e := range t.tokens { // every entry, in constant time each
			if subtle.ConstantTimeCompare(e.digest[:], d[:]) == 1 {
				found = e.tenant
			}
		}
		if found == nil {
			return nil, fmt.Errorf("%w: wrong bearer token", ErrUnauthenticated)
		}
		return found, nil
	}
	if cert != nil {
		tn, err := t.byCert(cert)
		if err != nil {
			return nil, err
		}
		if tn != nil {
			return tn, nil
		}
		return nil, fmt.Errorf("%w: client certificate %q maps to no tenant, and the call has no bearer token (metadata authorization: Bearer TOKEN)",
			ErrUnauthenticated, cert.Subject.String())
	}
	return nil, fmt.Errorf("%w: missing bearer token (metadata authorization: Bearer TOKEN)", ErrUnauthenticated)
}

// byCert finds the tenant a certificate's subject or SANs name; several
// tenants is an error.
func (t *table) byCert(cert *x509.Certificate) (*Tenant, error) {
	if len(t.certs) == 0 {
		return nil, nil
	}
	var found *Tenant
	for _, k := range certKeysOf(cert) {
		tn := t.certs[k]
		if tn == nil {
			continue
		}
		if found != nil && found != tn {
			return nil, fmt.Errorf("%w: client certificate %q names tenants %q and %q", ErrUnauthenticated, cert.Subject.String(), found.Name(), tn.Name())
		}
		found = tn
	}
	return found, nil
}

// certKeysOf returns the keys a certificate can match: its subject and every SAN.
func certKeysOf(c *x509.Certificate) []string {
	keys := []string{"subject:" + c.Subject.String()}
	for _, s := range c.DNSNames {
		keys = append(keys, "san:"+s)
	}
	for _, s := range c.EmailAddresses {
		keys = append(keys, "san:"+s)
	}
	for _, ip := range c.IPAddresses {
		keys = append(keys, "san:"+ip.String())
	}
	for _, u := range c.URIs {
		keys = append(keys, "san:"+u.String())
	}
	return keys
}

// BearerToken returns the token of the first "Bearer TOKEN" among
// authorization header values, or "".
func BearerToken(values []string) string {
	for _, v := range values {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "bearer") {
			if tok = strings.TrimSpace(tok); tok != "" {
				return tok
			}
		}
	}
	return ""
}

// Authenticate is Check for a gRPC call: the token from the metadata
// "authorization: Bearer TOKEN", the certificate from the peer's verified
// TLS chain.
func (a *Authenticator) Authenticate(ctx context.Context) (*Tenant, error) {
	var cert *x509.Certificate
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.VerifiedChains) > 0 && len(ti.State.VerifiedChains[0]) > 0 {
			cert = ti.State.VerifiedChains[0][0]
		}
	}
	// ValueFromIncomingContext, not FromIncomingContext: no copy of the metadata.
	return a.Check(BearerToken(metadata.ValueFromIncomingContext(ctx, "authorization")), cert)
}

// AuthenticateHTTP is Check for an HTTP request: the Authorization header's
// bearer token, the certificate from the verified TLS chain.
func (a *Authenticator) AuthenticateHTTP(r *http.Request) (*Tenant, error) {
	return a.Check(BearerToken(r.Header.Values("Authorization")), RequestCert(r))
}

// RequestCert returns the client certificate of r's verified TLS chain, or
// nil (no TLS, no certificate, or r nil).
func RequestCert(r *http.Request) *x509.Certificate {
	if r != nil && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		return r.TLS.VerifiedChains[0][0]
	}
	return nil
}

type ctxKey struct{}

// NewContext returns ctx carrying the tenant.
func NewContext(ctx context.Context, t *Tenant) context.Context {
	return context.WithValue(ctx, ctxKey{}, t)
}

// FromContext returns the tenant NewContext put in ctx.
func FromContext(ctx context.Context) (*Tenant, bool) {
	t, ok := ctx.Value(ctxKey{}).(*Tenant)
	return t, ok && t != nil
}
