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

-- This session's backend start: with its pid, what identifies it among
-- every session the server ever ran.
CREATE FUNCTION relctl.backend_start() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT backend_start FROM pg_catalog.pg_stat_activity WHERE pid = pg_backend_pid()
$$;

-- The backend that holds the candidate's lock and is the session that
-- queued it (its pid and start time, which no other login can take over),
-- while it is connected; NULL once it is gone. The lock's key is visible in
-- pg_locks to every login, and once the waiter is gone anyone may take it:
-- the lock alone proves nothing. (Candidates queued before the session was
-- kept are judged by their lock, as they were.)
CREATE FUNCTION relctl.candidate_session(c relctl.candidates) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT l.pid FROM pg_catalog.pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
      AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
      AND l.classid = relctl.candidate_lock_class()::oid
      AND l.objid = c.lock_key::oid
      AND (c.backend_pid IS NULL
           OR (l.pid = c.backend_pid
               AND EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a
                           WHERE a.pid = l.pid AND a.backend_start = c.backend_start)))
    LIMIT 1
$$;

-- How long a candidate whose waiter's session was lost keeps its place for
-- that waiter's return (relctl.acquire with the same op id and secret): long
-- enough for a restart or a failover and the client's reconnect window, short
-- enough that a job gone for good does not jump the queue later.
CREATE FUNCTION relctl.requeue_grace_ms() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 60000::bigint $$;

-- The candidate locks held in this database, with the session holding
-- each: one read of the lock table for a whole queue.
CREATE FUNCTION relctl.held_candidate_locks() RETURNS TABLE (objid oid, pid integer)
LANGUAGE sql STABLE AS $$
    SELECT l.objid, l.pid FROM pg_catalog.pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
      AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
      AND l.classid = relctl.candidate_lock_class()::oid
$$;

-- The waiting candidates of an environment whose lock is held by the
-- session that queued them (by pid: the backend start is checked where one
-- candidate is decided, relctl.candidate_session), in one join with the
-- lock table however long the queue: reads stay linear.
CREATE FUNCTION relctl.live_candidates(p_env text) RETURNS SETOF relctl.candidates
LANGUAGE sql STABLE AS $$
    SELECT c.* FROM relctl.live_waiting_candidates() c WHERE c.env = p_env
$$;

-- The same, of every environment at once (inlined: a filter on env reaches
-- the scan of candidates), for what counts live waiters across an
-- organisation (relctl.attention).
CREATE FUNCTION relctl.live_waiting_candidates() RETURNS SETOF relctl.candidates
LANGUAGE sql STABLE AS $$
    -- IN, not a join: each subquery is run once and hashed, whatever the
    -- planner guesses of the lock table's size (a nested loop re-read the
    -- lock table for every candidate). The lock table itself is read once
    -- for both (MATERIALIZED): each read walks every backend's slots, and a
    -- new session first maps them.
    WITH h AS MATERIALIZED (SELECT h.objid, h.pid FROM relctl.held_candidate_locks() h)
    SELECT c.* FROM relctl.candidates c
    WHERE c.state = 'waiting'
      AND ((c.lock_key::oid, c.backend_pid) IN (SELECT h.objid, h.pid FROM h)
           OR (c.backend_pid IS NULL AND c.lock_key::oid IN (SELECT h.objid FROM h)))
$$;

-- How many candidates may wait: on one environment, and for one login
-- across all. A job session that queued thousands made every read of the
-- queue slow and filled the trail; the cap refuses the next one, recorded.
CREATE FUNCTION relctl.max_waiting_per_env() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 1000::bigint $$;

CREATE FUNCTION relctl.max_waiting_per_login() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 2000::bigint $$;

