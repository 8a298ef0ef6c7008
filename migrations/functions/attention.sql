-- An organisation's environments: their groups, and which of them need a
-- person now. relctl.environment_attention is the one definition of "needs
-- attention": `relctl status --attention` (relctl.attention) and the
-- console's environments (relctl.console_environments) both read it.

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
-- - waiting: candidates are queued for its lease;
-- - expiring: the live lease has less than a quarter of the environment's
--   default TTL left, so its job missed a renewal (a job renews at half);
-- - promotion_blocked: an open promotion request cannot go ahead: the
--   environment is frozen, or the one it is promoted from no longer has the
--   release accepted (never did, or rolled it back).
-- Every read is an index probe on this environment's rows: the cost of one
-- environment does not grow with the organisation or the trail. PL/pgSQL,
-- not SQL: its plans are kept for the session, which makes it about four
-- times cheaper per environment (26 against 96 microseconds at 10,000).
-- A new reason must also be admitted by relctl.attention_suspects below.
CREATE FUNCTION relctl.environment_attention(e relctl.environments, p_now timestamptz) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_items jsonb := '[]';
    v_n bigint;
    v_m bigint;
    v_last timestamptz;
    l relctl.leases;
    v_release text;
    v_generation bigint;
BEGIN
    IF e.frozen_at IS NOT NULL THEN
        v_items := v_items || jsonb_build_object(
            'reason', 'frozen', 'at', relctl.epoch_ms(e.frozen_at),
            'summary', format('frozen by %s: %s', e.frozen_by, e.frozen_reason));
    END IF;
    SELECT count(*), max(v.at) INTO v_n, v_last FROM relctl.events v
    WHERE v.env = e.name AND v.outcome = 'rejected'
      AND v.at > p_now - relctl.attention_refusal_window_ms() * interval '1 millisecond';
    IF v_n > 0 THEN
        v_items := v_items || jsonb_build_object(
            'reason', 'refused', 'at', relctl.epoch_ms(v_last),
            'summary', CASE WHEN v_n = 1 THEN '1 refusal in the last hour'
                            ELSE format('%s refusals in the last hour', v_n) END);
    END IF;
    SELECT count(*) INTO v_n FROM relctl.supersessions s WHERE s.env = e.name AND s.state = 'pending';
    SELECT count(*) INTO v_m FROM relctl.promotions p WHERE p.env = e.name AND p.state = 'open';
    IF v_n + v_m > 0 THEN
        v_items := v_items || jsonb_build_object(
            'reason', 'decision',
            'summary', concat_ws(', ',
                CASE WHEN v_n = 1 THEN '1 supersession pending'
                     WHEN v_n > 1 THEN format('%s supersessions pending', v_n) END,
                CASE WHEN v_m = 1 THEN '1 promotion open'
                     WHEN v_m > 1 THEN format('%s promotions open', v_m) END));
    END IF;
    SELECT count(*) INTO v_n FROM relctl.candidates c WHERE c.env = e.name AND c.state = 'waiting';
    IF v_n > 0 THEN
        v_items := v_items || jsonb_build_object(
            'reason', 'waiting',
            'summary', CASE WHEN v_n = 1 THEN '1 candidate waiting' ELSE format('%s candidates waiting', v_n) END);
    END IF;
    SELECT * INTO l FROM relctl.leases x
    WHERE x.env = e.name AND x.token = e.last_token AND x.ended_at IS NULL AND x.expires_at > p_now;
    IF l.token IS NOT NULL AND l.expires_at - p_now < e.default_ttl_ms * interval '1 millisecond' / 4 THEN
        v_items := v_items || jsonb_build_object(
            'reason', 'expiring', 'at', relctl.epoch_ms(l.expires_at),
            'summary', format('lease of %s expires in %s', l.job,
                              relctl.format_ms(greatest(0, relctl.ms_between(p_now, l.expires_at)))));
    END IF;
    IF v_m > 0 THEN
        SELECT p.release, p.generation INTO v_release, v_generation FROM relctl.promotions p
        WHERE p.env = e.name AND p.state = 'open'
          AND (e.frozen_at IS NOT NULL
               OR (e.promote_from IS NOT NULL
                   AND (relctl.upstream_manifest(e, p.release, p.generation)).id IS NULL))
        ORDER BY p.id LIMIT 1;
        IF FOUND THEN
            v_items := v_items || jsonb_build_object(
                'reason', 'promotion_blocked',
                'summary', CASE WHEN e.frozen_at IS NOT NULL
                                THEN format('promotion of %s waits for the freeze to end', v_release)
                                ELSE format('%s does not have %s (generation %s) accepted', e.promote_from,
                                            v_release, v_generation) END);
        END IF;
    END IF;
    RETURN v_items;
END
$$;

-- The environments that may need a person at p_now, cheaply: a superset of
-- those relctl.environment_attention gives a reason for (each of its
-- reasons implies one of these tests), read with a few set-based scans and
-- one index probe per environment for refusals, so that relctl.attention
-- runs the full definition only on these. At 10,000 environments a tenth
-- of them, instead of all.
CREATE FUNCTION relctl.attention_suspects(p_now timestamptz) RETURNS SETOF relctl.environments
LANGUAGE sql STABLE AS $$
    SELECT e.* FROM relctl.environments e
    WHERE e.frozen_at IS NOT NULL
       OR e.name IN (SELECT s.env FROM relctl.supersessions s WHERE s.state = 'pending')
       OR e.name IN (SELECT p.env FROM relctl.promotions p WHERE p.state = 'open')
       OR e.name IN (SELECT c.env FROM relctl.candidates c WHERE c.state = 'waiting')
       OR e.name IN (SELECT l.env FROM relctl.leases l WHERE l.ended_at IS NULL AND l.expires_at > p_now)
       OR EXISTS (SELECT 1 FROM relctl.events v
                  WHERE v.env = e.name AND v.outcome = 'rejected'
                    AND v.at > p_now - relctl.attention_refusal_window_ms() * interval '1 millisecond')
$$;

-- What `relctl status --attention` shows: the environments that need a
-- person now, of group p_group and with names matching the glob p_match
-- (each NULL: any), each with its group and reasons. Unordered: the client
-- sorts names naturally (svc2 before svc10).
-- {"server_now": epoch ms, "environments": [{"name", "group", "attention"}]}
CREATE FUNCTION relctl.attention(p_group text DEFAULT NULL, p_match text DEFAULT NULL) RETURNS json
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET jit = off AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_like text := relctl.environment_filter_like(p_group, p_match);
BEGIN
    -- The suspects first (MATERIALIZED): otherwise the planner may test
    -- environment_attention before the cheap conditions, on every row.
    RETURN json_build_object(
        'server_now', relctl.epoch_ms(v_now),
        'environments', coalesce((
            WITH suspects AS MATERIALIZED (
                SELECT e.* FROM relctl.attention_suspects(v_now) e
                WHERE (p_group IS NULL OR relctl.env_group(e) = p_group)
                  AND (v_like IS NULL OR e.name LIKE v_like))
            SELECT json_agg(x) FROM (
                SELECT s.name, relctl.env_group(s::relctl.environments) AS "group",
                       relctl.environment_attention(s::relctl.environments, v_now) AS attention
                FROM suspects s) x
            WHERE x.attention <> '[]'), '[]'));
END
$$;

GRANT EXECUTE ON FUNCTION relctl.attention TO relctl_reviewer;
