package storetest

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/agentcore/agentcore/pkg/store"
)

func cred(tenant, subject, server, sealed string) *store.Credential {
	return &store.Credential{Tenant: tenant, Subject: subject, Server: server, KeyID: "k1", Sealed: []byte(sealed)}
}

func mustGetCredential(t *testing.T, s store.Store, tenant, subject, server string) *store.Credential {
	t.Helper()
	got, err := s.GetCredential(ctx(t), tenant, subject, server)
	if err != nil {
		t.Fatalf("GetCredential(%q, %q, %q): %v", tenant, subject, server, err)
	}
	return got
}

func testCredentials(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	_, err := s.GetCredential(c, "t", "alice", "github")
	wantErr(t, err, store.ErrNotFound, "getting a credential never put")
	_, err = s.PutCredential(c, cred("t", "alice", "github", "x"), 3)
	wantErr(t, err, store.ErrNotFound, "updating a credential never put")
	_, err = s.PutCredential(c, cred("t", "alice", "github", "x"), -7)
	if err == nil {
		t.Fatal("PutCredential with match -7 succeeded")
	}

	v, err := s.PutCredential(c, cred("t", "alice", "github", "sealed-1\x00\xff"), 0)
	if err != nil || v != 1 {
		t.Fatalf("PutCredential (new) = %d, %v; want 1", v, err)
	}
	got := mustGetCredential(t, s, "t", "alice", "github")
	if !bytes.Equal(got.Sealed, []byte("sealed-1\x00\xff")) || got.KeyID != "k1" || got.Version != 1 || got.Updated.IsZero() {
		t.Fatalf("GetCredential = %+v", got)
	}
	_, err = s.PutCredential(c, cred("t", "alice", "github", "again"), 0)
	wantErr(t, err, store.ErrExists, "creating a credential twice")

	next := cred("t", "alice", "github", "sealed-2")
	next.KeyID = "k2"
	if v, err := s.PutCredential(c, next, 1); err != nil || v != 2 {
		t.Fatalf("PutCredential (over version 1) = %d, %v; want 2", v, err)
	}
	_, err = s.PutCredential(c, cred("t", "alice", "github", "stale"), 1)
	wantErr(t, err, store.ErrConflict, "writing over a version that moved")
	if v, err := s.PutCredential(c, cred("t", "alice", "github", "sealed-3"), store.AnyVersion); err != nil || v != 3 {
		t.Fatalf("PutCredential (any version) = %d, %v; want 3", v, err)
	}
	got2 := mustGetCredential(t, s, "t", "alice", "github")
	if string(got2.Sealed) != "sealed-3" || got2.KeyID != "k1" || got2.Version != 3 || got2.Updated.Before(got.Updated) {
		t.Fatalf("after overwrites: %+v (first write at %v)", got2, got.Updated)
	}
	if v, err := s.PutCredential(c, cred("t", "", "slack", "any"), store.AnyVersion); err != nil || v != 1 {
		t.Fatalf("PutCredential (any version, new) = %d, %v; want 1", v, err)
	}

	if err := s.DeleteCredential(c, "t", "alice", "github"); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetCredential(c, "t", "alice", "github")
	wantErr(t, err, store.ErrNotFound, "getting a deleted credential")
	wantErr(t, s.DeleteCredential(c, "t", "alice", "github"), store.ErrNotFound, "deleting twice")
	if v, err := s.PutCredential(c, cred("t", "alice", "github", "fresh"), 0); err != nil || v != 1 {
		t.Fatalf("PutCredential after delete = %d, %v; want 1", v, err)
	}

	if h.Reopen != nil {
		s2 := h.Reopen(t, s)
		t.Cleanup(func() { _ = s2.Close() })
		if got := mustGetCredential(t, s2, "t", "", "slack"); string(got.Sealed) != "any" {
			t.Fatalf("credential after reopen: %+v", got)
		}
	}
}

