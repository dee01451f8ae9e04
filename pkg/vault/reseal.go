package vault

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentcore/agentcore/pkg/store"
)

// Resealed counts what Reseal did.
type Resealed struct {
	// Resealed records are now sealed with the sealing key; Unreadable ones
	// were sealed with a key the vault lacks (or do not open) and stay as
	// they are; Current ones were sealed with the sealing key already.
	Resealed, Unreadable, Current int
}

// Reseal seals again with the sealing key (the first) every record sealed
// with another key, in every tenant: after a rotation, once it has run, the
// old keys open nothing and may be dropped. Each write is over the version
// read; a record written meanwhile is left, its writer having sealed it
// with the sealing key.
func (v *Vault) Reseal(ctx context.Context) (Resealed, error) {
	var out Resealed
	if !v.Available() {
		return out, ErrUnavailable
	}
	sealing := v.keys.keys[0].id
	q := store.CredentialQuery{AnyTenant: true, AnySubject: true, Limit: 100}
	for {
		cs, err := v.store.ListCredentials(ctx, q)
		if err != nil {
			return out, fmt.Errorf("vault: %w", err)
		}
		for _, c := range cs {
			if c.KeyID == sealing {
				out.Current++
				continue
			}
			k := Key{c.Tenant, c.Subject, c.Server}
			plain, err := v.keys.open(c.KeyID, c.Sealed, aad(k))
			if err != nil {
				out.Unreadable++
				continue
			}
			id, sealed, err := v.keys.seal(plain, aad(k))
			if err != nil {
				return out, err
			}
			_, err = v.store.PutCredential(ctx, &store.Credential{Tenant: k.Tenant, Subject: k.Subject, Server: k.Server, KeyID: id, Sealed: sealed}, c.Version)
			switch {
			case err == nil:
				out.Resealed++
			case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
				// written or deleted meanwhile: nothing left sealed with the old key
			default:
				return out, fmt.Errorf("vault: %w", err)
			}
		}
		if len(cs) < q.Limit {
			return out, nil
		}
		last := cs[len(cs)-1]
		q.AfterTenant, q.AfterSubject, q.AfterServer = last.Tenant, last.Subject, last.Server
	}
}
