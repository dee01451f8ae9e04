-- The user identity a run acts for (x-agentcore-user), '' for none.
ALTER TABLE runs ADD COLUMN subject TEXT NOT NULL DEFAULT '';
