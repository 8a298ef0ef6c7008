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

-- The current manifest's release and generation, copied onto the
-- environment row whenever current_manifest_id changes, or anyone sets the
-- copies themselves (migration 0019 says why they are kept there). A trigger,
-- not each writer: publish, rollback and any later writer cannot forget it.
CREATE FUNCTION relctl.copy_current_manifest() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    SELECT m.release, m.generation INTO NEW.current_release, NEW.current_generation
    FROM relctl.manifests m WHERE m.id = NEW.current_manifest_id;
    IF NOT FOUND THEN
        NEW.current_release := NULL;
        NEW.current_generation := NULL;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER environments_current_manifest_added BEFORE INSERT ON relctl.environments
    FOR EACH ROW EXECUTE FUNCTION relctl.copy_current_manifest();
-- Only when the manifest or a copy changes: a lease's update of last_token
-- does not pay for the lookup.
CREATE TRIGGER environments_current_manifest BEFORE UPDATE ON relctl.environments
    FOR EACH ROW
    WHEN (NEW.current_manifest_id IS DISTINCT FROM OLD.current_manifest_id
          OR NEW.current_release IS DISTINCT FROM OLD.current_release
          OR NEW.current_generation IS DISTINCT FROM OLD.current_generation)
    EXECUTE FUNCTION relctl.copy_current_manifest();

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
        'name', e.name, 'group', relctl.env_group(e), 'default_ttl_ms', e.default_ttl_ms,
        'max_ttl_ms', e.max_ttl_ms, 'last_token', e.last_token, 'created_at', e.created_at,
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

