package tool

import "context"

// Limiter caps how many calls run at once among those that share it (the
// agent-core's maxToolConcurrency, one per agent). A nil Limiter allows all.
type Limiter struct {
	slots chan struct{}
}

// NewLimiter returns a limiter allowing n calls at once, or nil (no limit)
// when n is 0 or less.
func NewLimiter(n int) *Limiter {
	if n <= 0 {
		return nil
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// acquire waits for a slot or for ctx to be done.
func (l *Limiter) acquire(ctx context.Context) error {
	if l == nil {
		return nil
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (l *Limiter) release() {
	if l != nil {
		<-l.slots
	}
}
