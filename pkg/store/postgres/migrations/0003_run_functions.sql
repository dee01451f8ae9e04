-- A run's start and end, each in one round trip: the statements of the
-- transactions they replace (pkg/store/internal/sqlstore's StartRun and
-- FinishRun), run by the server, each statement with a fresh snapshot as
-- there. agentcore_start_run says 'ok', 'not_found', 'busy' (the lease's
-- run still runs) or 'exists' (the run id is taken).
CREATE FUNCTION agentcore_start_run(p_agent TEXT, p_run TEXT, p_compaction INTEGER, p_on_disconnect INTEGER,
    p_owner TEXT, p_ttl BIGINT, p_running INTEGER,
    OUT o_status TEXT, OUT o_tenant TEXT, OUT o_lease_run TEXT, OUT o_lease_owner TEXT,
    OUT o_lease_expires BIGINT, OUT o_now BIGINT, OUT o_version BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_state INTEGER;
BEGIN
    SELECT a.tenant, a.lease_run, a.lease_owner, a.lease_expires, (extract(epoch from clock_timestamp()) * 1000000)::bigint, a.version
      INTO o_tenant, o_lease_run, o_lease_owner, o_lease_expires, o_now, o_version
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
    INSERT INTO runs (id, agent_id, tenant, compaction, on_disconnect, state, owner, lease_expires, started)
        VALUES (p_run, p_agent, o_tenant, p_compaction, p_on_disconnect, p_running, p_owner, o_now + p_ttl, o_now)
        ON CONFLICT (id) DO NOTHING;
    IF NOT FOUND THEN
        o_status := 'exists';
        RETURN;
    END IF;
    UPDATE agents SET lease_run = p_run, lease_owner = p_owner, lease_expires = o_now + p_ttl WHERE id = p_agent;
    o_status := 'ok';
END
$$;

-- agentcore_finish_run says 'ok' (with the run's agent), 'not_found', or
-- 'conflict' (the run ended already, in o_state). It notifies p_channel as
-- the driver does: the run ended, and the lease released when it held it.
CREATE FUNCTION agentcore_finish_run(p_run TEXT, p_state INTEGER, p_result BYTEA, p_error BYTEA, p_running INTEGER,
    p_channel TEXT, OUT o_status TEXT, OUT o_agent TEXT, OUT o_state INTEGER)
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE runs SET state = p_state, result = p_result, error = p_error,
           ended = (extract(epoch from clock_timestamp()) * 1000000)::bigint
     WHERE id = p_run AND state = p_running RETURNING agent_id INTO o_agent;
    IF NOT FOUND THEN
        SELECT r.state INTO o_state FROM runs r WHERE r.id = p_run;
        IF FOUND THEN
            o_status := 'conflict';
        ELSE
            o_status := 'not_found';
        END IF;
        RETURN;
    END IF;
    PERFORM pg_notify(p_channel, json_build_object('k', 'run', 'r', p_run, 'a', o_agent)::text);
    UPDATE agents SET lease_run = '', lease_owner = '', lease_expires = 0 WHERE id = o_agent AND lease_run = p_run;
    IF FOUND THEN
        PERFORM pg_notify(p_channel, json_build_object('k', 'lease', 'a', o_agent, 'r', p_run)::text);
    END IF;
    o_status := 'ok';
END
$$;
