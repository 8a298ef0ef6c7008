-- An organisation's environments: their groups, and which of them need a
-- person now. relctl.environment_attention is the one definition of "needs
-- attention"; relctl.attention_now gives its answer for every environment
-- at once, which `relctl status --attention` (relctl.attention) and the
-- console's environments (relctl.console_environments) read.

-- An environment's group: the one set (relctl env set --group), else its
-- name up to the first '.' (svc42.prod belongs to svc42).
CREATE FUNCTION relctl.env_group(e relctl.environments) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(e.group_name, split_part(e.name, '.', 1))
$$;

-- How far back a refusal still needs a person.
CREATE FUNCTION relctl.attention_refusal_window_ms() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 3600000::bigint $$;

-- Why environment e needs a person at p_now, as an array of
-- {"reason", "summary", "at"?} in a fixed order (empty: it does not):
-- - frozen: it refuses work until someone unfreezes it;
-- - refused: a write was refused in the last hour (how many, the last one);
-- - decision: supersession or promotion requests wait for a release manager;
-- - waiting: candidates are queued for its lease, their jobs still there
--   (relctl.live_candidates: those the console's queue shows);
-- - expiring: the live lease has less than a quarter of the environment's
--   default TTL left, so its job missed a renewal (a job renews at half);
-- - promotion_blocked: an open promotion request cannot go ahead: the
--   environment is frozen, or the one it is promoted from no longer has the
--   release accepted (never did, or rolled it back).
-- relctl.attention_items words the reasons from what was read of e's rows;
-- relctl.environment_attention reads them for one environment, and
-- relctl.attention_now for many at once. Both read the rows attention_items
-- describes; tests/test_organisation.cpp checks that they agree.

-- The reasons, worded, from what environment e's rows say at p_now: the
-- refusals in the window (how many, the last one's time), pending
-- supersessions, open promotions, waiting candidates, the live lease (the
-- one of e.last_token, not ended, not expired: its job and expiry), and the
-- first open promotion (by id) that cannot go ahead (relctl.blocked_promotion:
-- its release and generation). One expression, so it is inlined into the
-- query that calls it rather than called once per environment.
CREATE FUNCTION relctl.attention_items(
    e relctl.environments, p_now timestamptz, p_refused bigint, p_last_refused timestamptz,
    p_supersessions bigint, p_promotions bigint, p_waiting bigint, p_lease_job text,
    p_lease_expires timestamptz, p_blocked_release text, p_blocked_generation bigint)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT to_jsonb(array_remove(ARRAY[
        CASE WHEN e.frozen_at IS NOT NULL THEN jsonb_build_object(
            'reason', 'frozen', 'at', relctl.epoch_ms(e.frozen_at),
            'summary', format('frozen by %s: %s', e.frozen_by, e.frozen_reason)) END,
        CASE WHEN p_refused > 0 THEN jsonb_build_object(
            'reason', 'refused', 'at', relctl.epoch_ms(p_last_refused),
            'summary', CASE WHEN p_refused = 1 THEN '1 refusal in the last hour'
                            ELSE format('%s refusals in the last hour', p_refused) END) END,
        CASE WHEN p_supersessions + p_promotions > 0 THEN jsonb_build_object(
            'reason', 'decision',
            'summary', concat_ws(', ',
                CASE WHEN p_supersessions = 1 THEN '1 supersession pending'
                     WHEN p_supersessions > 1 THEN format('%s supersessions pending', p_supersessions) END,
                CASE WHEN p_promotions = 1 THEN '1 promotion open'
                     WHEN p_promotions > 1 THEN format('%s promotions open', p_promotions) END)) END,
        CASE WHEN p_waiting > 0 THEN jsonb_build_object(
            'reason', 'waiting',
            'summary', CASE WHEN p_waiting = 1 THEN '1 candidate waiting'
                            ELSE format('%s candidates waiting', p_waiting) END) END,
        CASE WHEN p_lease_expires IS NOT NULL
              AND p_lease_expires - p_now < e.default_ttl_ms * interval '1 millisecond' / 4 THEN jsonb_build_object(
            'reason', 'expiring', 'at', relctl.epoch_ms(p_lease_expires),
            'summary', format('lease of %s expires in %s', p_lease_job,
                              relctl.format_ms(greatest(0, relctl.ms_between(p_now, p_lease_expires))))) END,
        CASE WHEN p_blocked_release IS NOT NULL THEN jsonb_build_object(
            'reason', 'promotion_blocked',
            'summary', CASE WHEN e.frozen_at IS NOT NULL
                            THEN format('promotion of %s waits for the freeze to end', p_blocked_release)
                            ELSE format('%s does not have %s (generation %s) accepted', e.promote_from,
                                        p_blocked_release, p_blocked_generation) END) END
    ]::jsonb[], NULL))
$$;

-- The first open promotion of e (by id) that cannot go ahead at all: e is
-- frozen, or its upstream does not have the release accepted.
CREATE FUNCTION relctl.blocked_promotion(e relctl.environments)
RETURNS TABLE (release text, generation bigint)
LANGUAGE sql STABLE AS $$
    SELECT p.release, p.generation FROM relctl.promotions p
    WHERE p.env = e.name AND p.state = 'open'
      AND (e.frozen_at IS NOT NULL
           OR (e.promote_from IS NOT NULL AND (relctl.upstream_manifest(e, p.release, p.generation)).id IS NULL))
    ORDER BY p.id LIMIT 1
$$;

-- One environment's reasons: each of its rows read by an index probe, so
-- the cost of one environment does not grow with the organisation or the
-- trail. The console reads it for each environment a live event names.
-- PL/pgSQL, not SQL: its plans are kept for the session, which makes it
-- about four times cheaper per environment; and the counts are one
-- statement, not one per reason, as each costs its own planning in a new
-- session and its own executor start per environment.
CREATE FUNCTION relctl.environment_attention(e relctl.environments, p_now timestamptz) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_refused bigint;
    v_last timestamptz;
    v_n bigint;
    v_m bigint;
    v_waiting bigint;
    v_job text;
    v_expires timestamptz;
    v_release text;
    v_generation bigint;
BEGIN
    SELECT r.n, r.last,
           (SELECT count(*) FROM relctl.supersessions s WHERE s.env = e.name AND s.state = 'pending'),
           (SELECT count(*) FROM relctl.promotions p WHERE p.env = e.name AND p.state = 'open'),
           (SELECT count(*) FROM relctl.live_candidates(e.name) c),
           l.job, l.expires_at
    INTO v_refused, v_last, v_n, v_m, v_waiting, v_job, v_expires
    FROM (SELECT count(*) AS n, max(v.at) AS last FROM relctl.events v
          WHERE v.env = e.name AND v.outcome = 'rejected'
            AND v.at > p_now - relctl.attention_refusal_window_ms() * interval '1 millisecond') r
    LEFT JOIN relctl.leases l ON l.env = e.name AND l.token = e.last_token AND l.ended_at IS NULL
                             AND l.expires_at > p_now;
    IF v_m > 0 THEN
        SELECT b.release, b.generation INTO v_release, v_generation FROM relctl.blocked_promotion(e) b;
    END IF;
    RETURN relctl.attention_items(e, p_now, v_refused, v_last, v_n, v_m, v_waiting, v_job, v_expires,
                                  v_release, v_generation);
END
$$;

-- Every environment that needs a person at p_now, with its group and
-- reasons: relctl.environment_attention's answer for each, read set-based.
-- Each table's rows that can make a reason (the last hour's refusals,
-- pending and open requests, live waiters, live leases) are read once,
-- through their partial indexes, and joined by hash to one pass over the
-- environments; only the environments one of them (or a freeze, or a lease
-- near its end) makes a suspect go on to relctl.blocked_promotion and
-- relctl.attention_items, which words the reasons. `relctl status
-- --attention` (relctl.attention) and the console's read of every
-- environment (relctl.console_environments) both read it. At 10,000
-- environments one pass costs less than finding the suspects first and
-- fetching each by name, above all in a new session: the lookups touched
-- the same pages and planned twice as many relations. SQL, so that it is
-- inlined into its callers.
CREATE FUNCTION relctl.attention_now(p_now timestamptz)
RETURNS TABLE (name text, "group" text, attention jsonb)
LANGUAGE sql STABLE AS $$
    SELECT x.name, x."group", x.attention FROM (
        SELECT (s.e).name AS name, relctl.env_group(s.e) AS "group",
               relctl.attention_items(s.e, p_now, s.refused, s.last_refused, s.supersessions, s.promotions,
                                      s.waiting, s.lease_job, s.lease_expires, b.release, b.generation)
                   AS attention
        FROM (SELECT e, coalesce(r.n, 0) AS refused, r.last AS last_refused,
                     coalesce(ss.n, 0) AS supersessions, coalesce(pr.n, 0) AS promotions,
                     coalesce(w.n, 0) AS waiting, l.job AS lease_job, l.expires_at AS lease_expires
              FROM relctl.environments e
              LEFT JOIN (SELECT v.env, count(*) AS n, max(v.at) AS last FROM relctl.events v
                         WHERE v.outcome = 'rejected'
                           AND v.at > p_now - relctl.attention_refusal_window_ms() * interval '1 millisecond'
                         GROUP BY v.env) r ON r.env = e.name
              LEFT JOIN (SELECT x.env, count(*) AS n FROM relctl.supersessions x WHERE x.state = 'pending'
                         GROUP BY x.env) ss ON ss.env = e.name
              LEFT JOIN (SELECT x.env, count(*) AS n FROM relctl.promotions x WHERE x.state = 'open'
                         GROUP BY x.env) pr ON pr.env = e.name
              LEFT JOIN (SELECT x.env, count(*) AS n FROM relctl.live_waiting_candidates() x
                         GROUP BY x.env) w ON w.env = e.name
              LEFT JOIN relctl.leases l ON l.env = e.name AND l.token = e.last_token
                                       AND l.ended_at IS NULL AND l.expires_at > p_now
              -- The suspects: each test is one of environment_attention's
              -- reasons' conditions, or implied by one (promotion_blocked
              -- needs an open promotion).
              WHERE e.frozen_at IS NOT NULL OR r.n IS NOT NULL OR ss.n IS NOT NULL OR pr.n IS NOT NULL
                 OR w.n IS NOT NULL
                 OR l.expires_at - p_now < e.default_ttl_ms * interval '1 millisecond' / 4
              -- Kept a subquery: the lateral read of blocked promotions
              -- below then runs for the suspects only, not for every
              -- environment before the filter.
              OFFSET 0) s
        -- OFFSET 0 keeps the test on the suspect's count a gate in front
        -- of the read: flattened, it became a filter on the join, applied
        -- after blocked_promotion had run for every suspect (433 reads
        -- instead of 138 at 10,000 environments; 300 more pages).
        LEFT JOIN LATERAL (SELECT * FROM relctl.blocked_promotion(s.e) WHERE s.promotions > 0 OFFSET 0) b
            ON true
        -- Kept a subquery too: flattened, the reasons' expression would be
        -- planned and computed twice, for the filter below and for the
        -- answer.
        OFFSET 0) x
    WHERE x.attention <> '[]'
$$;

-- What `relctl status --attention` shows: the environments that need a
-- person now (relctl.attention_now), of group p_group and with names
-- matching the glob p_match (each NULL: any), each with its group and
-- reasons. Unordered: the client sorts names naturally (svc2 before svc10).
-- {"server_now": epoch ms, "environments": [{"name", "group", "attention"}]}
CREATE FUNCTION relctl.attention(p_group text DEFAULT NULL, p_match text DEFAULT NULL) RETURNS json
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET jit = off AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_like text := relctl.environment_filter_like(p_group, p_match);
BEGIN
    RETURN json_build_object(
        'server_now', relctl.epoch_ms(v_now),
        'environments', coalesce((
            SELECT json_agg(x) FROM (
                SELECT a.name, a."group", a.attention FROM relctl.attention_now(v_now) a
                WHERE (p_group IS NULL OR a."group" = p_group)
                  AND (v_like IS NULL OR a.name LIKE v_like)) x), '[]'));
END
$$;

GRANT EXECUTE ON FUNCTION relctl.attention TO relctl_reviewer;
