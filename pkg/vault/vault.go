// Package vault is agent-server's token vault: the OAuth tokens and client
// registrations of the MCP servers its runs call, kept per tenant and per
// user identity (the subject) in the store, sealed with AES-256-GCM under a
// key the store never sees. A record is bound to its place (tenant, subject,
// server) by the seal's additional data: moved to another place it does not
// open. Records leave agent-server only towards the MCP host process of the
// run that needs them; an Entry (what is stored where, and when) is all a
// response may show.
package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/store"
)

// Errors of the vault (wrapped: test with errors.Is). ErrNotFound,
// ErrExists and ErrConflict are the store's.
var (
	ErrNotFound = store.ErrNotFound
	ErrExists   = store.ErrExists
	ErrConflict = store.ErrConflict
	// ErrKey: a record does not open: sealed with a key the vault lacks,
	// altered, or moved to another place.
	ErrKey = errors.New("vault: cannot open the record")
	// ErrUnavailable: the vault has no key (see New).
	ErrUnavailable = errors.New("the token vault has no key: give agent-server -vault-key-file or " + config.VaultKeyEnv)
)

// AnyVersion is Put's match that writes whatever is stored.
const AnyVersion = store.AnyVersion

// Key places a record: the tenant ("" the default one), the subject (the
// user identity the caller gives, "" for the whole tenant) and the MCP
// server (its definition's name).
type Key struct {
	Tenant, Subject, Server string
}

// Record is what the vault keeps for one Key. Every field may hold a
// secret: a Record never leaves agent-server except to the MCP host
// process of the run that needs it.
type Record struct {
	// Token is the access token, its refresh token and expiry.
	Token *oauth2.Token `json:"token,omitempty"`
	// Client is the client registration the token was obtained with.
	Client Client `json:"client"`
	// Pending is an authorization-code flow waiting for its callback.
	Pending *Pending `json:"pending,omitempty"`
	// Opaque is whatever else the OAuth client keeps.
	Opaque json.RawMessage `json:"opaque,omitempty"`
}

