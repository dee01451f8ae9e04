-- The size of each run's stored events (their encoded form): GetRun
-- reports it, and retention by size counts it.
ALTER TABLE runs ADD COLUMN event_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET event_bytes = (SELECT coalesce(sum(length(data)), 0) FROM events WHERE events.run_id = runs.id);
