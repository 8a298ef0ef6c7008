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
-- environment does not grow with the organisation or the trail.
CREATE FUNCTION relctl.environment_attention(e relctl.environments, p_now timestamptz) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT coalesce(jsonb_agg(r.item ORDER BY r.ord) FILTER (WHERE r.item IS NOT NULL), '[]')
    FROM (
        SELECT 1 AS ord, CASE WHEN e.frozen_at IS NOT NULL THEN jsonb_build_object(
                   'reason', 'frozen', 'at', relctl.epoch_ms(e.frozen_at),
                   'summary', format('frozen by %s: %s', e.frozen_by, e.frozen_reason)) END AS item
        UNION ALL
        SELECT 2, CASE WHEN x.n > 0 THEN jsonb_build_object(
                   'reason', 'refused', 'at', relctl.epoch_ms(x.last),
                   'summary', CASE WHEN x.n = 1 THEN '1 refusal in the last hour'
                                   ELSE format('%s refusals in the last hour', x.n) END) END
        FROM (SELECT count(*) AS n, max(v.at) AS last FROM relctl.events v
              WHERE v.env = e.name AND v.outcome = 'rejected'
                AND v.at > p_now - relctl.attention_refusal_window_ms() * interval '1 millisecond') x
        UNION ALL
        SELECT 3, CASE WHEN d.s + d.p > 0 THEN jsonb_build_object(
                   'reason', 'decision',
                   'summary', concat_ws(', ',
                       CASE WHEN d.s = 1 THEN '1 supersession pending'
                            WHEN d.s > 1 THEN format('%s supersessions pending', d.s) END,
                       CASE WHEN d.p = 1 THEN '1 promotion open'
                            WHEN d.p > 1 THEN format('%s promotions open', d.p) END)) END
        FROM (SELECT (SELECT count(*) FROM relctl.supersessions s
                      WHERE s.env = e.name AND s.state = 'pending') AS s,
                     (SELECT count(*) FROM relctl.promotions p
                      WHERE p.env = e.name AND p.state = 'open') AS p) d
        UNION ALL
        SELECT 4, CASE WHEN w.n > 0 THEN jsonb_build_object(
                   'reason', 'waiting',
                   'summary', CASE WHEN w.n = 1 THEN '1 candidate waiting'
                                   ELSE format('%s candidates waiting', w.n) END) END
        FROM (SELECT count(*) AS n FROM relctl.candidates c
              WHERE c.env = e.name AND c.state = 'waiting') w
        UNION ALL
        SELECT 5, CASE WHEN l.token IS NOT NULL
                        AND l.expires_at - p_now < e.default_ttl_ms * interval '1 millisecond' / 4
                   THEN jsonb_build_object(
                   'reason', 'expiring', 'at', relctl.epoch_ms(l.expires_at),
                   'summary', format('lease of %s expires in %s', l.job,
                                     relctl.format_ms(greatest(0, relctl.ms_between(p_now, l.expires_at))))) END
        FROM (SELECT 1) one
        LEFT JOIN relctl.leases l ON l.env = e.name AND l.token = e.last_token
                                 AND l.ended_at IS NULL AND l.expires_at > p_now
        UNION ALL
        SELECT 6, CASE WHEN b.release IS NOT NULL THEN jsonb_build_object(
                   'reason', 'promotion_blocked',
                   'summary', CASE WHEN e.frozen_at IS NOT NULL
                                   THEN format('promotion of %s waits for the freeze to end', b.release)
                                   ELSE format('%s does not have %s (generation %s) accepted', e.promote_from,
                                               b.release, b.generation) END) END
        FROM (SELECT 1) one
        LEFT JOIN LATERAL (
            SELECT p.release, p.generation FROM relctl.promotions p
            WHERE p.env = e.name AND p.state = 'open'
              AND (e.frozen_at IS NOT NULL
                   OR (e.promote_from IS NOT NULL
                       AND (relctl.upstream_manifest(e, p.release, p.generation)).id IS NULL))
            ORDER BY p.id LIMIT 1) b ON true
    ) r
$$;
