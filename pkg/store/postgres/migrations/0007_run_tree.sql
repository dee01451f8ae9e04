-- Child runs: the run whose tool call started a run, the root of its tree,
-- its depth and the call. agentcore_start_run leaves them empty; the driver
-- sets them on a child run with a second statement.
ALTER TABLE runs ADD COLUMN parent_run TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN root_run TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN tool_call TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_root ON runs (root_run) WHERE root_run <> '';