// Client is an OAuth client registration with an authorization server.
type Client struct {
	ID     string `json:"client_id,omitempty"`
	Secret string `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint's: client_secret_basic,
	// client_secret_post, none or private_key_jwt.
	AuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	AuthURL    string `json:"authorization_endpoint,omitempty"`
	TokenURL   string `json:"token_endpoint,omitempty"`
	Issuer     string `json:"issuer,omitempty"`
	// Scopes are the scopes granted.
	Scopes []string `json:"scopes,omitempty"`
	// Resource is the protected resource (RFC 8707): the MCP server's URL.
	Resource    string `json:"resource,omitempty"`
	RedirectURL string `json:"redirect_uri,omitempty"`
}

// Pending is a connect (authorization-code flow) waiting for its callback.
type Pending struct {
	// Nonce is the part of the flow's state parameter that names this flow.
	Nonce string `json:"nonce"`
	// Verifier is the PKCE code verifier.
	Verifier    string    `json:"verifier,omitempty"`
	RedirectURL string    `json:"redirect_uri,omitempty"`
	Scopes      []string  `json:"scopes,omitempty"`
	Expires     time.Time `json:"expires"`
}

// String describes the record without its secrets, should it reach a log.
func (r Record) String() string {
	return fmt.Sprintf("vault.Record{token:%t client:%q issuer:%q pending:%t}", r.Token != nil, r.Client.ID, r.Client.Issuer, r.Pending != nil)
}

// GoString is String: %#v shows no secret either.
func (r Record) GoString() string { return r.String() }

// String describes the registration without its secret.
func (c Client) String() string {
	return fmt.Sprintf("vault.Client{id:%q issuer:%q secret:%t}", c.ID, c.Issuer, c.Secret != "")
}

// GoString is String.
func (c Client) GoString() string { return c.String() }

// String describes the flow without its verifier.
func (p Pending) String() string {
	return fmt.Sprintf("vault.Pending{expires:%s}", p.Expires.Format(time.RFC3339))
}

// GoString is String.
func (p Pending) GoString() string { return p.String() }

// Entry describes a stored record without opening it: safe to show.
type Entry struct {
	Key
	// KeyID names the vault key that sealed it.
	KeyID string
	// Version grows with every write: Put's match.
	Version int64
	Updated time.Time
}

// Vault seals records into a store and opens them. It is safe for
// concurrent use.
type Vault struct {
	store store.Credentials
	keys  *Keys
}

// New returns a vault keeping its records in s, sealed with keys. Without
// keys every method fails with ErrUnavailable.
func New(s store.Credentials, keys *Keys) *Vault {
	return &Vault{store: s, keys: keys}
}

// Available reports whether the vault has keys.
func (v *Vault) Available() bool { return v != nil && v.keys != nil }

// KeyIDs returns the ids of the vault's keys, the sealing key's first.
func (v *Vault) KeyIDs() []string {
	if !v.Available() {
		return nil
	}
	return v.keys.IDs()
}

// Get opens the record of k (ErrNotFound, ErrKey).
func (v *Vault) Get(ctx context.Context, k Key) (*Record, Entry, error) {
	if !v.Available() {
		return nil, Entry{}, ErrUnavailable
	}
	c, err := v.store.GetCredential(ctx, k.Tenant, k.Subject, k.Server)
	if err != nil {
		return nil, Entry{}, fmt.Errorf("vault: %w", err)
	}
	e := entry(c)
	plain, err := v.keys.open(c.KeyID, c.Sealed, aad(k))
	if err != nil {
		return nil, e, fmt.Errorf("record of server %q, subject %q, tenant %q: %w", k.Server, k.Subject, k.Tenant, err)
	}
	var r Record
	if err := json.Unmarshal(plain, &r); err != nil {
		return nil, e, fmt.Errorf("%w: record of server %q, subject %q, tenant %q: not a vault record", ErrKey, k.Server, k.Subject, k.Tenant)
	}
	return &r, e, nil
}

// Lookup opens the record a run of user in tenant uses for server: the
// user's own, else (none of the user's stored) the tenant's, subject "".
// The Entry names the one found: write a refreshed token back there.
func (v *Vault) Lookup(ctx context.Context, tenant, user, server string) (*Record, Entry, error) {
	r, e, err := v.Get(ctx, Key{tenant, user, server})
	if user != "" && errors.Is(err, ErrNotFound) {
		return v.Get(ctx, Key{tenant, "", server})
	}
	return r, e, err
}

// Put seals r and writes it at k when the stored version is match
// (AnyVersion: whatever is stored; 0: none may be; n: version n, else
// ErrConflict). Writing over the version read keeps two writers (replicas
// refreshing one token) from losing either's write unseen.
func (v *Vault) Put(ctx context.Context, k Key, r *Record, match int64) (Entry, error) {
	if !v.Available() {
		return Entry{}, ErrUnavailable
	}
	plain, err := json.Marshal(r)
	if err != nil {
		return Entry{}, fmt.Errorf("vault: encode record: %w", err)
	}
	id, sealed, err := v.keys.seal(plain, aad(k))
	if err != nil {
		return Entry{}, err
	}
	c := &store.Credential{Tenant: k.Tenant, Subject: k.Subject, Server: k.Server, KeyID: id, Sealed: sealed}
	version, err := v.store.PutCredential(ctx, c, match)
	if err != nil {
		return Entry{}, fmt.Errorf("vault: %w", err)
	}
	return Entry{Key: k, KeyID: id, Version: version, Updated: time.Now()}, nil
}

// Delete removes the record of k (ErrNotFound).
func (v *Vault) Delete(ctx context.Context, k Key) error {
	if !v.Available() {
		return ErrUnavailable
	}
	if err := v.store.DeleteCredential(ctx, k.Tenant, k.Subject, k.Server); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return nil
}

// maxList bounds List: a subject's records, one per MCP server.
const maxList = 1000

// List describes the records of a tenant's subject ("" the tenant's own),
// by server, without opening them.
func (v *Vault) List(ctx context.Context, tenant, subject string) ([]Entry, error) {
	if !v.Available() {
		return nil, ErrUnavailable
	}
	var out []Entry
	q := store.CredentialQuery{Tenant: tenant, Subject: subject, AfterSubject: subject, Limit: 100}
	for len(out) < maxList {
		cs, err := v.store.ListCredentials(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("vault: %w", err)
		}
		for _, c := range cs {
			out = append(out, entry(c))
		}
		if len(cs) < q.Limit {
			break
		}
		q.AfterServer = cs[len(cs)-1].Server
	}
	return out, nil
}

func entry(c *store.Credential) Entry {
	return Entry{Key: Key{c.Tenant, c.Subject, c.Server}, KeyID: c.KeyID, Version: c.Version, Updated: c.Updated}
}
