// Package tokens estimates how many tokens a model request takes.
//
// Text is counted as tiktoken (github.com/pkoukk/tiktoken-go) counts it:
// the same patterns, the same byte pair merges, and the BPE ranks embedded
// in the binary by github.com/pkoukk/tiktoken-go-loader, so this package
// never downloads anything and never reads or writes a cache directory. The
// ranks are kept in a table without pointers (see rankTable) rather than in
// tiktoken-go's maps of strings, which every garbage collection would have
// to walk; tests check that the tokens are tiktoken-go's.
//
// Building an Encoder parses the BPE ranks (see BenchmarkNewEncoder), so
// build one per encoding and share it: an Encoders set builds each encoding
// at most once, and a Counter, which a session owns, caches each message's
// count so a step counts only what is new.
package tokens

import (
	"fmt"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// Encoding names a tiktoken encoding.
type Encoding string

// The encodings this package builds.
const (
	// O200kBase is the encoding of gpt-4o and later OpenAI models, and the
	// estimate used for every other vendor's models.
	O200kBase Encoding = "o200k_base"
	// Cl100kBase is the encoding of gpt-3.5, gpt-4 (not gpt-4o, gpt-4.1 or
	// gpt-4.5) and the text-embedding models.
	Cl100kBase Encoding = "cl100k_base"
)

// EncodingForModel returns the encoding for a model name: cl100k_base for
// gpt-3.5*, gpt-4 and gpt-4-* (not gpt-4o*, gpt-4.1*, gpt-4.5*),
// text-embedding-* and davinci-002/babbage-002; o200k_base for everything
// else. A gateway prefix such as "openai/" is ignored.
func EncodingForModel(model string) Encoding {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-3.5"),
		m == "gpt-4", strings.HasPrefix(m, "gpt-4-"),
		strings.HasPrefix(m, "text-embedding-"),
		m == "davinci-002", m == "babbage-002":
		return Cl100kBase
	}
	return O200kBase
}

// spec is an encoding: its ranks file and its pattern, which is tiktoken-go
// v0.1.8's (encoding.go); TestEncoderMatchesTiktoken checks that an Encoder
// encodes exactly as tiktoken-go's own does. Special tokens are counted as
// ordinary text, so they are not needed.
type spec struct {
	file    string
	pattern string
}

func specFor(e Encoding) (spec, error) {
	switch e {
	case O200kBase:
		return spec{
			file: "o200k_base.tiktoken",
			pattern: strings.Join([]string{
				`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
				`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
				`\p{N}{1,3}`,
				` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
				`\s*[\r\n]+`,
				`\s+(?!\S)`,
				`\s+`,
			}, "|"),
		}, nil
	case Cl100kBase:
		return spec{
			file:    "cl100k_base.tiktoken",
			pattern: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
		}, nil
	}
	return spec{}, fmt.Errorf("tokens: unknown encoding %q (want %s or %s)", e, O200kBase, Cl100kBase)
}

// Encoder counts the tokens of text in one encoding. It is safe for
// concurrent use.
type Encoder struct {
	name Encoding
	bpe  *bpe
}

// NewEncoder builds an encoder from the embedded BPE ranks. It costs tens of
// milliseconds and a few megabytes: build one per encoding and share it
// (see Encoders).
func NewEncoder(e Encoding) (*Encoder, error) {
	s, err := specFor(e)
	if err != nil {
		return nil, err
	}
	ranks, err := loadRanks(assets.Assets, s.file)
	if err != nil {
		return nil, fmt.Errorf("tokens: load %s ranks: %w", e, err)
	}
	b, err := newBPE(ranks, s.pattern)
	if err != nil {
		return nil, fmt.Errorf("tokens: build %s: %w", e, err)
	}
	return &Encoder{name: e, bpe: b}, nil
}

// Encoding returns the encoder's encoding.
func (e *Encoder) Encoding() Encoding { return e.name }

// Count returns the number of tokens of text. Special tokens such as
// <|endoftext|> are counted as ordinary text.
func (e *Encoder) Count(text string) int {
	if text == "" {
		return 0
	}
	return len(e.bpe.encode(text, nil))
}

// Encode returns the tokens of text, special tokens counted as ordinary text.
func (e *Encoder) Encode(text string) []int {
	return e.bpe.encode(text, []int{})
}

// Encoders builds each encoding at most once and hands the same Encoder to
// everyone who asks, e.g. one per server shared by its sessions. The zero
// value is not usable; call NewEncoders. Safe for concurrent use.
type Encoders struct {
	mu    sync.Mutex
	built map[Encoding]*lazyEncoder
}

type lazyEncoder struct {
	once sync.Once
	enc  *Encoder
	err  error
}

// NewEncoders returns an empty set; encoders are built on first use.
func NewEncoders() *Encoders {
	return &Encoders{built: make(map[Encoding]*lazyEncoder)}
}

// Get returns the encoder for e, building it on first use.
func (s *Encoders) Get(e Encoding) (*Encoder, error) {
	if _, err := specFor(e); err != nil {
		return nil, err
	}
	s.mu.Lock()
	l, ok := s.built[e]
	if !ok {
		l = &lazyEncoder{}
		s.built[e] = l
	}
	s.mu.Unlock()
	l.once.Do(func() { l.enc, l.err = NewEncoder(e) })
	return l.enc, l.err
}

// ForModel returns the encoder for a model name (see EncodingForModel).
func (s *Encoders) ForModel(model string) (*Encoder, error) {
	return s.Get(EncodingForModel(model))
}
