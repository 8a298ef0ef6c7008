-- The durable queue: waiting candidates, the environment's policy
-- (ordered, or newest with automatic or approved supersession), and the
-- release manager's decisions on supersession requests.
--
-- A waiting candidate's session holds an advisory lock (class
-- candidate_lock_class(), key = the candidate's random lock_key); when that
-- session ends, however the process died, the lock goes and the candidate is
-- treated as gone.

-- 'RELC' as an integer: the advisory lock class of waiting candidates.
CREATE FUNCTION relctl.candidate_lock_class() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 1380273219 $$;

-- The backend that holds the candidate's lock: the session that queued it,
-- while it is connected; NULL once it is gone.
CREATE FUNCTION relctl.candidate_session(c relctl.candidates) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT pid FROM pg_catalog.pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 2
      AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
      AND classid = relctl.candidate_lock_class()::oid
      AND objid = c.lock_key::oid
    LIMIT 1
$$;

-- How long a candidate whose waiter's session was lost keeps its place for
-- that waiter's return (relctl.acquire with the same op id and secret): long
-- enough for a restart or a failover and the client's reconnect window, short
-- enough that a job gone for good does not jump the queue later.
CREATE FUNCTION relctl.requeue_grace_ms() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 60000::bigint $$;

-- The lock keys of every candidate whose session is connected.
CREATE FUNCTION relctl.held_candidate_locks() RETURNS TABLE (objid oid)
LANGUAGE sql STABLE AS $$
    SELECT l.objid FROM pg_catalog.pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
      AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
      AND l.classid = relctl.candidate_lock_class()::oid
$$;

