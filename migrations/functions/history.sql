-- The recorded history, as the history checker reads it (core/src/history.cpp,
-- `relctl verify`, and every rehearsal): environments, leases, manifests
-- without their bodies, the audit trail's protocol columns and the recorded
-- outcome of every operation id. Read-only, for reviewers; nothing returned
-- is a credential (no lease id, no request, no secret digest).
--
-- One statement: a STABLE function reads every table at the caller's one
-- snapshot, so the checker never sees a lease without the event that granted
-- it. Times leave the server as epoch milliseconds (floored, like every
-- epoch_ms), so the client parses no timestamp.
--
-- p_env NULL: every environment; an unknown environment is invalid input, as
-- everywhere else. p_since NULL: everything. With p_since, the rows from it
-- on, plus what the checks need to judge the first of them (context, not
-- judged): per environment the last manifest before it, its current
-- manifest, the leases still live at it and the newest lease granted before
-- it, the newest rollback before it and the manifests every rollback
-- returned names; the events of the operations recorded from it on (an
-- event is written a moment before its operation's record, in the same
-- transaction), the accepted acquire of every lease returned, and every
-- env-set (the promotion path and soak in force when a publish was judged).
--
-- With p_env or p_since, promotion-path-kept also needs what an upstream
-- recorded, whenever it did: the manifests by which an environment the
-- selected ones were ever promoted from accepted what they published in the
-- window, and every rollback that replaced or restored one of those
-- (context; judged only with their own environment).
CREATE FUNCTION relctl.history(p_env text, p_since timestamptz) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
BEGIN
    IF p_env IS NOT NULL AND NOT EXISTS (SELECT 1 FROM relctl.environments WHERE name = p_env) THEN
        PERFORM relctl.invalid(format('unknown environment "%s"', p_env));
    END IF;
    -- The checker judges whole milliseconds (what leaves as epoch_ms is
    -- floored): the window starts at the first one, here too, or a row of
    -- that millisecond before p_since would be context here and judged there.
    p_since := date_trunc('milliseconds', p_since);
    RETURN (
        WITH env AS (
            SELECT e.name, e.last_token, e.current_manifest_id
            FROM relctl.environments e
            WHERE p_env IS NULL OR e.name = p_env),
        op AS (
            SELECT o.op_id, o.operation, o.outcome ->> 'status' AS status, o.outcome ->> 'reason' AS reason,
                   coalesce(o.request ->> 'env', o.outcome ->> 'env') AS env, o.recorded_at
            FROM relctl.operations o
            WHERE (p_since IS NULL OR o.recorded_at >= p_since)
              AND (p_env IS NULL OR coalesce(o.request ->> 'env', o.outcome ->> 'env') = p_env)),
        last_lease_before AS (
            SELECT l.env, max(l.token) AS token
            FROM relctl.leases l JOIN env ON env.name = l.env
            WHERE l.acquired_at < p_since
            GROUP BY l.env),
        lease AS (
            SELECT l.*
            FROM relctl.leases l JOIN env ON env.name = l.env
            WHERE p_since IS NULL
               OR l.acquired_at >= p_since
               OR (l.expires_at > p_since AND (l.ended_at IS NULL OR l.ended_at > p_since))
               OR (l.env, l.token) IN (SELECT b.env, b.token FROM last_lease_before b)),
        -- NOT MATERIALIZED: read twice below, and copying every event
        -- would cost more than a second read of the few env-sets (by
        -- events_operation). The acquires of the leases before the window
        -- are a lookup of their own (events_env_token), not one more OR: a
        -- subplan over the leases too big to hash would be scanned again for
        -- every event, and a join hashes every acquire ever recorded.
        event AS NOT MATERIALIZED (
            SELECT v.*
            FROM relctl.events v
            WHERE (p_env IS NULL OR v.env = p_env)
              AND (p_since IS NULL OR v.at >= p_since
                   OR v.op_id IN (SELECT op.op_id FROM op)
                   OR v.operation = 'env-set')
            UNION ALL
            SELECT v.*
            FROM lease l
            CROSS JOIN LATERAL (
                SELECT x.* FROM relctl.events x
                WHERE x.env = l.env AND x.token = l.token AND x.operation = 'acquire' AND x.outcome = 'accepted'
                ORDER BY x.id LIMIT 1) v
            WHERE p_since IS NOT NULL AND l.acquired_at < p_since AND v.at < p_since
              AND NOT EXISTS (SELECT 1 FROM op WHERE op.op_id = v.op_id)),
        -- Everything is read already when nothing is selected.
        upstream AS (
            SELECT DISTINCT v.detail ->> 'promote_from' AS name
            FROM event v
            WHERE (p_env IS NOT NULL OR p_since IS NOT NULL)
              AND v.operation = 'env-set' AND nullif(v.detail ->> 'promote_from', '') IS NOT NULL),
        upstream_manifest AS (
            SELECT u.id
            FROM relctl.manifests w JOIN env ON env.name = w.env
            JOIN relctl.manifests u ON u.release = w.release AND u.generation = w.generation
            WHERE (p_since IS NULL OR w.published_at >= p_since)
              AND u.env IN (SELECT upstream.name FROM upstream)),
        last_rollback_before AS (
            SELECT DISTINCT ON (r.env) r.id
            FROM relctl.rollbacks r JOIN env ON env.name = r.env
            WHERE r.rolled_back_at < p_since
            ORDER BY r.env, r.token DESC),
        rollback AS (
            SELECT r.id, r.env, r.token, r.restored_manifest_id, r.replaced_manifest_id, r.rolled_back_at, r.op_id
            FROM relctl.rollbacks r JOIN env ON env.name = r.env
            WHERE p_since IS NULL
               OR r.rolled_back_at >= p_since
               OR r.id IN (SELECT b.id FROM last_rollback_before b)
            UNION
            SELECT r.id, r.env, r.token, r.restored_manifest_id, r.replaced_manifest_id, r.rolled_back_at, r.op_id
            FROM relctl.rollbacks r
            WHERE r.replaced_manifest_id IN (SELECT u.id FROM upstream_manifest u)
               OR r.restored_manifest_id IN (SELECT u.id FROM upstream_manifest u)),
        last_manifest_before AS (
            SELECT DISTINCT ON (m.env) m.id
            FROM relctl.manifests m JOIN env ON env.name = m.env
            WHERE m.published_at < p_since
            ORDER BY m.env, m.id DESC),
        manifest AS (
            SELECT m.id, m.env, m.release, m.generation, m.job, m.token, m.published_at, m.op_id
            FROM relctl.manifests m JOIN env ON env.name = m.env
            WHERE p_since IS NULL
               OR m.published_at >= p_since
               OR m.id = env.current_manifest_id
               OR m.id IN (SELECT b.id FROM last_manifest_before b)
               OR m.id IN (SELECT r.restored_manifest_id FROM rollback r)
               OR m.id IN (SELECT r.replaced_manifest_id FROM rollback r)
            UNION
            SELECT m.id, m.env, m.release, m.generation, m.job, m.token, m.published_at, m.op_id
            FROM relctl.manifests m
            WHERE m.id IN (SELECT u.id FROM upstream_manifest u))
        SELECT jsonb_build_object(
            'env', p_env,
            'since', relctl.epoch_ms(p_since),
            'environments', (
                SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'name', env.name, 'last_token', env.last_token,
                    'current_manifest_id', env.current_manifest_id) ORDER BY env.name), '[]')
                FROM env),
            'leases', (
                SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'env', l.env, 'token', l.token, 'job', l.job, 'release', l.release,
                    'generation', l.generation, 'acquired_at', relctl.epoch_ms(l.acquired_at),
                    'expires_at', relctl.epoch_ms(l.expires_at), 'ended_at', relctl.epoch_ms(l.ended_at),
                    'end_reason', l.end_reason, 'op_id', l.op_id) ORDER BY l.env, l.token), '[]')
                FROM lease l),
            'manifests', (
                SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'id', m.id, 'env', m.env, 'release', m.release, 'generation', m.generation,
                    'job', m.job, 'token', m.token, 'published_at', relctl.epoch_ms(m.published_at),
                    'op_id', m.op_id) ORDER BY m.id), '[]')
                FROM manifest m),
            -- A rollback makes an older manifest current again without a new
            -- manifest row; its token is its lease's, which ended at once.
            'rollbacks', (
                SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'id', r.id, 'env', r.env, 'token', r.token,
                    'restored_manifest_id', r.restored_manifest_id,
                    'replaced_manifest_id', r.replaced_manifest_id,
                    'at', relctl.epoch_ms(r.rolled_back_at), 'op_id', r.op_id) ORDER BY r.env, r.token), '[]')
                FROM rollback r),
            -- 'unserialized': a publish without a lease (serialization off),
            -- which presents no token; publish_unserialized marks its events so.
            -- 'manifest_id': the manifest an accepted publish wrote, so that a
            -- window's context manifests are told apart from its own publishes.
            -- 'high_water_generation': NULL on events recorded before 0006.
            -- 'login': whose request an accepted acquire or publish was: the
            -- session's, or for a queued candidate granted on its behalf the
            -- login it queued with (relctl.record), unknown (NULL) for one
            -- queued before 0011 and handed over by another session, which
            -- recorded its own login instead. 'settings': what an env-set
            -- changed of the promotion path (promote_from, '' when cleared)
            -- and soak; null when it did not.
            'events', (
                SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'id', v.id, 'at', relctl.epoch_ms(v.at), 'env', v.env, 'operation', v.operation,
                    'outcome', v.outcome, 'reason', v.reason, 'job', v.job, 'release', v.release,
                    'generation', v.generation, 'token', v.token, 'current_token', v.current_token,
                    'current_generation', v.current_generation, 'current_release', v.current_release,
                    'high_water_generation', v.high_water_generation, 'op_id', v.op_id,
                    'manifest_id', CASE WHEN v.operation = 'publish' AND v.outcome = 'accepted'
                                        THEN v.detail -> 'manifest_id' END,
                    'unserialized', coalesce(v.detail -> 'unserialized' = 'true'::jsonb, false),
                    'login', CASE WHEN v.outcome = 'accepted' AND v.operation IN ('acquire', 'publish')
                                   AND NOT (v.operation = 'acquire' AND v.detail ? 'handed_over_by'
                                            AND EXISTS (SELECT 1 FROM relctl.candidates c
                                                        WHERE c.op_id = v.op_id AND c.env = v.env
                                                          AND c.token = v.token AND c.db_user IS NULL))
                                  THEN v.db_user END,
                    'settings', CASE WHEN v.operation = 'env-set'
                                     THEN jsonb_build_object('promote_from', v.detail -> 'promote_from',
                                                             'soak_ms', v.detail -> 'soak_ms') END) ORDER BY v.id), '[]')
                FROM event v),
            'operations', (
                SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'op_id', op.op_id, 'operation', op.operation, 'status', op.status, 'reason', op.reason,
                    'env', op.env, 'recorded_at', relctl.epoch_ms(op.recorded_at)) ORDER BY op.env, op.op_id), '[]')
                FROM op)));
END
$$;

GRANT EXECUTE ON FUNCTION relctl.history TO relctl_reviewer;
