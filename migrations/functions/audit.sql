-- The append-only audit trail: its guard, how an event is recorded, and how
-- reviewers read it.

-- Append-only: history, the audit trail and operation outcomes are never
-- rewritten. Triggers bind superusers too, short of disabling triggers, which
-- needs table ownership: the owner, relctl_owner, is a NOLOGIN role.
CREATE FUNCTION relctl.refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'RC010',
        MESSAGE = format('relctl.%s is append-only: %s refused', TG_TABLE_NAME, TG_OP);
END
$$;

CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON relctl.events
    FOR EACH ROW EXECUTE FUNCTION relctl.refuse_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON relctl.events
    FOR EACH STATEMENT EXECUTE FUNCTION relctl.refuse_change();
CREATE TRIGGER manifests_append_only BEFORE UPDATE OR DELETE ON relctl.manifests
    FOR EACH ROW EXECUTE FUNCTION relctl.refuse_change();
CREATE TRIGGER manifests_no_truncate BEFORE TRUNCATE ON relctl.manifests
    FOR EACH STATEMENT EXECUTE FUNCTION relctl.refuse_change();
CREATE TRIGGER operations_append_only BEFORE UPDATE OR DELETE ON relctl.operations
    FOR EACH ROW EXECUTE FUNCTION relctl.refuse_change();
CREATE TRIGGER operations_no_truncate BEFORE TRUNCATE ON relctl.operations
    FOR EACH STATEMENT EXECUTE FUNCTION relctl.refuse_change();
CREATE TRIGGER rollbacks_append_only BEFORE UPDATE OR DELETE ON relctl.rollbacks
    FOR EACH ROW EXECUTE FUNCTION relctl.refuse_change();
CREATE TRIGGER rollbacks_no_truncate BEFORE TRUNCATE ON relctl.rollbacks
    FOR EACH STATEMENT EXECUTE FUNCTION relctl.refuse_change();
CREATE TRIGGER promotion_decisions_append_only BEFORE UPDATE OR DELETE ON relctl.promotion_decisions
    FOR EACH ROW EXECUTE FUNCTION relctl.refuse_change();
CREATE TRIGGER promotion_decisions_no_truncate BEFORE TRUNCATE ON relctl.promotion_decisions
    FOR EACH STATEMENT EXECUTE FUNCTION relctl.refuse_change();

-- Announcing events (NOTIFY relctl). PostgreSQL serialises the commits of
-- every notifying transaction in a database: it holds a lock from the
-- notification's queueing to the end of the commit's WAL flush, so no two of
-- them share a flush. Announcing every event made renewals and releases on
-- unrelated environments queue behind each other. So an event is announced
-- only when someone may wait for it:
-- - a decision of an operator or a release manager (revoke, freeze, unfreeze,
--   approvals, promotions, rollback, environment changes): rare, and consoles
--   show them at once;
-- - anything but a renewal on an environment someone watches: a waiter
--   (queued for the lease, or waiting for it to end) holds the environment's
--   watch lock (relctl.watch) while it waits.
-- Renewals are never announced: a waiter learns of one when it asks again at
-- the old expiry instant. Consoles follow everything else by event id
-- (relctl.events_after), without a notification.

-- 'RELW' as an integer: the advisory lock class of watched environments.
CREATE FUNCTION relctl.watch_lock_class() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 1380273239 $$;

-- Whether a session watches p_env. The exclusive try-lock fails while any
-- watcher holds the shared lock; when it succeeds it is held to the end of
-- this transaction, so a watcher arriving meanwhile waits for this commit and
-- then reads its effects (it LISTENs before it takes the lock). Never waits:
-- two environments whose names share a hash just announce once too often.
CREATE FUNCTION relctl.watched(p_env text) RETURNS boolean
LANGUAGE sql VOLATILE AS $$
    SELECT NOT pg_try_advisory_xact_lock(relctl.watch_lock_class(), hashtext(coalesce(p_env, '')))
$$;

