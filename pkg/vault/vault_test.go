package vault_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/memory"
	"github.com/agentcore/agentcore/pkg/vault"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, vault.KeySize)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func keys(t *testing.T, text string) *vault.Keys {
	t.Helper()
	ks, err := vault.ParseKeys(text)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

const (
	accessToken  = "at-CANARY-3f9a"
	refreshToken = "rt-CANARY-77c1"
	clientSecret = "cs-CANARY-0b2e"
)

func record() *vault.Record {
	return &vault.Record{
		Token: &oauth2.Token{AccessToken: accessToken, TokenType: "Bearer", RefreshToken: refreshToken,
			Expiry: time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)},
		Client: vault.Client{ID: "agentcore", Secret: clientSecret, AuthMethod: "client_secret_basic",
			TokenURL: "https://as.example/token", AuthURL: "https://as.example/authorize", Issuer: "https://as.example",
			Scopes: []string{"read", "write"}, Resource: "https://mcp.example/mcp"},
		Opaque: []byte(`{"dpop":false}`),
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestPutGetRoundTrip(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	v := vault.New(s, keys(t, newKey(t)))
	k := vault.Key{Tenant: "acme", Subject: "alice", Server: "github"}
	e, err := v.Put(ctx(t), k, record(), 0)
	if err != nil || e.Version != 1 || e.KeyID != v.KeyIDs()[0] || e.Key != k {
		t.Fatalf("Put = %+v, %v", e, err)
	}
	got, e2, err := v.Get(ctx(t), k)
	if err != nil {
		t.Fatal(err)
	}
	want := record()
	if got.Token.AccessToken != accessToken || got.Token.RefreshToken != refreshToken || !got.Token.Expiry.Equal(want.Token.Expiry) ||
		got.Client.Secret != clientSecret || got.Client.Resource != want.Client.Resource || len(got.Client.Scopes) != 2 ||
		string(got.Opaque) != string(want.Opaque) || e2.Version != 1 {
		t.Fatalf("Get = %+v (%+v), %+v", got, got.Token, e2)
	}
	// The store holds ciphertext only.
	c, err := s.GetCredential(ctx(t), "acme", "alice", "github")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{accessToken, refreshToken, clientSecret, "as.example"} {
		if bytes.Contains(c.Sealed, []byte(secret)) {
			t.Errorf("the stored record holds %q in clear", secret)
		}
	}
	// Printed by mistake, a record shows no secret.
	for _, shown := range []string{fmt.Sprint(got), fmt.Sprintf("%+v", got), fmt.Sprintf("%#v", got), fmt.Sprintf("%v", got.Client), fmt.Sprintf("%+v", *got), fmt.Sprintf("%v", []*vault.Record{got})} {
		for _, secret := range []string{accessToken, refreshToken, clientSecret} {
			if strings.Contains(shown, secret) {
				t.Errorf("a printed record shows %q: %s", secret, shown)
			}
		}
	}
}

// TestMovedRecordDoesNotOpen: a sealed record copied under another tenant,
// subject or server (by someone with write access to the table) fails to
// open there.
func TestMovedRecordDoesNotOpen(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	v := vault.New(s, keys(t, newKey(t)))
	from := vault.Key{Tenant: "acme", Subject: "alice", Server: "github"}
	if _, err := v.Put(ctx(t), from, record(), 0); err != nil {
		t.Fatal(err)
	}
	c, err := s.GetCredential(ctx(t), from.Tenant, from.Subject, from.Server)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []vault.Key{
		{Tenant: "evil", Subject: "alice", Server: "github"},
		{Tenant: "acme", Subject: "mallory", Server: "github"},
		{Tenant: "acme", Subject: "", Server: "github"},
		{Tenant: "acme", Subject: "alice", Server: "gitlab"},
		{Tenant: "acmealice", Subject: "", Server: "github"}, // the same bytes run together
	} {
		moved := *c
		moved.Tenant, moved.Subject, moved.Server = to.Tenant, to.Subject, to.Server
		if _, err := s.PutCredential(ctx(t), &moved, store.AnyVersion); err != nil {
			t.Fatal(err)
		}
		r, _, err := v.Get(ctx(t), to)
		if !errors.Is(err, vault.ErrKey) || r != nil {
			t.Errorf("record moved to %+v: Get = %v, %v; want ErrKey", to, r, err)
		}
	}
	if _, _, err := v.Get(ctx(t), from); err != nil {
		t.Errorf("the record at its own place: %v", err)
	}
}

func TestWrongKeysAndDamage(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	k := vault.Key{Tenant: "acme", Server: "github"}
	if _, err := vault.New(s, keys(t, newKey(t))).Put(ctx(t), k, record(), 0); err != nil {
		t.Fatal(err)
	}
	_, _, err := vault.New(s, keys(t, newKey(t))).Get(ctx(t), k)
	if !errors.Is(err, vault.ErrKey) || !strings.Contains(err.Error(), "not among the vault's keys") {
		t.Errorf("Get with another key: %v", err)
	}
	c, _ := s.GetCredential(ctx(t), k.Tenant, k.Subject, k.Server)
	for name, sealed := range map[string][]byte{
		"flipped bit":  func() []byte { b := bytes.Clone(c.Sealed); b[len(b)-1] ^= 1; return b }(),
		"truncated":    c.Sealed[:10],
		"empty":        {},
		"other format": func() []byte { b := bytes.Clone(c.Sealed); b[0] = 9; return b }(),
	} {
		t.Run(name, func(t *testing.T) {
			s := memory.New()
			t.Cleanup(func() { s.Close() })
			ks := keys(t, newKey(t))
			v := vault.New(s, ks)
			if _, err := s.PutCredential(ctx(t), &store.Credential{Tenant: k.Tenant, Server: k.Server, KeyID: ks.IDs()[0], Sealed: sealed}, 0); err != nil {
				t.Fatal(err)
			}
			if _, _, err := v.Get(ctx(t), k); !errors.Is(err, vault.ErrKey) {
				t.Errorf("Get = %v, want ErrKey", err)
			}
		})
	}
}

// TestRotation: a new key put first seals; the old one, kept after it,
// still opens what it sealed, until a write seals it again with the new.
func TestRotation(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	old, next := newKey(t), newKey(t)
	v1 := vault.New(s, keys(t, old))
	k := vault.Key{Tenant: "acme", Subject: "bob", Server: "linear"}
	e1, err := v1.Put(ctx(t), k, record(), 0)
	if err != nil {
		t.Fatal(err)
	}
	v2 := vault.New(s, keys(t, "# rotated 2026-12-06\n"+next+"\n\n"+old+"\n"))
	if ids := v2.KeyIDs(); len(ids) != 2 || ids[1] != e1.KeyID || ids[0] == e1.KeyID {
		t.Fatalf("KeyIDs = %v; the old key is %s", ids, e1.KeyID)
	}
	r, e, err := v2.Get(ctx(t), k)
	if err != nil || e.KeyID != e1.KeyID {
		t.Fatalf("Get after rotation = %v, %v", e, err)
	}
	r.Token.AccessToken = "at-refreshed"
	e2, err := v2.Put(ctx(t), k, r, e.Version)
	if err != nil || e2.KeyID != v2.KeyIDs()[0] || e2.Version != 2 {
		t.Fatalf("Put after rotation = %+v, %v", e2, err)
	}
	if _, _, err := vault.New(s, keys(t, next)).Get(ctx(t), k); err != nil {
		t.Errorf("the record sealed again opens without the old key: %v", err)
	}
	if _, _, err := v1.Get(ctx(t), k); !errors.Is(err, vault.ErrKey) {
		t.Errorf("the old key alone opens the record sealed with the new: %v", err)
	}
}

func TestLookupFallsBackToTheTenant(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	v := vault.New(s, keys(t, newKey(t)))
	shared, own := record(), record()
	shared.Token.AccessToken, own.Token.AccessToken = "tenant's", "alice's"
	mustPut := func(k vault.Key, r *vault.Record) {
		if _, err := v.Put(ctx(t), k, r, vault.AnyVersion); err != nil {
			t.Fatal(err)
		}
	}
	mustPut(vault.Key{Tenant: "acme", Server: "github"}, shared)
	mustPut(vault.Key{Tenant: "acme", Subject: "alice", Server: "github"}, own)
	for _, tc := range []struct {
		tenant, user, server string
		want, at             string // "" want: not found
	}{
		{"acme", "alice", "github", "alice's", "alice"},
		{"acme", "bob", "github", "tenant's", ""},
		{"acme", "", "github", "tenant's", ""},
		{"other", "alice", "github", "", ""},
		{"acme", "alice", "gitlab", "", ""},
	} {
		r, e, err := v.Lookup(ctx(t), tc.tenant, tc.user, tc.server)
		if tc.want == "" {
			if !errors.Is(err, vault.ErrNotFound) {
				t.Errorf("Lookup(%q, %q, %q) = %v, %v; want ErrNotFound", tc.tenant, tc.user, tc.server, r, err)
			}
			continue
		}
		if err != nil || r.Token.AccessToken != tc.want || e.Subject != tc.at {
			t.Errorf("Lookup(%q, %q, %q) = %v at %+v, %v; want %q at subject %q", tc.tenant, tc.user, tc.server, r, e, err, tc.want, tc.at)
		}
	}
}

func TestPutMatchAndListAndDelete(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	v := vault.New(s, keys(t, newKey(t)))
	k := vault.Key{Tenant: "acme", Subject: "alice", Server: "github"}
	e, err := v.Put(ctx(t), k, record(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Put(ctx(t), k, record(), 0); !errors.Is(err, vault.ErrExists) {
		t.Errorf("Put new over a record: %v", err)
	}
	if _, err := v.Put(ctx(t), k, record(), e.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Put(ctx(t), k, record(), e.Version); !errors.Is(err, vault.ErrConflict) {
		t.Errorf("Put over a stale version: %v", err)
	}
	for _, server := range []string{"linear", "asana"} {
		if _, err := v.Put(ctx(t), vault.Key{Tenant: "acme", Subject: "alice", Server: server}, record(), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Put(ctx(t), vault.Key{Tenant: "acme", Server: "slack"}, record(), 0); err != nil {
		t.Fatal(err)
	}
	es, err := v.List(ctx(t), "acme", "alice")
	if err != nil || len(es) != 3 || es[0].Server != "asana" || es[2].Server != "linear" || es[1].Version != 2 {
		t.Fatalf("List = %+v, %v", es, err)
	}
	if err := v.Delete(ctx(t), k); err != nil {
		t.Fatal(err)
	}
	if err := v.Delete(ctx(t), k); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Delete twice: %v", err)
	}
	if es, _ := v.List(ctx(t), "acme", ""); len(es) != 1 || es[0].Server != "slack" {
		t.Errorf("the tenant's own = %+v", es)
	}
}

func TestParseAndLoadKeys(t *testing.T) {
	a, b := newKey(t), newKey(t)
	for _, tc := range []struct {
		name, text string
		n          int
		err        string
	}{
		{"one", a, 1, ""},
		{"lines and comments", "# keys\n" + a + "\n\n  " + b + "  \n", 2, ""},
		{"commas", a + "," + b, 2, ""},
		{"duplicate", a + "\n" + a, 1, ""},
		{"empty", "# nothing\n\n", 0, "no vault key"},
		{"not base64", "not a key!", 0, "not base64"},
		{"short", base64.StdEncoding.EncodeToString([]byte("short")), 0, "5 bytes, want 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := vault.ParseKeys(tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseKeys = %v, want an error with %q", err, tc.err)
				}
				if strings.Contains(err.Error(), tc.text) && len(tc.text) > 8 {
					t.Errorf("the error echoes the key text: %v", err)
				}
				return
			}
			if err != nil || len(ks.IDs()) != tc.n {
				t.Fatalf("ParseKeys = %v, %v; want %d keys", ks, err, tc.n)
			}
		})
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "vault.key")
	if err := os.WriteFile(file, []byte(a+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ks, err := vault.LoadKeys(file, ""); err != nil || len(ks.IDs()) != 1 {
		t.Errorf("LoadKeys(file) = %v, %v", ks, err)
	}
	if ks, err := vault.LoadKeys("", b); err != nil || len(ks.IDs()) != 1 {
		t.Errorf("LoadKeys(env) = %v, %v", ks, err)
	}
	if ks, err := vault.LoadKeys("", ""); err != nil || ks != nil {
		t.Errorf("LoadKeys() = %v, %v; want nil, nil", ks, err)
	}
	if _, err := vault.LoadKeys(file, b); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("LoadKeys(both) = %v", err)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := vault.LoadKeys(file, ""); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("LoadKeys(a file others read) = %v", err)
	}
	if _, err := vault.LoadKeys(filepath.Join(dir, "missing"), ""); err == nil || !strings.Contains(err.Error(), "-vault-key-file") {
		t.Errorf("LoadKeys(missing) = %v", err)
	}
	if ks, err := vault.RandomKeys(); err != nil || len(ks.IDs()) != 1 {
		t.Errorf("RandomKeys = %v, %v", ks, err)
	}
}

func TestNotes(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	v := vault.New(s, keys(t, newKey(t)))
	note, err := v.SealNote("connect", []byte(`{"server":"github"}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(note, "+/=&? ") || strings.Contains(note, "github") {
		t.Errorf("the note is not opaque URL-safe text: %q", note)
	}
	if got, err := v.OpenNote("connect", note); err != nil || string(got) != `{"server":"github"}` {
		t.Fatalf("OpenNote = %q, %v", got, err)
	}
	for name, bad := range map[string]string{
		"other purpose": "", "altered": note[:len(note)-2] + "AA", "no dot": "abc", "not base64": "x.!!!", "empty": "",
		"too long": note + strings.Repeat("A", 3000),
	} {
		purpose := "connect"
		text := bad
		if name == "other purpose" {
			purpose, text = "invite", note
		}
		if _, err := v.OpenNote(purpose, text); !errors.Is(err, vault.ErrKey) {
			t.Errorf("%s: OpenNote = %v, want ErrKey", name, err)
		}
	}
	if _, err := vault.New(s, keys(t, newKey(t))).OpenNote("connect", note); !errors.Is(err, vault.ErrKey) {
		t.Errorf("another vault's keys open the note: %v", err)
	}
}

func TestWithoutKeys(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	v := vault.New(s, nil)
	if v.Available() {
		t.Fatal("a vault without keys is available")
	}
	_, _, err := v.Lookup(ctx(t), "t", "u", "github")
	if !errors.Is(err, vault.ErrUnavailable) || !strings.Contains(err.Error(), "-vault-key-file") {
		t.Errorf("Lookup = %v", err)
	}
	if _, err := v.Put(ctx(t), vault.Key{Server: "github"}, record(), 0); !errors.Is(err, vault.ErrUnavailable) {
		t.Errorf("Put = %v", err)
	}
	if _, err := v.SealNote("connect", nil); !errors.Is(err, vault.ErrUnavailable) {
		t.Errorf("SealNote = %v", err)
	}
}

// TestReseal: after a rotation, Reseal seals every record of every tenant
// with the new key, so that the old one can go; a record of a key the vault
// lacks is counted, and left.
func TestReseal(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	old, next, lost := newKey(t), newKey(t), newKey(t)
	v1 := vault.New(s, keys(t, old))
	var ks []vault.Key
	for i := range 230 { // more than a page
		k := vault.Key{Tenant: fmt.Sprintf("t%d", i%3), Subject: fmt.Sprintf("u%d", i), Server: "github"}
		ks = append(ks, k)
		if _, err := v1.Put(ctx(t), k, record(), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := vault.New(s, keys(t, lost)).Put(ctx(t), vault.Key{Tenant: "t9", Server: "gone"}, record(), 0); err != nil {
		t.Fatal(err)
	}
	v2 := vault.New(s, keys(t, next+"\n"+old))
	if _, err := v2.Put(ctx(t), ks[0], record(), vault.AnyVersion); err != nil { // written with the new key already
		t.Fatal(err)
	}
	got, err := v2.Reseal(ctx(t))
	if err != nil || got != (vault.Resealed{Resealed: 229, Unreadable: 1, Current: 1}) {
		t.Fatalf("Reseal = %+v, %v", got, err)
	}
	only := vault.New(s, keys(t, next))
	for _, k := range ks {
		if r, _, err := only.Get(ctx(t), k); err != nil || r.Token.AccessToken != accessToken {
			t.Fatalf("%+v with the new key alone: %v", k, err)
		}
	}
	if got, err := v2.Reseal(ctx(t)); err != nil || got != (vault.Resealed{Unreadable: 1, Current: 230}) {
		t.Errorf("Reseal again = %+v, %v", got, err)
	}
}
