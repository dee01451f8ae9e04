// Package memory is the store driver that keeps nothing: agents, histories,
// runs and events live in this process's memory and are gone when it
// exits. It is agent-server's `-store memory`, for tests and for users who
// want no persistence; it passes the same conformance suite as the drivers
// that keep things.
package memory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Store is the memory driver. It is safe for concurrent use.
type Store struct {
	hub store.Hub

	mu     sync.Mutex
	closed bool
	agents map[string]*agent // by id
	runs   map[string]*run   // by id
	creds  map[credKey]*store.Credential
}

// agent is a stored agent with its history and lease. Guarded by Store.mu.
type agent struct {
	a       *store.Agent
	history []*agentv1.Message
	// lease: the run holding the agent, and until when.
	leaseRun, leaseOwner string
	leaseExpires         time.Time
}

// run is a stored run with its events and permission requests. Guarded by Store.mu.
type run struct {
	r      *store.Run
	events []storedEvent
	perms  []*store.Permission
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{agents: map[string]*agent{}, runs: map[string]*run{}, creds: map[credKey]*store.Credential{}}
}

// Shared is false: no other process sees this memory.
func (s *Store) Shared() bool { return false }

// Close empties the store and ends Listen calls.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.agents, s.runs, s.creds = map[string]*agent{}, map[string]*run{}, map[credKey]*store.Credential{}
	s.mu.Unlock()
	s.hub.Close()
	return nil
}

// lock takes the lock unless the store is closed.
func (s *Store) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	return nil
}

// agentLocked returns the agent of that id; s.mu is held.
func (s *Store) agentLocked(id string) (*agent, error) {
	a, ok := s.agents[id]
	if !ok {
		return nil, fmt.Errorf("agent %q: %w", id, store.ErrNotFound)
	}
	return a, nil
}

// runLocked returns the run of that id; s.mu is held.
func (s *Store) runLocked(id string) (*run, error) {
	r, ok := s.runs[id]
	if !ok {
		return nil, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	return r, nil
}

// Notify hands n to this process's listeners.
func (s *Store) Notify(ctx context.Context, n store.Notice) error { return s.hub.Notify(ctx, n) }

// Listen calls fn with every notice until ctx ends or the store closes.
func (s *Store) Listen(ctx context.Context, fn func(store.Notice)) error {
	return s.hub.Listen(ctx, fn)
}

// String names the driver.
func (s *Store) String() string { return "memory" }
