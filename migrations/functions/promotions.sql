-- Promotions: an environment takes only what the one it is promoted from
-- accepted (promote_from, at least soak_ms ago by the database clock), and
-- only after the approvals it requires (approvals_required) from distinct
-- people. Every gate is decided inside the transaction of the acquire or
-- publish it guards, under the environment's row lock.
--
-- A promotion request is bound to (environment, release, generation): a
-- retried job finds its approvals again, a newer candidate needs its own. It
-- is opened by the first acquire (or unserialized publish) that needs it, or
-- by `promote request`; its requester can never approve it; one person counts
-- once; a denial is final.
--
-- "Person" means database login: `--by` is a name the caller types, the
-- login (session_user) is what the server authenticated. The requester's
-- login cannot approve, one login counts once whatever names it gives, and an
-- environment with an approver_role takes decisions only from that role's
-- members. Each decision records both the name and the login.

-- An upstream manifest that a rollback there replaced, and no later rollback
-- restored, has been withdrawn: staging rolled it back, so prod must not
-- take it.
CREATE FUNCTION relctl.withdrawn(m relctl.manifests) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM relctl.rollbacks r
        WHERE r.replaced_manifest_id = m.id
          AND NOT EXISTS (SELECT 1 FROM relctl.rollbacks later
                          WHERE later.restored_manifest_id = m.id AND later.id > r.id))
$$;

-- The manifest by which e's upstream accepted (release, generation), unless
-- withdrawn since. Generations are unique per environment: at most one.
CREATE FUNCTION relctl.upstream_manifest(e relctl.environments, p_release text, p_generation bigint)
RETURNS relctl.manifests
LANGUAGE sql STABLE AS $$
    SELECT m.* FROM relctl.manifests m
    WHERE m.env = e.promote_from AND m.release = p_release AND m.generation = p_generation
      AND NOT relctl.withdrawn(m)
$$;

-- What the upstream says about a candidate: where and when it was accepted
-- there, the soak still to run, and what the upstream has current.
CREATE FUNCTION relctl.upstream_json(e relctl.environments, p_release text, p_generation bigint,
                                     p_now timestamptz)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    up relctl.manifests;
    cur relctl.manifests;
BEGIN
    IF e.promote_from IS NULL THEN
        RETURN NULL;
    END IF;
    up := relctl.upstream_manifest(e, p_release, p_generation);
    SELECT m.* INTO cur FROM relctl.environments u JOIN relctl.manifests m ON m.id = u.current_manifest_id
        WHERE u.name = e.promote_from;
    RETURN jsonb_build_object(
        'env', e.promote_from, 'soak_ms', e.soak_ms,
        'accepted_at', up.published_at,
        'soaked_ms', CASE WHEN up.id IS NOT NULL THEN greatest(0, relctl.ms_between(up.published_at, p_now)) END,
        'soak_remaining_ms', CASE WHEN up.id IS NOT NULL
            THEN greatest(0, e.soak_ms - relctl.ms_between(up.published_at, p_now)) END,
        'current', CASE WHEN cur.id IS NULL THEN NULL
            ELSE jsonb_build_object('release', cur.release, 'generation', cur.generation) END);
END
$$;

CREATE FUNCTION relctl.promotion_json(p relctl.promotions) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p.id IS NULL THEN NULL ELSE jsonb_build_object(
        'id', p.id, 'env', p.env, 'release', p.release, 'generation', p.generation, 'state', p.state,
        'requested_by', p.requested_by, 'requested_login', p.requested_login, 'reason', p.reason,
        'requested_at', p.requested_at, 'decided_at', p.decided_at, 'approvals_required', e.approvals_required,
        'approvals_given', relctl.approvals_given(p), 'approver_role', e.approver_role,
        'approvals', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                          'by', d.decided_by, 'login', d.db_user, 'reason', d.reason, 'at', d.decided_at)
                          ORDER BY d.decided_at), '[]')
                      FROM relctl.promotion_decisions d WHERE d.promotion = p.id AND d.approve),
        'denial', (SELECT jsonb_build_object('by', d.decided_by, 'login', d.db_user, 'reason', d.reason,
                                             'at', d.decided_at)
                   FROM relctl.promotion_decisions d WHERE d.promotion = p.id AND NOT d.approve),
        'upstream', relctl.upstream_json(e, p.release, p.generation, clock_timestamp()),
        -- The manifest it would replace, and the one it would bring (when the
        -- upstream has it), so a release manager sees what changes.
        'current', (SELECT jsonb_build_object('release', m.release, 'generation', m.generation,
                                              'manifest', m.manifest)
                    FROM relctl.manifests m WHERE m.id = e.current_manifest_id),
        'candidate_manifest', (relctl.upstream_manifest(e, p.release, p.generation)).manifest) END
    FROM relctl.environments e WHERE e.name = p.env
