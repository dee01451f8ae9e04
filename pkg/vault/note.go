package vault

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// maxNote bounds a note's text: it travels in URLs.
const maxNote = 2048

// SealNote seals a short note for a round trip through someone else's
// hands (the connect flow's OAuth state parameter, through a browser and
// an authorization server): URL-safe text that only this vault's keys
// open, and only for the same purpose.
func (v *Vault) SealNote(purpose string, plain []byte) (string, error) {
	if !v.Available() {
		return "", ErrUnavailable
	}
	id, sealed, err := v.keys.seal(plain, noteAAD(purpose))
	if err != nil {
		return "", err
	}
	note := id + "." + base64.RawURLEncoding.EncodeToString(sealed)
	if len(note) > maxNote {
		return "", fmt.Errorf("vault: note of %d bytes, over %d", len(note), maxNote)
	}
	return note, nil
}

// OpenNote opens a note SealNote made for purpose (ErrKey when it is not
// one, was altered, or was made for another purpose).
func (v *Vault) OpenNote(purpose, note string) ([]byte, error) {
	if !v.Available() {
		return nil, ErrUnavailable
	}
	id, text, ok := strings.Cut(note, ".")
	if !ok || len(note) > maxNote {
		return nil, fmt.Errorf("%w: not a sealed note", ErrKey)
	}
	sealed, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%w: not a sealed note", ErrKey)
	}
	return v.keys.open(id, sealed, noteAAD(purpose))
}

func noteAAD(purpose string) []byte { return []byte("agentcore vault note\x00" + purpose) }
