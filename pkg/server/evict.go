package server

import (
	"context"

	"github.com/agentcore/agentcore/pkg/sessions"
)

// A session is what pkg/sessions' registry holds: the methods below are
// its side of sessions.Session. The registry drops idle sessions beyond
// -max-loaded-agents and -agent-memory; the store holds their agents.

// sessionBytes is what the server keeps beside a session's engine: the
// session, its journal, its profile expander and its place in the
// registry (TestAgentCostMatchesHeap: an agent with an empty history takes
// about 1.2 KiB of heap in all, engine included).
const sessionBytes = 256

// Key is the agent's id in the store.
func (sess *session) Key() string { return sess.id }

// Footprint is what the session holds in memory: its engine and what the
// server keeps beside it.
func (sess *session) Footprint() int64 { return sess.engine.Footprint() + sessionBytes }

// Keep is what the registry keeps of the session when it drops it: the
// secrets its client gave, in the config that holds them.
func (sess *session) Keep() sessions.Dropped {
	d := sessions.Dropped{Keys: sess.Keys(), Created: sess.created}
	if len(d.Keys) > 0 {
		d.Config = sess.engine.StoredConfig()
	}
	return d
}

// CloseIdle closes the session's engine if nothing runs or waits in it.
func (sess *session) CloseIdle() bool { return sess.engine.CloseIdle() }

// Close ends the session's runs and closes its engine.
func (sess *session) Close(ctx context.Context) { _, _ = sess.engine.Close(ctx) }

// Stop stops the session's run.
func (sess *session) Stop(ctx context.Context) { _, _ = sess.engine.Stop(ctx) }

// forget drops the agent key from memory: it was deleted by another
// replica (loaded or dropped here).
func (s *Server) forget(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	s.agents.Forget(ctx, key)
}