$$;

-- Distinct logins, not names: one login typing two names is one approval.
CREATE FUNCTION relctl.approvals_given(p relctl.promotions) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT count(DISTINCT d.db_user)::integer FROM relctl.promotion_decisions d
    WHERE d.promotion = p.id AND d.approve
$$;

-- Whether this session's login may decide e's approvals: any caller the
-- function's grant admits, unless e names an approver role, whose members
-- alone may. A role dropped after it was set admits nobody: the setting
-- fails closed.
CREATE FUNCTION relctl.may_decide(e relctl.environments) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT e.approver_role IS NULL
        OR (EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = e.approver_role)
            AND pg_catalog.pg_has_role(session_user, e.approver_role, 'MEMBER'))
$$;

-- Why may_decide said no, in the words of every NOT_APPROVER refusal.
CREATE FUNCTION relctl.not_approver_message(e relctl.environments) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('NOT_APPROVER: login %s is not a member of %s, the approver role of %s', session_user,
                  e.approver_role, e.name)
$$;

-- A decision refused by the approver rules (NOT_APPROVER, SELF_APPROVAL,
-- DUPLICATE_APPROVAL): recorded with the caller's name and login, and
-- answered as a refusal. p_operation is the decision's own operation, so the
-- trail files the attempt where the decision would have been.
CREATE FUNCTION relctl.decision_refused(p_env text, p_operation text, p_reason text, p_job text,
                                        p_release text, p_generation bigint, p_by text, p_client jsonb,
                                        p_detail jsonb, p_message text, p_reply jsonb)
RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM relctl.record(p_env, p_operation, p_reason, p_job, p_release, p_generation, NULL, NULL, p_client,
                          p_detail || jsonb_build_object('login', session_user::text), p_by);
    RETURN jsonb_build_object('status', 'refused', 'reason', p_reason, 'operation', p_operation, 'env', p_env,
                              'message', p_message) || coalesce(p_reply, '{}');
END
$$;

-- How many promotion requests may be open and still usable (a generation
-- above the environment's bar): on one environment, and opened by one login
-- across all. A job login opened 2,001 in 1.7 s (each acquire of a new
-- release on a gated environment opens one); the cap refuses the next,
-- recorded, and a request the bar has passed stops counting.
CREATE FUNCTION relctl.max_open_promotions_per_env() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 100::bigint $$;

CREATE FUNCTION relctl.max_open_promotions_per_login() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 1000::bigint $$;

-- Why a new request may not be opened on e now (PROMOTIONS_FULL's
-- message), or NULL. Caller holds the environment's row lock and records
-- the refusal.
CREATE FUNCTION relctl.promotions_full(e relctl.environments) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_env bigint := (SELECT count(*) FROM relctl.promotions
                     WHERE env = e.name AND state = 'open' AND generation > e.high_water_generation);
    v_login bigint;
BEGIN
    IF v_env >= relctl.max_open_promotions_per_env() THEN
        RETURN format('PROMOTIONS_FULL: %s promotion requests are open on %s already, the most one environment takes; '
                      'decide some first (relctl promote list --env %s)', v_env, e.name, e.name);
    END IF;
    v_login := (SELECT count(*) FROM relctl.promotions p JOIN relctl.environments x ON x.name = p.env
                WHERE p.requested_login = session_user AND p.state = 'open'
                  AND p.generation > x.high_water_generation);
    IF v_login >= relctl.max_open_promotions_per_login() THEN
        RETURN format('PROMOTIONS_FULL: login %s has %s promotion requests open already, the most one login may have',
                      session_user, v_login);
    END IF;
    RETURN NULL;
END
$$;

-- Opens the request for a candidate, or returns the one that exists. Caller
-- holds the environment's row lock.
CREATE FUNCTION relctl.open_promotion(e relctl.environments, p_release text, p_generation bigint,
                                      p_requested_by text, p_job text, p_reason text, p_client jsonb)
RETURNS relctl.promotions
LANGUAGE plpgsql AS $$
DECLARE
    p relctl.promotions;
BEGIN
    SELECT * INTO p FROM relctl.promotions
        WHERE env = e.name AND release = p_release AND generation = p_generation;
    IF FOUND THEN
        RETURN p;
    END IF;
    -- Opened in the requester's own session (its acquire, its wait, or
    -- `promote request`), so session_user is the requester's login.
    INSERT INTO relctl.promotions (env, release, generation, requested_by, requested_login, reason)
        VALUES (e.name, p_release, p_generation, p_requested_by, session_user, p_reason)
        RETURNING * INTO p;
    PERFORM relctl.record(e.name, 'promotion-requested', NULL, p_job, p_release, p_generation, NULL, NULL,
                          p_client, jsonb_strip_nulls(jsonb_build_object(
                              'promotion', p.id, 'reason', p_reason, 'approvals_required', e.approvals_required)),
                          p_requested_by);
    RETURN p;
