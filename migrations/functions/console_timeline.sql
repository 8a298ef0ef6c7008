-- The release console's timeline: the leases, freezes and markers of a time
-- window, capped so that no window exhausts the server or the console. Its
-- leases have the JSON shape of relctl.console_lease_json (console.sql).

-- Leases overlapping [p_from, p_to] and markers within it. The result is
-- capped (the newest 20,000 leases and 50,000 markers are kept) so that a
-- window over years of history cannot exhaust the server's or the console's
-- memory; the console zooms in to see more.
--
-- Freezes overlapping the window are sent as spans, so the console can shade
-- the time an environment refused work. A freeze is the span from a 'freeze'
-- event to the next 'unfreeze' of its environment (freeze and unfreeze record
-- an event only when they change the state, so the two alternate); the one
-- still in force is read from the environment itself, open-ended, since it
-- has no unfreeze yet. A freeze that began before the window still covers
-- its start: for each environment, the last freeze before the window is a
-- candidate too, so a week-long freeze is shaded however far one zooms in.
-- The candidates are the freezes within the window plus one per environment
-- ever frozen, each paired with its unfreeze by one probe of events_freezes
-- (0018): the cost follows the window and the environments frozen, not the
-- length of the trail nor, for every lane, the size of the organisation (a
-- probe per environment cost 10,000 environments 0.4 s).
--
-- history_first/history_last are the times of the trail's first and last
-- events (the ends of the primary key: two index probes), so "zoom to the
-- whole history" needs no slice over all of it.
--
-- Any reviewer may call this with any arguments. A NULL bound names no
-- window: the answer still carries the lanes, the clock and the history's
-- extent, with no items (a cheap way to learn the extent). Bounds beyond
-- what a timestamp holds are clamped, so no argument makes the function fail
-- with an overflow; only a window that ends before it starts is refused.
--
-- p_envs: only these environments' lanes and items (NULL: every one). A
-- console applies a live event by reading the slice of the environments it
-- touched, whose cost follows those lanes, not the organisation.
CREATE FUNCTION relctl.console_timeline(p_from bigint, p_to bigint, p_envs text[] DEFAULT NULL) RETURNS json
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
-- The plan's estimates (every lane, every freeze) pass the JIT's threshold
-- while the work is a few milliseconds: compiling cost more than running.
SET jit = off AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    -- About 4685 BC .. 287,000 AD: inside timestamptz's range, with room for
    -- the millisecond added to the end.
    c_min constant bigint := -210000000000000;
    c_max constant bigint := 9000000000000000;
    v_from timestamptz;
    v_to timestamptz;
    v_window boolean := p_from IS NOT NULL AND p_to IS NOT NULL;
