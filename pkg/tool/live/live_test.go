package live

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestWrite: how chunks are cut at the cap, merged and ordered.
func TestWrite(t *testing.T) {
	out, errs := agentv1.OutputStream_OUTPUT_STREAM_STDOUT, agentv1.OutputStream_OUTPUT_STREAM_STDERR
	tests := []struct {
		name   string
		cfg    Options
		writes []Chunk
		want   []Chunk
		capped Capped
	}{
		{"cut between UTF-8 sequences", Options{MaxBytes: 5}, []Chunk{{out, "héllo wörld"}, {out, "more"}},
			[]Chunk{{out, "héll"}}, Capped{MaxBytes: 5, KeptBytes: 5, DroppedBytes: 13 - 5 + 4, DroppedChunks: 2}},
		{"merged by stream, in order", Options{Interval: time.Hour}, []Chunk{{out, "a"}, {out, "b"}, {out, "c"}, {errs, "d"}, {out, "e"}},
			[]Chunk{{out, "a"}, {out, "bc"}, {errs, "d"}, {out, "e"}}, Capped{}},
		{"merged up to MaxChunkBytes", Options{Interval: time.Hour}, []Chunk{{out, "a"}, {out, strings.Repeat("b", MaxChunkBytes-1)}, {out, "cc"}, {out, "d"}},
			[]Chunk{{out, "a"}, {out, strings.Repeat("b", MaxChunkBytes-1)}, {out, "ccd"}}, Capped{}},
		{"under the cap", Options{MaxBytes: 10}, []Chunk{{out, "12345"}, {out, "67890"}},
			[]Chunk{{out, "12345"}, {out, "67890"}}, Capped{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Chunk
			var capped Capped
			tt.cfg.OnCapped = func(c Capped) { capped = c }
			_, write, end := Start(context.Background(), tt.cfg, func(c Chunk) { got = append(got, c) })
			for _, c := range tt.writes {
				write(c)
			}
			end()
			if len(got) != len(tt.want) {
				t.Fatalf("%d chunks, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("chunk %d: %s %d bytes %.20q, want %s %d bytes %.20q", i, got[i].Stream, len(got[i].Data), got[i].Data,
						tt.want[i].Stream, len(tt.want[i].Data), tt.want[i].Data)
				}
			}
			if capped != tt.capped {
				t.Errorf("capped %+v, want %+v", capped, tt.capped)
			}
		})
	}
}

// TestStartStopsAtTheCap: with Stop, the call's context ends with ErrCap
// once its output goes over the cap; without options, the consumer is
// given back as it is.
func TestStartStopsAtTheCap(t *testing.T) {
	out := agentv1.OutputStream_OUTPUT_STREAM_OUTPUT
	var got []Chunk
	ctx, write, end := Start(context.Background(), Options{MaxBytes: 3, Stop: true}, func(c Chunk) { got = append(got, c) })
	write(Chunk{out, "ab"})
	if ctx.Err() != nil {
		t.Fatal("stopped under the cap")
	}
	write(Chunk{out, "cd"})
	if !errors.Is(context.Cause(ctx), ErrCap) {
		t.Fatalf("cause %v, want ErrCap", context.Cause(ctx))
	}
	end()
	if len(got) != 2 || got[1].Data != "c" {
		t.Fatalf("chunks %v", got)
	}
	plain := func(Chunk) {}
	if _, w, _ := Start(context.Background(), Options{}, plain); reflect.ValueOf(w).Pointer() != reflect.ValueOf(plain).Pointer() {
		t.Fatal("empty options wrapped the consumer")
	}
}
