package store

import (
	"context"
	"fmt"
	"time"
)

// Credential is one sealed record of the token vault (pkg/vault): the
// store keeps its bytes and never sees inside them.
type Credential struct {
	// Tenant owns it ("" is the default tenant); Subject is the user
	// identity it belongs to, "" for the whole tenant; Server is the MCP
	// server definition's name.
	Tenant, Subject, Server string
	// KeyID names the vault key that sealed it.
	KeyID string
	// Sealed is the ciphertext.
	Sealed []byte
	// Version is 1 when the credential is made and grows with every write.
	// Set by the store.
	Version int64
	// Updated is the time of the last write. Set by the store.
	Updated time.Time
}

// AnyVersion is PutCredential's match that writes whatever is stored.
const AnyVersion int64 = -1

// CredentialQuery selects credentials for ListCredentials, ordered by
// tenant, subject, then server.
type CredentialQuery struct {
	// Tenant selects one tenant's credentials; AnyTenant lists every
	// tenant's (after AfterTenant).
	Tenant      string
	AnyTenant   bool
	AfterTenant string
	// Subject selects one subject's; AnySubject lists every subject's.
	Subject    string
	AnySubject bool
	// AfterSubject and AfterServer (with AfterTenant when AnyTenant) list
	// the credentials after this one.
	AfterSubject, AfterServer string
	// Limit bounds the result; 0 means 100.
	Limit int
}

// Credentials keeps the token vault's sealed records, one per (tenant,
// subject, server).
type Credentials interface {
	// PutCredential writes c's KeyID and Sealed under its key when the
	// stored version is match: AnyVersion writes in any case, 0 only when
	// none is stored (ErrExists otherwise), n > 0 only over version n
	// (ErrConflict over another, ErrNotFound when none is stored). It
	// returns the new version.
	PutCredential(ctx context.Context, c *Credential, match int64) (int64, error)
	// GetCredential returns a credential (ErrNotFound).
	GetCredential(ctx context.Context, tenant, subject, server string) (*Credential, error)
	// DeleteCredential removes a credential (ErrNotFound).
	DeleteCredential(ctx context.Context, tenant, subject, server string) error
	// ListCredentials pages through credentials.
	ListCredentials(ctx context.Context, q CredentialQuery) ([]*Credential, error)
}

// CheckCredentialVersion is PutCredential's check of match against the
// stored credential old (found says one is stored), for the drivers.
func CheckCredentialVersion(c, old *Credential, found bool, match int64) error {
	switch {
	case match == AnyVersion:
		return nil
	case match == 0 && found:
		return fmt.Errorf("credential %s: %w", credentialName(c.Tenant, c.Subject, c.Server), ErrExists)
	case match > 0 && !found:
		return CredentialNotFound(c.Tenant, c.Subject, c.Server)
	case match > 0 && old.Version != match:
		return fmt.Errorf("credential %s is at version %d, not %d: %w", credentialName(c.Tenant, c.Subject, c.Server), old.Version, match, ErrConflict)
	case match < 0:
		return fmt.Errorf("credential %s: version %d to match: want AnyVersion, 0 or more", credentialName(c.Tenant, c.Subject, c.Server), match)
	}
	return nil
}

// CredentialNotFound is the ErrNotFound of a credential.
func CredentialNotFound(tenant, subject, server string) error {
	return fmt.Errorf("credential %s: %w", credentialName(tenant, subject, server), ErrNotFound)
}

// credentialName names a credential in errors: its server, subject and tenant.
func credentialName(tenant, subject, server string) string {
	return fmt.Sprintf("%q of subject %q of tenant %q", server, subject, tenant)
}

// Limit is a query's Limit with 0 (or less) meaning 100.
func Limit(n int) int {
	if n <= 0 {
		return 100
	}
	return n
}
