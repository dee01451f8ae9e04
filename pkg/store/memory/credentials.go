package memory

import (
	"bytes"
	"context"
	"sort"
	"time"

	"github.com/agentcore/agentcore/pkg/store"
)

// credKey is a credential's key.
type credKey struct{ tenant, subject, server string }

// less orders keys by tenant, subject, then server.
func (k credKey) less(o credKey) bool {
	if k.tenant != o.tenant {
		return k.tenant < o.tenant
	}
	if k.subject != o.subject {
		return k.subject < o.subject
	}
	return k.server < o.server
}

// PutCredential writes a sealed credential when the stored version is match.
func (s *Store) PutCredential(ctx context.Context, c *store.Credential, match int64) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	k := credKey{c.Tenant, c.Subject, c.Server}
	old, ok := s.creds[k]
	if err := store.CheckCredentialVersion(c, old, ok, match); err != nil {
		return 0, err
	}
	n := &store.Credential{Tenant: c.Tenant, Subject: c.Subject, Server: c.Server, KeyID: c.KeyID,
		Sealed: bytes.Clone(c.Sealed), Version: 1, Updated: time.Now()}
	if ok {
		n.Version = old.Version + 1
	}
	s.creds[k] = n
	return n.Version, nil
}

// GetCredential returns a credential.
func (s *Store) GetCredential(ctx context.Context, tenant, subject, server string) (*store.Credential, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	c, ok := s.creds[credKey{tenant, subject, server}]
	if !ok {
		return nil, store.CredentialNotFound(tenant, subject, server)
	}
	return copyCredential(c), nil
}

// DeleteCredential removes a credential.
func (s *Store) DeleteCredential(ctx context.Context, tenant, subject, server string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	k := credKey{tenant, subject, server}
	if _, ok := s.creds[k]; !ok {
		return store.CredentialNotFound(tenant, subject, server)
	}
	delete(s.creds, k)
	return nil
}

// ListCredentials pages through credentials by tenant, subject, then server.
func (s *Store) ListCredentials(ctx context.Context, q store.CredentialQuery) ([]*store.Credential, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []*store.Credential
	for k, c := range s.creds {
		if (!q.AnyTenant && k.tenant != q.Tenant) || (!q.AnySubject && k.subject != q.Subject) {
			continue
		}
		after := credKey{q.Tenant, q.AfterSubject, q.AfterServer}
		if q.AnyTenant {
			after.tenant = q.AfterTenant
		}
		if !after.less(k) {
			continue
		}
		out = append(out, copyCredential(c))
	}
	sort.Slice(out, func(i, j int) bool {
		return credKey{out[i].Tenant, out[i].Subject, out[i].Server}.less(credKey{out[j].Tenant, out[j].Subject, out[j].Server})
	})
	if limit := store.Limit(q.Limit); len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func copyCredential(c *store.Credential) *store.Credential {
	n := *c
	n.Sealed = bytes.Clone(c.Sealed)
	return &n
}
