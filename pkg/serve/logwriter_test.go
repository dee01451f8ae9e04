package serve

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/internal/syncbuf"
)

// TestLogWriterKeepsEveryLineInOrder: lines written from many goroutines
// all arrive, whole, each goroutine's in its order, floods included (past
// maxPendingLog the writers write themselves), and lines after Close too.
// The writer's output needs no lock: one write to it at a time.
func TestLogWriterKeepsEveryLineInOrder(t *testing.T) {
	out := &bytes.Buffer{}
	l := newLogWriter(out)
	const writers, lines = 8, 2000
	pad := strings.Repeat("x", 200) // 8×2000 lines of ~220 bytes: several floods
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(l, "w%d %d %s\n", w, i, pad)
			}
		})
	}
	wg.Wait()
	l.Close()
	fmt.Fprintf(l, "after close\n")
	l.Close()
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != writers*lines+1 || got[len(got)-1] != "after close" {
		t.Fatalf("%d lines, last %q", len(got), got[len(got)-1])
	}
	next := make([]int, writers)
	for _, line := range got[:len(got)-1] {
		var w, i int
		var rest string
		if _, err := fmt.Sscanf(line, "w%d %d %s", &w, &i, &rest); err != nil || rest != pad {
			t.Fatalf("a broken line: %q", line)
		}
		if i != next[w] {
			t.Fatalf("writer %d: line %d after %d", w, i, next[w]-1)
		}
		next[w]++
	}
}

// TestLogWriterLingersBriefly: a line is written without Close, soon after
// it came, and so is one that comes while the goroutine lingers for more.
func TestLogWriterLingersBriefly(t *testing.T) {
	out := &syncbuf.Buffer{}
	l := newLogWriter(out)
	defer l.Close()
	for _, lines := range []string{"one\n", "two\nthree\n"} {
		for _, line := range strings.SplitAfter(lines, "\n") {
			if line != "" {
				fmt.Fprint(l, line)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for !strings.HasSuffix(out.String(), lines) {
			if time.Now().After(deadline) {
				t.Fatalf("after 5 s the output is %q", out.String())
			}
			time.Sleep(time.Millisecond)
		}
	}
	if got := out.String(); got != "one\ntwo\nthree\n" {
		t.Fatalf("output %q", got)
	}
}
