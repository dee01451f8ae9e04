-- Runs that a server resumes after a crash: where the run's messages begin
-- in its agent's history, what the server needs to resume it (its own
-- encoding; NULL: not to be resumed) and how many times it was taken over.
ALTER TABLE runs ADD COLUMN history_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN resume BLOB;
ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
