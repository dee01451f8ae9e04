package adaptertest

import (
	"errors"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// FuzzSeeds adds every recording of p to f's seed corpus, as the bytes its
// readers read (SSE for a stream, the body otherwise), and one variant of
// each with all mutations at once.
func (p Protocol) FuzzSeeds(f *testing.F) {
	f.Helper()
	files, err := p.files()
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		recs, err := p.load(file)
		if err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		for _, rec := range recs {
			f.Add(rec.Bytes())
			vs := p.variants(file, rec)
			f.Add(vs[len(vs)-1].Rec.Bytes())
		}
	}
}

// CheckParse fails t when a parse broke the adapter contract: an error that
// is not a *provider.Error, or a success whose chunks do not join into one
// message, carry ResponseMeta before the last chunk, or lack the final
// chunk's ResponseMeta.
func CheckParse(t testing.TB, chunks []*schema.Message, err error) {
	t.Helper()
	if err != nil {
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
		}
		return
	}
	if len(chunks) == 0 {
		t.Fatal("success without a chunk")
	}
	for i, c := range chunks[:len(chunks)-1] {
		if c.ResponseMeta != nil {
			t.Fatalf("chunk %d of %d has ResponseMeta", i, len(chunks))
		}
	}
	if chunks[len(chunks)-1].ResponseMeta == nil {
		t.Fatal("the last chunk has no ResponseMeta")
	}
	if _, err := Join(chunks); err != nil {
		t.Fatalf("the chunks do not join: %v", err)
	}
}

// Fuzz runs f over p's stream reader and whole body decoder, seeded with
// every recording of p (FuzzSeeds): neither may panic, and each parse must
// keep the adapter contract (CheckParse).
func (p Protocol) Fuzz(f *testing.F) {
	p.FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		chunks, err := p.Stream(in)
		CheckParse(t, chunks, err)
		chunks, err = p.Whole(in)
		CheckParse(t, chunks, err)
	})
}