-- The refusal of a new candidate over a cap, or NULL. Busy, not an outcome:
-- recorded, never remembered under the op id, so the same request may queue
-- once there is room.
CREATE FUNCTION relctl.queue_full(e relctl.environments, p_job text, p_release text, p_generation bigint,
                                  p_op_id text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_env bigint := (SELECT count(*) FROM relctl.candidates WHERE env = e.name AND state = 'waiting');
    v_login bigint;
    v_message text;
BEGIN
    IF v_env >= relctl.max_waiting_per_env() THEN
        v_message := format('QUEUE_FULL: %s candidates wait on %s already, the most one environment takes', v_env, e.name);
    ELSE
        v_login := (SELECT count(*) FROM relctl.candidates WHERE db_user = session_user AND state = 'waiting');
        IF v_login >= relctl.max_waiting_per_login() THEN
            v_message := format('QUEUE_FULL: login %s has %s candidates waiting already, the most one login may have',
                                session_user, v_login);
        END IF;
    END IF;
    IF v_message IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM relctl.record(e.name, 'acquire', 'QUEUE_FULL', p_job, p_release, p_generation, NULL, p_op_id, p_client,
                          jsonb_build_object('waiting_env', v_env, 'waiting_login', v_login));
    RETURN jsonb_build_object('status', 'refused', 'reason', 'QUEUE_FULL', 'operation', 'acquire', 'env', e.name,
                              'job', p_job, 'release', p_release, 'generation', p_generation, 'op_id', p_op_id,
                              'message', v_message, 'replayed', false);
END
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
                            c.secret_sha256, true);
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
          AND x.id NOT IN (SELECT id FROM relctl.live_candidates(e.name));

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

