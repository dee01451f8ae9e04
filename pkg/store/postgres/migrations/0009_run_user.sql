-- The user identity a run acts for (x-agentcore-user), '' for none.
-- agentcore_start_run leaves it empty; the driver sets it with a second
-- statement, as it does a child run's place in its tree.
ALTER TABLE runs ADD COLUMN subject TEXT NOT NULL DEFAULT '';
