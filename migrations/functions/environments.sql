-- Environments: adding, configuring, freezing and reading them.

-- Locks the environment row for the rest of the transaction: this is what
-- serialises acquire, renew, release and publish on one environment. First
-- without waiting, which is all it takes when nobody holds the row; then
-- through relctl.wait_for (bounds.sql), which bounds the wait whatever the
-- caller's lock_timeout, and ends a session that has held the row past the
-- protocol's bounds, whatever that session's own settings.
CREATE FUNCTION relctl.lock_environment(p_env text) RETURNS relctl.environments
LANGUAGE plpgsql AS $$
DECLARE
    e relctl.environments;
BEGIN
    SELECT * INTO e FROM relctl.environments WHERE name = p_env FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
        RETURN e;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM relctl.environments WHERE name = p_env) THEN
        PERFORM relctl.invalid(format('unknown environment "%s"', p_env));
    END IF;
    RETURN relctl.wait_for(p_env, NULL, format('environment %s', p_env));
END
$$;

CREATE FUNCTION relctl.environment_json(p_env text) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    m relctl.manifests;
    v_now timestamptz := clock_timestamp();
BEGIN
    SELECT * INTO e FROM relctl.environments WHERE name = p_env;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown environment "%s"', p_env));
    END IF;
    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    RETURN jsonb_build_object(
        'name', e.name, 'default_ttl_ms', e.default_ttl_ms, 'max_ttl_ms', e.max_ttl_ms,
        'last_token', e.last_token, 'created_at', e.created_at,
        'policy', e.policy, 'supersede', e.supersede, 'serialization', e.serialization,
        'frozen', CASE WHEN e.frozen_at IS NULL THEN NULL ELSE
            jsonb_build_object('at', e.frozen_at, 'by', e.frozen_by, 'reason', e.frozen_reason) END,
        'current', CASE WHEN m.id IS NULL THEN NULL ELSE relctl.manifest_json(m, e.name) - 'env' END,
        'lease', relctl.lease_json(relctl.live_lease(e, v_now), v_now),
        -- Queued candidates whose session is gone are not shown, even before
        -- the next write marks them as having left.
        'queue', CASE WHEN EXISTS (SELECT 1 FROM relctl.candidates c WHERE c.env = e.name AND c.state = 'waiting')
                      THEN (SELECT coalesce(jsonb_agg(relctl.candidate_json(c) ORDER BY c.generation, c.id), '[]')
                            FROM relctl.live_candidates(e.name) c)
                      ELSE '[]' END,
        'pending_supersessions', (SELECT count(*) FROM relctl.supersessions s
                                  WHERE s.env = e.name AND s.state = 'pending'),
        'promote_from', e.promote_from, 'soak_ms', e.soak_ms, 'approvals_required', e.approvals_required,
        'approver_role', e.approver_role,
        'high_water_generation', e.high_water_generation,
        'open_promotions', (SELECT count(*) FROM relctl.promotions p WHERE p.env = e.name AND p.state = 'open'));
END
$$;

CREATE FUNCTION relctl.env_list() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    SELECT jsonb_build_object('environments', coalesce(jsonb_agg(relctl.environment_json(name) ORDER BY name), '[]'))
    FROM relctl.environments
$$;

