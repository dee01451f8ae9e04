-- Runs that a server resumes after a crash: where the run's messages begin
-- in its agent's history, what the server needs to resume it (its own
-- encoding; NULL: not to be resumed) and how many times it was taken over.
-- agentcore_start_run keeps the first two.
ALTER TABLE runs ADD COLUMN history_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN resume BYTEA;
ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;

DROP FUNCTION agentcore_start_run(TEXT, TEXT, INTEGER, INTEGER, TEXT, BIGINT, INTEGER);

CREATE FUNCTION agentcore_start_run(p_agent TEXT, p_run TEXT, p_compaction INTEGER, p_on_disconnect INTEGER,
    p_owner TEXT, p_ttl BIGINT, p_running INTEGER, p_resume BYTEA,
    OUT o_status TEXT, OUT o_tenant TEXT, OUT o_lease_run TEXT, OUT o_lease_owner TEXT,
    OUT o_lease_expires BIGINT, OUT o_now BIGINT, OUT o_version BIGINT, OUT o_history_start INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_state INTEGER;
BEGIN
    SELECT a.tenant, a.lease_run, a.lease_owner, a.lease_expires, (extract(epoch from clock_timestamp()) * 1000000)::bigint, a.version, a.history_length
      INTO o_tenant, o_lease_run, o_lease_owner, o_lease_expires, o_now, o_version, o_history_start
      FROM agents a WHERE a.id = p_agent FOR UPDATE;
    IF NOT FOUND THEN
        o_status := 'not_found';
        RETURN;
    END IF;
    IF o_lease_run <> '' THEN
        SELECT r.state INTO v_state FROM runs r WHERE r.id = o_lease_run;
        IF FOUND AND v_state = p_running THEN
            o_status := 'busy';
            RETURN;
        END IF;
    END IF;
    INSERT INTO runs (id, agent_id, tenant, compaction, on_disconnect, state, owner, lease_expires, started, history_start, resume)
        VALUES (p_run, p_agent, o_tenant, p_compaction, p_on_disconnect, p_running, p_owner, o_now + p_ttl, o_now, o_history_start, p_resume)
        ON CONFLICT (id) DO NOTHING;
    IF NOT FOUND THEN
        o_status := 'exists';
        RETURN;
    END IF;
    UPDATE agents SET lease_run = p_run, lease_owner = p_owner, lease_expires = o_now + p_ttl WHERE id = p_agent;
    o_status := 'ok';
END
$$;