-- The outcome of a decided candidate, as its waiter receives it (the waiter
-- presented the request's secret). The op id's stored outcome is the
-- candidate's only when it was made with the candidate's own secret and is
-- about this candidate: op ids are predictable, and another request may
-- have used this one since the candidate queued (an acquire under the same
-- op id after it left the queue), whose lease must never reach this waiter.
-- Otherwise the answer comes from the candidate's own row.
CREATE FUNCTION relctl.candidate_outcome(c relctl.candidates) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    l relctl.leases;
    o relctl.operations;
    v_reply jsonb;
BEGIN
    SELECT * INTO o FROM relctl.operations WHERE op_id = c.op_id;
    IF o.op_id IS NOT NULL AND c.secret_sha256 IS NOT NULL AND o.secret_sha256 = c.secret_sha256
       AND o.outcome ->> 'env' = c.env
       AND ((c.state = 'granted' AND o.outcome ->> 'status' = 'ok' AND (o.outcome ->> 'token')::bigint = c.token)
            OR (c.state <> 'granted' AND o.outcome ->> 'status' = 'refused'
                AND o.outcome ->> 'candidate' = c.id::text)) THEN
        v_reply := o.outcome || jsonb_build_object('replayed', false);
    ELSIF c.state = 'granted' THEN
        SELECT * INTO l FROM relctl.leases WHERE env = c.env AND token = c.token;
        v_reply := jsonb_build_object(
            'status', 'ok', 'env', c.env, 'token', l.token, 'job', l.job, 'release', l.release,
            'generation', l.generation, 'acquired_at', l.acquired_at, 'expires_at', l.expires_at,
            'ttl_ms', l.ttl_ms, 'op_id', c.op_id, 'candidate', c.id, 'replayed', false);
    ELSIF c.state = 'dropped' THEN
        v_reply := jsonb_build_object(
            'status', 'refused', 'reason', 'CANDIDATE_DROPPED', 'operation', 'acquire', 'env', c.env,
            'job', c.job, 'release', c.release, 'generation', c.generation, 'candidate', c.id, 'op_id', c.op_id,
            'dropped_by', c.dropped_by, 'drop_reason', c.drop_reason, 'replayed', false,
            'message', format('CANDIDATE_DROPPED: candidate %s was taken out of the queue of %s by %s: %s',
                              c.id, c.env, c.dropped_by, c.drop_reason));
    ELSIF c.state IN ('stale', 'superseded', 'refused') THEN
        -- Refused on its behalf without the op id keeping it: as the trail has it.
        SELECT jsonb_build_object(
                   'status', 'refused', 'reason', v.reason, 'operation', 'acquire', 'env', c.env, 'job', c.job,
                   'release', c.release, 'generation', c.generation, 'candidate', c.id, 'op_id', c.op_id,
                   'replayed', false,
                   'message', coalesce(relctl.refusal_cause(v) ->> 'summary', v.reason))
            INTO v_reply
            FROM relctl.events v
            WHERE v.op_id = c.op_id AND v.env = c.env AND v.operation = 'acquire' AND v.outcome = 'rejected'
              AND v.job = c.job AND v.generation = c.generation
              -- A SUPERSEDED event's detail names the winner as its
              -- candidate; the skipped one is known by when it queued.
              AND (v.detail ->> 'candidate' = c.id::text
                   OR (v.reason = 'SUPERSEDED'
                       AND v.detail ->> 'queued_at' = jsonb_build_object('at', c.queued_at) ->> 'at'))
            ORDER BY v.id DESC LIMIT 1;
    END IF;
    IF v_reply IS NULL THEN
        RETURN jsonb_build_object('status', 'busy', 'env', c.env, 'candidate', c.id,
                                  'message', format('candidate %s left the queue (%s)', c.id, c.state));
    END IF;
    IF c.state = 'granted' THEN
        SELECT * INTO l FROM relctl.leases WHERE env = c.env AND token = c.token;
        v_reply := v_reply || relctl.credentials(l);
    END IF;
    RETURN v_reply;
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
    -- Free, and the head is another candidate that has not claimed it (its
    -- waiter asleep, stopped, or slow): granted now on its behalf, so a
    -- head that never asks cannot hold up the queue behind it.
    IF e.frozen_at IS NULL AND holder.token IS NULL AND head.id IS DISTINCT FROM c.id
       AND relctl.hand_over(e, 'acquire') IS NOT NULL THEN
        SELECT * INTO e FROM relctl.environments WHERE name = e.name;
        v_now := clock_timestamp();
        holder := relctl.live_lease(e, v_now);
        head := relctl.queue_head(e.name);
    END IF;
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
-- re-evaluating someone else's candidate would hand out its lease. Anyone
-- else is refused, and the refusal recorded (NOT_OWN_CANDIDATE, with the
-- login and address that tried): the candidate comes back without an id.
CREATE FUNCTION relctl.own_candidate(p_candidate bigint, p_secret text, p_call text, p_client jsonb)
RETURNS relctl.candidates
LANGUAGE plpgsql AS $$
DECLARE
    c relctl.candidates;
    v_secret bytea := relctl.secret_digest(p_secret);
BEGIN
    IF p_candidate IS NULL THEN
        PERFORM relctl.invalid('a candidate id is required');
    END IF;
    SELECT * INTO c FROM relctl.candidates WHERE id = p_candidate;
    IF FOUND AND c.secret_sha256 IS NOT NULL AND c.secret_sha256 = v_secret
       AND NOT (c.state = 'waiting' AND relctl.candidate_session(c) IS DISTINCT FROM pg_backend_pid()) THEN
        RETURN c;
    END IF;
    PERFORM relctl.record(c.env, 'acquire', 'NOT_OWN_CANDIDATE', NULL, NULL, NULL, NULL, NULL, p_client,
                          jsonb_build_object('candidate', p_candidate, 'call', p_call,
                                             'secret_given', p_secret IS NOT NULL,
                                             'secret_matches', c.secret_sha256 IS NOT NULL AND c.secret_sha256 = v_secret));
    RETURN NULL;
END
$$;

CREATE FUNCTION relctl.not_own_candidate(p_candidate bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'status', 'refused', 'reason', 'NOT_OWN_CANDIDATE', 'operation', 'acquire', 'candidate', p_candidate,
        'message', format('NOT_OWN_CANDIDATE: candidate %s was not queued by this session with this request '
                          'secret', p_candidate))
$$;

-- A waiter's re-evaluation, called on every wake-up (a notification or its
-- timer), on the session that queued the candidate.
CREATE FUNCTION relctl.acquire_candidate(p_candidate bigint, p_client jsonb, p_secret text)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    c relctl.candidates;
    e relctl.environments;
