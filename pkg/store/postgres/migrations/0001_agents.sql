-- Agents and their histories. Times are Unix microseconds; ids sort bytewise.
CREATE TABLE agents (
    id             TEXT COLLATE "C" PRIMARY KEY,
    tenant         TEXT COLLATE "C" NOT NULL DEFAULT '',
    spec           BYTEA NOT NULL,         -- agentcore.v1.Agent: config without secrets, tools, skills
    secrets        TEXT NOT NULL DEFAULT '', -- fields whose secrets were removed, one per line
    usage          BYTEA,                  -- agentcore.v1.Usage
    history_length INTEGER NOT NULL DEFAULT 0,
    version        BIGINT NOT NULL,
    created        BIGINT NOT NULL,
    updated        BIGINT NOT NULL
);
CREATE INDEX agents_tenant ON agents (tenant, id);

CREATE TABLE messages (
    agent_id TEXT COLLATE "C" NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    idx      INTEGER NOT NULL,
    data     BYTEA NOT NULL,               -- agentcore.v1.Message
    PRIMARY KEY (agent_id, idx)
);
