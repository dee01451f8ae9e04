package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the size of a vault key: AES-256.
const KeySize = 32

// Keys are the vault's keys: the first seals, every one opens, so that a
// new key can be put first while records sealed with the old one are still
// read (and sealed again with the new one when next written).
type Keys struct {
	keys []key
}

// key is one AES-256-GCM key and its id.
type key struct {
	id   string
	aead cipher.AEAD
}

// ParseKeys reads keys from text: base64 (standard, padded) encodings of
// 32 random bytes, one per line or separated by commas; blank lines and
// lines starting with # are skipped. The first key seals.
func ParseKeys(text string) (*Keys, error) {
	var ks Keys
	seen := map[string]bool{}
	n := 0
	for line := range strings.Lines(text) {
		n++
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for field := range strings.SplitSeq(line, ",") {
			field = strings.TrimSpace(field)
			if field == "" {
				continue
			}
			raw, err := base64.StdEncoding.DecodeString(field)
			if err != nil {
				return nil, fmt.Errorf("vault key on line %d: not base64: %w", n, err)
			}
			if len(raw) != KeySize {
				return nil, fmt.Errorf("vault key on line %d: %d bytes, want %d (make one with: head -c 32 /dev/urandom | base64)", n, len(raw), KeySize)
			}
			k, err := newKey(raw)
			if err != nil {
				return nil, err
			}
			if !seen[k.id] {
				seen[k.id] = true
				ks.keys = append(ks.keys, k)
			}
		}
	}
	if len(ks.keys) == 0 {
		return nil, errors.New("no vault key given (make one with: head -c 32 /dev/urandom | base64)")
	}
	return &ks, nil
}

// LoadKeys reads the keys of a key file (when file is set) or of the value
// of AGENTCORE_VAULT_KEY (env); giving both is an error, giving neither
// returns nil keys and no error. The file must not be readable by others.
func LoadKeys(file, env string) (*Keys, error) {
	switch {
	case file != "" && env != "":
		return nil, errors.New("vault keys given twice: -vault-key-file and AGENTCORE_VAULT_KEY; give one")
	case file != "":
		fi, err := os.Stat(file)
		if err != nil {
			return nil, fmt.Errorf("-vault-key-file: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("-vault-key-file %s: mode %04o lets others read the keys; chmod 600 it", file, fi.Mode().Perm())
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("-vault-key-file: %w", err)
		}
		ks, err := ParseKeys(string(b))
		if err != nil {
			return nil, fmt.Errorf("-vault-key-file %s: %w", file, err)
		}
		return ks, nil
	case env != "":
		ks, err := ParseKeys(env)
		if err != nil {
			return nil, fmt.Errorf("AGENTCORE_VAULT_KEY: %w", err)
		}
		return ks, nil
	}
	return nil, nil
}

// RandomKeys returns one new random key: for a store that keeps nothing
// past the process (memory), whose records die with the key.
func RandomKeys() (*Keys, error) {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("vault key: %w", err)
	}
	k, err := newKey(raw)
	if err != nil {
		return nil, err
	}
	return &Keys{keys: []key{k}}, nil
}

// IDs returns the keys' ids, the sealing key's first.
func (ks *Keys) IDs() []string {
	out := make([]string, len(ks.keys))
	for i, k := range ks.keys {
		out[i] = k.id
	}
	return out
}

// newKey makes a key of 32 raw bytes. Its id is derived from it (a hash
// that reveals nothing of the key), so that a key file needs no names and
// a record names the key that sealed it.
func newKey(raw []byte) (key, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return key{}, fmt.Errorf("vault key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, fmt.Errorf("vault key: %w", err)
	}
	sum := sha256.Sum256(append([]byte("agentcore vault key id\x00"), raw...))
	return key{id: hex.EncodeToString(sum[:8]), aead: aead}, nil
}

// sealVersion starts every sealed record: the format, should it change.
const sealVersion = 1

// seal encrypts plain with the first key, bound to aad.
func (ks *Keys) seal(plain, aad []byte) (id string, sealed []byte, err error) {
	k := ks.keys[0]
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, fmt.Errorf("vault: nonce: %w", err)
	}
	out := append([]byte{sealVersion}, nonce...)
	return k.id, k.aead.Seal(out, nonce, plain, aad), nil
}

// open decrypts a record sealed by the key of that id, bound to aad.
func (ks *Keys) open(id string, sealed, aad []byte) ([]byte, error) {
	for _, k := range ks.keys {
		if k.id != id {
			continue
		}
		ns := k.aead.NonceSize()
		if len(sealed) < 1+ns+k.aead.Overhead() || sealed[0] != sealVersion {
			return nil, fmt.Errorf("%w: the record is not a sealed vault record", ErrKey)
		}
		plain, err := k.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], aad)
		if err != nil {
			return nil, fmt.Errorf("%w: key %s does not open it (the record was altered or moved to another tenant, user or server)", ErrKey, id)
		}
		return plain, nil
	}
	return nil, fmt.Errorf("%w: it was sealed with key %s, which is not among the vault's keys (%s): give that key too (-vault-key-file, AGENTCORE_VAULT_KEY)",
		ErrKey, id, strings.Join(ks.IDs(), ", "))
}

// aad binds a record to its key in the table: a sealed record copied
// under another tenant, subject or server does not open.
func aad(k Key) []byte {
	var b bytes.Buffer
	b.WriteString("agentcore vault v1")
	for _, s := range []string{k.Tenant, k.Subject, k.Server} {
		fmt.Fprintf(&b, "\x00%d:%s", len(s), s)
	}
	return b.Bytes()
}