BEGIN
    IF v_window AND p_from > p_to THEN
        PERFORM relctl.invalid('a timeline window needs a start that is not after its end');
    END IF;
    IF v_window THEN
        v_from := relctl.from_epoch_ms(least(greatest(p_from, c_min), c_max));
        -- p_to names a millisecond; everything within it belongs to the window.
        v_to := relctl.from_epoch_ms(least(greatest(p_to, c_min), c_max)) + interval '1 millisecond';
    ELSE
        -- An empty window: every item test below compares with NULL and fails.
        v_from := NULL;
        v_to := NULL;
    END IF;
    RETURN json_build_object(
        'server_now', relctl.epoch_ms(v_now),
        -- An array in index order rather than json_agg's sort: half the time
        -- at 10,000 lanes.
        'environments', to_json(ARRAY(SELECT name FROM relctl.environments
                                      WHERE p_envs IS NULL OR name = ANY (p_envs) ORDER BY name)),
        'history_first', relctl.epoch_ms((SELECT at FROM relctl.events ORDER BY id LIMIT 1)),
        'history_last', relctl.epoch_ms((SELECT at FROM relctl.events ORDER BY id DESC LIMIT 1)),
        'freezes', (
            SELECT coalesce(json_agg(json_build_object('env', f.env, 'from', relctl.epoch_ms(f.began),
                                                       'to', relctl.epoch_ms(f.ended), 'by', f.by,
                                                       'reason', f.reason)
                                     ORDER BY f.env, f.began), '[]')
            FROM (SELECT fz.env, fz.at AS began, uf.at AS ended, fz.actor AS by, fz.detail ->> 'reason' AS reason
                  FROM (SELECT * FROM relctl.events v
                        WHERE v.operation = 'freeze' AND v.outcome = 'accepted' AND v.env IS NOT NULL
                          AND v.at >= v_from AND v.at < v_to AND (p_envs IS NULL OR v.env = ANY (p_envs))
                        UNION ALL -- disjoint: in the window, and before it
                        SELECT b.* FROM relctl.environments e
                        CROSS JOIN LATERAL (
                            SELECT * FROM relctl.events v
                            WHERE v.operation = 'freeze' AND v.outcome = 'accepted' AND v.env = e.name
                              AND v.at < v_from
                            ORDER BY v.id DESC LIMIT 1) b
                        WHERE e.name = ANY (p_envs) OR (p_envs IS NULL AND e.name IN (
                            -- Every lane: only those ever frozen, found by
                            -- skipping through events_freezes (0018) from one
                            -- environment to the next, one probe each.
                            WITH RECURSIVE frozen (env) AS (
                                SELECT min(v.env) FROM relctl.events v
                                WHERE v.operation = 'freeze' AND v.outcome = 'accepted' AND v_window
                                UNION ALL
                                SELECT (SELECT min(v.env) FROM relctl.events v
                                        WHERE v.operation = 'freeze' AND v.outcome = 'accepted' AND v.env > f.env)
                                FROM frozen f WHERE f.env IS NOT NULL)
                            SELECT frozen.env FROM frozen WHERE frozen.env IS NOT NULL))) fz
                  CROSS JOIN LATERAL (
                      SELECT u.at FROM relctl.events u
                      WHERE u.operation = 'unfreeze' AND u.outcome = 'accepted' AND u.env = fz.env
                        AND u.id > fz.id
                      ORDER BY u.id LIMIT 1) uf
                  WHERE uf.at >= v_from
                  UNION ALL
                  SELECT e.name, e.frozen_at, NULL, e.frozen_by, e.frozen_reason
                  FROM relctl.environments e
                  WHERE e.frozen_at IS NOT NULL AND e.frozen_at < v_to
                    AND (p_envs IS NULL OR e.name = ANY (p_envs))) f),
        'leases', (
            SELECT coalesce(json_agg(relctl.console_lease_json(l, v_now) ORDER BY l.env, l.acquired_at, l.token),
                            '[]')
            -- Overlapping: acquired before the window ends, ended (or, never
            -- ended, expiring) at or after it starts. As two disjoint
            -- branches, each read through leases_ended (0010): a
            -- coalesce(ended_at, expires_at) >= v_from as one test reads every
            -- lease of the history to keep the few in a recent window.
            FROM (SELECT * FROM relctl.leases
                  WHERE ended_at >= v_from AND acquired_at < v_to AND (p_envs IS NULL OR env = ANY (p_envs))
                  UNION ALL
                  SELECT * FROM relctl.leases
                  WHERE ended_at IS NULL AND expires_at >= v_from AND acquired_at < v_to
                    AND (p_envs IS NULL OR env = ANY (p_envs))
                  ORDER BY acquired_at DESC LIMIT 20000) l),
        'markers', (
            SELECT coalesce(json_agg(json_build_object('event', k.event, 'env', k.env,
                                                       'at', relctl.epoch_ms(k.at), 'kind', k.kind,
                                                       'label', k.label, 'job', k.job)
                                     ORDER BY k.env, k.at, k.event), '[]')
            FROM (SELECT * FROM (
                      SELECT v.id AS event, v.env, v.at,
                             -- A rollback and a promotion decision change what an
                             -- environment runs (or may run) by a person's hand: each
                             -- has a kind of its own, so the timeline can tell them
                             -- from the routine operator actions.
                             CASE WHEN v.reason = 'SUPERSEDED' THEN 'superseded'
                                  WHEN v.outcome = 'rejected' THEN 'refusal'
                                  WHEN v.operation = 'publish' THEN 'publish'
                                  WHEN v.operation = 'rollback' THEN 'rollback'
                                  WHEN v.operation IN ('promotion-approve', 'promotion-deny') THEN 'promotion'
                                  ELSE 'operator' END AS kind,
                             CASE WHEN v.outcome = 'rejected' THEN concat_ws(' ', v.reason, v.job)
                                  WHEN v.operation = 'publish' THEN concat_ws(' ', v.release, v.job)
                                  WHEN v.operation = 'rollback' THEN
                                      format('rollback to %s (from %s) by %s', v.release,
                                             v.detail ->> 'replaced_release', v.actor)
                                  WHEN v.operation = 'promotion-approve' THEN
                                      format('%s approved by %s (%s of %s)', v.release, v.actor,
                                             v.detail ->> 'approvals_given', v.detail ->> 'approvals_required')
                                  WHEN v.operation = 'promotion-deny' THEN
                                      format('%s denied by %s', v.release, v.actor)
                                  ELSE concat_ws(' ', v.operation, v.actor) END AS label,
                             v.job
                      FROM relctl.events v
                      WHERE v.at >= v_from AND v.at < v_to AND v.env IS NOT NULL
                        AND (p_envs IS NULL OR v.env = ANY (p_envs))
                        AND (v.outcome = 'rejected' OR v.operation IN
                             ('publish', 'revoke', 'freeze', 'unfreeze', 'approve', 'deny', 'env-set',
                              'rollback', 'promotion-requested', 'promotion-approve', 'promotion-deny'))
                      ORDER BY v.at DESC LIMIT 50000) evs
                  UNION ALL
                  SELECT * FROM (
                      SELECT 0::bigint, c.env, c.queued_at, 'queued', format('%s gen %s', c.job, c.generation),
                             c.job
                      FROM relctl.candidates c -- through candidates_queued (0010)
                      WHERE c.queued_at >= v_from AND c.queued_at < v_to
                        AND (p_envs IS NULL OR c.env = ANY (p_envs))
                      ORDER BY c.queued_at DESC LIMIT 50000) cands
                  ORDER BY at DESC LIMIT 50000) k));
END
$$;

GRANT EXECUTE ON FUNCTION relctl.console_timeline TO relctl_reviewer;