BEGIN
    PERFORM relctl.require_read_committed();
    c := relctl.own_candidate(p_candidate, p_secret, 'acquire_candidate', p_client);
    IF c.id IS NULL THEN
        RETURN relctl.not_own_candidate(p_candidate);
    END IF;
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
    c relctl.candidates;
    e relctl.environments;
BEGIN
    PERFORM relctl.require_read_committed();
    c := relctl.own_candidate(p_candidate, p_secret, 'leave_queue', NULL);
    IF c.id IS NULL THEN
        RETURN relctl.not_own_candidate(p_candidate);
    END IF;
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
-- Another session's call is refused, recorded, and answered false.
CREATE FUNCTION relctl.stop_waiting(p_candidate bigint, p_secret text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c relctl.candidates;
    v_held boolean;
BEGIN
    PERFORM relctl.require_read_committed();
    c := relctl.own_candidate(p_candidate, p_secret, 'stop_waiting', NULL);
    IF c.id IS NULL THEN
        RETURN false;
    END IF;
    v_held := relctl.candidate_session(c) IS NOT DISTINCT FROM pg_backend_pid();
    IF c.state = 'waiting' THEN
        RETURN false;
    END IF;
    PERFORM relctl.end_wait(c);
    RETURN v_held;
END
$$;

-- A release manager takes a waiting candidate out of the queue (a job that
-- queued and sits on its connection, a release that must not go): refused
-- CANDIDATE_DROPPED to its waiter, recorded with who and why, and the next
-- candidate moves up at once.
CREATE FUNCTION relctl.queue_drop(p_candidate bigint, p_by text, p_reason text, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    c relctl.candidates;
    e relctl.environments;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, true);
    SELECT * INTO c FROM relctl.candidates WHERE id = p_candidate;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown candidate %s', p_candidate));
    END IF;
    e := relctl.lock_environment(c.env);
    SELECT * INTO c FROM relctl.candidates WHERE id = p_candidate;
    IF c.state <> 'waiting' THEN
        PERFORM relctl.invalid(format('candidate %s is %s, not waiting', p_candidate, c.state));
    END IF;
    UPDATE relctl.candidates SET state = 'dropped', ended_at = clock_timestamp(), dropped_by = p_by,
                                 drop_reason = p_reason
        WHERE id = c.id
        RETURNING * INTO c;
    PERFORM relctl.record(c.env, 'queue-drop', NULL, c.job, c.release, c.generation, NULL, c.op_id, p_client,
                          jsonb_build_object('candidate', c.id, 'reason', p_reason, 'queued_at', c.queued_at,
                                             'login', c.db_user), p_by);
    PERFORM relctl.hand_over(e, 'queue-drop');
    RETURN relctl.candidate_json(c) || jsonb_build_object('status', 'ok', 'dropped_by', p_by, 'reason', p_reason);
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
    PERFORM relctl.require_read_committed();
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
    -- As for promotions: the login that queued the winner may not approve
    -- skipping the others for it.
    IF p_approve AND w.db_user = session_user THEN
        RETURN relctl.decision_refused(
            s.env, 'approve', 'SELF_APPROVAL', w.job, w.release, w.generation, p_by, p_client,
            jsonb_build_object('request', s.id, 'winner_login', w.db_user),
            format('SELF_APPROVAL: login %s queued the winning candidate (%s, generation %s) of supersession '
                   'request %s, and may not approve skipping the others for it', session_user, w.release,
                   w.generation, s.id),
            jsonb_build_object('supersession', relctl.supersession_json(s)));
    END IF;
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
GRANT EXECUTE ON FUNCTION relctl.decide, relctl.queue_drop TO relctl_manager;
