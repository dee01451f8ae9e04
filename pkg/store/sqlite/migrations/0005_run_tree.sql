-- Child runs: the run whose tool call started a run, the root of its tree,
-- its depth and the call.
ALTER TABLE runs ADD COLUMN parent_run TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN root_run TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN tool_call TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_root ON runs (root_run) WHERE root_run <> '';
