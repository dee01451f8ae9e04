package server

import (
	"encoding/json"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/eventlog"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// What the black-box tests (package server_test) reach inside the server.

// StoredAgent is the store's record of an agent of tenant with config cfg,
// as CreateAgent writes it.
func StoredAgent(id, tenant string, cfg *agentv1.AgentConfig) *store.Agent {
	return storedAgent(id, tenant, cfg, nil, nil)
}

// EventLog returns the server's event log.
func (s *Server) EventLog() *eventlog.Log { return s.events }

// ResumeRecord is the resume record (store.Run.Resume) of a send that asked
// for its run to be resumed after a crash.
func ResumeRecord(start *agentv1.StartRun) []byte {
	b, err := proto.Marshal(start)
	if err != nil {
		panic(err)
	}
	rec, err := json.Marshal(resumeSpec{Start: b})
	if err != nil {
		panic(err)
	}
	return rec
}