-- A waiter's registration, held by its session until relctl.unwatch or the
-- session's end. Only another session holding the key exclusively keeps it
-- waiting: a writer's relctl.watched() for the rest of its transaction, or
-- any login that took the key by hand (pg_advisory_lock, outside a
-- transaction), which forced every waiter on the environment to ask on a
-- timer. After lock_timeout, overdue holders are ended as an operation id's
-- are (relctl.end_overdue, recorded) and the key is asked for once more.
-- False (not watching: the waiter falls back to asking on a timer) when it
-- is still unavailable.
CREATE FUNCTION relctl.watch(p_env text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '2s' AS $$
BEGIN
    IF p_env IS NULL THEN
        PERFORM relctl.invalid('watch needs an environment');
    END IF;
    BEGIN
        PERFORM pg_advisory_lock_shared(relctl.watch_lock_class(), hashtext(p_env));
        RETURN true;
    EXCEPTION
        WHEN lock_not_available THEN
            PERFORM relctl.end_overdue(p_env, NULL, format('the watch key of %s', p_env), true);
    END;
    PERFORM pg_advisory_lock_shared(relctl.watch_lock_class(), hashtext(p_env));
    RETURN true;
EXCEPTION
    WHEN lock_not_available THEN
        RETURN false;
END
$$;

-- Only this session's own registration can be dropped; without one the
-- unlock returns false, and the server's warning about it is not the
-- caller's concern (client_min_messages). Not a read of pg_locks: that costs
-- about 0.5 ms with hundreds of connections, on every waiter's way out.
CREATE FUNCTION relctl.unwatch(p_env text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET client_min_messages = error AS $$
BEGIN
    IF p_env IS NULL THEN
        PERFORM relctl.invalid('unwatch needs an environment');
    END IF;
    RETURN pg_advisory_unlock_shared(relctl.watch_lock_class(), hashtext(p_env));
END
$$;

-- Sends the notification. `candidate`: the queued candidate the event is
-- about (its refusal, say); `next`: the live candidate the queue serves next.
-- A waiter wakes only for its own candidate or when it is next, so a
-- handover wakes one waiter, not the whole queue.
CREATE FUNCTION relctl.announce(p_env text, p_operation text, p_event bigint, p_candidate bigint)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_next bigint;
    v_payload text;
BEGIN
    -- One read of the lock table, however long the queue.
    IF EXISTS (SELECT 1 FROM relctl.candidates WHERE env = p_env AND state = 'waiting') THEN
        SELECT x.id INTO v_next FROM relctl.live_candidates(p_env) x ORDER BY x.generation, x.id LIMIT 1;
    END IF;
    v_payload := json_build_object('env', p_env, 'event', p_event, 'operation', p_operation,
                                   'candidate', p_candidate, 'next', v_next)::text;
    PERFORM pg_notify('relctl', v_payload);
    -- The waiters' own channels: PostgreSQL still signals every listening
    -- backend, but only these two waiters' processes are woken.
    IF v_next IS NOT NULL THEN
        PERFORM pg_notify(relctl.candidate_channel(v_next), v_payload);
    END IF;
    IF p_candidate IS NOT NULL AND p_candidate IS DISTINCT FROM v_next THEN
        PERFORM pg_notify(relctl.candidate_channel(p_candidate), v_payload);
    END IF;
END
$$;

-- What a console that follows the trail missed, exactly. An event's id is
-- taken from the sequence when it is inserted and its transaction commits
-- later: event 11 may be visible while event 10 is still uncommitted. So the
-- caller keeps, besides the newest id it has read (p_after), the ids below it
-- it has not seen (p_gaps): each may still commit, or never appear (its
-- transaction rolled back). Returns, all read in one snapshot:
-- - envs: the environments of the events after p_after (the first p_limit of
--   them; `more` says some were not read) and of those listed in p_gaps that
--   are now visible (`found`: their ids);
-- - last: the newest id read, to ask after next time (NULL for an empty
--   trail); missing: the ids between p_after and `last` not visible, the
--   caller's new gaps; `complete` is false when a stretch of more than
--   max_gap_run() missing ids was not listed;
-- - snapshot: this call's snapshot (pg_current_snapshot), for the caller to
--   send back as p_reference once enough time has passed since it noticed
--   its gaps that their transactions have their transaction ids;
-- - settled: whether every transaction in progress in p_reference has ended
--   (NULL without one): the gaps noticed before p_reference was taken that are
--   still not in `found` then never appear. Judged by this call's snapshot,
--   not by the commit log, so a transaction the log already shows as
--   committed but whose rows this snapshot cannot see yet is not ended.
-- p_after NULL starts following: `last` is the newest id and `missing` the
-- ids not visible among the p_limit ids up to it. Every read is by id through
-- the primary key: the cost depends on p_limit and p_gaps, not on the trail.
CREATE FUNCTION relctl.events_after(p_after bigint, p_limit integer DEFAULT 10000, p_gaps bigint[] DEFAULT NULL,
                                    p_reference text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_now pg_snapshot := pg_current_snapshot();
    v_reference pg_snapshot;
    v_settled boolean;
    v_from bigint := p_after;
    v_last bigint;
    v_more boolean;
    v_envs jsonb;
    v_found jsonb;
    v_missing jsonb;
    v_complete boolean;
BEGIN
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 100000 THEN
        PERFORM relctl.invalid('limit must be between 1 and 100000');
    END IF;
    IF cardinality(p_gaps) > 100000 THEN
        PERFORM relctl.invalid('at most 100000 gap ids may be asked for at once');
    END IF;
    IF p_reference IS NOT NULL THEN
        BEGIN
            v_reference := p_reference::pg_snapshot;
        EXCEPTION
            WHEN invalid_text_representation THEN
                PERFORM relctl.invalid('reference must be a snapshot that events_after returned');
        END;
        v_settled := NOT EXISTS (SELECT 1 FROM pg_snapshot_xip(v_reference) x
                                 WHERE NOT pg_visible_in_snapshot(x, v_now));
    END IF;
    IF p_after IS NULL AND p_gaps IS NULL THEN
        -- A follower's start (relctl::EventListener's first call): nothing
        -- is new yet, so only where the trail ends and which of the last
        -- p_limit ids below it are missing (they may still commit) are
        -- wanted, read from the primary key alone (no row is visited): the
        -- answer the general case below gives a start, at a fraction of its
        -- cost, which a console waits for on opening. An event committed
        -- after v_last was read is past it, reported by the next call.
        v_last := (SELECT max(id) FROM relctl.events);
        v_from := greatest(v_last - p_limit, 0);
        WITH holes AS (
            SELECT k.prev, k.id
            FROM (SELECT v.id, coalesce(lag(v.id) OVER (ORDER BY v.id), v_from) AS prev
                  FROM relctl.events v WHERE v.id > v_from AND v.id <= v_last) k
            WHERE k.prev < k.id - 1
        )
        SELECT (SELECT coalesce(jsonb_agg(g ORDER BY g), '[]')
                FROM holes h, generate_series(h.prev + 1, h.id - 1) g
                WHERE h.prev >= h.id - 1 - relctl.max_gap_run()),
               NOT EXISTS (SELECT 1 FROM holes h WHERE h.prev < h.id - 1 - relctl.max_gap_run())
          INTO v_missing, v_complete;
        RETURN jsonb_build_object('last', v_last, 'envs', '[]'::jsonb, 'more', false, 'found', '[]'::jsonb,
                                  'missing', v_missing, 'complete', v_complete, 'snapshot', v_now::text,
                                  'settled', v_settled);
    END IF;
    IF p_after IS NULL THEN
        v_last := (SELECT max(id) FROM relctl.events);
        v_from := greatest(v_last - p_limit, 0);
    END IF;
    -- The page is the first p_limit ids after v_from (one more is read to
    -- tell whether more follow); a hole is a run of ids missing between two
    -- of its rows, or between v_from and its first row. The comparisons are
    -- written so that no p_after, however far from the trail, overflows.
    WITH page AS (
        SELECT id, env FROM relctl.events WHERE id > v_from ORDER BY id LIMIT p_limit + 1
    ), kept AS (
        SELECT id, env, coalesce(lag(id) OVER (ORDER BY id), v_from) AS prev
        FROM (SELECT id, env FROM page ORDER BY id LIMIT p_limit) p
    ), found AS (
        SELECT id, env FROM relctl.events WHERE id = ANY (p_gaps) AND id <= v_from
    ), holes AS (
        SELECT prev, id FROM kept WHERE prev < id - 1
    ), listed AS (
        SELECT g FROM holes, generate_series(prev + 1, id - 1) g
        WHERE prev >= id - 1 - relctl.max_gap_run()
        LIMIT 100001
    )
    SELECT (SELECT max(id) FROM kept),
           (SELECT count(*) FROM page) > p_limit,
           CASE WHEN p_after IS NULL THEN '[]'::jsonb -- the start: nothing is new yet
                ELSE (SELECT coalesce(jsonb_agg(DISTINCT coalesce(env, '')), '[]')
                      FROM (SELECT env FROM kept UNION ALL SELECT env FROM found) e) END,
           (SELECT coalesce(jsonb_agg(id ORDER BY id), '[]') FROM found),
           (SELECT coalesce(jsonb_agg(g ORDER BY g), '[]') FROM (SELECT g FROM listed LIMIT 100000) l),
           NOT EXISTS (SELECT 1 FROM holes WHERE prev < id - 1 - relctl.max_gap_run())
               AND (SELECT count(*) FROM listed) <= 100000
        INTO v_last, v_more, v_envs, v_found, v_missing, v_complete;
    RETURN jsonb_build_object('last', coalesce(v_last, p_after), 'envs', v_envs,
                              'more', v_more, 'found', v_found, 'missing', v_missing, 'complete', v_complete,
                              'snapshot', v_now::text, 'settled', v_settled);
END
$$;

-- The longest run of missing ids events_after lists: longer runs are only
-- reported as not `complete` (a sequence moved by hand, or a p_after far
-- from the trail; rolled-back events leave runs of a few ids).
CREATE FUNCTION relctl.max_gap_run() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 1000 $$;

-- How many refusals one login's own calls may add to the trail: per
-- environment, and in all, over the last refusal_window_ms(). A job login
-- could otherwise grow the append-only trail at its own rate (10,700 refused
-- renews a second). Legitimate refusals (a stale job's publish, a lost
-- lease) come a few a minute per environment, far below either.
CREATE FUNCTION relctl.refusal_window_ms() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 10000::bigint $$;

CREATE FUNCTION relctl.max_refusals_per_env() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 100::bigint $$;

CREATE FUNCTION relctl.max_refusals_per_login() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 1000::bigint $$;

-- Whether a refusal of this session's own call may be recorded now. When it
-- may not, it is counted in relctl.unrecorded_refusals instead (the caller
-- is answered the same either way); when it may, what was counted is first
-- recorded as one 'refusals-unrecorded' event of the login, so the trail
-- still says how many calls were refused, of which reasons, on which
-- environments and when.
CREATE FUNCTION relctl.refusal_recordable(p_env text, p_reason text, p_client jsonb) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_env bigint;
    v_login bigint;
    u relctl.unrecorded_refusals;
BEGIN
    SELECT count(*) FILTER (WHERE r.env IS NOT DISTINCT FROM p_env), count(*) INTO v_env, v_login
    FROM (SELECT env FROM relctl.events
          WHERE outcome = 'rejected' AND db_user = session_user
            AND at > v_now - relctl.refusal_window_ms() * interval '1 ms'
          ORDER BY at DESC LIMIT relctl.max_refusals_per_login()) r;
    IF v_env >= relctl.max_refusals_per_env() OR v_login >= relctl.max_refusals_per_login() THEN
        INSERT INTO relctl.unrecorded_refusals AS x (db_user, first_at, last_at, refusals, counts)
            VALUES (session_user, v_now, v_now, 1,
                    jsonb_build_object(coalesce(p_env, ''), jsonb_build_object(p_reason, 1)))
        ON CONFLICT (db_user) DO UPDATE
            SET last_at = EXCLUDED.last_at, refusals = x.refusals + 1,
                counts = jsonb_set(x.counts, ARRAY[coalesce(p_env, ''), p_reason],
                                   to_jsonb(coalesce((x.counts #>> ARRAY[coalesce(p_env, ''), p_reason])::bigint, 0) + 1),
                                   true);
        RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM relctl.unrecorded_refusals WHERE db_user = session_user) THEN
        DELETE FROM relctl.unrecorded_refusals WHERE db_user = session_user RETURNING * INTO u;
        IF FOUND THEN
            PERFORM relctl.record(NULL, 'refusals-unrecorded', NULL, NULL, NULL, NULL, NULL, NULL, p_client,
                                  jsonb_build_object('refusals', u.refusals, 'counts', u.counts,
                                                     'first_at', u.first_at, 'last_at', u.last_at,
                                                     'window_ms', relctl.refusal_window_ms(),
                                                     'max_per_env', relctl.max_refusals_per_env(),
                                                     'max_per_login', relctl.max_refusals_per_login()));
        END IF;
    END IF;
    RETURN true;
END
$$;

-- Appends one event, snapshotting the environment's newest token and current
-- release/generation so that the row alone explains a refusal. `at` is the
-- server's clock. `db_user` and `client_addr` are the session's real login
-- and address, or, for what is done on a queued candidate's behalf in
-- another session (p_for: its grant at a release, its refusal), the login and
-- address the server saw when that candidate queued (candidates.db_user,
-- a column default): no caller of relctl's API can supply them. p_actor names
-- the person behind an operator action (revoke, freeze, approve, ...).
-- A refusal of the session's own call beyond the login's budget is counted,
-- not appended (relctl.refusal_recordable): NULL is returned.
CREATE FUNCTION relctl.record(
    p_env text, p_operation text, p_reason text, p_job text, p_release text,
    p_generation bigint, p_token bigint, p_op_id text, p_client jsonb, p_detail jsonb,
    p_actor text DEFAULT NULL, p_for relctl.candidates DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
    v_client jsonb := relctl.client_info(p_client);
BEGIN
    IF NOT p_operation = ANY (relctl.audited_operations())
       OR (p_reason IS NOT NULL AND NOT p_reason = ANY (relctl.refusal_reasons())) THEN
        RAISE EXCEPTION 'relctl.record: % % is not in the catalogue (catalogue.sql)', p_operation, p_reason;
    END IF;
    IF p_reason IS NOT NULL AND p_for.id IS NULL AND NOT relctl.refusal_recordable(p_env, p_reason, p_client) THEN
        RETURN NULL;
    END IF;
    INSERT INTO relctl.events (env, operation, outcome, reason, job, release, generation, token,
                               current_token, current_generation, current_release, high_water_generation,
                               op_id, host, pid, job_url, actor, detail, db_user, client_addr)
    SELECT p_env, p_operation, CASE WHEN p_reason IS NULL THEN 'accepted' ELSE 'rejected' END,
           p_reason, p_job, p_release, p_generation, p_token,
           e.last_token, m.generation, m.release, e.high_water_generation,
           p_op_id, v_client ->> 'host', (v_client ->> 'pid')::integer, v_client ->> 'job_url',
           p_actor, p_detail,
           -- A candidate queued before its login was kept (NULL) is this session's.
           coalesce(p_for.db_user, session_user),
           CASE WHEN p_for.db_user IS NULL THEN inet_client_addr() ELSE p_for.client_addr END
    FROM (SELECT 1) AS one
    LEFT JOIN relctl.environments e ON e.name = p_env
    LEFT JOIN relctl.manifests m ON m.id = e.current_manifest_id
    RETURNING id INTO v_id;
    IF (p_reason IS NULL AND NOT p_operation = ANY (ARRAY['acquire', 'renew', 'publish', 'release']))
       OR (p_operation <> 'renew' AND relctl.watched(p_env)) THEN
        PERFORM relctl.announce(p_env, p_operation, v_id,
                                CASE WHEN jsonb_typeof(p_detail -> 'candidate') = 'number'
                                     THEN (p_detail ->> 'candidate')::bigint END);
    END IF;
    RETURN v_id;
END
$$;

CREATE FUNCTION relctl.event_json(v relctl.events) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', v.id, 'at', v.at, 'env', v.env, 'operation', v.operation, 'outcome', v.outcome,
        'reason', v.reason, 'job', v.job, 'release', v.release, 'generation', v.generation,
        'token', v.token, 'current_token', v.current_token, 'current_generation', v.current_generation,
        'current_release', v.current_release, 'op_id', v.op_id, 'host', v.host, 'pid', v.pid,
        'job_url', v.job_url, 'actor', v.actor, 'db_user', v.db_user,
        'client_addr', host(v.client_addr), 'high_water_generation', v.high_water_generation,
        'detail', v.detail)
$$;

-- The newest p_limit matching events, oldest first (like a log's tail).
CREATE FUNCTION relctl.audit(p_env text, p_job text, p_reason text, p_operation text,
                             p_since timestamptz, p_limit integer)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
BEGIN
    IF p_limit IS NOT NULL AND p_limit NOT BETWEEN 1 AND 100000 THEN
        PERFORM relctl.invalid('limit must be between 1 and 100000');
    END IF;
    RETURN jsonb_build_object('events', (
        SELECT coalesce(jsonb_agg(relctl.event_json(v) ORDER BY v.id), '[]')
        FROM (SELECT * FROM relctl.events
              WHERE (p_env IS NULL OR env = p_env)
                AND (p_job IS NULL OR job = p_job)
                AND (p_reason IS NULL OR reason = p_reason)
                AND (p_operation IS NULL OR operation = p_operation)
                AND (p_since IS NULL OR at >= p_since)
              ORDER BY id DESC
              LIMIT coalesce(p_limit, 1000)) v));
END
$$;

-- What caused a refusal, traced to the row that decided it, so the reviewer
-- reads the real reason and not just the lease that happened to hold the
-- environment: for SUPERSEDED the candidate that won and the approval that let
-- it (who, why); for LEASE_SUPERSEDED the newer holder; for LEASE_REVOKED the
-- operator and reason; for DISPATCH_FROZEN the freeze in force; for
-- STALE_GENERATION the publish that set the bar. `summary` says it in one
-- sentence; the other keys are the pieces (NULL when they do not apply).
-- Promotion gates explain themselves through their detail (console_gate_json).
CREATE FUNCTION relctl.refusal_cause(v relctl.events) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    w relctl.candidates;
    s relctl.supersessions;
    own relctl.leases;
    nxt relctl.leases;
    f relctl.events;
    m relctl.manifests;
    v_bar bigint := coalesce(v.high_water_generation, v.current_generation);
    v_cause jsonb;
BEGIN
    IF v.outcome IS DISTINCT FROM 'rejected' THEN
        RETURN NULL;
    END IF;
    IF v.token IS NOT NULL THEN
        SELECT * INTO own FROM relctl.leases WHERE env = v.env AND token = v.token;
    END IF;
    CASE v.reason
    WHEN 'SUPERSEDED' THEN
        -- The refusal's detail names the winning candidate and the approval
        -- (none under supersede auto) that refuse_candidate acted on.
        SELECT * INTO w FROM relctl.candidates WHERE id = (v.detail ->> 'candidate')::bigint;
        SELECT * INTO s FROM relctl.supersessions WHERE id = (v.detail ->> 'approval')::bigint;
        v_cause := jsonb_build_object(
            'kind', 'superseded', 'job', w.job, 'release', w.release, 'generation', w.generation,
            'token', w.token, 'host', w.host, 'pid', w.pid, 'job_url', w.job_url,
            'approval', s.id, 'by', s.decided_by, 'reason', s.reason, 'at', s.decided_at,
            'summary', CASE WHEN w.id IS NULL THEN 'skipped for a newer candidate'
                            ELSE format('skipped for %s (%s, generation %s)', w.job, w.release, w.generation) END
                       || CASE WHEN s.id IS NULL THEN ': policy newest supersedes older waiting candidates'
                               ELSE format(', which approval #%s by %s let go first%s', s.id, s.decided_by,
                                           coalesce(': ' || s.reason, '')) END);
    WHEN 'LEASE_SUPERSEDED' THEN
        SELECT * INTO nxt FROM relctl.leases WHERE env = v.env AND token > v.token ORDER BY token LIMIT 1;
        v_cause := jsonb_build_object(
            'kind', 'lease_superseded', 'job', nxt.job, 'release', nxt.release, 'generation', nxt.generation,
            'token', nxt.token, 'host', nxt.host, 'pid', nxt.pid, 'job_url', nxt.job_url,
            'at', nxt.acquired_at,
            'summary', format('its lease (token %s) expired and %s (%s, generation %s) took %s with token %s',
                              v.token, nxt.job, nxt.release, nxt.generation, v.env, nxt.token));
    WHEN 'LEASE_REVOKED' THEN
        v_cause := jsonb_build_object(
            'kind', 'revoked', 'token', own.token, 'by', own.ended_by, 'reason', own.end_note,
            'at', own.ended_at,
            'summary', format('its lease (token %s) was revoked by %s: %s', v.token,
                              coalesce(own.ended_by, 'an operator'), coalesce(own.end_note, 'no reason recorded')));
    WHEN 'DISPATCH_FROZEN' THEN
        SELECT * INTO f FROM relctl.events
        WHERE env = v.env AND operation = 'freeze' AND outcome = 'accepted' AND id < v.id
        ORDER BY id DESC LIMIT 1;
        v_cause := jsonb_build_object(
            'kind', 'frozen', 'by', f.actor, 'reason', f.detail ->> 'reason', 'at', f.at,
            'summary', format('%s was frozen by %s: %s', v.env, coalesce(f.actor, 'an operator'),
                              coalesce(f.detail ->> 'reason', 'no reason recorded')));
    WHEN 'STALE_GENERATION' THEN
        SELECT * INTO m FROM relctl.manifests WHERE env = v.env AND generation = v_bar;
        v_cause := jsonb_build_object(
            'kind', 'stale', 'job', m.job, 'release', m.release, 'generation', m.generation, 'token', m.token,
            'at', m.published_at,
            'summary', CASE WHEN m.id IS NULL THEN
                           format('generation %s is not newer than generation %s, the highest accepted on %s',
                                  v.generation, v_bar, v.env)
                       ELSE format('generation %s is not newer than generation %s (%s), published by %s with token %s',
                                   v.generation, m.generation, m.release, m.job, m.token) END
                       || CASE WHEN v.current_generation IS DISTINCT FROM v_bar AND v.current_generation IS NOT NULL
                               THEN format('; %s was rolled back to generation %s (%s) since, which keeps the bar',
                                           v.env, v.current_generation, v.current_release)
                               ELSE '' END);
    WHEN 'LEASE_EXPIRED' THEN
        v_cause := jsonb_build_object('kind', 'expired', 'token', own.token, 'at', own.expires_at,
            'summary', format('its lease (token %s) had expired: it was not renewed within its TTL', v.token));
    WHEN 'LEASE_RELEASED' THEN
        v_cause := jsonb_build_object('kind', 'released', 'token', own.token, 'at', own.ended_at,
            'summary', format('its lease (token %s) had already been released', v.token));
    WHEN 'NO_LEASE' THEN
        v_cause := jsonb_build_object('kind', 'no_lease',
            'summary', format('serialization is enforced on %s and the publish held no lease', v.env));
    ELSE
        RETURN NULL;
    END CASE;
    -- Every key is present, NULL when it does not apply to this kind.
    RETURN jsonb_build_object('kind', NULL, 'summary', NULL, 'job', NULL, 'release', NULL, 'generation', NULL,
                              'token', NULL, 'host', NULL, 'pid', NULL, 'job_url', NULL, 'approval', NULL,
                              'by', NULL, 'reason', NULL, 'at', NULL) || v_cause;
END
$$;

-- Every refusal of a job, each with the job's own lease, the lease that beat
-- it (the environment's newest token at that moment, when it was not the
-- job's), and the manifest that was current at that moment.
CREATE FUNCTION relctl.trace(p_job text) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    SELECT jsonb_build_object('job', p_job, 'refusals', coalesce(jsonb_agg(
        jsonb_build_object(
            'event', relctl.event_json(v),
            'lease', CASE WHEN own.token IS NULL THEN NULL ELSE jsonb_build_object(
                'token', own.token, 'release', own.release, 'generation', own.generation,
                'acquired_at', own.acquired_at, 'expires_at', own.expires_at,
                'ended_at', own.ended_at, 'end_reason', own.end_reason,
                'host', own.host, 'pid', own.pid, 'job_url', own.job_url) END,
            'superseded_by', CASE WHEN beat.token IS NULL THEN NULL ELSE jsonb_build_object(
                'token', beat.token, 'job', beat.job, 'release', beat.release,
                'generation', beat.generation, 'acquired_at', beat.acquired_at,
                'expires_at', beat.expires_at, 'host', beat.host, 'pid', beat.pid,
                'job_url', beat.job_url) END,
            'current_manifest', CASE WHEN cur.id IS NULL THEN NULL ELSE jsonb_build_object(
                'release', cur.release, 'generation', cur.generation, 'job', cur.job,
                'token', cur.token, 'published_at', cur.published_at,
                'published_before_ms', relctl.ms_between(cur.published_at, v.at)) END,
            'cause', relctl.refusal_cause(v))
        ORDER BY v.id), '[]'))
    FROM relctl.events v
    LEFT JOIN relctl.leases own ON own.env = v.env AND own.token = v.token AND own.job = v.job
    LEFT JOIN relctl.leases beat ON beat.env = v.env AND beat.token = v.current_token
                                AND v.current_token IS DISTINCT FROM v.token
    LEFT JOIN relctl.manifests cur ON cur.env = v.env AND cur.generation = v.current_generation
    WHERE v.job = p_job AND v.outcome = 'rejected'
$$;

GRANT EXECUTE ON FUNCTION relctl.audit, relctl.trace, relctl.events_after TO relctl_reviewer;
GRANT EXECUTE ON FUNCTION relctl.watch, relctl.unwatch TO relctl_job;