END
$$;

CREATE FUNCTION relctl.format_ms(p_ms bigint) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_ms < 1000 THEN p_ms || ' ms'
                WHEN p_ms < 120000 THEN round(p_ms / 1000.0, 1) || ' s'
                WHEN p_ms < 7200000 THEN round(p_ms / 60000.0, 1) || ' min'
                ELSE round(p_ms / 3600000.0, 1) || ' h' END
$$;

-- Why a candidate (release, generation) may not be promoted to e now: a
-- refusal's parts ({reason, message, upstream | promotion}), or NULL when it
-- may. Upstream first (an approval cannot make up for a release the upstream
-- never accepted), then approvals. p_open: open the request when approvals
-- are missing (acquire and the unserialized publish do; a publish under a
-- lease re-checks what its acquire already passed).
CREATE FUNCTION relctl.promotion_refusal(e relctl.environments, p_job text, p_release text,
                                         p_generation bigint, p_now timestamptz, p_open boolean,
                                         p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    up relctl.manifests;
    p relctl.promotions;
    v_upstream jsonb;
    v_given integer;
    v_full text;
BEGIN
    IF e.promote_from IS NOT NULL THEN
        up := relctl.upstream_manifest(e, p_release, p_generation);
        IF up.id IS NULL OR up.published_at > p_now - e.soak_ms * interval '1 millisecond' THEN
            v_upstream := relctl.upstream_json(e, p_release, p_generation, p_now);
            RETURN jsonb_build_object(
                'reason', 'NOT_PROMOTED', 'upstream', v_upstream,
                'message', CASE WHEN up.id IS NULL THEN format(
                    'NOT_PROMOTED: %s generation %s was not accepted on %s, which %s is promoted from (%s has %s)',
                    p_release, p_generation, e.promote_from, e.name, e.promote_from,
                    CASE WHEN v_upstream #>> '{current,release}' IS NULL THEN 'nothing'
                         ELSE format('%s generation %s', v_upstream #>> '{current,release}',
                                     v_upstream #>> '{current,generation}') END)
                ELSE format('NOT_PROMOTED: %s generation %s was accepted on %s %s ago; %s needs a soak of %s (%s to go)',
                            p_release, p_generation, e.promote_from,
                            relctl.format_ms((v_upstream ->> 'soaked_ms')::bigint), e.name,
                            relctl.format_ms(e.soak_ms),
                            relctl.format_ms((v_upstream ->> 'soak_remaining_ms')::bigint)) END);
        END IF;
    END IF;
    IF e.approvals_required > 0 THEN
        SELECT * INTO p FROM relctl.promotions
            WHERE env = e.name AND release = p_release AND generation = p_generation;
        IF p.id IS NULL AND coalesce(p_open, false) THEN
            v_full := relctl.promotions_full(e);
            IF v_full IS NOT NULL THEN
                RETURN jsonb_build_object('reason', 'PROMOTIONS_FULL', 'message', v_full);
            END IF;
            p := relctl.open_promotion(e, p_release, p_generation, p_job, p_job, NULL, p_client);
        END IF;
        IF p.state = 'denied' THEN
            RETURN jsonb_build_object(
                'reason', 'APPROVAL_DENIED', 'promotion', relctl.promotion_json(p),
                'message', (SELECT format('APPROVAL_DENIED: promoting %s generation %s to %s was denied by %s: %s',
                                          p_release, p_generation, e.name, d.decided_by, d.reason)
                            FROM relctl.promotion_decisions d WHERE d.promotion = p.id AND NOT d.approve));
        END IF;
        v_given := coalesce(relctl.approvals_given(p), 0);
        IF v_given < e.approvals_required THEN
            RETURN jsonb_build_object(
                'reason', 'APPROVAL_REQUIRED', 'promotion', relctl.promotion_json(p),
                'message', format('APPROVAL_REQUIRED: promoting %s generation %s to %s needs %s approval(s), %s given%s',
                                  p_release, p_generation, e.name, e.approvals_required, v_given,
                                  CASE WHEN p.id IS NULL THEN ' (relctl promote request opens the request)'
                                       ELSE format(' (request %s: relctl promote approve %s --by NAME)', p.id, p.id) END));
        END IF;
    END IF;
    RETURN NULL;
END
$$;

-- A gate's refusal of an acquire or publish: recorded, and remembered under
-- the op id only when final (a denial); a release the upstream has not
-- accepted yet, or approvals still to come, may pass on a retry.
CREATE FUNCTION relctl.promotion_refused(e relctl.environments, p_gate jsonb, p_operation text, p_job text,
                                         p_release text, p_generation bigint, p_token bigint, p_op_id text,
                                         p_client jsonb, p_request jsonb, p_secret_sha256 bytea)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_reply jsonb;
BEGIN
    v_reply := jsonb_build_object(
        'status', 'refused', 'reason', p_gate ->> 'reason', 'operation', p_operation, 'env', e.name,
        'job', p_job, 'release', p_release, 'generation', p_generation, 'token', p_token,
        'op_id', p_op_id, 'replayed', false, 'message', p_gate ->> 'message')
        || jsonb_strip_nulls(jsonb_build_object('upstream', p_gate -> 'upstream',
                                                'promotion', p_gate -> 'promotion'));
    PERFORM relctl.record(e.name, p_operation, p_gate ->> 'reason', p_job, p_release, p_generation, p_token,
                          p_op_id, p_client, jsonb_strip_nulls(jsonb_build_object(
                              'upstream', p_gate -> 'upstream',
                              'promotion', p_gate #> '{promotion,id}',
                              'approvals', p_gate #> '{promotion,approvals}',
                              'approvals_required', p_gate #> '{promotion,approvals_required}',
                              'denial', p_gate #> '{promotion,denial}')));
    IF p_gate ->> 'reason' = 'APPROVAL_DENIED' THEN
        PERFORM relctl.remember(p_op_id, p_operation, p_request, v_reply, p_secret_sha256);
    END IF;
    RETURN v_reply;
END
$$;

-- `promote request`: opens the request before any job asks (or returns the
-- one that exists), so approvers can decide ahead of the deploy.
CREATE FUNCTION relctl.promote_request(p_env text, p_release text, p_generation bigint, p_by text,
                                       p_reason text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    p relctl.promotions;
    v_full text;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, false);
    PERFORM relctl.require_text('release', p_release);
    IF p_generation IS NULL OR p_generation <= 0 THEN
        PERFORM relctl.invalid('generation must be a positive integer');
    END IF;
    e := relctl.lock_environment(p_env);
    IF e.approvals_required = 0 THEN
        PERFORM relctl.invalid(format('%s requires no approvals (relctl env set %s --approvals K)', p_env, p_env));
    END IF;
    IF e.frozen_at IS NOT NULL THEN
        RETURN relctl.frozen_refusal(e, 'promotion-requested', NULL, p_release, p_generation, NULL, NULL, p_client);
    END IF;
    IF p_generation <= e.high_water_generation THEN
        PERFORM relctl.invalid(format('generation %s is not newer than generation %s, the highest accepted on %s',
                                      p_generation, e.high_water_generation, p_env));
    END IF;
    SELECT * INTO p FROM relctl.promotions
        WHERE env = p_env AND release = p_release AND generation = p_generation;
    IF FOUND THEN
        RETURN relctl.promotion_json(p) || jsonb_build_object('status', 'ok', 'created', false);
    END IF;
    v_full := relctl.promotions_full(e);
    IF v_full IS NOT NULL THEN
        PERFORM relctl.record(e.name, 'promotion-requested', 'PROMOTIONS_FULL', NULL, p_release, p_generation, NULL,
                              NULL, p_client, jsonb_build_object('reason', p_reason), p_by);
        RETURN jsonb_build_object('status', 'refused', 'reason', 'PROMOTIONS_FULL', 'operation', 'promotion-requested',
                                  'env', e.name, 'release', p_release, 'generation', p_generation,
                                  'message', v_full, 'replayed', false);
    END IF;
    p := relctl.open_promotion(e, p_release, p_generation, p_by, NULL, p_reason, p_client);
    RETURN relctl.promotion_json(p) || jsonb_build_object('status', 'ok', 'created', true);
END
$$;

CREATE FUNCTION relctl.promotions_list(p_env text, p_all boolean) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    SELECT jsonb_build_object('promotions', coalesce(jsonb_agg(relctl.promotion_json(p) ORDER BY p.id), '[]'))
    FROM relctl.promotions p
    WHERE (p_env IS NULL OR p.env = p_env) AND (coalesce(p_all, false) OR p.state = 'open')
$$;

-- Approve or deny a request. Who may decide is a matter of logins, decided
-- here under the environment's row lock, so two sessions of one login racing
-- cannot both count:
-- - an environment with an approver role takes decisions only from its
--   members (NOT_APPROVER, recorded);
-- - the requester's login, or a caller giving the requester's name, cannot
--   approve (SELF_APPROVAL, recorded);
-- - one login decides once: the same decision again under the same name is
--   a retry and changes nothing; any other second decision of that login (an
--   approval under another name, a denial after its approval), or a name
--   another login already decided under, is refused DUPLICATE_APPROVAL,
--   recorded.
-- A denial (which needs a reason) is final; approving a request that is
-- already approved adds the login. The notification that record() sends
-- wakes the candidates waiting for the decision.
CREATE FUNCTION relctl.decide_promotion(p_id bigint, p_approve boolean, p_by text, p_reason text,
                                        p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    p relctl.promotions;
    d relctl.promotion_decisions;
    v_operation text := CASE WHEN p_approve THEN 'promotion-approve' ELSE 'promotion-deny' END;
    v_login text := session_user;
    v_given integer;
BEGIN
    PERFORM relctl.require_read_committed();
    IF p_approve IS NULL THEN
        PERFORM relctl.invalid('a decision is an approval or a denial');
    END IF;
    PERFORM relctl.require_actor(p_by, p_reason, NOT p_approve);
    SELECT * INTO p FROM relctl.promotions WHERE id = p_id;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown promotion request %s', p_id));
    END IF;
    e := relctl.lock_environment(p.env);
    SELECT * INTO p FROM relctl.promotions WHERE id = p_id; -- as it is now, under the lock
    IF p.state = 'denied' THEN
        PERFORM relctl.invalid(format('promotion request %s was denied; a denial is final', p_id));
    END IF;
    IF NOT relctl.may_decide(e) THEN
        RETURN relctl.decision_refused(
            p.env, v_operation, 'NOT_APPROVER', NULL, p.release, p.generation, p_by, p_client,
            jsonb_build_object('promotion', p.id, 'approver_role', e.approver_role),
            relctl.not_approver_message(e),
            jsonb_build_object('promotion', relctl.promotion_json(p)));
    END IF;
    IF p_approve AND (v_login = p.requested_login OR p_by = p.requested_by) THEN
        RETURN relctl.decision_refused(
            p.env, v_operation, 'SELF_APPROVAL', NULL, p.release, p.generation, p_by, p_client,
            jsonb_strip_nulls(jsonb_build_object('promotion', p.id, 'requested_by', p.requested_by,
                                                 'requested_login', p.requested_login)),
            CASE WHEN v_login = p.requested_login
                 THEN format('SELF_APPROVAL: login %s requested promotion %s and cannot approve it', v_login, p.id)
                 ELSE format('SELF_APPROVAL: %s requested promotion %s and cannot approve it', p_by, p.id) END,
            jsonb_build_object('promotion', relctl.promotion_json(p)));
    END IF;
    IF NOT p_approve AND p.state = 'approved' THEN
        PERFORM relctl.invalid(format('promotion request %s is already approved; freeze %s to stop it', p_id, p.env));
    END IF;
    -- This login's own decision first: a retry is answered before a clash of names.
    SELECT * INTO d FROM relctl.promotion_decisions WHERE promotion = p.id AND db_user = v_login
        ORDER BY decided_at LIMIT 1;
    IF NOT FOUND THEN
        SELECT * INTO d FROM relctl.promotion_decisions WHERE promotion = p.id AND decided_by = p_by;
    END IF;
    IF FOUND THEN
        IF d.db_user = v_login AND d.decided_by = p_by AND d.approve = p_approve THEN
            RETURN relctl.promotion_json(p) || jsonb_build_object(
                'status', 'ok', 'changed', false,
                'message', format('%s (login %s) already %s promotion request %s; one login counts once', p_by,
                                  v_login, CASE WHEN d.approve THEN 'approved' ELSE 'denied' END, p.id));
        END IF;
        RETURN relctl.decision_refused(
            p.env, v_operation, 'DUPLICATE_APPROVAL', NULL, p.release, p.generation, p_by, p_client,
            jsonb_build_object('promotion', p.id, 'decided_by', d.decided_by, 'decided_login', d.db_user,
                               'decided', CASE WHEN d.approve THEN 'approved' ELSE 'denied' END),
            CASE WHEN d.db_user = v_login
                 THEN format('DUPLICATE_APPROVAL: login %s already %s promotion request %s as %s; one login counts once',
                             v_login, CASE WHEN d.approve THEN 'approved' ELSE 'denied' END, p.id, d.decided_by)
                 ELSE format('DUPLICATE_APPROVAL: %s already decided promotion request %s from login %s; '
                             'each person decides under their own name', p_by, p.id, d.db_user) END,
            jsonb_build_object('promotion', relctl.promotion_json(p)));
    END IF;
    INSERT INTO relctl.promotion_decisions (promotion, decided_by, approve, reason, db_user)
        VALUES (p.id, p_by, p_approve, p_reason, v_login);
    v_given := relctl.approvals_given(p);
    IF NOT p_approve THEN
        UPDATE relctl.promotions SET state = 'denied', decided_at = clock_timestamp() WHERE id = p.id
            RETURNING * INTO p;
    ELSIF p.state = 'open' AND v_given >= e.approvals_required THEN
        UPDATE relctl.promotions SET state = 'approved', decided_at = clock_timestamp() WHERE id = p.id
            RETURNING * INTO p;
    END IF;
    PERFORM relctl.record(p.env, v_operation, NULL, NULL, p.release, p.generation, NULL, NULL, p_client,
                          jsonb_strip_nulls(jsonb_build_object(
                              'promotion', p.id, 'reason', p_reason, 'state', p.state,
                              'approvals_given', v_given, 'approvals_required', e.approvals_required,
                              'requested_by', p.requested_by, 'requested_login', p.requested_login)),
                          p_by);
    RETURN relctl.promotion_json(p) || jsonb_build_object('status', 'ok', 'changed', true);
END
$$;

GRANT EXECUTE ON FUNCTION relctl.promote_request TO relctl_job;
GRANT EXECUTE ON FUNCTION relctl.promotions_list TO relctl_reviewer;
GRANT EXECUTE ON FUNCTION relctl.decide_promotion TO relctl_manager;
