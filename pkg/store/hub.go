package store

import (
	"context"
	"sync"
	"sync/atomic"
)

// hubBuffer is how many notices a slow listener may fall behind before it
// gets a NoticeResync instead of the ones it missed.
const hubBuffer = 4096

// Hub carries notices between the listeners of one process: the Notifier
// of drivers that no other process shares (memory, sqlite). The zero value
// is ready; Close ends every Listen.
type Hub struct {
	mu     sync.Mutex
	subs   map[*hubSub]struct{} // guarded by mu
	closed bool                 // guarded by mu
	done   chan struct{}        // closed by Close; made under mu
}

// hubSub is one Listen call: its queue, and whether notices were dropped
// because the queue was full.
type hubSub struct {
	ch   chan Notice
	lost atomic.Bool
}

func (h *Hub) doneCh() chan struct{} {
	if h.done == nil {
		h.done = make(chan struct{})
	}
	return h.done
}

// Notify hands n to every listener without waiting: a listener whose
// queue is full gets a NoticeResync later instead.
func (h *Hub) Notify(_ context.Context, n Notice) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	for s := range h.subs {
		select {
		case s.ch <- n:
		default:
			s.lost.Store(true)
		}
	}
	return nil
}

// Listen calls fn with every notice until ctx ends or the hub closes.
func (h *Hub) Listen(ctx context.Context, fn func(Notice)) error {
	s := &hubSub{ch: make(chan Notice, hubBuffer)}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	if h.subs == nil {
		h.subs = map[*hubSub]struct{}{}
	}
	h.subs[s] = struct{}{}
	done := h.doneCh()
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.subs, s)
		h.mu.Unlock()
	}()
	for {
		select {
		case n := <-s.ch:
			fn(n)
			if s.lost.Swap(false) {
				fn(Notice{Kind: NoticeResync})
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return ErrClosed
		}
	}
}

// Close ends every Listen call; later Notify calls fail with ErrClosed.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.doneCh())
	}
}
