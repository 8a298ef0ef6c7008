-- The release console's Promotions view, read in one bounded call: the
-- promotion settings of the environments that take part in a path, the open
-- promotion requests, and only the newest decided ones. Before this the
-- console read every environment (relctl.env_list) and every request ever
-- decided (relctl.promotions_list(NULL, true)) on every live event, a cost
-- that grew with the organisation and with its history.

-- p_names NULL: every environment (the console's full read, on connecting).
-- Otherwise the live update of those environments: the answer covers them and
-- the environments promoted from them (a publish upstream changes how ready a
-- request downstream is), and 'covers' names them all, so the console
-- replaces exactly that part of what it holds (an environment of 'covers'
-- absent from the answer takes part in no path any more, a request absent
-- from it was decided past the limit or is gone).
--
-- An environment takes part when it is promoted from another, another is
-- promoted from it, or it asks for a soak, approvals or an approver role.
-- Requests: every open one of the environments covered, and the newest
-- p_decided_limit decided ones (clamped to 0..1000; NULL: 100), all in id
-- order. Any reviewer may call this with any arguments: NULL names in the
-- list match nothing, unknown names are simply not found, and no argument
-- makes it fail.
--
-- Each environment is only what the view reads of it, as an array (no keys:
-- at 10,000 environments the keys were most of the answer), in this order:
--   [name, promote_from, soak_ms, approvals_required, approver_role,
--    frozen_at, frozen_by, frozen_reason,
--    current manifest id, current release, current generation]
-- frozen_at and the current manifest's members are null when it is not
-- frozen and has nothing published. The values are those of
-- relctl.environment_json (frozen_at the same ISO text), read by one join
-- for all of them: it was one environment_json call per environment (its
-- lease, queue and counts, which the view never shows), two seconds at
-- 10,000 environments. In name order as bytes compare (COLLATE "C"), the
-- order the console keeps them in. The requests are relctl.promotion_json's:
-- few (every open one and a bounded number decided), and the view shows all
-- of each.
CREATE FUNCTION relctl.console_promotions(p_names text[] DEFAULT NULL, p_decided_limit integer DEFAULT 100)
RETURNS json
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_limit integer := least(greatest(coalesce(p_decided_limit, 100), 0), 1000);
    v_covers text[];
BEGIN
    IF p_names IS NOT NULL THEN
        -- The names as given (distinct, no NULL) and whatever is promoted from them.
        SELECT coalesce(array_agg(DISTINCT n ORDER BY n), '{}') INTO v_covers
        FROM (SELECT unnest(p_names) AS n
              UNION
              SELECT d.name FROM relctl.environments d WHERE d.promote_from = ANY (p_names)) x
        WHERE n IS NOT NULL;
    END IF;

    -- json, not jsonb: the answer is written as text once.
    RETURN json_build_object(
        'environments', (
            SELECT coalesce(json_agg(json_build_array(
                       e.name, e.promote_from, e.soak_ms, e.approvals_required, e.approver_role,
                       e.frozen_at, e.frozen_by, e.frozen_reason, m.id, m.release, m.generation)
                       ORDER BY e.name COLLATE "C"), '[]')
            FROM relctl.environments e
            LEFT JOIN relctl.manifests m ON m.id = e.current_manifest_id
            WHERE (v_covers IS NULL OR e.name = ANY (v_covers))
              AND (e.promote_from IS NOT NULL OR e.soak_ms > 0 OR e.approvals_required > 0
                   OR e.approver_role IS NOT NULL
                   OR EXISTS (SELECT 1 FROM relctl.environments d WHERE d.promote_from = e.name))),
        'promotions', (
            SELECT coalesce(json_agg(relctl.promotion_json(p) ORDER BY p.id), '[]')
            FROM (SELECT o.* FROM relctl.promotions o
                  WHERE o.state = 'open' AND (v_covers IS NULL OR o.env = ANY (v_covers))
                  UNION ALL
                  (SELECT d.* FROM relctl.promotions d
                   WHERE d.state <> 'open' AND (v_covers IS NULL OR d.env = ANY (v_covers))
                   ORDER BY d.id DESC
                   LIMIT v_limit)) p),
        'covers', to_json(v_covers));
END
$$;

GRANT EXECUTE ON FUNCTION relctl.console_promotions TO relctl_reviewer;