// testCredentialIsolation: the same server under other tenants and
// subjects is another credential, and a tenant lists only its own.
func testCredentialIsolation(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	keys := [][3]string{}
	for _, tenant := range []string{"", "t1", "t2"} {
		for _, subject := range []string{"", "alice", "bob"} {
			for _, server := range []string{"github", "linear"} {
				keys = append(keys, [3]string{tenant, subject, server})
				if _, err := s.PutCredential(c, cred(tenant, subject, server, tenant+"/"+subject+"/"+server), 0); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, k := range keys {
		if got := mustGetCredential(t, s, k[0], k[1], k[2]); string(got.Sealed) != k[0]+"/"+k[1]+"/"+k[2] {
			t.Errorf("credential %q holds %q", k, got.Sealed)
		}
	}
	names := func(cs []*store.Credential) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = string(c.Sealed)
		}
		return out
	}
	list := func(q store.CredentialQuery) []string {
		t.Helper()
		cs, err := s.ListCredentials(c, q)
		if err != nil {
			t.Fatal(err)
		}
		return names(cs)
	}
	same := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s = %q, want %q", what, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s = %q, want %q", what, got, want)
			}
		}
	}
	same("t1's alice", list(store.CredentialQuery{Tenant: "t1", Subject: "alice"}), "t1/alice/github", "t1/alice/linear")
	same("the default tenant's own", list(store.CredentialQuery{Subject: ""}), "//github", "//linear")
	same("all of t2", list(store.CredentialQuery{Tenant: "t2", AnySubject: true}),
		"t2//github", "t2//linear", "t2/alice/github", "t2/alice/linear", "t2/bob/github", "t2/bob/linear")
	same("t2 page 1", list(store.CredentialQuery{Tenant: "t2", AnySubject: true, Limit: 3}), "t2//github", "t2//linear", "t2/alice/github")
	same("t2 page 2", list(store.CredentialQuery{Tenant: "t2", AnySubject: true, AfterSubject: "alice", AfterServer: "github", Limit: 3}),
		"t2/alice/linear", "t2/bob/github", "t2/bob/linear")
	same("bob after github", list(store.CredentialQuery{Tenant: "t2", Subject: "bob", AfterSubject: "bob", AfterServer: "github"}), "t2/bob/linear")
	same("a tenant with none", list(store.CredentialQuery{Tenant: "t3", AnySubject: true}))
	same("every tenant's, page 1", list(store.CredentialQuery{AnyTenant: true, AnySubject: true, Limit: 4}), "//github", "//linear", "/alice/github", "/alice/linear")
	same("every tenant's, after t1's bob", list(store.CredentialQuery{AnyTenant: true, AnySubject: true, AfterTenant: "t1", AfterSubject: "bob", AfterServer: "github", Limit: 3}),
		"t1/bob/linear", "t2//github", "t2//linear")
	same("every tenant's alice", list(store.CredentialQuery{AnyTenant: true, Subject: "alice"}),
		"/alice/github", "/alice/linear", "t1/alice/github", "t1/alice/linear", "t2/alice/github", "t2/alice/linear")

	if err := s.DeleteCredential(c, "t1", "alice", "github"); err != nil {
		t.Fatal(err)
	}
	for _, k := range [][3]string{{"t1", "", "github"}, {"t1", "bob", "github"}, {"t2", "alice", "github"}, {"", "alice", "github"}} {
		mustGetCredential(t, s, k[0], k[1], k[2])
	}
}

// testConcurrentCredentials: writers racing on one credential, each
// reading it and writing over the version it read (as two replicas
// refreshing one token do), lose no write: every write is over the one
// before it.
func testConcurrentCredentials(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	handles := []store.Store{s}
	if s.Shared() && h.Reopen != nil {
		b := h.Reopen(t, s)
		t.Cleanup(func() { _ = b.Close() })
		handles = append(handles, b)
	}
	if _, err := s.PutCredential(c, cred("t", "u", "srv", "0"), 0); err != nil {
		t.Fatal(err)
	}
	const writers, each = 6, 10
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []error
	)
	for w := range writers {
		st := handles[w%len(handles)]
		wg.Go(func() {
			for done := 0; done < each; {
				got, err := st.GetCredential(c, "t", "u", "srv")
				if err != nil {
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
					return
				}
				n, _ := strconv.Atoi(string(got.Sealed))
				_, err = st.PutCredential(c, cred("t", "u", "srv", strconv.Itoa(n+1)), got.Version)
				switch {
				case err == nil:
					done++
				case !errors.Is(err, store.ErrConflict):
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatal(failures[0])
	}
	got := mustGetCredential(t, s, "t", "u", "srv")
	if string(got.Sealed) != strconv.Itoa(writers*each) || got.Version != writers*each+1 {
		t.Fatalf("after %d writes: %q at version %d; want %d at version %d", writers*each, got.Sealed, got.Version, writers*each, writers*each+1)
	}
}
