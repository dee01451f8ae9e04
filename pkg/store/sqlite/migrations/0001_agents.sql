-- Agents and their histories. Times are Unix microseconds.
CREATE TABLE agents (
    id             TEXT PRIMARY KEY,
    tenant         TEXT NOT NULL DEFAULT '',
    spec           BLOB NOT NULL,          -- agentcore.v1.Agent: config without secrets, tools, skills
    secrets        TEXT NOT NULL DEFAULT '', -- fields whose secrets were removed, one per line
    usage          BLOB,                   -- agentcore.v1.Usage
    history_length INTEGER NOT NULL DEFAULT 0,
    version        INTEGER NOT NULL,
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL
);
CREATE INDEX agents_tenant ON agents (tenant, id);

CREATE TABLE messages (
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    idx      INTEGER NOT NULL,
    data     BLOB NOT NULL,                -- agentcore.v1.Message
    PRIMARY KEY (agent_id, idx)
) WITHOUT ROWID;
