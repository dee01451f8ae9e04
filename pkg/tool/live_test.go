package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestLiveOutputCapAndCoalescing floods a plugin's live output (emitted
// and written to stdout) past a cap: the result is the tool's, the chunks
// passed on hold exactly the cap, far fewer than were written, and one
// report counts what was kept out. With Stop, the call is stopped at the cap.
func TestLiveOutputCapAndCoalescing(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	const lines, capBytes = 20000, 64<<10 + 50 // a cap inside a line
	tests := []struct {
		name, input string
		stop        bool
	}{
		{"emitted", `{"n":20000}`, false},
		{"stdout", `{"n":20000,"stdout":true}`, false},
		{"stopped", `{"n":0}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chunks []Chunk
			var capped []Capped
			kept := 0
			res := set.Execute(context.Background(), "flood", json.RawMessage(tt.input), Options{
				OnOutput: func(c Chunk) { chunks = append(chunks, c); kept += len(c.Data) },
				Live: LiveOutput{MaxBytes: capBytes, Interval: 20 * time.Millisecond, Stop: tt.stop,
					OnCapped: func(c Capped) { capped = append(capped, c) }},
			})
			if kept != capBytes {
				t.Errorf("%d bytes passed on, want the cap, %d", kept, capBytes)
			}
			if len(chunks) > lines/10 {
				t.Errorf("%d chunks passed on for %d lines: not coalesced", len(chunks), lines)
			}
			if len(capped) != 1 {
				t.Fatalf("OnCapped called %d times, want once", len(capped))
			}
			c := capped[0]
			if c.MaxBytes != capBytes || c.KeptBytes != capBytes || c.DroppedChunks < 1 || c.Stopped != tt.stop {
				t.Errorf("capped = %+v", c)
			}
			if tt.stop {
				if !res.Error || res.Outcome != OutcomeKilled || !strings.Contains(OutputText(res.Output), "live output went over the cap of 65586 bytes") {
					t.Errorf("stopped call: %v %v %v", res.Error, res.Outcome, res.Output)
				}
				return
			}
			if res.Error || OutputText(res.Output) != "20000" {
				t.Errorf("result %v %v, want the tool's", res.Error, res.Output)
			}
			if c.DroppedBytes != lines*100-capBytes {
				t.Errorf("dropped %d bytes, want %d", c.DroppedBytes, lines*100-capBytes)
			}
		})
	}
	// The process that flooded serves the next call.
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"next"}`), Options{}); res.Error {
		t.Fatalf("the next call: %v", res.Output)
	}
}

// TestLiveOutputPassesQuietOutputAtOnce: a chunk that comes after a pause
// longer than the interval is passed on before the tool goes on.
func TestLiveOutputPassesQuietOutputAtOnce(t *testing.T) {
	var got []string
	set, err := InProcess(Spec{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, _ json.RawMessage, emit func(string)) (Result, error) {
		for _, s := range []string{"a", "b", "c"} {
			emit(s)
			if len(got) == 0 || got[len(got)-1] != s {
				return errorResult("chunk " + s + " was held back"), nil
			}
			time.Sleep(30 * time.Millisecond)
		}
		return Result{Output: TextOutput("ok")}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := set.Execute(context.Background(), "slow", nil, Options{OnOutput: func(c Chunk) { got = append(got, c.Data) },
		Live: LiveOutput{Interval: 20 * time.Millisecond}})
	if res.Error || strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("%v %v; chunks %q", res.Error, res.Output, got)
	}
}

// TestLiveOutputWrite: how chunks are cut at the cap, merged and ordered.
func TestLiveOutputWrite(t *testing.T) {
	out, errs := agentv1.OutputStream_OUTPUT_STREAM_STDOUT, agentv1.OutputStream_OUTPUT_STREAM_STDERR
	tests := []struct {
		name   string
		cfg    LiveOutput
		writes []Chunk
		want   []Chunk
		capped Capped
	}{
		{"cut between UTF-8 sequences", LiveOutput{MaxBytes: 5}, []Chunk{{out, "héllo wörld"}, {out, "more"}},
			[]Chunk{{out, "héll"}}, Capped{MaxBytes: 5, KeptBytes: 5, DroppedBytes: 13 - 5 + 4, DroppedChunks: 2}},
		{"merged by stream, in order", LiveOutput{Interval: time.Hour}, []Chunk{{out, "a"}, {out, "b"}, {out, "c"}, {errs, "d"}, {out, "e"}},
			[]Chunk{{out, "a"}, {out, "bc"}, {errs, "d"}, {out, "e"}}, Capped{}},
		{"merged up to MaxChunkBytes", LiveOutput{Interval: time.Hour}, []Chunk{{out, "a"}, {out, strings.Repeat("b", MaxChunkBytes-1)}, {out, "cc"}, {out, "d"}},
			[]Chunk{{out, "a"}, {out, strings.Repeat("b", MaxChunkBytes-1)}, {out, "ccd"}}, Capped{}},
		{"under the cap", LiveOutput{MaxBytes: 10}, []Chunk{{out, "12345"}, {out, "67890"}},
			[]Chunk{{out, "12345"}, {out, "67890"}}, Capped{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Chunk
			var capped Capped
			tt.cfg.OnCapped = func(c Capped) { capped = c }
			opts := Options{OnOutput: func(c Chunk) { got = append(got, c) }, Live: tt.cfg}
			_, end := startLive(context.Background(), &opts)
			for _, c := range tt.writes {
				opts.OnOutput(c)
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
