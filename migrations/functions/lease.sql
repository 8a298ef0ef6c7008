-- The lease: acquire (with the queue in queue.sql), renew, release, revoke.
--
-- Every function first locks the environment row, so all operations on one
-- environment are serialised by the database itself; operations on different
-- environments do not wait for each other. The clock is read after the lock
-- (clock_timestamp(), never now(), which is frozen for the transaction, and
-- never the client's clock).

CREATE FUNCTION relctl.lease_json(l relctl.leases, p_now timestamptz) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN l.token IS NULL THEN NULL ELSE jsonb_build_object(
        'token', l.token, 'job', l.job, 'release', l.release, 'generation', l.generation,
        'acquired_at', l.acquired_at, 'expires_at', l.expires_at, 'ttl_ms', l.ttl_ms,
        'remaining_ms', greatest(0, relctl.ms_between(p_now, l.expires_at)),
        'host', l.host, 'pid', l.pid, 'job_url', l.job_url) END
$$;

-- Only the newest token can be live: every grant supersedes all before it.
-- PL/pgSQL, not SQL: a SQL function with a FROM clause is not inlined, and
-- its body is parsed and planned again in every transaction that calls it;
-- PL/pgSQL keeps the plan for the session.
CREATE FUNCTION relctl.live_lease(e relctl.environments, p_now timestamptz) RETURNS relctl.leases
LANGUAGE plpgsql STABLE AS $$
DECLARE
    l relctl.leases;
BEGIN
    SELECT * INTO l FROM relctl.leases
        WHERE env = e.name AND token = e.last_token AND ended_at IS NULL AND expires_at > p_now;
    RETURN l;
END
$$;

-- Why a presented lease may not act now, or NULL when it is the environment's
-- live lease. Credentials first (a stranger learns nothing about the lease),
-- then how the lease ended. IS DISTINCT FROM, never <>: with a NULL on either
-- side <> is unknown, and a CASE reads unknown as "not this branch", which
-- would let a missing id pass as a matching one.
CREATE FUNCTION relctl.lease_refusal(e relctl.environments, l relctl.leases, p_lease_id uuid,
                                     p_now timestamptz)
RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN l.token IS NULL THEN 'UNKNOWN_LEASE'
        WHEN p_lease_id IS NULL OR l.lease_id IS DISTINCT FROM p_lease_id THEN 'BAD_LEASE_ID'
        WHEN l.end_reason = 'released' THEN 'LEASE_RELEASED'
        WHEN l.end_reason = 'revoked' THEN 'LEASE_REVOKED'
        WHEN e.last_token > l.token THEN 'LEASE_SUPERSEDED'
        WHEN l.expires_at <= p_now THEN 'LEASE_EXPIRED'
    END
$$;

-- STABLE like format(), which it calls: a SQL function declared IMMUTABLE
-- over a stable body is never inlined into its caller, and is then planned
-- again in every transaction (the same holds for every such helper).
CREATE FUNCTION relctl.refusal_message(p_reason text, p_env text, p_token bigint) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('%s: lease %s on %s %s', p_reason, p_token, p_env, CASE p_reason
        WHEN 'UNKNOWN_LEASE' THEN 'does not exist'
        WHEN 'BAD_LEASE_ID' THEN 'exists but the lease id does not match'
        WHEN 'LEASE_RELEASED' THEN 'was released'
        WHEN 'LEASE_REVOKED' THEN 'was revoked'
        WHEN 'LEASE_SUPERSEDED' THEN 'was superseded by a newer lease'
        WHEN 'LEASE_EXPIRED' THEN 'has expired'
        ELSE 'was refused' END)
$$;

CREATE FUNCTION relctl.resolve_ttl(e relctl.environments, p_ttl_ms bigint, p_fallback bigint)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_ttl bigint := coalesce(p_ttl_ms, p_fallback, e.default_ttl_ms);
BEGIN
    IF v_ttl <= 0 OR v_ttl > e.max_ttl_ms THEN
        PERFORM relctl.invalid(format('ttl %s ms is outside 1 ms .. %s ms, the maximum of environment "%s"',
                                      v_ttl, e.max_ttl_ms, e.name));
    END IF;
    RETURN v_ttl;
END
$$;

CREATE FUNCTION relctl.acquire_request(p_env text, p_job text, p_release text, p_generation bigint,
                                       p_ttl_ms bigint)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('operation', 'acquire', 'env', p_env, 'job', p_job,
                              'release', p_release, 'generation', p_generation, 'ttl_ms', p_ttl_ms)
$$;

CREATE FUNCTION relctl.frozen_refusal(e relctl.environments, p_operation text, p_job text, p_release text,
                                      p_generation bigint, p_token bigint, p_op_id text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    -- Recorded, but not remembered under the op id: a freeze is lifted later,
    -- and the same request must then be able to go through.
    PERFORM relctl.record(e.name, p_operation, 'DISPATCH_FROZEN', p_job, p_release, p_generation, p_token,
                          p_op_id, p_client, jsonb_build_object('frozen_by', e.frozen_by,
                                                                'frozen_reason', e.frozen_reason));
    RETURN jsonb_build_object(
        'status', 'refused', 'reason', 'DISPATCH_FROZEN', 'operation', p_operation, 'env', e.name,
        'frozen', jsonb_build_object('at', e.frozen_at, 'by', e.frozen_by, 'reason', e.frozen_reason),
        'message', format('DISPATCH_FROZEN: %s is frozen by %s since %s: %s', e.name, e.frozen_by,
                          to_char(e.frozen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), e.frozen_reason));
END
$$;

-- Grants the environment's next lease. The caller holds the environment's row
-- lock and has made every check. The reply carries the lease id; what is
-- remembered under the op id does not (see operations.sql).
-- The server's WAL timeline: 1 for a cluster that never went through a
-- promotion; every promotion (a failover to a standby, the end of a
-- point-in-time recovery) starts a higher one.
CREATE FUNCTION relctl.timeline() RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer;
END
$$;

-- The next fencing token of an environment. Tokens only grow: by one while
-- the timeline stays, and on a new timeline at least to (timeline - 1) * 2^40 + 1.
-- A standby promoted after an asynchronous primary's crash, or a restored
-- backup, may lack leases the old primary handed out; their tokens are
-- below the new timeline's floor, so none is ever handed out again and a
-- deploy target that checks tokens keeps refusing the old holders.
CREATE FUNCTION relctl.next_token(e relctl.environments) RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN greatest(e.last_token + 1, (relctl.timeline() - 1) * 1099511627776 + 1);
END
$$;

CREATE FUNCTION relctl.grant_lease(e relctl.environments, p_job text, p_release text, p_generation bigint,
                                   p_ttl_ms bigint, p_op_id text, p_client jsonb, p_now timestamptz,
                                   p_secret_sha256 bytea, p_for relctl.candidates DEFAULT NULL,
                                   p_detail jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    l relctl.leases;
    v_client jsonb := relctl.client_info(p_client);
    v_reply jsonb;
BEGIN
    INSERT INTO relctl.leases (env, token, job, release, generation, ttl_ms, acquired_at, expires_at,
                               op_id, host, pid, job_url)
    VALUES (e.name, relctl.next_token(e), p_job, p_release, p_generation, p_ttl_ms, p_now,
            p_now + p_ttl_ms * interval '1 millisecond', p_op_id,
            v_client ->> 'host', (v_client ->> 'pid')::integer, v_client ->> 'job_url')
    RETURNING * INTO l;
    UPDATE relctl.environments SET last_token = l.token WHERE name = e.name;

    v_reply := jsonb_build_object(
        'status', 'ok', 'env', e.name, 'token', l.token,
        'job', p_job, 'release', p_release, 'generation', p_generation,
        'acquired_at', l.acquired_at, 'expires_at', l.expires_at, 'ttl_ms', p_ttl_ms,
        'op_id', p_op_id, 'replayed', false) || relctl.credentials(l);
    PERFORM relctl.record(e.name, 'acquire', NULL, p_job, p_release, p_generation, l.token,
                          p_op_id, p_client, jsonb_build_object('ttl_ms', p_ttl_ms) || p_detail, NULL, p_for);
    PERFORM relctl.remember(p_op_id, 'acquire', relctl.acquire_request(e.name, p_job, p_release, p_generation, p_ttl_ms),
                            v_reply, p_secret_sha256, p_for.id IS NOT NULL);
    RETURN v_reply;
END
$$;

-- p_queue: join the environment's queue when the lease cannot be granted now
-- (the reply is then 'queued' with a candidate id; see acquire_candidate).
-- p_secret: the request's secret, which a retry with the same op id presents
-- to be given the lease's id again, and a waiter presents on every
-- re-evaluation of its candidate. Required to queue.
CREATE FUNCTION relctl.acquire(p_env text, p_job text, p_release text, p_generation bigint,
                               p_ttl_ms bigint, p_op_id text, p_client jsonb, p_queue boolean,
                               p_secret text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    m relctl.manifests;
    holder relctl.leases;
    head relctl.candidates;
    c relctl.candidates;
    v_ttl bigint;
    v_now timestamptz;
    v_request jsonb;
    v_reply jsonb;
    v_client jsonb := relctl.client_info(p_client);
    v_secret bytea := relctl.secret_digest(p_secret);
    v_gate jsonb;
    v_session integer;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_candidate(p_job, p_release, p_generation);
    IF coalesce(p_queue, false) AND (p_op_id IS NULL OR v_secret IS NULL) THEN
        PERFORM relctl.invalid('waiting in the queue needs an operation id and a request secret');
    END IF;
    PERFORM relctl.lock_operation(p_op_id);
    e := relctl.lock_environment(p_env);
    v_ttl := relctl.resolve_ttl(e, p_ttl_ms, NULL);
    v_request := relctl.acquire_request(p_env, p_job, p_release, p_generation, v_ttl);
    v_reply := relctl.replay(p_op_id, v_request, p_secret, p_client);
    IF v_reply IS NOT NULL THEN
        RETURN v_reply;
    END IF;
    -- A candidate of this request (op id and secret) decided on its behalf
    -- whose outcome the op id does not hold (relctl.remember says when):
    -- its decision is the answer, not a second lease.
    IF v_secret IS NOT NULL THEN
        SELECT * INTO c FROM relctl.candidates x
            WHERE x.op_id = p_op_id AND x.env = p_env AND x.secret_sha256 = v_secret
              AND x.state IN ('granted', 'superseded', 'stale', 'refused', 'dropped')
              AND relctl.acquire_request(x.env, x.job, x.release, x.generation, x.ttl_ms) = v_request
            ORDER BY x.id DESC LIMIT 1;
        IF c.id IS NOT NULL THEN
            RETURN relctl.candidate_outcome(c) || jsonb_build_object('replayed', true);
        END IF;
    END IF;

    IF e.frozen_at IS NOT NULL THEN
        RETURN relctl.frozen_refusal(e, 'acquire', p_job, p_release, p_generation, NULL, p_op_id, p_client);
    END IF;

    -- Read the clock after the row lock: a wait for the lock must not make a
    -- lease look younger than it is.
    v_now := clock_timestamp();

    -- Freshness first: a candidate that is not newer than what is published can
    -- never become current, so it must not queue for the lease either.
    IF relctl.is_stale(e, p_generation) THEN
        -- Read only here: the refusal names what is current.
        SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
        v_reply := jsonb_build_object(
            'status', 'refused', 'reason', 'STALE_GENERATION', 'operation', 'acquire',
            'env', p_env, 'job', p_job, 'release', p_release, 'generation', p_generation,
            'current', relctl.manifest_json(m, p_env) - 'manifest' - 'env', 'op_id', p_op_id,
            'high_water_generation', e.high_water_generation,
            'message', relctl.stale_message(e, m, p_release, p_generation),
            'replayed', false);
        PERFORM relctl.record(p_env, 'acquire', 'STALE_GENERATION', p_job, p_release, p_generation,
                              NULL, p_op_id, p_client, jsonb_build_object('ttl_ms', v_ttl));
        PERFORM relctl.remember(p_op_id, 'acquire', v_request, v_reply, v_secret);
        RETURN v_reply;
    END IF;

    -- The promotion gate. A candidate that only lacks approvals may queue and
    -- wait for them (the queue does not grant it before they are given);
    -- everything else the gate refuses is refused now.
    v_gate := relctl.promotion_refusal(e, p_job, p_release, p_generation, v_now, true, p_client);
    IF v_gate IS NOT NULL AND NOT (coalesce(p_queue, false) AND v_gate ->> 'reason' = 'APPROVAL_REQUIRED') THEN
        RETURN relctl.promotion_refused(e, v_gate, 'acquire', p_job, p_release, p_generation, NULL, p_op_id,
                                        p_client, v_request, v_secret);
    END IF;

    IF coalesce(p_queue, false) THEN
        -- A waiter whose session was lost (a server restart, a failover, a
        -- dropped connection) and that comes back with the same op id and
        -- request secret within the requeue grace keeps its place: the queue
        -- resumes in its order. Later, it queues again at the back.
        SELECT * INTO c FROM relctl.candidates x
            WHERE x.op_id = p_op_id AND x.env = p_env AND x.secret_sha256 = v_secret AND x.job = p_job
              AND x.release = p_release AND x.generation = p_generation
              AND (x.state = 'waiting'
                   OR (x.state = 'left' AND x.ended_at > v_now - relctl.requeue_grace_ms() * interval '1 ms'))
            ORDER BY x.id DESC LIMIT 1;
        v_session := relctl.candidate_session(c);
        IF v_session <> pg_backend_pid() THEN
            -- Another session still waits as this request: the waiter's
            -- previous connection, cut by its client while its backend waited
            -- for a lock, lives until that statement ends. Its place is this
            -- request's, so this one waits for it to go rather than queue at
            -- the back. (Two processes that send one request, the same op id
            -- and secret, are answered alike once it is decided.)
            IF c.state = 'waiting' THEN
                RAISE EXCEPTION USING ERRCODE = '55P03',
                    MESSAGE = format('candidate %s of op id %s is still waited for by another session (backend %s); '
                                     'nothing was applied, try again', c.id, p_op_id, v_session);
            END IF;
            c := NULL; -- left, and its lock is another session's: a new place
        END IF;
        IF c.id IS NULL THEN
            v_reply := relctl.queue_full(e, p_job, p_release, p_generation, p_op_id, p_client);
            IF v_reply IS NOT NULL THEN
                RETURN v_reply;
            END IF;
        END IF;
        IF c.id IS NOT NULL THEN
            UPDATE relctl.candidates
                SET state = 'waiting', ended_at = NULL, ttl_ms = v_ttl, host = v_client ->> 'host',
                    pid = (v_client ->> 'pid')::integer, job_url = v_client ->> 'job_url',
                    db_user = session_user, client_addr = inet_client_addr(),
                    backend_pid = pg_backend_pid(), backend_start = relctl.backend_start()
                WHERE id = c.id
                RETURNING * INTO c;
        ELSE
            INSERT INTO relctl.candidates (env, job, release, generation, ttl_ms, op_id, host, pid, job_url,
                                           secret_sha256, backend_pid, backend_start)
                VALUES (p_env, p_job, p_release, p_generation, v_ttl, p_op_id,
                        v_client ->> 'host', (v_client ->> 'pid')::integer, v_client ->> 'job_url', v_secret,
                        pg_backend_pid(), relctl.backend_start())
                RETURNING * INTO c;
        END IF;
        -- Session-level: held by the waiter's connection until granted or gone.
        -- A try, not a wait: the key is random, so it is taken only if someone
        -- grabbed it by chance or on purpose, and then this request must not
        -- wait with the environment locked. A session that asks again for its
        -- own waiting candidate holds it already.
        IF v_session IS NULL AND NOT pg_try_advisory_lock(relctl.candidate_lock_class(), c.lock_key) THEN
            RAISE EXCEPTION USING ERRCODE = '55P03',
                MESSAGE = 'the queue lock of a new candidate is held by another session; nothing was applied, try again';
        END IF;
        -- From this commit on, announcements naming the candidate reach this
        -- session (relctl.announce), and nothing else wakes its waiter.
        EXECUTE format('LISTEN %I', relctl.candidate_channel(c.id));
        v_reply := relctl.evaluate_candidate(c.id, e, p_client);
        -- Decided at once: the lock was taken in this transaction, so if it
        -- rolled back after the unlock, the candidate would be as unheld as
        -- it was before (relctl.end_wait).
        IF v_reply ->> 'status' <> 'queued' AND v_session IS NULL THEN
            PERFORM relctl.end_wait(c);
        END IF;
        RETURN v_reply;
    END IF;

    -- Busy is a transient answer, not an outcome: it is neither recorded as a
    -- refusal nor remembered under the op id, so a retry can succeed. Queued
    -- candidates are served before anyone who does not wait.
    -- Only a queue with someone in it needs bringing up to date (and a new
    -- session calling acquire need not compile the queue's code for nothing).
    IF EXISTS (SELECT 1 FROM relctl.candidates WHERE env = p_env AND state = 'waiting') THEN
        -- A free environment whose head has not claimed it (its lease
        -- expired, nobody released it, and the head's waiter is asleep or
        -- stopped): the head is granted now, on its behalf, as a release
        -- would have done; the queue never waits for a waiter to wake.
        IF relctl.hand_over(e, 'acquire') IS NULL THEN
            PERFORM relctl.refresh_queue(e);
        END IF;
        SELECT * INTO e FROM relctl.environments WHERE name = p_env;
        head := relctl.queue_head(p_env);
    END IF;
    holder := relctl.live_lease(e, v_now);
    IF holder.token IS NOT NULL OR head.id IS NOT NULL THEN
        RETURN jsonb_build_object(
            'status', 'busy', 'env', p_env, 'op_id', p_op_id,
            'holder', relctl.lease_json(holder, v_now), 'head', relctl.candidate_json(head),
            'queued', (SELECT count(*) FROM relctl.candidates WHERE env = p_env AND state = 'waiting'),
            'message', CASE WHEN holder.token IS NOT NULL THEN format(
                'environment %s is held by job %s (release %s, generation %s, token %s) for another %s ms',
                p_env, holder.job, holder.release, holder.generation, holder.token,
                greatest(0, relctl.ms_between(v_now, holder.expires_at)))
                ELSE format('environment %s has queued candidates, served first (next: job %s, generation %s); use --wait to queue',
                            p_env, head.job, head.generation) END);
    END IF;
    RETURN relctl.grant_lease(e, p_job, p_release, p_generation, v_ttl, p_op_id, p_client, v_now, v_secret);
END
$$;

CREATE FUNCTION relctl.renew(p_env text, p_token bigint, p_lease_id uuid, p_ttl_ms bigint,
                             p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    l relctl.leases;
    v_now timestamptz;
    v_ttl bigint;
    v_reason text;
    v_trusted boolean;
    v_before timestamptz;
    v_event bigint;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_credentials(p_token, p_lease_id);
    e := relctl.lock_environment(p_env);
    SELECT * INTO l FROM relctl.leases WHERE env = p_env AND token = p_token;
    v_ttl := relctl.resolve_ttl(e, p_ttl_ms, l.ttl_ms);
    v_now := clock_timestamp();
    v_reason := relctl.lease_refusal(e, l, p_lease_id, v_now);
    IF v_reason IS NOT NULL THEN
        -- The lease's job is named only when the caller proved it holds the lease id.
        v_trusted := v_reason NOT IN ('UNKNOWN_LEASE', 'BAD_LEASE_ID');
        PERFORM relctl.record(p_env, 'renew', v_reason,
                              CASE WHEN v_trusted THEN l.job END, CASE WHEN v_trusted THEN l.release END,
                              CASE WHEN v_trusted THEN l.generation END, p_token, NULL, p_client,
                              jsonb_build_object('ttl_ms', v_ttl, 'expires_at', CASE WHEN v_trusted THEN l.expires_at END));
        RETURN jsonb_build_object('status', 'refused', 'reason', v_reason, 'operation', 'renew',
                                  'env', p_env, 'token', p_token, 'current_token', e.last_token,
                                  'message', relctl.refusal_message(v_reason, p_env, p_token));
    END IF;

    v_before := l.expires_at;
    UPDATE relctl.leases SET expires_at = v_now + v_ttl * interval '1 millisecond', ttl_ms = v_ttl
        WHERE env = p_env AND token = p_token
        RETURNING * INTO l;
    v_event := relctl.record(p_env, 'renew', NULL, l.job, l.release, l.generation, p_token, NULL,
                             p_client, jsonb_build_object('ttl_ms', v_ttl, 'expires_at', l.expires_at));
    -- Renewals are not announced (functions/audit.sql): the next waiter asks
    -- again at the expiry it knows. One that brings the expiry forward is,
    -- or that waiter would sleep past it.
    IF l.expires_at < v_before AND relctl.watched(p_env) THEN
        PERFORM relctl.announce(p_env, 'renew', v_event, NULL);
    END IF;
    RETURN jsonb_build_object('status', 'ok', 'env', p_env, 'token', p_token, 'job', l.job,
                              'release', l.release, 'generation', l.generation,
                              'expires_at', l.expires_at, 'ttl_ms', v_ttl);
END
$$;

-- What a wrapper (relctl run) stopped when it was cancelled or lost its
-- lease, as the release records it: checked key by key, since any login with
-- a lease's credentials may send it. cause: cancelled | lease-lost; signal:
-- the signal the wrapper received; process_group: the command's; command_started;
-- exit_code: the command's (128 + signal when killed); killed_by: the signal
-- that ended it; escalated: SIGKILL was needed after the grace period.
CREATE FUNCTION relctl.stop_report(p_stopped jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_key text;
BEGIN
    IF p_stopped IS NULL THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(p_stopped) <> 'object' THEN
        PERFORM relctl.invalid('a stop report is a JSON object');
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_stopped) LOOP
        IF v_key NOT IN ('cause', 'signal', 'process_group', 'command_started', 'exit_code', 'killed_by',
                         'escalated') THEN
            PERFORM relctl.invalid(format('a stop report has no key %s', left(v_key, 40)));
        END IF;
    END LOOP;
    IF p_stopped ->> 'cause' IS NULL OR p_stopped ->> 'cause' NOT IN ('cancelled', 'lease-lost') THEN
        PERFORM relctl.invalid('a stop report''s cause is cancelled or lease-lost');
    END IF;
    IF (p_stopped ? 'signal' AND coalesce(p_stopped ->> 'signal', '') !~ '^SIG[A-Z0-9]{1,12}$')
       OR (p_stopped ? 'killed_by' AND coalesce(p_stopped ->> 'killed_by', '') !~ '^SIG[A-Z0-9]{1,12}$') THEN
        PERFORM relctl.invalid('a stop report names signals as SIGTERM, SIGINT, SIGKILL, ...');
    END IF;
    IF (p_stopped ? 'process_group' AND (jsonb_typeof(p_stopped -> 'process_group') IS DISTINCT FROM 'number'
            OR (p_stopped ->> 'process_group') !~ '^[0-9]{1,10}$'
            OR (p_stopped ->> 'process_group')::bigint NOT BETWEEN 1 AND 2147483647))
       OR (p_stopped ? 'exit_code' AND (jsonb_typeof(p_stopped -> 'exit_code') IS DISTINCT FROM 'number'
            OR (p_stopped ->> 'exit_code') !~ '^[0-9]{1,3}$'
            OR (p_stopped ->> 'exit_code')::integer > 255)) THEN
        PERFORM relctl.invalid('a stop report''s process_group is a process id and its exit_code 0 to 255');
    END IF;
    IF (p_stopped ? 'command_started' AND jsonb_typeof(p_stopped -> 'command_started') IS DISTINCT FROM 'boolean')
       OR (p_stopped ? 'escalated' AND jsonb_typeof(p_stopped -> 'escalated') IS DISTINCT FROM 'boolean') THEN
        PERFORM relctl.invalid('a stop report''s command_started and escalated are true or false');
    END IF;
    RETURN p_stopped;
END
$$;

-- What nobody can know from the database: a command stopped by its wrapper
-- may have started work elsewhere (a rollout, a migration) that goes on.
CREATE FUNCTION relctl.stop_caveat() RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT 'external work started by the command (a rollout, a migration, a remote job) is not known to have '
           'stopped: check the deploy target before running again'
$$;

-- Ends the caller's own lease. Idempotent: releasing a lease that has already
-- ended (released, revoked, expired or superseded) succeeds and changes
-- nothing, because it only ever touches the row of the presented token.
-- p_stopped: what the wrapper stopped (relctl.stop_report), recorded with
-- the release, even of a lease that had already ended (a run that lost its
-- lease and killed its command), once per lease; never for a lease whose
-- credentials are not the caller's.
CREATE FUNCTION relctl.release(p_env text, p_token bigint, p_lease_id uuid, p_client jsonb, p_note text,
                               p_stopped jsonb DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    l relctl.leases;
    v_now timestamptz;
    v_reason text;
    v_state text;
    v_stopped jsonb := relctl.stop_report(p_stopped);
    v_detail jsonb;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_credentials(p_token, p_lease_id);
    IF length(p_note) > 2000 THEN
        PERFORM relctl.invalid('a release note has at most 2000 characters');
    END IF;
    e := relctl.lock_environment(p_env);
    SELECT * INTO l FROM relctl.leases WHERE env = p_env AND token = p_token;
    v_now := clock_timestamp();
    v_reason := relctl.lease_refusal(e, l, p_lease_id, v_now);
    IF v_reason IN ('UNKNOWN_LEASE', 'BAD_LEASE_ID') THEN
        PERFORM relctl.record(p_env, 'release', v_reason, NULL, NULL, NULL, p_token, NULL, p_client, NULL);
        RETURN jsonb_build_object('status', 'refused', 'reason', v_reason, 'operation', 'release',
                                  'env', p_env, 'token', p_token,
                                  'message', relctl.refusal_message(v_reason, p_env, p_token));
    END IF;
    v_state := CASE v_reason
        WHEN 'LEASE_RELEASED' THEN 'already-released'
        WHEN 'LEASE_REVOKED' THEN 'revoked'
        WHEN 'LEASE_SUPERSEDED' THEN 'superseded'
        WHEN 'LEASE_EXPIRED' THEN 'expired'
        ELSE 'released' END;
    IF v_reason IS NULL THEN
        UPDATE relctl.leases SET ended_at = v_now, end_reason = 'released', end_note = p_note
            WHERE env = p_env AND token = p_token;
    END IF;
    -- Nested, not one condition: PL/pgSQL would run the EXISTS (planned
    -- afresh each time) for every release, and only a stop report needs it.
    IF v_stopped IS NOT NULL THEN
        IF EXISTS (SELECT 1 FROM relctl.events v
                   WHERE v.job = l.job AND v.env = p_env AND v.token = p_token AND v.operation = 'release'
                     AND v.detail ? 'stopped') THEN
            v_stopped := NULL; -- a retried release: the stop is on record already
        END IF;
    END IF;
    v_detail := jsonb_strip_nulls(jsonb_build_object(
        'state', v_state, 'note', p_note, 'stopped', v_stopped,
        'caveat', CASE WHEN v_stopped IS NOT NULL THEN relctl.stop_caveat() END));
    IF v_state <> 'already-released' OR v_stopped IS NOT NULL THEN
        PERFORM relctl.record(p_env, 'release', NULL, l.job, l.release, l.generation, p_token, NULL, p_client,
                              v_detail);
    END IF;
    IF v_reason IS NULL THEN
        PERFORM relctl.hand_over(e, 'release');
    END IF;
    RETURN jsonb_build_object('status', 'ok', 'env', p_env, 'token', p_token, 'job', l.job,
                              'release', l.release, 'generation', l.generation,
                              'released', v_reason IS NULL, 'state', v_state)
           || CASE WHEN p_stopped IS NOT NULL THEN jsonb_build_object('caveat', relctl.stop_caveat())
                   ELSE '{}' END;
END
$$;

CREATE FUNCTION relctl.revoke(p_env text, p_by text, p_reason text, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    l relctl.leases;
    v_now timestamptz;
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_actor(p_by, p_reason, true);
    e := relctl.lock_environment(p_env);
    v_now := clock_timestamp();
    l := relctl.live_lease(e, v_now);
    IF l.token IS NULL THEN
        RETURN jsonb_build_object('status', 'ok', 'env', p_env, 'revoked', false, 'lease', NULL,
                                  'message', format('%s has no live lease; nothing revoked', p_env));
    END IF;
    UPDATE relctl.leases SET ended_at = v_now, end_reason = 'revoked', ended_by = p_by, end_note = p_reason
        WHERE env = p_env AND token = l.token;
    PERFORM relctl.record(p_env, 'revoke', NULL, l.job, l.release, l.generation, l.token, NULL, p_client,
                          jsonb_build_object('reason', p_reason), p_by);
    PERFORM relctl.hand_over(e, 'revoke');
    RETURN jsonb_build_object('status', 'ok', 'env', p_env, 'revoked', true, 'by', p_by, 'reason', p_reason,
                              'lease', relctl.lease_json(l, v_now) - 'remaining_ms');
END
$$;

CREATE FUNCTION relctl.lease_show(p_env text) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_env jsonb := relctl.environment_json(p_env);
BEGIN
    RETURN jsonb_build_object('env', p_env, 'lease', v_env -> 'lease');
END
$$;

GRANT EXECUTE ON FUNCTION relctl.acquire, relctl.renew, relctl.release TO relctl_job;
GRANT EXECUTE ON FUNCTION relctl.lease_show TO relctl_job, relctl_reviewer;
GRANT EXECUTE ON FUNCTION relctl.revoke TO relctl_manager;
