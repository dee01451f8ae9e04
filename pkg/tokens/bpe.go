package tokens

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"io/fs"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// rankTable maps token bytes to their BPE rank. It holds no pointers but
// its two slices, so the garbage collector never looks inside it (maps of
// strings, as tiktoken-go builds, are 200,000 pointers to mark in every
// cycle): the bytes of every token are one []byte, and an open-addressing
// hash table of uint64 slots points into it. A slot packs, from the top:
// 8 bits of the hash (to skip most byte comparisons), 24 bits of rank,
// 8 bits of length and 24 bits of offset; 0 is an empty slot (no token is
// empty).
type rankTable struct {
	data  []byte
	slots []uint64
	mask  uint64
	seed  maphash.Seed
}

const (
	maxTokenLen  = 1<<8 - 1
	maxTokenData = 1 << 24
	maxRank      = 1<<24 - 1
)

// loadRanks reads a .tiktoken file (one "base64-token rank" per line), as
// tiktoken-go-loader does, into a rankTable.
func loadRanks(fsys fs.FS, name string) (*rankTable, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type token struct{ off, n, rank int }
	var tokens []token
	var data []byte
	buf := make([]byte, 0, maxTokenLen)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		enc, rank, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			return nil, fmt.Errorf("%s: line %q is not a token and a rank", name, line)
		}
		buf = buf[:base64.StdEncoding.DecodedLen(len(enc))]
		n, err := base64.StdEncoding.Decode(buf, enc)
		if err != nil {
			return nil, fmt.Errorf("%s: token %q: %w", name, enc, err)
		}
		r, err := strconv.Atoi(string(rank))
		if err != nil || r < 0 || r > maxRank {
			return nil, fmt.Errorf("%s: token %q: bad rank %q", name, enc, rank)
		}
		if n == 0 || n > maxTokenLen || len(data)+n > maxTokenData {
			return nil, fmt.Errorf("%s: token %q does not fit the table", name, enc)
		}
		tokens = append(tokens, token{off: len(data), n: n, rank: r})
		data = append(data, buf[:n]...)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	size := 1
	for size < 2*len(tokens) {
		size <<= 1
	}
	t := &rankTable{data: data, slots: make([]uint64, size), mask: uint64(size - 1), seed: maphash.MakeSeed()}
	for _, tk := range tokens {
		b := data[tk.off : tk.off+tk.n]
		h := maphash.Bytes(t.seed, b)
		i := h & t.mask
		for t.slots[i] != 0 {
			if _, ok := t.at(t.slots[i], h, b); ok {
				return nil, fmt.Errorf("%s: token %q is listed twice", name, b)
			}
			i = (i + 1) & t.mask
		}
		t.slots[i] = h>>56<<56 | uint64(tk.rank)<<32 | uint64(tk.n)<<24 | uint64(tk.off)
	}
	return t, nil
}

// at returns the rank of slot s when it holds b (whose hash is h).
func (t *rankTable) at(s, h uint64, b []byte) (int, bool) {
	if s>>56 != h>>56 || int(s>>24&0xff) != len(b) {
		return 0, false
	}
	off := int(s & 0xffffff)
	if !bytes.Equal(t.data[off:off+len(b)], b) {
		return 0, false
	}
	return int(s >> 32 & 0xffffff), true
}

// rank returns the rank of the token b.
func (t *rankTable) rank(b []byte) (int, bool) {
	h := maphash.Bytes(t.seed, b)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			return 0, false
		}
		if r, ok := t.at(s, h, b); ok {
			return r, true
		}
	}
}

// len returns the number of tokens.
func (t *rankTable) len() int {
	n := 0
	for _, s := range t.slots {
		if s != 0 {
			n++
		}
	}
	return n
}

// bpe is tiktoken-go's ordinary encoding (CoreBPE.encodeOrdinaryNative and
// bytePairMerge, v0.1.8) over a rankTable: the text is split with the
// encoding's pattern, a piece that is a token is that token, and any other
// is merged pair by pair, lowest rank first.
type bpe struct {
	ranks   *rankTable
	pattern *regexp2.Regexp
}

func newBPE(ranks *rankTable, pattern string) (*bpe, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("compiling the pattern: %w", err)
	}
	return &bpe{ranks: ranks, pattern: re}, nil
}

// encode appends the tokens of text to out. Like tiktoken-go, it matches
// the pattern on the text's runes (invalid UTF-8 reads as U+FFFD).
func (e *bpe) encode(text string, out []int) []int {
	runes := []rune(text)
	var piece []byte
	var parts [][2]int
	m, _ := e.pattern.FindRunesMatch(runes)
	for m != nil {
		piece = piece[:0]
		for _, r := range runes[m.Index : m.Index+m.Length] {
			piece = utf8.AppendRune(piece, r)
		}
		if r, ok := e.ranks.rank(piece); ok {
			out = append(out, r)
		} else {
			out, parts = e.merge(piece, out, parts)
		}
		m, _ = e.pattern.FindNextMatch(m)
	}
	return out
}

// merge appends the tokens of a piece that is not a token itself: as
// tiktoken-go's bytePairMerge, parts[i] is the start of a part and the rank
// of the pair starting there (MaxInt: none), and the lowest-ranked pair
// (the first of equals) is merged until none is left.
func (e *bpe) merge(piece []byte, out []int, parts [][2]int) ([]int, [][2]int) {
	if len(piece) == 1 {
		r, _ := e.ranks.rank(piece)
		return append(out, r), parts
	}
	parts = parts[:0]
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, [2]int{i, math.MaxInt})
	}
	rankOf := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := e.ranks.rank(piece[parts[i][0]:parts[i+skip+2][0]]); ok {
				return r
			}
		}
		return -1
	}
	for i := 0; i < len(parts)-2; i++ {
		if r := rankOf(i, 0); r >= 0 {
			parts[i][1] = r
		}
	}
	for len(parts) > 1 {
		minRank, minIdx := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i][1] < minRank {
				minRank, minIdx = parts[i][1], i
			}
		}
		if minRank == math.MaxInt {
			break
		}
		i := minIdx
		if r := rankOf(i, 1); r >= 0 {
			parts[i][1] = r
		} else {
			parts[i][1] = math.MaxInt
		}
		if i > 0 {
			if r := rankOf(i-1, 1); r >= 0 {
				parts[i-1][1] = r
			} else {
				parts[i-1][1] = math.MaxInt
			}
		}
		parts = append(parts[:i+1], parts[i+2:]...)
	}
	for i := 0; i < len(parts)-1; i++ {
		r, _ := e.ranks.rank(piece[parts[i][0]:parts[i+1][0]])
		out = append(out, r)
	}
	return out, parts
}