-- The channel a queued candidate's session LISTENs on (core/src/queue.cpp
-- spells it the same): announcements that name the candidate go there as
-- well as to "relctl", so a waiter's process wakes only for its own.
CREATE FUNCTION relctl.candidate_channel(p_candidate bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT 'relctl_c' || p_candidate $$;

-- This session stops waiting as the candidate's waiter: it drops the
-- candidate's queue lock, as often as it holds it (a session that queued the
-- candidate again holds it twice), and stops listening on its channel. The
-- waiter of a decided candidate that asks again (or leaves twice) holds no
-- lock, and the server's warning about that is not the caller's concern.
--
-- The unlock is not transactional: a rollback does not take the lock again.
-- So a session drops the lock only once the candidate's end is committed, or
-- where a rollback would restore what it held before (the transaction took
-- the lock itself), never in the transaction that decides a candidate it
-- held before: if that transaction then failed (a lock wait past
-- lock_timeout, a commit that cannot take the notification queue's lock),
-- the candidate would be waiting again with no live session, refused to its
-- own waiter and dropped from the queue by the next one to look.
CREATE FUNCTION relctl.end_wait(c relctl.candidates) RETURNS void
LANGUAGE plpgsql SET client_min_messages = error AS $$
BEGIN
    WHILE pg_advisory_unlock(relctl.candidate_lock_class(), c.lock_key) LOOP
    END LOOP;
    EXECUTE format('UNLISTEN %I', relctl.candidate_channel(c.id));
END
$$;

-- The candidate's process as its waiter reported it, for what is recorded
-- on its behalf.
CREATE FUNCTION relctl.candidate_client(c relctl.candidates) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT jsonb_build_object('host', c.host, 'pid', c.pid, 'job_url', c.job_url) $$;

CREATE FUNCTION relctl.candidate_alive(c relctl.candidates) RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT relctl.candidate_session(c) IS NOT NULL $$;

CREATE FUNCTION relctl.candidate_json(c relctl.candidates) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN c.id IS NULL THEN NULL ELSE jsonb_build_object(
        'candidate', c.id, 'job', c.job, 'release', c.release, 'generation', c.generation,
        'queued_at', c.queued_at, 'state', c.state, 'ended_at', c.ended_at, 'token', c.token,
        'host', c.host, 'pid', c.pid, 'job_url', c.job_url) END
$$;

-- Ends a waiting candidate with a refusal: recorded against its job and
-- remembered under its op id, so its waiter (or a retry) reads the outcome.
CREATE FUNCTION relctl.refuse_candidate(c relctl.candidates, p_state text, p_reason text, p_detail jsonb,
                                        p_message text)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_reply jsonb;
BEGIN
    UPDATE relctl.candidates SET state = p_state, ended_at = clock_timestamp(),
                                 superseded_by = (p_detail ->> 'candidate')::bigint
        WHERE id = c.id;
    v_reply := jsonb_build_object(
        'status', 'refused', 'reason', p_reason, 'operation', 'acquire', 'env', c.env, 'job', c.job,
        'release', c.release, 'generation', c.generation, 'candidate', c.id, 'op_id', c.op_id,
        'message', p_message, 'replayed', false)
        || CASE WHEN p_reason = 'SUPERSEDED' THEN jsonb_build_object('superseded_by', p_detail)
                WHEN p_state = 'refused' THEN jsonb_strip_nulls(jsonb_build_object(
                    'upstream', p_detail -> 'upstream', 'promotion', p_detail -> 'promotion'))
                ELSE jsonb_build_object('current', p_detail) END;
    PERFORM relctl.record(c.env, 'acquire', p_reason, c.job, c.release, c.generation, NULL, c.op_id,
                          relctl.candidate_client(c),
                          jsonb_build_object('candidate', c.id, 'queued_at', c.queued_at)
                          || CASE WHEN p_state = 'refused' THEN jsonb_strip_nulls(jsonb_build_object(
                                  'upstream', p_detail -> 'upstream',
                                  'promotion', p_detail #> '{promotion,id}',
                                  'denial', p_detail #> '{promotion,denial}'))
                             ELSE coalesce(p_detail, '{}') END,
                          NULL, c);
    PERFORM relctl.remember(c.op_id, 'acquire',
                            relctl.acquire_request(c.env, c.job, c.release, c.generation, c.ttl_ms), v_reply,
                            c.secret_sha256);
END
$$;

-- Brings the queue up to date with the environment: drops candidates whose
-- session is gone, refuses those that became stale, and applies the
-- environment's supersession policy. Caller holds the environment row lock.
CREATE FUNCTION relctl.refresh_queue(e relctl.environments) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    m relctl.manifests;
    c relctl.candidates;
    top relctl.candidates;
    s relctl.supersessions;
    v_skipped bigint[];
    v_gate jsonb;
BEGIN
    -- Most environments have nobody waiting: then there is nothing to bring up
    -- to date but requests about a queue that emptied.
    IF NOT EXISTS (SELECT 1 FROM relctl.candidates WHERE env = e.name AND state = 'waiting') THEN
        IF NOT (e.policy = 'newest' AND e.supersede = 'approval') THEN
            UPDATE relctl.supersessions SET state = 'obsolete', decided_at = clock_timestamp()
                WHERE env = e.name AND state IN ('pending', 'approved');
        END IF;
        RETURN;
    END IF;
    -- One read of the lock table for the whole queue, not one per candidate:
    -- every waiter's poll runs this.
    UPDATE relctl.candidates x SET state = 'left', ended_at = clock_timestamp()
        WHERE x.env = e.name AND x.state = 'waiting'
          AND x.lock_key::oid NOT IN (SELECT objid FROM relctl.held_candidate_locks());

    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    FOR c IN SELECT * FROM relctl.candidates
             WHERE env = e.name AND state = 'waiting' AND generation <= e.high_water_generation ORDER BY id LOOP
        PERFORM relctl.refuse_candidate(c, 'stale', 'STALE_GENERATION',
            relctl.manifest_json(m, e.name) - 'manifest' - 'env',
            relctl.stale_message(e, m, c.release, c.generation));
    END LOOP;

    -- A denial is final: its candidates leave the queue at once, wherever
    -- they stand in it.
    FOR c IN SELECT x.* FROM relctl.candidates x
             JOIN relctl.promotions p ON p.env = x.env AND p.release = x.release AND p.generation = x.generation
             WHERE x.env = e.name AND x.state = 'waiting' AND p.state = 'denied' AND e.approvals_required > 0
             ORDER BY x.id LOOP
        v_gate := relctl.promotion_refusal(e, c.job, c.release, c.generation, clock_timestamp(), false, NULL);
        PERFORM relctl.refuse_candidate(c, 'refused', v_gate ->> 'reason', v_gate, v_gate ->> 'message');
    END LOOP;

    IF NOT (e.policy = 'newest' AND e.supersede = 'approval') THEN
        UPDATE relctl.supersessions SET state = 'obsolete', decided_at = clock_timestamp()
            WHERE env = e.name AND state IN ('pending', 'approved');
    END IF;
    IF e.policy <> 'newest' THEN
        RETURN;
    END IF;

    SELECT * INTO top FROM relctl.candidates
        WHERE env = e.name AND state = 'waiting' ORDER BY generation DESC, id LIMIT 1;
    IF top.id IS NULL THEN
        RETURN;
    END IF;
    SELECT array_agg(id ORDER BY id) INTO v_skipped FROM relctl.candidates
        WHERE env = e.name AND state = 'waiting' AND generation < top.generation;
    IF v_skipped IS NULL THEN
        RETURN;
    END IF;

    IF e.supersede = 'approval' THEN
        -- A request names one winner; a newer winner makes older requests moot.
        UPDATE relctl.supersessions SET state = 'obsolete', decided_at = clock_timestamp()
            WHERE env = e.name AND state IN ('pending', 'approved') AND winner <> top.id;
        SELECT * INTO s FROM relctl.supersessions
            WHERE env = e.name AND winner = top.id ORDER BY id DESC LIMIT 1;
        IF s.id IS NULL OR (s.state = 'pending' AND s.skipped <> v_skipped) THEN
            -- New, or the set to skip changed (another candidate queued below the winner).
            IF s.id IS NOT NULL THEN
                UPDATE relctl.supersessions SET state = 'obsolete', decided_at = clock_timestamp() WHERE id = s.id;
            END IF;
            INSERT INTO relctl.supersessions (env, winner, skipped) VALUES (e.name, top.id, v_skipped)
                RETURNING * INTO s;
            PERFORM relctl.record(e.name, 'supersession-requested', NULL, top.job, top.release, top.generation,
                                  NULL, top.op_id, '{}', jsonb_build_object('request', s.id, 'skipped', to_jsonb(v_skipped)));
        END IF;
        -- Until a release manager approves, the queue is served in ordered order.
        IF s.state <> 'approved' THEN
            RETURN;
        END IF;
        UPDATE relctl.supersessions SET state = 'applied' WHERE id = s.id;
        v_skipped := ARRAY(SELECT unnest(v_skipped) INTERSECT SELECT unnest(s.skipped));
    END IF;

    FOR c IN SELECT * FROM relctl.candidates WHERE id = ANY (v_skipped) AND state = 'waiting' ORDER BY id LOOP
        PERFORM relctl.refuse_candidate(c, 'superseded', 'SUPERSEDED',
            jsonb_build_object('candidate', top.id, 'job', top.job, 'release', top.release,
                               'generation', top.generation, 'approval', s.id),
            format('SUPERSEDED: generation %s of %s was skipped for generation %s (%s) on %s%s',
                   c.generation, c.release, top.generation, top.release, e.name,
                   CASE WHEN s.id IS NULL THEN '' ELSE format(' (approved by %s)', s.decided_by) END));
    END LOOP;
END
$$;

-- The candidate the policy serves next (after refresh_queue): the lowest
-- waiting generation, which under 'newest' is also the highest once the
-- others were superseded.
CREATE FUNCTION relctl.queue_head(p_env text) RETURNS relctl.candidates
LANGUAGE sql STABLE AS $$
    SELECT * FROM relctl.candidates WHERE env = p_env AND state = 'waiting' ORDER BY generation, id LIMIT 1
$$;

-- The outcome of a decided candidate, as its waiter receives it: its op
-- id's stored outcome, with the lease's credentials (the waiter presented
-- the request's secret).
CREATE FUNCTION relctl.candidate_outcome(c relctl.candidates) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    l relctl.leases;
    v_reply jsonb;
BEGIN
    SELECT outcome || jsonb_build_object('replayed', false) INTO v_reply
        FROM relctl.operations WHERE op_id = c.op_id;
    IF v_reply ->> 'status' = 'ok' THEN
        SELECT * INTO l FROM relctl.leases WHERE env = c.env AND token = (v_reply ->> 'token')::bigint;
        v_reply := v_reply || relctl.credentials(l);
    END IF;
    RETURN coalesce(v_reply, jsonb_build_object('status', 'busy', 'env', c.env, 'candidate', c.id,
                                                'message', format('candidate %s left the queue (%s)', c.id, c.state)));
END
$$;

-- Decides a waiting candidate: granted, refused (stale or superseded, as
-- remembered), or still queued (with what it waits for, so the waiter can
-- set its timer to the holder's expiry). Caller holds the environment lock
-- and has established that this session queued the candidate.
-- A candidate decided in an earlier transaction (handed the lease at a
-- release, refused while others brought the queue up to date) only reads
-- its outcome, and its waiter's session stops waiting. One decided now keeps
-- the queue lock until the decision is committed (relctl.end_wait says
-- why): the caller that took the lock in this transaction drops it
-- (relctl.acquire); otherwise the waiter drops it afterwards
-- (relctl.stop_waiting), or its session's end does.
CREATE FUNCTION relctl.evaluate_candidate(p_candidate bigint, e relctl.environments, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    c relctl.candidates;
    head relctl.candidates;
    holder relctl.leases;
    v_now timestamptz;
    v_gate jsonb;
BEGIN
    SELECT * INTO c FROM relctl.candidates WHERE id = p_candidate;
    IF c.state <> 'waiting' THEN
        PERFORM relctl.end_wait(c);
        RETURN relctl.candidate_outcome(c);
    END IF;
    PERFORM relctl.refresh_queue(e);
    SELECT * INTO c FROM relctl.candidates WHERE id = p_candidate;
    IF c.state <> 'waiting' THEN
        RETURN relctl.candidate_outcome(c);
    END IF;
    v_now := clock_timestamp();
    holder := relctl.live_lease(e, v_now);
    head := relctl.queue_head(e.name);
    IF e.frozen_at IS NULL AND holder.token IS NULL AND head.id = c.id THEN
        v_gate := relctl.promotion_refusal(e, c.job, c.release, c.generation, v_now, true, p_client);
        IF v_gate ->> 'reason' IN ('NOT_PROMOTED', 'APPROVAL_DENIED') THEN
            -- The upstream withdrew the release (or a denial came) while it waited.
            PERFORM relctl.refuse_candidate(c, 'refused', v_gate ->> 'reason', v_gate, v_gate ->> 'message');
            RETURN relctl.candidate_outcome(c);
        END IF;
    END IF;
    IF e.frozen_at IS NULL AND holder.token IS NULL AND head.id = c.id AND v_gate IS NULL THEN
        RETURN relctl.grant_candidate(c, e, p_client, v_now, '{}');
    END IF;
    RETURN jsonb_build_object(
        'status', 'queued', 'env', e.name, 'candidate', c.id,
        'position', (SELECT count(*) FROM relctl.candidates
                     WHERE env = e.name AND state = 'waiting' AND (generation, id) <= (c.generation, c.id)),
        'holder', relctl.lease_json(holder, v_now), 'frozen', e.frozen_at IS NOT NULL,
        'head', relctl.candidate_json(head),
        'supersession', (SELECT id FROM relctl.supersessions WHERE env = e.name AND state = 'pending' LIMIT 1),
        'promotion', v_gate -> 'promotion',
        'message', CASE
            WHEN e.frozen_at IS NOT NULL THEN format('%s is frozen: %s', e.name, e.frozen_reason)
            WHEN v_gate IS NOT NULL THEN v_gate ->> 'message'
            WHEN holder.token IS NOT NULL THEN format(
                'environment %s is held by job %s (release %s, generation %s, token %s) for another %s ms',
                e.name, holder.job, holder.release, holder.generation, holder.token,
                greatest(0, relctl.ms_between(v_now, holder.expires_at)))
            ELSE format('candidate %s (generation %s) goes next on %s', head.job, head.generation, e.name) END);
END
$$;

-- Grants a waiting candidate the lease, recorded and remembered under its op
-- id as its own acquisition: its job, its process (p_client), its login.
-- Caller holds the environment lock and has decided that the candidate goes
-- now (the head of the queue, nothing live, not frozen, the gate passed).
CREATE FUNCTION relctl.grant_candidate(c relctl.candidates, e relctl.environments, p_client jsonb,
                                       p_now timestamptz, p_detail jsonb)
RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE relctl.candidates SET state = 'granted', ended_at = p_now, token = relctl.next_token(e) WHERE id = c.id;
    RETURN relctl.grant_lease(e, c.job, c.release, c.generation, c.ttl_ms, c.op_id, p_client, p_now,
                              c.secret_sha256, c, p_detail);
END
$$;

-- Hands the lease to the queue's next candidate in the transaction that
-- freed it (p_by: 'release' or 'revoke'), so a handover does not wait for
-- the waiter's process to be woken and scheduled and for its session to
-- compile the grant, and nobody can take the lease in between. The waiter,
-- woken on its own channel, reads the outcome stored under its op id
-- (acquire_candidate). Grants only what the waiter's own evaluation would:
-- after bringing the queue up to date, to the live head of an unfrozen
-- environment that nothing holds, when the promotion gate lets it pass;
-- otherwise nothing, and the waiters decide as before. Caller holds the
-- environment lock. Returns the candidate granted, or NULL.
CREATE FUNCTION relctl.hand_over(e relctl.environments, p_by text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    c relctl.candidates;
    v_now timestamptz;
    v_reply jsonb;
BEGIN
    -- Checked before the subtransaction below, which every release would
    -- otherwise pay: most environments have nobody waiting.
    IF e.frozen_at IS NOT NULL
       OR NOT EXISTS (SELECT 1 FROM relctl.candidates WHERE env = e.name AND state = 'waiting') THEN
        RETURN NULL;
    END IF;
    -- The release or revoke that frees the lease stands whatever happens
    -- here: on an error nothing of the handover is kept, and the waiter's
    -- own evaluation meets (and reports) it.
    BEGIN
        PERFORM relctl.refresh_queue(e);
        c := relctl.queue_head(e.name);
        v_now := clock_timestamp();
        IF c.id IS NULL OR (relctl.live_lease(e, v_now)).token IS NOT NULL THEN
            RETURN NULL;
        END IF;
        -- A gate that refuses, or waits for approvals, is the waiter's to apply.
        IF relctl.promotion_refusal(e, c.job, c.release, c.generation, v_now, false, relctl.candidate_client(c))
           IS NOT NULL THEN
            RETURN NULL;
        END IF;
        v_reply := relctl.grant_candidate(c, e, relctl.candidate_client(c), v_now,
                                          jsonb_build_object('handed_over_by', p_by));
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'relctl: the lease of % was not handed to the next candidate: %', e.name, SQLERRM;
        RETURN NULL;
    END;
    -- Its own channel only: the grant's event announces on "relctl" for
    -- watchers like any acquisition.
    PERFORM pg_notify(relctl.candidate_channel(c.id),
                      json_build_object('env', e.name, 'operation', 'acquire', 'candidate', c.id,
                                        'token', v_reply -> 'token')::text);
    RETURN c.id;
END
$$;

-- The candidate a waiter names, which must be one this session queued with
-- this secret: a candidate id is visible to every reader of the queue, and
-- re-evaluating someone else's candidate would hand out its lease.
CREATE FUNCTION relctl.own_candidate(p_candidate bigint, p_secret text) RETURNS relctl.candidates
LANGUAGE plpgsql AS $$
DECLARE
    c relctl.candidates;
BEGIN
    SELECT * INTO c FROM relctl.candidates WHERE id = p_candidate;
    IF NOT FOUND OR c.secret_sha256 IS NULL OR c.secret_sha256 IS DISTINCT FROM relctl.secret_digest(p_secret)
       OR (c.state = 'waiting' AND relctl.candidate_session(c) IS DISTINCT FROM pg_backend_pid()) THEN
        PERFORM relctl.invalid(format('candidate %s was not queued by this session with this request secret',
                                      p_candidate));
    END IF;
    RETURN c;
END
$$;

-- A waiter's re-evaluation, called on every wake-up (a notification or its
-- timer), on the session that queued the candidate.
CREATE FUNCTION relctl.acquire_candidate(p_candidate bigint, p_client jsonb, p_secret text)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    c relctl.candidates := relctl.own_candidate(p_candidate, p_secret);
    e relctl.environments;
BEGIN
    PERFORM relctl.lock_operation(c.op_id);
    e := relctl.lock_environment(c.env);
    -- As it is now, under the lock. Its session was checked above, and a
    -- session cannot change while it makes this call.
    SELECT * INTO c FROM relctl.candidates WHERE id = c.id;
    RETURN relctl.evaluate_candidate(c.id, e, p_client);
END
$$;

-- The waiter gives up (its --wait ran out): the candidate leaves the queue,
-- and the reply is the candidate. Unless a release handed it the lease
-- before the waiter could read it (relctl.hand_over): then the reply is that
-- acquisition's outcome, as acquire_candidate would give it, so the lease
-- is not left to expire unused.
CREATE FUNCTION relctl.leave_queue(p_candidate bigint, p_secret text) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    c relctl.candidates := relctl.own_candidate(p_candidate, p_secret);
    e relctl.environments;
BEGIN
    e := relctl.lock_environment(c.env);
    SELECT * INTO c FROM relctl.candidates WHERE id = c.id;
    IF c.state = 'granted' THEN
        RETURN relctl.evaluate_candidate(c.id, e, NULL);
    END IF;
    UPDATE relctl.candidates SET state = 'timeout', ended_at = clock_timestamp()
        WHERE id = p_candidate AND state = 'waiting';
    PERFORM relctl.end_wait(c);
    -- The next one may move up.
    PERFORM relctl.announce(c.env, 'leave', NULL, c.id);
    RETURN (SELECT relctl.candidate_json(x) FROM relctl.candidates x WHERE x.id = p_candidate);
END
$$;

-- The waiter read its candidate's decision (relctl.acquire_candidate
-- decided it, in a transaction that had to keep the queue lock until it
-- committed: relctl.end_wait): its session stops waiting. True when the
-- session held the candidate's lock. A candidate still waiting keeps it
-- (leaving is relctl.leave_queue); a session drops only its own locks.
CREATE FUNCTION relctl.stop_waiting(p_candidate bigint, p_secret text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c relctl.candidates := relctl.own_candidate(p_candidate, p_secret);
    v_held boolean := relctl.candidate_session(c) IS NOT DISTINCT FROM pg_backend_pid();
BEGIN
    IF c.state = 'waiting' THEN
        RETURN false;
    END IF;
    PERFORM relctl.end_wait(c);
    RETURN v_held;
END
$$;

-- ---------------------------------------------------------------------------
-- Supersession approvals
-- ---------------------------------------------------------------------------

CREATE FUNCTION relctl.supersession_json(s relctl.supersessions) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', s.id, 'env', s.env, 'state', s.state, 'opened_at', s.opened_at,
        'decided_at', s.decided_at, 'decided_by', s.decided_by, 'decided_login', s.decided_login,
        'reason', s.reason,
        'winner', (SELECT relctl.candidate_json(c) FROM relctl.candidates c WHERE c.id = s.winner),
        'skipped', (SELECT coalesce(jsonb_agg(relctl.candidate_json(c) ORDER BY c.id), '[]')
                    FROM relctl.candidates c WHERE c.id = ANY (s.skipped)))
$$;

CREATE FUNCTION relctl.approvals(p_env text, p_all boolean) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    SELECT jsonb_build_object('approvals', coalesce(jsonb_agg(relctl.supersession_json(s) ORDER BY s.id), '[]'))
    FROM relctl.supersessions s
    WHERE (p_env IS NULL OR s.env = p_env) AND (coalesce(p_all, false) OR s.state = 'pending')
$$;

-- A release manager's decision on a supersession request. An environment
-- with an approver role takes it only from that role's members (NOT_APPROVER,
-- recorded, like a promotion's); the decision keeps the login beside the name
-- given (decided_login).
CREATE FUNCTION relctl.decide(p_id bigint, p_approve boolean, p_by text, p_reason text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    s relctl.supersessions;
    w relctl.candidates;
BEGIN
    IF p_approve IS NULL THEN
        PERFORM relctl.invalid('a decision is an approval or a denial');
    END IF;
    PERFORM relctl.require_actor(p_by, p_reason, NOT p_approve);
    SELECT * INTO s FROM relctl.supersessions WHERE id = p_id;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown supersession request %s', p_id));
    END IF;
    e := relctl.lock_environment(s.env);
    SELECT * INTO s FROM relctl.supersessions WHERE id = p_id;
    IF s.state <> 'pending' THEN
        PERFORM relctl.invalid(format('supersession request %s is %s, not pending', p_id, s.state));
    END IF;
    SELECT * INTO w FROM relctl.candidates WHERE id = s.winner;
    IF NOT relctl.may_decide(e) THEN
        RETURN relctl.decision_refused(
            s.env, CASE WHEN p_approve THEN 'approve' ELSE 'deny' END, 'NOT_APPROVER', w.job, w.release,
            w.generation, p_by, p_client, jsonb_build_object('request', s.id, 'approver_role', e.approver_role),
            relctl.not_approver_message(e),
            jsonb_build_object('supersession', relctl.supersession_json(s)));
    END IF;
    UPDATE relctl.supersessions
        SET state = CASE WHEN p_approve THEN 'approved' ELSE 'denied' END,
            decided_at = clock_timestamp(), decided_by = p_by, decided_login = session_user, reason = p_reason
        WHERE id = p_id
        RETURNING * INTO s;
    -- The notification wakes the waiters, which apply the decision.
    PERFORM relctl.record(s.env, CASE WHEN p_approve THEN 'approve' ELSE 'deny' END, NULL,
                          w.job, w.release, w.generation, NULL, NULL, p_client,
                          jsonb_strip_nulls(jsonb_build_object('request', s.id, 'reason', p_reason,
                                                               'skipped', to_jsonb(s.skipped))),
                          p_by);
    RETURN relctl.supersession_json(s) || jsonb_build_object('status', 'ok');
END
$$;

GRANT EXECUTE ON FUNCTION relctl.acquire_candidate, relctl.leave_queue, relctl.stop_waiting TO relctl_job;
GRANT EXECUTE ON FUNCTION relctl.approvals TO relctl_reviewer;
GRANT EXECUTE ON FUNCTION relctl.decide TO relctl_manager;
