package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/tool/live"
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
			var capped []live.Capped
			kept := 0
			res := set.Execute(context.Background(), "flood", json.RawMessage(tt.input), Options{
				OnOutput: func(c Chunk) { chunks = append(chunks, c); kept += len(c.Data) },
				Live: live.Options{MaxBytes: capBytes, Interval: 20 * time.Millisecond, Stop: tt.stop,
					OnCapped: func(c live.Capped) { capped = append(capped, c) }},
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
		Live: live.Options{Interval: 20 * time.Millisecond}})
	if res.Error || strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("%v %v; chunks %q", res.Error, res.Output, got)
	}
}