-- A group name is spelled like an environment name.
CREATE FUNCTION relctl.require_group_name(p_group text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_group !~ '^[a-z0-9][a-z0-9._-]{0,62}$' THEN
        PERFORM relctl.invalid(format('invalid group name "%s": expected ^[a-z0-9][a-z0-9._-]{0,62}$',
                                      left(p_group, 200)));
    END IF;
END
$$;

-- The filters of a listing (env list, status --attention, a bulk freeze's
-- selection): p_group must be a group name, p_match a shell-style glob of
-- 1 to 200 characters in which * matches any run of characters and ? any
-- one (nothing else is special). Returns p_match as a LIKE pattern, its
-- LIKE metacharacters (% _ \) escaped, or NULL when there is none.
CREATE FUNCTION relctl.environment_filter_like(p_group text, p_match text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_group IS NOT NULL THEN
        PERFORM relctl.require_group_name(p_group);
    END IF;
    IF p_match IS NULL THEN
        RETURN NULL;
    END IF;
    IF length(p_match) = 0 OR length(p_match) > 200 THEN
        PERFORM relctl.invalid('a name pattern has 1 to 200 characters');
    END IF;
    RETURN replace(replace(replace(replace(replace(p_match, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%'),
                   '?', '_');
END
$$;

-- Every environment as relctl.environment_json has it, plus its group, of
-- group p_group and with names matching the glob p_match (each NULL: any),
-- in one set-based query: reading 10,000 environments costs one scan of
-- each table, not 10,000 calls. Ordered by name as text, as it always was;
-- the CLI sorts names naturally (svc2 before svc10).
CREATE FUNCTION relctl.env_list(p_group text DEFAULT NULL, p_match text DEFAULT NULL) RETURNS json
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET jit = off AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_like text := relctl.environment_filter_like(p_group, p_match);
BEGIN
    -- json, not jsonb: 10,000 environments are written as text once rather
    -- than built as jsonb and then written (a third of the time).
    RETURN json_build_object('environments', coalesce((
        SELECT json_agg(json_build_object(
            'name', e.name, 'group', relctl.env_group(e), 'default_ttl_ms', e.default_ttl_ms,
            'max_ttl_ms', e.max_ttl_ms, 'last_token', e.last_token, 'created_at', e.created_at,
            'policy', e.policy, 'supersede', e.supersede, 'serialization', e.serialization,
            'frozen', CASE WHEN e.frozen_at IS NULL THEN NULL ELSE
                json_build_object('at', e.frozen_at, 'by', e.frozen_by, 'reason', e.frozen_reason) END,
            -- relctl.manifest_json without 'env', as environment_json has it.
            'current', CASE WHEN m.id IS NULL THEN NULL ELSE json_build_object(
                'id', m.id, 'release', m.release, 'generation', m.generation, 'job', m.job,
                'token', m.token, 'published_at', m.published_at, 'manifest', m.manifest) END,
            'lease', relctl.lease_json(l, v_now)::json,
            -- As environment_json: queued candidates whose session is gone are not shown.
            'queue', CASE WHEN w.env IS NULL THEN '[]' ELSE
                (SELECT coalesce(jsonb_agg(relctl.candidate_json(c) ORDER BY c.generation, c.id), '[]')
                 FROM relctl.live_candidates(e.name) c) END::json,
            'pending_supersessions', coalesce(s.n, 0),
            'promote_from', e.promote_from, 'soak_ms', e.soak_ms, 'approvals_required', e.approvals_required,
            'approver_role', e.approver_role,
            'high_water_generation', e.high_water_generation,
            'open_promotions', coalesce(p.n, 0)) ORDER BY e.name)
        FROM relctl.environments e
        LEFT JOIN relctl.manifests m ON m.id = e.current_manifest_id
        LEFT JOIN relctl.leases l ON l.env = e.name AND l.token = e.last_token AND l.ended_at IS NULL
                                 AND l.expires_at > v_now
        LEFT JOIN (SELECT DISTINCT c.env FROM relctl.candidates c WHERE c.state = 'waiting') w ON w.env = e.name
        LEFT JOIN (SELECT x.env, count(*) AS n FROM relctl.supersessions x WHERE x.state = 'pending'
                   GROUP BY x.env) s ON s.env = e.name
        LEFT JOIN (SELECT x.env, count(*) AS n FROM relctl.promotions x WHERE x.state = 'open'
                   GROUP BY x.env) p ON p.env = e.name
        WHERE (p_group IS NULL OR relctl.env_group(e) = p_group)
          AND (v_like IS NULL OR e.name LIKE v_like)), '[]'));
END
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
-- promotion and supersession requests ('' clears it: any release manager);
-- p_group: the group it belongs to ('' clears it: the name up to its first
-- '.'). NULL: unchanged.
CREATE FUNCTION relctl.env_set(p_env text, p_policy text, p_supersede text, p_serialization text,
                               p_client jsonb, p_promote_from text DEFAULT NULL, p_soak_ms bigint DEFAULT NULL,
                               p_approvals integer DEFAULT NULL, p_approver_role text DEFAULT NULL,
                               p_group text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    v_changes jsonb;
    v_from text := nullif(p_promote_from, '');
    v_role text := nullif(p_approver_role, '');
    v_group text := nullif(p_group, '');
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
    IF v_group IS NOT NULL THEN
        PERFORM relctl.require_group_name(v_group);
    END IF;
    -- A role that does not exist would admit nobody (relctl.may_decide): a
    -- typo must not lock every approver out unnoticed.
    IF v_role IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = v_role) THEN
        PERFORM relctl.invalid(format('unknown role "%s": create it (CREATE ROLE %s NOLOGIN) and grant it to the approvers first',
                                      p_approver_role, p_approver_role));
    END IF;
    IF p_policy IS NULL AND p_supersede IS NULL AND p_serialization IS NULL AND p_promote_from IS NULL
       AND p_soak_ms IS NULL AND p_approvals IS NULL AND p_approver_role IS NULL AND p_group IS NULL THEN
        PERFORM relctl.invalid('nothing to set: give --policy, --supersede, --serialization, --promote-from, --soak, --approvals, --approver-role or --group');
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
                              THEN p_approver_role END,
        'group', CASE WHEN p_group IS NOT NULL AND v_group IS DISTINCT FROM e.group_name THEN p_group END));
    IF v_changes <> '{}' THEN
        UPDATE relctl.environments SET policy = coalesce(p_policy, policy),
                                       supersede = coalesce(p_supersede, supersede),
                                       serialization = coalesce(p_serialization, serialization),
                                       promote_from = CASE WHEN p_promote_from IS NULL THEN promote_from ELSE v_from END,
                                       soak_ms = coalesce(p_soak_ms, soak_ms),
                                       approvals_required = coalesce(p_approvals, approvals_required),
                                       approver_role = CASE WHEN p_approver_role IS NULL THEN approver_role
                                                            ELSE v_role END,
                                       group_name = CASE WHEN p_group IS NULL THEN group_name ELSE v_group END
            WHERE name = p_env;
        PERFORM relctl.record(p_env, 'env-set', NULL, NULL, NULL, NULL, NULL, NULL, p_client, v_changes);
    END IF;
    RETURN relctl.environment_json(p_env) || jsonb_build_object('status', 'ok', 'changed', v_changes);
END
$$;

-- Freezes the locked environment e unless it is frozen already, recording
-- the freeze; whether it changed. Shared by relctl.freeze and
-- relctl.freeze_many, so one environment's freeze is the same either way.
CREATE FUNCTION relctl.freeze_locked(e relctl.environments, p_by text, p_reason text, p_client jsonb)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF e.frozen_at IS NOT NULL THEN
        RETURN false;
    END IF;
    UPDATE relctl.environments SET frozen_at = clock_timestamp(), frozen_by = p_by, frozen_reason = p_reason
        WHERE name = e.name;
    PERFORM relctl.record(e.name, 'freeze', NULL, NULL, NULL, NULL, NULL, NULL, p_client,
                          jsonb_build_object('reason', p_reason), p_by);
    RETURN true;
END
$$;

-- Unfreezes the locked environment e if it is frozen, recording the freeze
-- it ends and handing the lease to the queue's head; whether it changed.
-- p_reason is optional (an unfreeze usually just ends what the freeze
-- explained) but, when given, is kept in the event beside the freeze's own.
CREATE FUNCTION relctl.unfreeze_locked(e relctl.environments, p_by text, p_client jsonb, p_reason text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF e.frozen_at IS NULL THEN
        RETURN false;
    END IF;
    UPDATE relctl.environments SET frozen_at = NULL, frozen_by = NULL, frozen_reason = NULL
        WHERE name = e.name;
    -- The notification wakes the queued candidates, which resume in policy order.
    PERFORM relctl.record(e.name, 'unfreeze', NULL, NULL, NULL, NULL, NULL, NULL, p_client,
                          jsonb_strip_nulls(jsonb_build_object(
                              'reason', p_reason, 'frozen_at', e.frozen_at, 'frozen_by', e.frozen_by,
                              'frozen_reason', e.frozen_reason)), p_by);
    -- The queue's head goes now, whether or not its waiter is awake to ask.
    PERFORM relctl.hand_over((SELECT x FROM relctl.environments x WHERE x.name = e.name), 'unfreeze');
    RETURN true;
END
$$;

CREATE FUNCTION relctl.freeze(p_env text, p_by text, p_reason text, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_changed boolean;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, true);
    v_changed := relctl.freeze_locked(relctl.lock_environment(p_env), p_by, p_reason, p_client);
    RETURN relctl.environment_json(p_env) || jsonb_build_object('status', 'ok', 'changed', v_changed);
END
$$;

CREATE FUNCTION relctl.unfreeze(p_env text, p_by text, p_client jsonb, p_reason text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_changed boolean;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, false);
    v_changed := relctl.unfreeze_locked(relctl.lock_environment(p_env), p_by, p_client, p_reason);
    RETURN relctl.environment_json(p_env) || jsonb_build_object('status', 'ok', 'changed', v_changed);
END
$$;

-- How many environments one call may name (freeze_many, unfreeze_many): an
-- organisation's every environment, not an unbounded transaction.
CREATE FUNCTION relctl.max_bulk_environments() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 10000 $$;

-- The names of a call on many environments, checked: a one-dimensional
-- array of 1 to max_bulk_environments() distinct names of existing
-- environments, no NULL among them. Returned sorted by name: the order the
-- environments are locked in, so two calls on overlapping sets cannot
-- deadlock. Any fault refuses the whole call (RC002), naming the first name
-- at fault.
CREATE FUNCTION relctl.bulk_names(p_envs text[]) RETURNS text[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_names text[];
    v_bad text;
    v_count integer;
BEGIN
    IF p_envs IS NULL OR cardinality(p_envs) = 0 THEN
        PERFORM relctl.invalid('no environments given');
    END IF;
    IF array_ndims(p_envs) > 1 THEN
        PERFORM relctl.invalid('the environments must be a list of names (a one-dimensional array)');
    END IF;
    IF cardinality(p_envs) > relctl.max_bulk_environments() THEN
        PERFORM relctl.invalid(format('too many environments: %s given, at most %s at once',
                                      cardinality(p_envs), relctl.max_bulk_environments()));
    END IF;
    IF array_position(p_envs, NULL) IS NOT NULL THEN
        PERFORM relctl.invalid('an environment name is missing (NULL) in the list');
    END IF;
    SELECT n INTO v_bad FROM unnest(p_envs) n GROUP BY n HAVING count(*) > 1 ORDER BY n LIMIT 1;
    IF FOUND THEN
        PERFORM relctl.invalid(format('environment "%s" is named more than once', left(v_bad, 200)));
    END IF;
    SELECT array_agg(n ORDER BY n COLLATE "C") INTO v_names FROM unnest(p_envs) n;
    SELECT count(*) INTO v_count FROM relctl.environments WHERE name = ANY (v_names);
    IF v_count < cardinality(v_names) THEN
        SELECT n INTO v_bad FROM unnest(v_names) n
        WHERE NOT EXISTS (SELECT 1 FROM relctl.environments x WHERE x.name = n) ORDER BY n COLLATE "C" LIMIT 1;
        PERFORM relctl.invalid(CASE WHEN cardinality(v_names) - v_count = 1
                                    THEN format('unknown environment "%s"; nothing was changed', left(v_bad, 200))
                                    ELSE format('unknown environment "%s" (and %s more unknown); nothing was changed',
                                                left(v_bad, 200), cardinality(v_names) - v_count - 1) END);
    END IF;
    RETURN v_names;
END
$$;

-- Freezes many environments in one transaction, all or nothing: each
-- environment not yet frozen gets its own freeze event with the same
-- reason. Reply: {"status": "ok", "changed": [...], "unchanged": [...]}
-- (unchanged: frozen already, whose freeze and reason stay as they were).
CREATE FUNCTION relctl.freeze_many(p_envs text[], p_by text, p_reason text, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_name text;
    v_changed text[] := '{}';
    v_unchanged text[] := '{}';
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, true);
    FOREACH v_name IN ARRAY relctl.bulk_names(p_envs) LOOP
        IF relctl.freeze_locked(relctl.lock_environment(v_name), p_by, p_reason, p_client) THEN
            v_changed := v_changed || v_name;
        ELSE
            v_unchanged := v_unchanged || v_name;
        END IF;
    END LOOP;
    RETURN jsonb_build_object('status', 'ok', 'changed', to_jsonb(v_changed), 'unchanged', to_jsonb(v_unchanged));
END
$$;

-- Unfreezes many environments in one transaction, all or nothing: each
-- frozen one gets its own unfreeze event (with p_reason when given) and
-- hands its lease to its queue's head. Reply as relctl.freeze_many's.
CREATE FUNCTION relctl.unfreeze_many(p_envs text[], p_by text, p_reason text, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_name text;
    v_changed text[] := '{}';
    v_unchanged text[] := '{}';
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, false);
    FOREACH v_name IN ARRAY relctl.bulk_names(p_envs) LOOP
        IF relctl.unfreeze_locked(relctl.lock_environment(v_name), p_by, p_client, p_reason) THEN
            v_changed := v_changed || v_name;
        ELSE
            v_unchanged := v_unchanged || v_name;
        END IF;
    END LOOP;
    RETURN jsonb_build_object('status', 'ok', 'changed', to_jsonb(v_changed), 'unchanged', to_jsonb(v_unchanged));
END
$$;

-- One line's worth of each environment of group p_group with names
-- matching the glob p_match (each NULL: any): what `relctl env list` shows
-- of an organisation, one environment a line. The current release, the
-- live lease's job and time left, whether it is frozen, how many
-- candidates wait (counted as relctl.environment_attention counts them)
-- and where it is promoted from. Rows, not one JSON document: at 10,000
-- environments neither side then builds or parses a 1.6 MB document.
-- Unordered: the client sorts names naturally.
CREATE FUNCTION relctl.env_brief(p_group text DEFAULT NULL, p_match text DEFAULT NULL)
RETURNS TABLE (name text, "group" text, release text, generation bigint, holder text, remaining_ms bigint,
               frozen boolean, waiting bigint, promote_from text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET jit = off AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := clock_timestamp();
    v_like text := relctl.environment_filter_like(p_group, p_match);
BEGIN
    RETURN QUERY
    SELECT e.name, relctl.env_group(e), e.current_release, e.current_generation, l.job,
           CASE WHEN l.token IS NOT NULL THEN greatest(0, relctl.ms_between(v_now, l.expires_at)) END,
           e.frozen_at IS NOT NULL, coalesce(w.n, 0), e.promote_from
    FROM relctl.environments e
    LEFT JOIN relctl.leases l ON l.env = e.name AND l.token = e.last_token AND l.ended_at IS NULL
                             AND l.expires_at > v_now
    LEFT JOIN (SELECT c.env, count(*) AS n FROM relctl.candidates c WHERE c.state = 'waiting'
               GROUP BY c.env) w ON w.env = e.name
    WHERE (p_group IS NULL OR relctl.env_group(e) = p_group)
      AND (v_like IS NULL OR e.name LIKE v_like);
END
$$;

-- The names of the environments of group p_group whose names match the glob
-- p_match (relctl.environment_filter_like; each NULL: any), at most
-- max_bulk_environments() of them: what a bulk freeze shows before it asks.
-- {"environments": [names], "truncated": whether there were more}
CREATE FUNCTION relctl.env_names(p_group text DEFAULT NULL, p_match text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET jit = off AS $$
DECLARE
    v_like text := relctl.environment_filter_like(p_group, p_match);
    v_names text[];
BEGIN
    SELECT array_agg(x.name) INTO v_names FROM (
        SELECT e.name FROM relctl.environments e
        WHERE (p_group IS NULL OR relctl.env_group(e) = p_group)
          AND (v_like IS NULL OR e.name LIKE v_like)
        ORDER BY e.name COLLATE "C" LIMIT relctl.max_bulk_environments() + 1) x;
    RETURN jsonb_build_object(
        'environments', to_jsonb(coalesce(v_names[1:relctl.max_bulk_environments()], '{}')),
        'truncated', coalesce(cardinality(v_names), 0) > relctl.max_bulk_environments());
END
$$;

-- Promotion paths for many groups at once: in every group (of those of the
-- environments p_group and p_match select) that has an environment named
-- GROUP.STAGE for each of p_stages, each stage after the first is promoted
-- from the one before it (GROUP.staging from GROUP.test), with the soak and
-- approvals given (NULL: unchanged), through relctl.env_set, so each change
-- is checked (no cycles) and recorded as an env-set event like one made by
-- hand. One transaction: all or nothing. Groups lacking a stage are
-- reported as skipped, with the stages they lack.
-- {"status": "ok", "paths": [{"group", "env", "promote_from", "changed"}],
--  "skipped": [{"group", "missing": [stages]}]}
CREATE FUNCTION relctl.env_paths(p_stages text[], p_group text, p_match text, p_soak_ms bigint,
                                 p_approvals integer, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET jit = off AS $$
DECLARE
    v_like text := relctl.environment_filter_like(p_group, p_match);
    v_stage text;
    v_groups text[];
    v_skipped jsonb;
    v_paths jsonb := '[]';
    v_name text;
    r record;
    v_reply jsonb;
BEGIN
    PERFORM relctl.require_read_committed();
    IF p_stages IS NULL OR array_ndims(p_stages) IS DISTINCT FROM 1 OR cardinality(p_stages) NOT BETWEEN 2 AND 20 THEN
        PERFORM relctl.invalid('a promotion path names 2 to 20 stages, in order (test,staging,prod)');
    END IF;
    FOREACH v_stage IN ARRAY p_stages LOOP
        IF v_stage IS NULL OR v_stage !~ '^[a-z0-9][a-z0-9._-]{0,62}$' THEN
            PERFORM relctl.invalid(format('invalid stage "%s": expected ^[a-z0-9][a-z0-9._-]{0,62}$',
                                          left(coalesce(v_stage, ''), 200)));
        END IF;
    END LOOP;
    SELECT st INTO v_stage FROM unnest(p_stages) st GROUP BY st HAVING count(*) > 1 LIMIT 1;
    IF FOUND THEN
        PERFORM relctl.invalid(format('stage "%s" is named more than once', v_stage));
    END IF;
    IF p_soak_ms IS NOT NULL AND (p_soak_ms < 0 OR p_soak_ms > 30 * 86400000::bigint) THEN
        PERFORM relctl.invalid('a soak is between 0 and 30 days');
    END IF;
    IF p_approvals IS NOT NULL AND p_approvals NOT BETWEEN 0 AND 10 THEN
        PERFORM relctl.invalid('approvals are between 0 and 10');
    END IF;
    -- Paths change under the one global lock env_set takes, before any
    -- environment is locked.
    PERFORM relctl.lock_key(hashtextextended('relctl.promotion-paths', 0), 'the promotion paths');
    -- The groups of the selected environments, and which stages each lacks.
    WITH g AS (SELECT DISTINCT relctl.env_group(e) AS grp FROM relctl.environments e
               WHERE (p_group IS NULL OR relctl.env_group(e) = p_group)
                 AND (v_like IS NULL OR e.name LIKE v_like)),
         m AS (SELECT g.grp, ARRAY(SELECT u.st FROM unnest(p_stages) WITH ORDINALITY AS u(st, i)
                                   WHERE NOT EXISTS (SELECT 1 FROM relctl.environments x
                                                     WHERE x.name = g.grp || '.' || u.st
                                                       AND relctl.env_group(x) = g.grp)
                                   ORDER BY u.i) AS missing
               FROM g)
    SELECT array_agg(m.grp ORDER BY m.grp COLLATE "C") FILTER (WHERE m.missing = '{}'),
           coalesce(jsonb_agg(jsonb_build_object('group', m.grp, 'missing', to_jsonb(m.missing))
                              ORDER BY m.grp COLLATE "C") FILTER (WHERE m.missing <> '{}'), '[]')
        INTO v_groups, v_skipped FROM m;
    IF v_groups IS NULL THEN
        PERFORM relctl.invalid(format('no group has an environment for each stage (%s); nothing was changed',
                                      array_to_string(p_stages, ', ')));
    END IF;
    IF cardinality(v_groups) * cardinality(p_stages) > relctl.max_bulk_environments() THEN
        PERFORM relctl.invalid(format('too many environments: %s groups of %s stages, at most %s environments at once',
                                      cardinality(v_groups), cardinality(p_stages), relctl.max_bulk_environments()));
    END IF;
    -- Every environment changed is locked first, in name order, as
    -- relctl.freeze_many locks them: the two cannot deadlock.
    FOR v_name IN
        SELECT g || '.' || st FROM unnest(v_groups) g, unnest(p_stages[2:]) st ORDER BY (g || '.' || st) COLLATE "C"
    LOOP
        PERFORM relctl.lock_environment(v_name);
    END LOOP;
    FOR r IN
        SELECT g, st, i FROM unnest(v_groups) g, unnest(p_stages) WITH ORDINALITY AS u(st, i)
        WHERE i > 1 ORDER BY g COLLATE "C", i
    LOOP
        v_reply := relctl.env_set(r.g || '.' || r.st, NULL, NULL, NULL, p_client, r.g || '.' || p_stages[r.i - 1],
                                  p_soak_ms, p_approvals);
        v_paths := v_paths || jsonb_build_object('group', r.g, 'env', r.g || '.' || r.st,
                                                 'promote_from', r.g || '.' || p_stages[r.i - 1],
                                                 'changed', v_reply -> 'changed');
    END LOOP;
    RETURN jsonb_build_object('status', 'ok', 'paths', v_paths, 'skipped', v_skipped);
END
$$;

GRANT EXECUTE ON FUNCTION relctl.environment_json, relctl.env_list, relctl.env_brief, relctl.env_names TO relctl_job, relctl_reviewer;
GRANT EXECUTE ON FUNCTION relctl.env_add, relctl.env_set, relctl.freeze, relctl.unfreeze, relctl.freeze_many,
    relctl.unfreeze_many, relctl.env_paths TO relctl_manager;
