-- Rollback: an earlier manifest that this environment accepted becomes
-- current again. The freshness bar does not move back: the environment's
-- high_water_generation stays where it was, so a stale job retrying its
-- publish afterwards is still refused, and the next newer candidate adopts as
-- usual.
--
-- A rollback takes the environment's lease like any job: it is refused busy
-- while another job holds a live lease (the client waits with --wait), it
-- takes the next fencing token (so every lease before it is fenced out), and
-- it releases at once; all in this one transaction. It is allowed while
-- dispatch is frozen, since that is when incidents roll back. Queued
-- candidates are not waited for: they are newer than the bar, and adopt after
-- it unless the environment is frozen.

CREATE FUNCTION relctl.rollback_request(p_env text, p_to_release text, p_to_generation bigint,
                                        p_to_manifest bigint, p_by text, p_reason text)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('operation', 'rollback', 'env', p_env, 'to_release', p_to_release,
                              'to_generation', p_to_generation, 'to_manifest', p_to_manifest,
                              'by', p_by, 'reason', p_reason)
$$;

CREATE FUNCTION relctl.rollback(p_env text, p_to_release text, p_to_generation bigint, p_to_manifest bigint,
                                p_by text, p_reason text, p_op_id text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    m relctl.manifests;
    target relctl.manifests;
    holder relctl.leases;
    l relctl.leases;
    r relctl.rollbacks;
    v_now timestamptz;
    v_job text;
    v_request jsonb;
    v_reply jsonb;
    v_client jsonb := relctl.client_info(p_client);
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, true);
    IF num_nonnulls(p_to_release, p_to_generation, p_to_manifest) <> 1 THEN
        PERFORM relctl.invalid('name exactly one target: --to-release, --to-generation or --to-manifest');
    END IF;
    PERFORM relctl.lock_operation(p_op_id);
    e := relctl.lock_environment(p_env);
    v_request := relctl.rollback_request(p_env, p_to_release, p_to_generation, p_to_manifest, p_by, p_reason);
    v_reply := relctl.replay(p_op_id, v_request, NULL, p_client);
    IF v_reply IS NOT NULL THEN
        RETURN v_reply;
    END IF;

    -- The newest manifest of that release (a release may have been published
    -- under several generations); only this environment's own history.
    SELECT * INTO target FROM relctl.manifests
        WHERE env = p_env
          AND (p_to_manifest IS NULL OR id = p_to_manifest)
          AND (p_to_generation IS NULL OR generation = p_to_generation)
          AND (p_to_release IS NULL OR release = p_to_release)
        ORDER BY id DESC LIMIT 1;
    IF target.id IS NULL THEN
        PERFORM relctl.invalid(format('%s never accepted %s', p_env, CASE
            WHEN p_to_manifest IS NOT NULL THEN format('manifest %s', p_to_manifest)
            WHEN p_to_generation IS NOT NULL THEN format('generation %s', p_to_generation)
            ELSE format('release %s', p_to_release) END));
    END IF;
    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    IF target.id = m.id THEN
        -- Nothing to do, and nothing recorded; not remembered, so the same op
        -- id still works if the environment moves on before a retry.
        RETURN jsonb_build_object(
            'status', 'ok', 'env', p_env, 'rolled_back', false, 'op_id', p_op_id, 'replayed', false,
            'restored', relctl.manifest_json(m, p_env) - 'manifest' - 'env',
            'high_water_generation', e.high_water_generation,
            'message', format('%s generation %s is already current on %s; nothing rolled back',
                              m.release, m.generation, p_env));
    END IF;

    v_now := clock_timestamp();
    PERFORM relctl.refresh_queue(e);
    holder := relctl.live_lease(e, v_now);
    IF holder.token IS NOT NULL THEN
        RETURN jsonb_build_object(
            'status', 'busy', 'env', p_env, 'op_id', p_op_id, 'holder', relctl.lease_json(holder, v_now),
            'message', format('environment %s is held by job %s (release %s, generation %s, token %s) for another %s ms',
                              p_env, holder.job, holder.release, holder.generation, holder.token,
                              greatest(0, relctl.ms_between(v_now, holder.expires_at))));
    END IF;

    v_job := left('rollback by ' || p_by, 200);
    INSERT INTO relctl.leases (env, token, job, release, generation, ttl_ms, acquired_at, expires_at,
                               ended_at, end_reason, end_note, op_id, host, pid, job_url)
    VALUES (p_env, relctl.next_token(e), v_job, target.release, target.generation, e.default_ttl_ms, v_now,
            v_now + e.default_ttl_ms * interval '1 millisecond', v_now, 'released', 'rollback', p_op_id,
            v_client ->> 'host', (v_client ->> 'pid')::integer, v_client ->> 'job_url')
    RETURNING * INTO l;
    UPDATE relctl.environments SET last_token = l.token, current_manifest_id = target.id WHERE name = p_env;
    INSERT INTO relctl.rollbacks (env, restored_manifest_id, replaced_manifest_id, token, rolled_back_by, reason,
                                  rolled_back_at, op_id)
        VALUES (p_env, target.id, m.id, l.token, p_by, p_reason, v_now, p_op_id)
        RETURNING * INTO r;

    v_reply := jsonb_build_object(
        'status', 'ok', 'env', p_env, 'rolled_back', true, 'rollback', r.id, 'token', l.token,
        'by', p_by, 'reason', p_reason, 'at', v_now,
        'restored', relctl.manifest_json(target, p_env) - 'manifest' - 'env',
        'replaced', relctl.manifest_json(m, p_env) - 'manifest' - 'env',
        'high_water_generation', e.high_water_generation, 'op_id', p_op_id, 'replayed', false);
    PERFORM relctl.record(p_env, 'rollback', NULL, v_job, target.release, target.generation, l.token, p_op_id,
                          p_client, jsonb_build_object(
                              'rollback', r.id, 'reason', p_reason,
                              'restored_manifest_id', target.id,
                              'replaced_manifest_id', m.id, 'replaced_release', m.release,
                              'replaced_generation', m.generation,
                              'high_water_generation', e.high_water_generation),
                          p_by);
    PERFORM relctl.remember(p_op_id, 'rollback', v_request, v_reply);
    RETURN v_reply;
END
$$;

GRANT EXECUTE ON FUNCTION relctl.rollback TO relctl_manager;
