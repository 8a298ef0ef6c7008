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
CREATE FUNCTION relctl.console_promotions(p_names text[] DEFAULT NULL, p_decided_limit integer DEFAULT 100)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_limit integer := least(greatest(coalesce(p_decided_limit, 100), 0), 1000);
    v_covers text[];
    v_environments jsonb;
    v_promotions jsonb;
BEGIN
    IF p_names IS NOT NULL THEN
        -- The names as given (distinct, no NULL) and whatever is promoted from them.
        SELECT coalesce(array_agg(DISTINCT n ORDER BY n), '{}') INTO v_covers
        FROM (SELECT unnest(p_names) AS n
              UNION
              SELECT d.name FROM relctl.environments d WHERE d.promote_from = ANY (p_names)) x
        WHERE n IS NOT NULL;
    END IF;

    SELECT coalesce(jsonb_agg(relctl.environment_json(e.name) ORDER BY e.name), '[]') INTO v_environments
    FROM relctl.environments e
    WHERE (v_covers IS NULL OR e.name = ANY (v_covers))
      AND (e.promote_from IS NOT NULL OR e.soak_ms > 0 OR e.approvals_required > 0 OR e.approver_role IS NOT NULL
           OR EXISTS (SELECT 1 FROM relctl.environments d WHERE d.promote_from = e.name));

    SELECT coalesce(jsonb_agg(relctl.promotion_json(p) ORDER BY p.id), '[]') INTO v_promotions
    FROM (SELECT o.* FROM relctl.promotions o
          WHERE o.state = 'open' AND (v_covers IS NULL OR o.env = ANY (v_covers))
          UNION ALL
          (SELECT d.* FROM relctl.promotions d
           WHERE d.state <> 'open' AND (v_covers IS NULL OR d.env = ANY (v_covers))
           ORDER BY d.id DESC
           LIMIT v_limit)) p;

    RETURN jsonb_build_object('environments', v_environments, 'promotions', v_promotions,
                              'covers', to_jsonb(v_covers));
END
$$;

GRANT EXECUTE ON FUNCTION relctl.console_promotions TO relctl_reviewer;
