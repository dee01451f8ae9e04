package hold

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// writeLog records the writes Writes makes, as "at+n durable".
type writeLog struct {
	mu     sync.Mutex
	writes []string
	fail   error
}

func (l *writeLog) write(at int, msgs []*agentv1.Message, _ *agentv1.Usage, durable bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, fmt.Sprintf("%d+%d %v", at, len(msgs), durable))
	return l.fail
}

func (l *writeLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.writes)
}

// waitSent waits until a held write was sent.
func (l *writeLog) waitSent(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); l.String() == "[]"; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held write was never sent")
		}
	}
}

func TestHistoryWritesOfAStepGoTogether(t *testing.T) {
	msg := history.User("m")
	t.Run("a quick step is one durable write", func(t *testing.T) {
		var w Writes
		l := &writeLog{}
		for at, durable := range []bool{false, false, true} { // input, response with calls, results
			if err := w.Append(l.write, at, []*agentv1.Message{msg}, nil, durable); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(l.write); err != nil {
			t.Fatal(err)
		}
		if got := l.String(); got != "[0+3 true]" {
			t.Fatalf("writes %s, want one durable write of the three messages", got)
		}
	})
	t.Run("a held write is sent when the step goes on", func(t *testing.T) {
		var w Writes
		l := &writeLog{}
		if err := w.Append(l.write, 0, []*agentv1.Message{msg, msg}, nil, false); err != nil {
			t.Fatal(err)
		}
		l.waitSent(t)
		if err := w.Append(l.write, 2, []*agentv1.Message{msg}, nil, true); err != nil {
			t.Fatal(err)
		}
		if got := l.String(); got != "[0+2 false 2+1 true]" {
			t.Fatalf("writes %s", got)
		}
	})
	t.Run("release stores what is held before a tool runs", func(t *testing.T) {
		var w Writes
		l := &writeLog{}
		_ = w.Append(l.write, 0, []*agentv1.Message{msg}, nil, false)
		_ = w.Append(l.write, 1, []*agentv1.Message{msg}, nil, false)
		if err := w.Release(l.write); err != nil {
			t.Fatal(err)
		}
		if l.String() != "[0+2 false]" { // no wait: Release returns once it is stored
			t.Fatalf("released: writes %s", l)
		}
		if err := w.Release(l.write); err != nil { // nothing held: nothing sent
			t.Fatal(err)
		}
		if err := w.Append(l.write, 2, []*agentv1.Message{msg}, nil, true); err != nil || l.String() != "[0+2 false 2+1 true]" {
			t.Fatalf("after the release: %v, writes %s", err, l)
		}
	})
	t.Run("release waits for a write sent before and returns its failure", func(t *testing.T) {
		var w Writes
		l := &writeLog{fail: errors.New("store down")}
		gate := make(chan struct{})
		slow := func(at int, msgs []*agentv1.Message, u *agentv1.Usage, durable bool) error {
			<-gate
			return l.write(at, msgs, u, durable)
		}
		_ = w.Append(slow, 0, []*agentv1.Message{msg}, nil, false)
		time.Sleep(2 * Delay) // the held write is sent, and waits at the gate
		released := make(chan error, 1)
		go func() { released <- w.Release(slow) }()
		select {
		case err := <-released:
			t.Fatalf("release returned (%v) before the write it waits for was stored", err)
		case <-time.After(20 * time.Millisecond):
		}
		close(gate)
		if err := <-released; err == nil || l.String() != "[0+1 false]" {
			t.Fatalf("release: %v, writes %s", err, l)
		}
		if err := w.Append(l.write, 1, []*agentv1.Message{msg}, nil, true); err == nil {
			t.Fatal("a write after a failed release went on")
		}
	})
	t.Run("flush sends what is held", func(t *testing.T) {
		var w Writes
		l := &writeLog{}
		_ = w.Append(l.write, 0, []*agentv1.Message{msg}, nil, false)
		if err := w.Flush(l.write); err != nil || l.String() != "[0+1 false]" {
			t.Fatalf("flush: %v, writes %s", err, l)
		}
		if err := w.Flush(l.write); err != nil || l.String() != "[0+1 false]" {
			t.Fatalf("a second flush: %v, writes %s", err, l)
		}
	})
	t.Run("a failed background write fails the next call, and no later write is sent", func(t *testing.T) {
		var w Writes
		l := &writeLog{fail: errors.New("store down")}
		_ = w.Append(l.write, 0, []*agentv1.Message{msg}, nil, false)
		l.waitSent(t)
		_ = w.Append(l.write, 1, []*agentv1.Message{msg}, nil, false) // held behind the failing one
		err := w.Append(l.write, 2, []*agentv1.Message{msg}, nil, true)
		if err == nil || l.String() != "[0+1 false]" {
			t.Fatalf("after a failed write: %v, writes %s", err, l)
		}
		if err := w.Append(l.write, 1, []*agentv1.Message{msg}, nil, true); err == nil {
			t.Fatal("a write after a failed one went on")
		}
		if err := w.Flush(l.write); err == nil {
			t.Fatal("flush did not return the failure")
		}
		l.fail = nil
		if err := w.Append(l.write, 1, []*agentv1.Message{msg}, nil, true); err != nil || l.String() != "[0+1 false 1+1 true]" {
			t.Fatalf("the next run's write after flush: %v, writes %s", err, l)
		}
	})
}
