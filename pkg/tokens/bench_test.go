package tokens

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// BenchmarkNewEncoder measures building an encoder from the embedded ranks.
func BenchmarkNewEncoder(b *testing.B) {
	for _, e := range []Encoding{O200kBase, Cl100kBase} {
		b.Run(string(e), func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				if _, err := NewEncoder(e); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/encoder")
		})
	}
}

// BenchmarkCount measures counting fresh text: tokens per second.
func BenchmarkCount(b *testing.B) {
	enc := encoder(b, O200kBase)
	text := strings.Repeat("The agent reads a.json, finds port 8080 and 帮我读一下配置. ", 200)
	n := enc.Count(text)
	b.SetBytes(int64(len(text)))
	start := time.Now()
	for b.Loop() {
		enc.Count(text)
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "tokens/s")
}

// BenchmarkCounterCached measures the count of a 1,000-message history
// whose counts are cached, as in every step after the first.
func BenchmarkCounterCached(b *testing.B) {
	c := NewCounter(encoder(b, O200kBase))
	h := make([]*agentv1.Message, 1000)
	for i := range h {
		h[i] = history.User(fmt.Sprintf("message %d with some words in it", i))
	}
	c.Messages(h, false)
	start := time.Now()
	for b.Loop() {
		c.Messages(h, false)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*len(h)), "ns/message")
}

// BenchmarkCountTiktoken is BenchmarkCount through tiktoken-go's own
// encoding (its maps of strings), for comparison. tiktoken-go keeps the
// encoding in a global cache for the rest of the process: BenchmarkGCMark
// must run in a process without it (make bench-report runs it alone).
func BenchmarkCountTiktoken(b *testing.B) {
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	b.Cleanup(func() { tiktoken.SetBpeLoader(tiktoken.NewDefaultBpeLoader()) })
	ref, err := tiktoken.GetEncoding(string(O200kBase))
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("The agent reads a.json, finds port 8080 and 帮我读一下配置. ", 200)
	n := len(ref.EncodeOrdinary(text))
	b.SetBytes(int64(len(text)))
	start := time.Now()
	for b.Loop() {
		ref.EncodeOrdinary(text)
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "tokens/s")
}

// BenchmarkGCMark reports the CPU time of a garbage collection cycle (the
// process's CPU time over cycles forced one after another, which is the
// collector's: marking, and sweeping what little there is) while token
// tables are live: both encodings' tables as this package builds them, the
// same encodings as tiktoken-go builds them (maps of strings), and none
// (the floor: the rest of this test binary's heap). The tables' own share
// is the difference with the floor; the target is at most 1 ms per cycle.
func BenchmarkGCMark(b *testing.B) {
	tests := []struct {
		name  string
		build func() any
	}{
		{"tables=none", func() any { return nil }},
		{"tables=agentcore", func() any {
			var encs []*Encoder
			for _, e := range []Encoding{O200kBase, Cl100kBase} {
				enc, err := NewEncoder(e)
				if err != nil {
					b.Fatal(err)
				}
				encs = append(encs, enc)
			}
			return encs
		}},
		{"tables=tiktoken-go", func() any {
			var encs []*tiktoken.Tiktoken
			for _, e := range []Encoding{O200kBase, Cl100kBase} {
				s, _ := specFor(e)
				ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(s.file)
				if err != nil {
					b.Fatal(err)
				}
				bpe, err := tiktoken.NewCoreBPE(ranks, nil, s.pattern)
				if err != nil {
					b.Fatal(err)
				}
				encs = append(encs, tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{Name: string(e), MergeableRanks: ranks}, nil))
			}
			return encs
		}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			tables := tt.build()
			runtime.GC()
			cpu0 := cpuTime(b)
			for b.Loop() {
				runtime.GC()
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1e3/float64(b.N), "gc-cpu-ms/cycle")
			runtime.KeepAlive(tables)
		})
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
