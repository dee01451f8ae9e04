-- Runs, the agents' leases, run events and permission requests.
ALTER TABLE agents ADD COLUMN lease_run TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN lease_expires INTEGER NOT NULL DEFAULT 0;

CREATE TABLE runs (
    id            TEXT PRIMARY KEY,
    agent_id      TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    tenant        TEXT NOT NULL DEFAULT '',
    compaction    INTEGER NOT NULL DEFAULT 0,
    on_disconnect INTEGER NOT NULL DEFAULT 0,
    state         INTEGER NOT NULL,        -- agentcore.v1.RunState
    result        BLOB,                    -- agentcore.v1.RunResultEvent
    error         BLOB,                    -- agentcore.v1.RunError
    owner         TEXT NOT NULL,
    lease_expires INTEGER NOT NULL,
    started       INTEGER NOT NULL,
    ended         INTEGER NOT NULL DEFAULT 0,
    last_seq      INTEGER NOT NULL DEFAULT 0,
    purged        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_agent ON runs (agent_id, started DESC, id DESC);
CREATE INDEX runs_tenant ON runs (tenant, started DESC, id DESC);
CREATE INDEX runs_running ON runs (state) WHERE state = 1;
CREATE INDEX runs_ended ON runs (ended) WHERE state <> 1 AND purged = 0;

CREATE TABLE events (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    data   BLOB NOT NULL,                  -- agentcore.v1.Event
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE permissions (
    run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    call_id   TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    asked     INTEGER NOT NULL,
    answered  INTEGER NOT NULL DEFAULT 0,
    allow     INTEGER NOT NULL DEFAULT 0,
    reason    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, call_id)
);