CREATE FUNCTION relctl.env_add(p_name text, p_default_ttl_ms bigint, p_max_ttl_ms bigint,
                               p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_default bigint := coalesce(p_default_ttl_ms, least(60000, coalesce(p_max_ttl_ms, 60000)));
    v_max bigint := coalesce(p_max_ttl_ms, greatest(600000, v_default));
    e relctl.environments;
BEGIN
    PERFORM relctl.require_read_committed();
    IF p_name IS NULL OR p_name !~ '^[a-z0-9][a-z0-9._-]{0,62}$' THEN
        PERFORM relctl.invalid(format('invalid environment name "%s": expected ^[a-z0-9][a-z0-9._-]{0,62}$', p_name));
    END IF;
    IF v_default <= 0 OR v_max <= 0 THEN
        PERFORM relctl.invalid('ttl values must be positive');
    END IF;
    IF v_default > v_max THEN
        PERFORM relctl.invalid(format('default ttl %s ms exceeds max ttl %s ms', v_default, v_max));
    END IF;
    INSERT INTO relctl.environments (name, default_ttl_ms, max_ttl_ms)
        VALUES (p_name, v_default, v_max)
        ON CONFLICT (name) DO NOTHING
        RETURNING * INTO e;
    IF NOT FOUND THEN
        -- Adding an existing environment with the same settings is a no-op, so
        -- pipelines can declare their environments on every run.
        SELECT * INTO e FROM relctl.environments WHERE name = p_name;
        IF (p_default_ttl_ms IS NOT NULL AND e.default_ttl_ms <> p_default_ttl_ms)
           OR (p_max_ttl_ms IS NOT NULL AND e.max_ttl_ms <> p_max_ttl_ms) THEN
            PERFORM relctl.invalid(format('environment "%s" exists with other settings (default ttl %s ms, max ttl %s ms)',
                                          p_name, e.default_ttl_ms, e.max_ttl_ms));
        END IF;
        RETURN relctl.environment_json(p_name) || jsonb_build_object('created', false);
    END IF;
    PERFORM relctl.record(p_name, 'env-add', NULL, NULL, NULL, NULL, NULL, NULL, p_client,
                          jsonb_build_object('default_ttl_ms', v_default, 'max_ttl_ms', v_max));
    RETURN relctl.environment_json(p_name) || jsonb_build_object('created', true);
END
$$;

-- p_promote_from: the environment candidates must have been accepted on
-- first ('' clears it); p_soak_ms: for how long; p_approvals: how many
-- distinct approvals a promotion needs here (0: none); p_approver_role: the
-- PostgreSQL role whose members alone may decide this environment's
-- promotion and supersession requests ('' clears it: any release manager).
-- NULL: unchanged.
CREATE FUNCTION relctl.env_set(p_env text, p_policy text, p_supersede text, p_serialization text,
                               p_client jsonb, p_promote_from text DEFAULT NULL, p_soak_ms bigint DEFAULT NULL,
                               p_approvals integer DEFAULT NULL, p_approver_role text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    v_changes jsonb;
    v_from text := nullif(p_promote_from, '');
    v_role text := nullif(p_approver_role, '');
    v_up text;
    v_path text[];
BEGIN
    PERFORM relctl.require_read_committed();
    IF p_policy IS NOT NULL AND p_policy NOT IN ('ordered', 'newest') THEN
        PERFORM relctl.invalid(format('invalid policy "%s": expected ordered or newest', p_policy));
    END IF;
    IF p_supersede IS NOT NULL AND p_supersede NOT IN ('auto', 'approval') THEN
        PERFORM relctl.invalid(format('invalid supersede mode "%s": expected auto or approval', p_supersede));
    END IF;
    IF p_serialization IS NOT NULL AND p_serialization NOT IN ('enforced', 'off') THEN
        PERFORM relctl.invalid(format('invalid serialization "%s": expected enforced or off', p_serialization));
    END IF;
    IF p_soak_ms IS NOT NULL AND (p_soak_ms < 0 OR p_soak_ms > 30 * 86400000::bigint) THEN
        PERFORM relctl.invalid('a soak is between 0 and 30 days');
    END IF;
    IF p_approvals IS NOT NULL AND p_approvals NOT BETWEEN 0 AND 10 THEN
        PERFORM relctl.invalid('approvals are between 0 and 10');
    END IF;
    -- A role that does not exist would admit nobody (relctl.may_decide): a
    -- typo must not lock every approver out unnoticed.
    IF v_role IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = v_role) THEN
        PERFORM relctl.invalid(format('unknown role "%s": create it (CREATE ROLE %s NOLOGIN) and grant it to the approvers first',
                                      p_approver_role, p_approver_role));
    END IF;
    IF p_policy IS NULL AND p_supersede IS NULL AND p_serialization IS NULL AND p_promote_from IS NULL
       AND p_soak_ms IS NULL AND p_approvals IS NULL AND p_approver_role IS NULL THEN
        PERFORM relctl.invalid('nothing to set: give --policy, --supersede, --serialization, --promote-from, --soak, --approvals or --approver-role');
    END IF;
    -- Promotion paths change under one global lock, so that two concurrent
    -- changes cannot close a cycle that neither sees.
    IF p_promote_from IS NOT NULL THEN
        PERFORM relctl.lock_key(hashtextextended('relctl.promotion-paths', 0), 'the promotion paths');
    END IF;
    e := relctl.lock_environment(p_env);
    IF v_from IS NOT NULL THEN
        IF NOT EXISTS (SELECT 1 FROM relctl.environments WHERE name = v_from) THEN
            PERFORM relctl.invalid(format('unknown environment "%s"', v_from));
        END IF;
        -- Walk up from the new upstream: reaching p_env would close a cycle.
        v_up := v_from;
        v_path := ARRAY[p_env];
        WHILE v_up IS NOT NULL LOOP
            v_path := v_path || v_up;
            IF v_up = p_env THEN
                PERFORM relctl.invalid(format('promotion paths may not form a cycle: %s',
                                              array_to_string(v_path, ' <- ')));
            END IF;
            SELECT promote_from INTO v_up FROM relctl.environments WHERE name = v_up;
        END LOOP;
    END IF;
    v_changes := jsonb_strip_nulls(jsonb_build_object(
        'policy', CASE WHEN p_policy IS DISTINCT FROM e.policy THEN p_policy END,
        'supersede', CASE WHEN p_supersede IS DISTINCT FROM e.supersede THEN p_supersede END,
        'serialization', CASE WHEN p_serialization IS DISTINCT FROM e.serialization THEN p_serialization END,
        'promote_from', CASE WHEN p_promote_from IS NOT NULL AND v_from IS DISTINCT FROM e.promote_from
                             THEN p_promote_from END,
        'soak_ms', CASE WHEN p_soak_ms IS DISTINCT FROM e.soak_ms THEN p_soak_ms END,
        'approvals_required', CASE WHEN p_approvals IS DISTINCT FROM e.approvals_required THEN p_approvals END,
        'approver_role', CASE WHEN p_approver_role IS NOT NULL AND v_role IS DISTINCT FROM e.approver_role
                              THEN p_approver_role END));
    IF v_changes <> '{}' THEN
        UPDATE relctl.environments SET policy = coalesce(p_policy, policy),
                                       supersede = coalesce(p_supersede, supersede),
                                       serialization = coalesce(p_serialization, serialization),
                                       promote_from = CASE WHEN p_promote_from IS NULL THEN promote_from ELSE v_from END,
                                       soak_ms = coalesce(p_soak_ms, soak_ms),
                                       approvals_required = coalesce(p_approvals, approvals_required),
                                       approver_role = CASE WHEN p_approver_role IS NULL THEN approver_role
                                                            ELSE v_role END
            WHERE name = p_env;
        PERFORM relctl.record(p_env, 'env-set', NULL, NULL, NULL, NULL, NULL, NULL, p_client, v_changes);
    END IF;
    RETURN relctl.environment_json(p_env) || jsonb_build_object('status', 'ok', 'changed', v_changes);
END
$$;

CREATE FUNCTION relctl.freeze(p_env text, p_by text, p_reason text, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, true);
    e := relctl.lock_environment(p_env);
    IF e.frozen_at IS NULL THEN
        UPDATE relctl.environments SET frozen_at = clock_timestamp(), frozen_by = p_by, frozen_reason = p_reason
            WHERE name = p_env;
        PERFORM relctl.record(p_env, 'freeze', NULL, NULL, NULL, NULL, NULL, NULL, p_client,
                              jsonb_build_object('reason', p_reason), p_by);
    END IF;
    RETURN relctl.environment_json(p_env) || jsonb_build_object('status', 'ok', 'changed', e.frozen_at IS NULL);
END
$$;

-- p_reason is optional (an unfreeze usually just ends what the freeze
-- explained) but, when given, is kept in the event beside the freeze's own.
CREATE FUNCTION relctl.unfreeze(p_env text, p_by text, p_client jsonb, p_reason text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, false);
    e := relctl.lock_environment(p_env);
    IF e.frozen_at IS NOT NULL THEN
        UPDATE relctl.environments SET frozen_at = NULL, frozen_by = NULL, frozen_reason = NULL
            WHERE name = p_env;
        -- The notification wakes the queued candidates, which resume in policy order.
        PERFORM relctl.record(p_env, 'unfreeze', NULL, NULL, NULL, NULL, NULL, NULL, p_client,
                              jsonb_strip_nulls(jsonb_build_object(
                                  'reason', p_reason, 'frozen_at', e.frozen_at, 'frozen_by', e.frozen_by,
                                  'frozen_reason', e.frozen_reason)), p_by);
        -- The queue's head goes now, whether or not its waiter is awake to ask.
        PERFORM relctl.hand_over((SELECT x FROM relctl.environments x WHERE x.name = p_env), 'unfreeze');
    END IF;
    RETURN relctl.environment_json(p_env) || jsonb_build_object('status', 'ok', 'changed', e.frozen_at IS NOT NULL);
END
$$;

GRANT EXECUTE ON FUNCTION relctl.environment_json, relctl.env_list TO relctl_job, relctl_reviewer;
GRANT EXECUTE ON FUNCTION relctl.env_add, relctl.env_set, relctl.freeze, relctl.unfreeze TO relctl_manager;
