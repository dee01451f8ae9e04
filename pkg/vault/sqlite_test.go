package vault_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcore/agentcore/pkg/store/sqlite"
	"github.com/agentcore/agentcore/pkg/vault"
)

// TestSQLiteHoldsNoTokenBytes writes a record through the vault into a
// SQLite store, then reads the database's files and its credentials table
// raw: neither holds a byte of the token, the refresh token or the client
// secret, and the record opens again after a restart with the same key.
func TestSQLiteHoldsNoTokenBytes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentcore.db")
	ks := keys(t, newKey(t))
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	k := vault.Key{Tenant: "acme", Subject: "alice", Server: "github"}
	if _, err := vault.New(st, ks).Put(ctx, k, record(), 0); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	secrets := [][]byte{[]byte(accessToken), []byte(refreshToken), []byte(clientSecret)}
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(b, s) {
				t.Errorf("%s holds %q", filepath.Base(f), s)
			}
		}
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var keyID string
	var sealed []byte
	err = db.QueryRowContext(ctx, `SELECT key_id, sealed FROM credentials WHERE tenant = 'acme' AND subject = 'alice' AND server = 'github'`).Scan(&keyID, &sealed)
	db.Close()
	if err != nil || keyID != ks.IDs()[0] || len(sealed) < 100 {
		t.Fatalf("the raw row: key %q, %d sealed bytes, %v", keyID, len(sealed), err)
	}
	for _, s := range secrets {
		if bytes.Contains(sealed, s) {
			t.Errorf("the sealed column holds %q", s)
		}
	}

	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if r, _, err := vault.New(st, ks).Get(ctx, k); err != nil || r.Token.RefreshToken != refreshToken {
		t.Fatalf("the record after a restart: %v, %v", r, err)
	}
}
