-- The size of each run's stored events (their encoded form): GetRun
-- reports it, and retention by size counts it. agentcore_append_events
-- (migration 0004) adds each batch's to its run.
ALTER TABLE runs ADD COLUMN event_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE runs SET event_bytes = (SELECT coalesce(sum(octet_length(data)), 0) FROM events WHERE events.run_id = runs.id);

CREATE OR REPLACE FUNCTION agentcore_append_events(p_runs TEXT[], p_seqs BIGINT[], p_data BYTEA[],
    p_end_runs TEXT[], p_end_states INTEGER[], p_end_results BYTEA[], p_end_errors BYTEA[],
    p_running INTEGER, p_channel TEXT)
RETURNS SETOF TEXT
LANGUAGE plpgsql AS $$
DECLARE
    v_ids TEXT[];
    v_lasts BIGINT[];
BEGIN
    WITH b AS (
        SELECT * FROM unnest(p_runs, p_seqs, p_data) AS b(run_id, seq, data)
    ), m AS (
        SELECT run_id, min(seq) AS first, max(seq) AS last, sum(octet_length(data)) AS bytes FROM b GROUP BY run_id
    ), u AS (
        UPDATE runs r SET last_seq = m.last, event_bytes = r.event_bytes + m.bytes
        FROM m WHERE r.id = m.run_id AND r.last_seq < m.first RETURNING r.id, m.last
    ), ins AS (
        INSERT INTO events (run_id, seq, data) SELECT b.run_id, b.seq, b.data FROM b JOIN u ON u.id = b.run_id
    )
    SELECT coalesce(array_agg(u.id), '{}'), coalesce(array_agg(u.last), '{}') INTO v_ids, v_lasts FROM u;
    PERFORM pg_notify(p_channel, json_build_object('k', 'events', 'r', v_ids[i], 's', v_lasts[i])::text)
       FROM generate_subscripts(v_ids, 1) AS i;
    FOR i IN 1 .. coalesce(array_length(p_end_runs, 1), 0) LOOP
        CONTINUE WHEN p_end_runs[i] = ANY (p_runs) AND NOT p_end_runs[i] = ANY (v_ids);
        PERFORM agentcore_finish_run(p_end_runs[i], p_end_states[i], p_end_results[i], p_end_errors[i], p_running, p_channel);
    END LOOP;
    RETURN QUERY SELECT unnest(v_ids);
END
$$;
