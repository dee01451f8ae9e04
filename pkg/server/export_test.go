package server

import (
	"github.com/agentcore/agentcore/pkg/eventlog"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// What the black-box tests (package server_test) reach inside the server.

// StoredAgent is the store's record of an agent of tenant with config cfg,
// as CreateAgent writes it.
func StoredAgent(id, tenant string, cfg *agentv1.AgentConfig) *store.Agent {
	return storedAgent(id, tenant, cfg, nil, nil, nil)
}

// EventLog returns the server's event log.
func (s *Server) EventLog() *eventlog.Log { return s.events }
