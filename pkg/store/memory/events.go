package memory

import (
	"context"
	"fmt"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// storedEvent is an event as the store keeps it: its wire form, which
// costs less to take in than a deep copy and holds no pointer for the
// garbage collector to follow (a server keeps every event of its runs
// until -event-retention); or, for an event that cannot be encoded (a
// string that is not UTF-8), a copy.
type storedEvent struct {
	seq  int64
	data []byte
	msg  *agentv1.Event
}

func keepEvent(ev *agentv1.Event) storedEvent {
	if data, err := proto.Marshal(ev); err == nil {
		return storedEvent{seq: ev.GetSeq(), data: data}
	}
	return storedEvent{seq: ev.GetSeq(), msg: proto.Clone(ev).(*agentv1.Event)}
}

// size is the size of the event's encoded form.
func (e storedEvent) size() int64 {
	if e.msg != nil {
		return int64(proto.Size(e.msg))
	}
	return int64(len(e.data))
}

// event returns a copy of the stored event.
func (e storedEvent) event() (*agentv1.Event, error) {
	if e.msg != nil {
		return proto.Clone(e.msg).(*agentv1.Event), nil
	}
	ev := &agentv1.Event{}
	if err := proto.Unmarshal(e.data, ev); err != nil {
		return nil, fmt.Errorf("event %d: %w", e.seq, err)
	}
	return ev, nil
}

// AppendEvents stores events, then ends runs, and tells listeners. Each
// run's events are checked before any is stored.
func (s *Store) AppendEvents(ctx context.Context, events []*agentv1.Event, ends ...store.RunEnd) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	byRun := map[string][]*agentv1.Event{}
	var order []string
	for _, ev := range events {
		id := ev.GetRunId()
		if _, seen := byRun[id]; !seen {
			order = append(order, id)
		}
		byRun[id] = append(byRun[id], ev)
	}
	left := store.LeftOut{}
	var ns []store.Notice
	for _, id := range order {
		evs := byRun[id]
		r, ok := s.runs[id]
		if !ok {
			left[id] = fmt.Errorf("events of run %q: %w", id, store.ErrNotFound)
			continue
		}
		last := r.r.LastSeq
		for _, ev := range evs {
			if ev.GetSeq() <= last {
				left[id] = fmt.Errorf("event %d of run %q after %d: %w", ev.GetSeq(), id, last, store.ErrConflict)
				break
			}
			last = ev.GetSeq()
		}
		if left[id] != nil {
			continue
		}
		for _, ev := range evs {
			e := keepEvent(ev)
			r.events = append(r.events, e)
			r.r.EventBytes += e.size()
		}
		r.r.LastSeq = last
		ns = append(ns, store.Notice{Kind: store.NoticeEvents, RunID: id, Seq: last})
	}
	for _, e := range ends {
		if left[e.RunID] != nil {
			continue
		}
		if more, err := s.finishLocked(e); err == nil {
			ns = append(ns, more...)
		}
	}
	s.mu.Unlock()
	for _, n := range ns {
		_ = s.hub.Notify(ctx, n)
	}
	return left.Err()
}

// Events returns up to limit events of a run after seq after.
func (s *Store) Events(ctx context.Context, runID string, after int64, n int) ([]*agentv1.Event, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	r, err := s.runLocked(runID)
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].seq > after })
	end := min(len(r.events), i+limit(n))
	out := make([]*agentv1.Event, 0, end-i)
	for _, e := range r.events[i:end] {
		ev, err := e.event()
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// DeleteEvents deletes the events of runs that ended before t.
func (s *Store) DeleteEvents(ctx context.Context, t time.Time) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	var n int64
	for _, r := range s.runs {
		if r.r.Done() && r.r.Ended.Before(t) && len(r.events) > 0 {
			n += r.purge()
		}
	}
	return n, nil
}

// TrimEvents deletes the events of ended runs over perRun bytes, then of
// the runs that ended first while all hold more than total.
func (s *Store) TrimEvents(ctx context.Context, perRun, total int64) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	var n, sum int64
	var ended []*run
	for _, r := range s.runs {
		if r.r.Done() && len(r.events) > 0 && perRun > 0 && r.r.EventBytes > perRun {
			n += r.purge()
		}
		sum += r.r.EventBytes
		if r.r.Done() && len(r.events) > 0 {
			ended = append(ended, r)
		}
	}
	if total <= 0 || sum <= total {
		return n, nil
	}
	sort.Slice(ended, func(i, j int) bool {
		a, b := ended[i].r, ended[j].r
		return a.Ended.Before(b.Ended) || a.Ended.Equal(b.Ended) && a.ID < b.ID
	})
	for _, r := range ended {
		if sum <= total {
			break
		}
		sum -= r.r.EventBytes
		n += r.purge()
	}
	return n, nil
}

// purge deletes the run's events and returns how many there were.
func (r *run) purge() int64 {
	n := int64(len(r.events))
	r.events = nil
	r.r.Purged, r.r.EventBytes = true, 0
	return n
}
