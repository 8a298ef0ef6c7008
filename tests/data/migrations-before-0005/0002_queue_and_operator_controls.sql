-- The waiting queue and its policies, supersession approvals, revoke, dispatch
-- freeze and staged rollout of serialization.
--
-- Functions replaced here supersede their 0001 versions; the decisions still
-- happen under the environment's row lock, on the server's clock.

ALTER TABLE relctl.environments
    ADD COLUMN policy text NOT NULL DEFAULT 'ordered' CHECK (policy IN ('ordered', 'newest')),
    ADD COLUMN supersede text NOT NULL DEFAULT 'auto' CHECK (supersede IN ('auto', 'approval')),
    ADD COLUMN serialization text NOT NULL DEFAULT 'enforced' CHECK (serialization IN ('enforced', 'off')),
    ADD COLUMN frozen_at timestamptz,
    ADD COLUMN frozen_by text,
    ADD COLUMN frozen_reason text;

ALTER TABLE relctl.leases
    ADD COLUMN ended_by text,
    ADD COLUMN end_note text;

-- A publish without a lease (serialization off) has no token.
ALTER TABLE relctl.manifests
    ALTER COLUMN token DROP NOT NULL,
    ADD COLUMN serialized boolean NOT NULL DEFAULT true,
    ADD CHECK (serialized = (token IS NOT NULL));

-- Who acted, for operator actions (revoke, freeze, approve, ...).
ALTER TABLE relctl.events ADD COLUMN actor text;

-- The durable queue. A waiting candidate's session holds an advisory lock
-- (class kCandidateLockClass, key = id); when that session ends, however the
-- process died, the lock goes and the candidate is treated as gone.
CREATE TABLE relctl.candidates (
    id            bigserial PRIMARY KEY,
    env           text NOT NULL REFERENCES relctl.environments (name),
    job           text NOT NULL,
    release       text NOT NULL,
    generation    bigint NOT NULL CHECK (generation > 0),
    ttl_ms        bigint NOT NULL CHECK (ttl_ms > 0),
    op_id         text NOT NULL,
    queued_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    state         text NOT NULL DEFAULT 'waiting'
                  CHECK (state IN ('waiting', 'granted', 'superseded', 'stale', 'timeout', 'left')),
    ended_at      timestamptz,
    token         bigint,
    superseded_by bigint REFERENCES relctl.candidates (id),
    host          text,
    pid           integer,
    job_url       text,
    CHECK ((state = 'waiting') = (ended_at IS NULL))
);
CREATE INDEX candidates_waiting ON relctl.candidates (env, generation) WHERE state = 'waiting';

CREATE TABLE relctl.supersessions (
    id         bigserial PRIMARY KEY,
    env        text NOT NULL REFERENCES relctl.environments (name),
    winner     bigint NOT NULL REFERENCES relctl.candidates (id),
    skipped    bigint[] NOT NULL,
    state      text NOT NULL DEFAULT 'pending'
               CHECK (state IN ('pending', 'approved', 'denied', 'obsolete', 'applied')),
    opened_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    decided_at timestamptz,
    decided_by text,
    reason     text
);
CREATE INDEX supersessions_env ON relctl.supersessions (env, state);

-- ---------------------------------------------------------------------------
-- Helpers
-- ---------------------------------------------------------------------------

-- 'RELC' as an integer: the advisory lock class of waiting candidates.
CREATE FUNCTION relctl.candidate_lock_class() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 1380273219 $$;

CREATE FUNCTION relctl.candidate_lock_key(p_id bigint) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT (p_id % 2147483647)::integer $$;

-- Whether the session that queued the candidate is still connected.
CREATE FUNCTION relctl.candidate_alive(p_id bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM pg_catalog.pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 2
          AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
          AND classid = relctl.candidate_lock_class()::oid
          AND objid = relctl.candidate_lock_key(p_id)::oid)
$$;

CREATE FUNCTION relctl.candidate_json(c relctl.candidates) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN c.id IS NULL THEN NULL ELSE jsonb_build_object(
        'candidate', c.id, 'job', c.job, 'release', c.release, 'generation', c.generation,
        'queued_at', c.queued_at, 'state', c.state, 'ended_at', c.ended_at, 'token', c.token,
        'host', c.host, 'pid', c.pid, 'job_url', c.job_url) END
$$;

CREATE FUNCTION relctl.acquire_request(p_env text, p_job text, p_release text, p_generation bigint,
                                       p_ttl_ms bigint)
RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('operation', 'acquire', 'env', p_env, 'job', p_job,
                              'release', p_release, 'generation', p_generation, 'ttl_ms', p_ttl_ms)
$$;

CREATE FUNCTION relctl.live_lease(e relctl.environments, p_now timestamptz) RETURNS relctl.leases
LANGUAGE sql STABLE AS $$
    SELECT * FROM relctl.leases
    WHERE env = e.name AND token = e.last_token AND ended_at IS NULL AND expires_at > p_now
$$;

CREATE FUNCTION relctl.require_actor(p_by text, p_reason text, p_reason_required boolean) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM relctl.require_text('--by', p_by);
    IF p_reason_required OR p_reason IS NOT NULL THEN
        IF p_reason IS NULL OR length(btrim(p_reason)) = 0 OR length(p_reason) > 2000 THEN
            PERFORM relctl.invalid('a reason of 1 to 2000 characters is required');
        END IF;
    END IF;
END
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
-- lock and has made every check.
CREATE FUNCTION relctl.grant_lease(e relctl.environments, p_job text, p_release text, p_generation bigint,
                                   p_ttl_ms bigint, p_op_id text, p_client jsonb, p_now timestamptz)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    l relctl.leases;
    v_reply jsonb;
BEGIN
    INSERT INTO relctl.leases (env, token, job, release, generation, ttl_ms, acquired_at, expires_at,
                               op_id, host, pid, job_url)
    VALUES (e.name, e.last_token + 1, p_job, p_release, p_generation, p_ttl_ms, p_now,
            p_now + p_ttl_ms * interval '1 millisecond', p_op_id,
            p_client ->> 'host', (p_client ->> 'pid')::integer, p_client ->> 'job_url')
    RETURNING * INTO l;
    UPDATE relctl.environments SET last_token = l.token WHERE name = e.name;

    v_reply := jsonb_build_object(
        'status', 'ok', 'env', e.name, 'token', l.token, 'lease_id', relctl.lease_id_hex(l.lease_id),
        'handle', format('%s:%s:%s', e.name, l.token, relctl.lease_id_hex(l.lease_id)),
        'job', p_job, 'release', p_release, 'generation', p_generation,
        'acquired_at', l.acquired_at, 'expires_at', l.expires_at, 'ttl_ms', p_ttl_ms,
        'op_id', p_op_id, 'replayed', false);
    PERFORM relctl.record(e.name, 'acquire', NULL, p_job, p_release, p_generation, l.token,
                          p_op_id, p_client, jsonb_build_object('ttl_ms', p_ttl_ms));
    PERFORM relctl.remember(p_op_id, 'acquire', relctl.acquire_request(e.name, p_job, p_release, p_generation, p_ttl_ms),
                            v_reply);
    RETURN v_reply;
END
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
                ELSE jsonb_build_object('current', p_detail) END;
    PERFORM relctl.record(c.env, 'acquire', p_reason, c.job, c.release, c.generation, NULL, c.op_id,
                          jsonb_build_object('host', c.host, 'pid', c.pid, 'job_url', c.job_url),
                          jsonb_build_object('candidate', c.id, 'queued_at', c.queued_at) || coalesce(p_detail, '{}'));
    PERFORM relctl.remember(c.op_id, 'acquire',
                            relctl.acquire_request(c.env, c.job, c.release, c.generation, c.ttl_ms), v_reply);
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
BEGIN
    UPDATE relctl.candidates SET state = 'left', ended_at = clock_timestamp()
        WHERE env = e.name AND state = 'waiting' AND NOT relctl.candidate_alive(id);

    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    IF m.id IS NOT NULL THEN
        FOR c IN SELECT * FROM relctl.candidates
                 WHERE env = e.name AND state = 'waiting' AND generation <= m.generation ORDER BY id LOOP
            PERFORM relctl.refuse_candidate(c, 'stale', 'STALE_GENERATION',
                relctl.manifest_json(m, e.name) - 'manifest' - 'env',
                format('STALE_GENERATION: generation %s of %s is not newer than generation %s (%s) published on %s',
                       c.generation, c.release, m.generation, m.release, e.name));
        END LOOP;
    END IF;

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

-- Decides a waiting candidate: granted, refused (stale or superseded, as
-- remembered), or still queued (with what it waits for, so the waiter can
-- set its timer to the holder's expiry). Caller holds the environment lock.
CREATE FUNCTION relctl.evaluate_candidate(p_candidate bigint, e relctl.environments, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    c relctl.candidates;
    head relctl.candidates;
    holder relctl.leases;
    v_now timestamptz;
    v_reply jsonb;
BEGIN
    PERFORM relctl.refresh_queue(e);
    SELECT * INTO c FROM relctl.candidates WHERE id = p_candidate;
    IF c.state <> 'waiting' THEN
        PERFORM pg_advisory_unlock(relctl.candidate_lock_class(), relctl.candidate_lock_key(c.id));
        SELECT outcome || jsonb_build_object('replayed', false) INTO v_reply
            FROM relctl.operations WHERE op_id = c.op_id;
        RETURN coalesce(v_reply, jsonb_build_object('status', 'busy', 'env', c.env, 'candidate', c.id,
                                                    'message', format('candidate %s left the queue (%s)', c.id, c.state)));
    END IF;
    v_now := clock_timestamp();
    holder := relctl.live_lease(e, v_now);
    head := relctl.queue_head(e.name);
    IF e.frozen_at IS NULL AND holder.token IS NULL AND head.id = c.id THEN
        UPDATE relctl.candidates SET state = 'granted', ended_at = v_now, token = e.last_token + 1 WHERE id = c.id;
        PERFORM pg_advisory_unlock(relctl.candidate_lock_class(), relctl.candidate_lock_key(c.id));
        RETURN relctl.grant_lease(e, c.job, c.release, c.generation, c.ttl_ms, c.op_id, p_client, v_now);
    END IF;
    RETURN jsonb_build_object(
        'status', 'queued', 'env', e.name, 'candidate', c.id,
        'position', (SELECT count(*) FROM relctl.candidates
                     WHERE env = e.name AND state = 'waiting' AND (generation, id) <= (c.generation, c.id)),
        'holder', relctl.lease_json(holder, v_now), 'frozen', e.frozen_at IS NOT NULL,
        'head', relctl.candidate_json(head),
        'supersession', (SELECT id FROM relctl.supersessions WHERE env = e.name AND state = 'pending' LIMIT 1),
        'message', CASE
            WHEN e.frozen_at IS NOT NULL THEN format('%s is frozen: %s', e.name, e.frozen_reason)
            WHEN holder.token IS NOT NULL THEN format(
                'environment %s is held by job %s (release %s, generation %s, token %s) for another %s ms',
                e.name, holder.job, holder.release, holder.generation, holder.token,
                greatest(0, relctl.ms_between(v_now, holder.expires_at)))
            ELSE format('candidate %s (generation %s) goes next on %s', head.job, head.generation, e.name) END);
END
$$;

-- ---------------------------------------------------------------------------
-- Acquire, now queue-aware
-- ---------------------------------------------------------------------------

DROP FUNCTION relctl.acquire(text, text, text, bigint, bigint, text, jsonb);

-- p_queue: join the environment's queue when the lease cannot be granted now
-- (the reply is then 'queued' with a candidate id; see acquire_candidate).
CREATE FUNCTION relctl.acquire(p_env text, p_job text, p_release text, p_generation bigint,
                               p_ttl_ms bigint, p_op_id text, p_client jsonb, p_queue boolean)
RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
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
BEGIN
    PERFORM relctl.require_text('job', p_job);
    PERFORM relctl.require_text('release', p_release);
    IF p_generation IS NULL OR p_generation <= 0 THEN
        PERFORM relctl.invalid('generation must be a positive integer');
    END IF;
    PERFORM relctl.lock_operation(p_op_id);
    e := relctl.lock_environment(p_env);
    v_ttl := relctl.resolve_ttl(e, p_ttl_ms, NULL);
    v_request := relctl.acquire_request(p_env, p_job, p_release, p_generation, v_ttl);
    v_reply := relctl.replay(p_op_id, v_request);
    IF v_reply IS NOT NULL THEN
        RETURN v_reply;
    END IF;

    IF e.frozen_at IS NOT NULL THEN
        RETURN relctl.frozen_refusal(e, 'acquire', p_job, p_release, p_generation, NULL, p_op_id, p_client);
    END IF;

    -- Read the clock after the row lock: a wait for the lock must not make a
    -- lease look younger than it is.
    v_now := clock_timestamp();
    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;

    -- Freshness first: a candidate that is not newer than what is published can
    -- never become current, so it must not queue for the lease either.
    IF m.id IS NOT NULL AND p_generation <= m.generation THEN
        v_reply := jsonb_build_object(
            'status', 'refused', 'reason', 'STALE_GENERATION', 'operation', 'acquire',
            'env', p_env, 'job', p_job, 'release', p_release, 'generation', p_generation,
            'current', relctl.manifest_json(m, p_env) - 'manifest' - 'env', 'op_id', p_op_id,
            'message', format('STALE_GENERATION: generation %s of %s is not newer than generation %s (%s) published on %s',
                              p_generation, p_release, m.generation, m.release, p_env),
            'replayed', false);
        PERFORM relctl.record(p_env, 'acquire', 'STALE_GENERATION', p_job, p_release, p_generation,
                              NULL, p_op_id, p_client, jsonb_build_object('ttl_ms', v_ttl));
        PERFORM relctl.remember(p_op_id, 'acquire', v_request, v_reply);
        RETURN v_reply;
    END IF;

    IF p_queue THEN
        INSERT INTO relctl.candidates (env, job, release, generation, ttl_ms, op_id, host, pid, job_url)
            VALUES (p_env, p_job, p_release, p_generation, v_ttl, p_op_id,
                    p_client ->> 'host', (p_client ->> 'pid')::integer, p_client ->> 'job_url')
            RETURNING * INTO c;
        -- Session-level: held by the waiter's connection until granted or gone.
        PERFORM pg_advisory_lock(relctl.candidate_lock_class(), relctl.candidate_lock_key(c.id));
        RETURN relctl.evaluate_candidate(c.id, e, p_client);
    END IF;

    -- Busy is a transient answer, not an outcome: it is neither recorded as a
    -- refusal nor remembered under the op id, so a retry can succeed. Queued
    -- candidates are served before anyone who does not wait.
    PERFORM relctl.refresh_queue(e);
    holder := relctl.live_lease(e, v_now);
    head := relctl.queue_head(p_env);
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
    RETURN relctl.grant_lease(e, p_job, p_release, p_generation, v_ttl, p_op_id, p_client, v_now);
END
$$;

CREATE FUNCTION relctl.find_candidate(p_candidate bigint) RETURNS relctl.candidates
LANGUAGE plpgsql AS $$
DECLARE
    c relctl.candidates;
BEGIN
    SELECT * INTO c FROM relctl.candidates WHERE id = p_candidate;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown candidate %s', p_candidate));
    END IF;
    RETURN c;
END
$$;

-- A waiter's re-evaluation, called on every wake-up (a notification or its
-- timer). Must run on the session that queued the candidate.
CREATE FUNCTION relctl.acquire_candidate(p_candidate bigint, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    c relctl.candidates;
    e relctl.environments;
BEGIN
    c := relctl.find_candidate(p_candidate);
    PERFORM relctl.lock_operation(c.op_id);
    e := relctl.lock_environment(c.env);
    RETURN relctl.evaluate_candidate(c.id, e, p_client);
END
$$;

-- The waiter gives up (its --wait ran out): the candidate leaves the queue.
CREATE FUNCTION relctl.leave_queue(p_candidate bigint) RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    c relctl.candidates;
    e relctl.environments;
BEGIN
    c := relctl.find_candidate(p_candidate);
    e := relctl.lock_environment(c.env);
    UPDATE relctl.candidates SET state = 'timeout', ended_at = clock_timestamp()
        WHERE id = p_candidate AND state = 'waiting';
    PERFORM pg_advisory_unlock(relctl.candidate_lock_class(), relctl.candidate_lock_key(c.id));
    -- Others may move up.
    PERFORM pg_notify('relctl', jsonb_build_object('env', c.env, 'operation', 'leave')::text);
    RETURN (SELECT relctl.candidate_json(x) FROM relctl.candidates x WHERE x.id = p_candidate);
END
$$;

-- ---------------------------------------------------------------------------
-- Release (with a note), revoke, freeze
-- ---------------------------------------------------------------------------

DROP FUNCTION relctl.release(text, bigint, uuid, jsonb);

CREATE FUNCTION relctl.release(p_env text, p_token bigint, p_lease_id uuid, p_client jsonb, p_note text)
RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    l relctl.leases;
    v_now timestamptz;
    v_reason text;
    v_state text;
BEGIN
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
    IF v_state <> 'already-released' THEN
        PERFORM relctl.record(p_env, 'release', NULL, l.job, l.release, l.generation, p_token, NULL, p_client,
                              jsonb_strip_nulls(jsonb_build_object('state', v_state, 'note', p_note)));
    END IF;
    RETURN jsonb_build_object('status', 'ok', 'env', p_env, 'token', p_token, 'job', l.job,
                              'release', l.release, 'generation', l.generation,
                              'released', v_reason IS NULL, 'state', v_state);
END
$$;

CREATE FUNCTION relctl.revoke(p_env text, p_by text, p_reason text, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    l relctl.leases;
    v_now timestamptz;
BEGIN
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
    INSERT INTO relctl.events (env, operation, outcome, job, release, generation, token, current_token,
                               op_id, host, pid, job_url, actor, detail)
        SELECT p_env, 'revoke', 'accepted', l.job, l.release, l.generation, l.token, e.last_token, NULL,
               p_client ->> 'host', (p_client ->> 'pid')::integer, p_client ->> 'job_url', p_by,
               jsonb_build_object('reason', p_reason);
    PERFORM pg_notify('relctl', jsonb_build_object('env', p_env, 'operation', 'revoke')::text);
    RETURN jsonb_build_object('status', 'ok', 'env', p_env, 'revoked', true, 'by', p_by, 'reason', p_reason,
                              'lease', relctl.lease_json(l, v_now) - 'remaining_ms');
END
$$;

-- record() with an actor: one statement, so the row is complete when inserted.
CREATE FUNCTION relctl.record_by(p_env text, p_operation text, p_actor text, p_client jsonb, p_detail jsonb,
                                 p_job text DEFAULT NULL, p_release text DEFAULT NULL,
                                 p_generation bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO relctl.events (env, operation, outcome, job, release, generation,
                               current_token, current_generation, current_release,
                               host, pid, job_url, actor, detail)
    SELECT p_env, p_operation, 'accepted', p_job, p_release, p_generation,
           e.last_token, m.generation, m.release,
           p_client ->> 'host', (p_client ->> 'pid')::integer, p_client ->> 'job_url', p_actor, p_detail
    FROM relctl.environments e
    LEFT JOIN relctl.manifests m ON m.id = e.current_manifest_id
    WHERE e.name = p_env
    RETURNING id INTO v_id;
    PERFORM pg_notify('relctl', jsonb_build_object('env', p_env, 'event', v_id, 'operation', p_operation)::text);
    RETURN v_id;
END
$$;

CREATE FUNCTION relctl.freeze(p_env text, p_by text, p_reason text, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
BEGIN
    PERFORM relctl.require_actor(p_by, p_reason, true);
    e := relctl.lock_environment(p_env);
    IF e.frozen_at IS NULL THEN
        UPDATE relctl.environments SET frozen_at = clock_timestamp(), frozen_by = p_by, frozen_reason = p_reason
            WHERE name = p_env;
        PERFORM relctl.record_by(p_env, 'freeze', p_by, p_client, jsonb_build_object('reason', p_reason));
    END IF;
    RETURN relctl.environment_json(p_env) || jsonb_build_object('status', 'ok', 'changed', e.frozen_at IS NULL);
END
$$;

CREATE FUNCTION relctl.unfreeze(p_env text, p_by text, p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
BEGIN
    PERFORM relctl.require_actor(p_by, NULL, false);
    e := relctl.lock_environment(p_env);
    IF e.frozen_at IS NOT NULL THEN
        UPDATE relctl.environments SET frozen_at = NULL, frozen_by = NULL, frozen_reason = NULL
            WHERE name = p_env;
        -- The notification wakes the queued candidates, which resume in policy order.
        PERFORM relctl.record_by(p_env, 'unfreeze', p_by, p_client,
                                 jsonb_build_object('frozen_at', e.frozen_at, 'frozen_by', e.frozen_by,
                                                    'frozen_reason', e.frozen_reason));
    END IF;
    RETURN relctl.environment_json(p_env) || jsonb_build_object('status', 'ok', 'changed', e.frozen_at IS NOT NULL);
END
$$;

CREATE FUNCTION relctl.env_set(p_env text, p_policy text, p_supersede text, p_serialization text,
                               p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    v_changes jsonb;
BEGIN
    IF p_policy IS NOT NULL AND p_policy NOT IN ('ordered', 'newest') THEN
        PERFORM relctl.invalid(format('invalid policy "%s": expected ordered or newest', p_policy));
    END IF;
    IF p_supersede IS NOT NULL AND p_supersede NOT IN ('auto', 'approval') THEN
        PERFORM relctl.invalid(format('invalid supersede mode "%s": expected auto or approval', p_supersede));
    END IF;
    IF p_serialization IS NOT NULL AND p_serialization NOT IN ('enforced', 'off') THEN
        PERFORM relctl.invalid(format('invalid serialization "%s": expected enforced or off', p_serialization));
    END IF;
    IF p_policy IS NULL AND p_supersede IS NULL AND p_serialization IS NULL THEN
        PERFORM relctl.invalid('nothing to set: give --policy, --supersede or --serialization');
    END IF;
    e := relctl.lock_environment(p_env);
    v_changes := jsonb_strip_nulls(jsonb_build_object(
        'policy', CASE WHEN p_policy IS DISTINCT FROM e.policy THEN p_policy END,
        'supersede', CASE WHEN p_supersede IS DISTINCT FROM e.supersede THEN p_supersede END,
        'serialization', CASE WHEN p_serialization IS DISTINCT FROM e.serialization THEN p_serialization END));
    IF v_changes <> '{}' THEN
        UPDATE relctl.environments SET policy = coalesce(p_policy, policy),
                                       supersede = coalesce(p_supersede, supersede),
                                       serialization = coalesce(p_serialization, serialization)
            WHERE name = p_env;
        PERFORM relctl.record(p_env, 'env-set', NULL, NULL, NULL, NULL, NULL, NULL, p_client, v_changes);
    END IF;
    RETURN relctl.environment_json(p_env) || jsonb_build_object('status', 'ok', 'changed', v_changes);
END
$$;

-- ---------------------------------------------------------------------------
-- Supersession approvals
-- ---------------------------------------------------------------------------

CREATE FUNCTION relctl.supersession_json(s relctl.supersessions) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', s.id, 'env', s.env, 'state', s.state, 'opened_at', s.opened_at,
        'decided_at', s.decided_at, 'decided_by', s.decided_by, 'reason', s.reason,
        'winner', (SELECT relctl.candidate_json(c) FROM relctl.candidates c WHERE c.id = s.winner),
        'skipped', (SELECT coalesce(jsonb_agg(relctl.candidate_json(c) ORDER BY c.id), '[]')
                    FROM relctl.candidates c WHERE c.id = ANY (s.skipped)))
$$;

CREATE FUNCTION relctl.approvals(p_env text, p_all boolean) RETURNS jsonb
LANGUAGE sql STABLE SET TimeZone = 'UTC' AS $$
    SELECT jsonb_build_object('approvals', coalesce(jsonb_agg(relctl.supersession_json(s) ORDER BY s.id), '[]'))
    FROM relctl.supersessions s
    WHERE (p_env IS NULL OR s.env = p_env) AND (p_all OR s.state = 'pending')
$$;

CREATE FUNCTION relctl.decide(p_id bigint, p_approve boolean, p_by text, p_reason text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    s relctl.supersessions;
    w relctl.candidates;
BEGIN
    PERFORM relctl.require_actor(p_by, p_reason, NOT p_approve);
    SELECT * INTO s FROM relctl.supersessions WHERE id = p_id;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown supersession request %s', p_id));
    END IF;
    PERFORM relctl.lock_environment(s.env);
    SELECT * INTO s FROM relctl.supersessions WHERE id = p_id;
    IF s.state <> 'pending' THEN
        PERFORM relctl.invalid(format('supersession request %s is %s, not pending', p_id, s.state));
    END IF;
    UPDATE relctl.supersessions
        SET state = CASE WHEN p_approve THEN 'approved' ELSE 'denied' END,
            decided_at = clock_timestamp(), decided_by = p_by, reason = p_reason
        WHERE id = p_id
        RETURNING * INTO s;
    SELECT * INTO w FROM relctl.candidates WHERE id = s.winner;
    -- The notification wakes the waiters, which apply the decision.
    PERFORM relctl.record_by(s.env, CASE WHEN p_approve THEN 'approve' ELSE 'deny' END, p_by, p_client,
                             jsonb_strip_nulls(jsonb_build_object('request', s.id, 'reason', p_reason,
                                                                  'skipped', to_jsonb(s.skipped))),
                             w.job, w.release, w.generation);
    RETURN relctl.supersession_json(s) || jsonb_build_object('status', 'ok');
END
$$;

-- ---------------------------------------------------------------------------
-- Publish: dispatch freeze, and leaseless publishes while serialization is off
-- ---------------------------------------------------------------------------

-- The manifest's validation, shared by both publish paths. The text is what
-- the client sent, so its size limit is measured on that.
CREATE FUNCTION relctl.parse_manifest(p_text text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v jsonb;
BEGIN
    IF p_text IS NULL THEN
        RETURN NULL;
    END IF;
    IF octet_length(p_text) > 65536 THEN
        PERFORM relctl.invalid('a manifest may not exceed 64 KiB');
    END IF;
    BEGIN
        v := p_text::jsonb;
    EXCEPTION WHEN invalid_text_representation OR untranslatable_character THEN
        PERFORM relctl.invalid('the manifest is not valid JSON: ' || SQLERRM);
    END;
    IF jsonb_typeof(v) <> 'object' THEN
        PERFORM relctl.invalid('a manifest must be a JSON object');
    END IF;
    RETURN v;
END
$$;

CREATE OR REPLACE FUNCTION relctl.publish(p_env text, p_token bigint, p_lease_id uuid, p_manifest_text text,
                                          p_op_id text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    l relctl.leases;
    m relctl.manifests;
    published relctl.manifests;
    v_now timestamptz;
    v_reason text;
    v_trusted boolean;
    v_request jsonb;
    v_reply jsonb;
    v_manifest jsonb := relctl.parse_manifest(p_manifest_text);
BEGIN
    PERFORM relctl.lock_operation(p_op_id);
    e := relctl.lock_environment(p_env);
    v_request := jsonb_build_object('operation', 'publish', 'env', p_env, 'token', p_token,
                                    'lease_id', relctl.lease_id_hex(p_lease_id),
                                    'manifest_md5', md5(coalesce(v_manifest::text, '')));
    v_reply := relctl.replay(p_op_id, v_request);
    IF v_reply IS NOT NULL THEN
        RETURN v_reply;
    END IF;

    SELECT * INTO l FROM relctl.leases WHERE env = p_env AND token = p_token;
    IF e.frozen_at IS NOT NULL THEN
        v_trusted := l.token IS NOT NULL AND l.lease_id = p_lease_id;
        RETURN relctl.frozen_refusal(e, 'publish', CASE WHEN v_trusted THEN l.job END,
                                     CASE WHEN v_trusted THEN l.release END,
                                     CASE WHEN v_trusted THEN l.generation END, p_token, p_op_id, p_client);
    END IF;
    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    v_now := clock_timestamp();
    v_reason := relctl.lease_refusal(e, l, p_lease_id, v_now);
    -- A stale generation outranks the lease's state: such a candidate can never
    -- become current, whatever happens to its lease, and that is what an
    -- incident reviewer needs to read first.
    IF (v_reason IS NULL OR v_reason NOT IN ('UNKNOWN_LEASE', 'BAD_LEASE_ID'))
       AND m.id IS NOT NULL AND l.generation <= m.generation THEN
        v_reason := 'STALE_GENERATION';
    END IF;

    IF v_reason IS NOT NULL THEN
        v_trusted := v_reason NOT IN ('UNKNOWN_LEASE', 'BAD_LEASE_ID');
        v_reply := jsonb_build_object(
            'status', 'refused', 'reason', v_reason, 'operation', 'publish', 'env', p_env,
            'token', p_token, 'current_token', e.last_token,
            'job', CASE WHEN v_trusted THEN l.job END, 'release', CASE WHEN v_trusted THEN l.release END,
            'generation', CASE WHEN v_trusted THEN l.generation END,
            'current', CASE WHEN m.id IS NULL THEN NULL ELSE relctl.manifest_json(m, p_env) - 'manifest' - 'env' END,
            'op_id', p_op_id, 'replayed', false,
            'message', CASE WHEN v_reason = 'STALE_GENERATION'
                THEN format('STALE_GENERATION: generation %s of %s is not newer than generation %s (%s) published on %s',
                            l.generation, l.release, m.generation, m.release, p_env)
                ELSE relctl.refusal_message(v_reason, p_env, p_token) END);
        PERFORM relctl.record(p_env, 'publish', v_reason,
                              CASE WHEN v_trusted THEN l.job END, CASE WHEN v_trusted THEN l.release END,
                              CASE WHEN v_trusted THEN l.generation END, p_token, p_op_id, p_client,
                              CASE WHEN v_trusted THEN jsonb_build_object(
                                  'lease_expires_at', l.expires_at, 'lease_ended_at', l.ended_at,
                                  'lease_end_reason', l.end_reason, 'lease_ended_by', l.ended_by) END);
        PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
        RETURN v_reply;
    END IF;

    INSERT INTO relctl.manifests (env, release, generation, job, token, published_at, manifest, op_id)
        VALUES (p_env, l.release, l.generation, l.job, l.token, v_now, v_manifest, p_op_id)
        RETURNING * INTO published;
    UPDATE relctl.environments SET current_manifest_id = published.id WHERE name = p_env;

    v_reply := jsonb_build_object(
        'status', 'ok', 'env', p_env, 'release', l.release, 'generation', l.generation,
        'job', l.job, 'token', l.token, 'published_at', v_now, 'serialized', true,
        'previous', CASE WHEN m.id IS NULL THEN NULL ELSE relctl.manifest_json(m, p_env) - 'manifest' - 'env' END,
        'op_id', p_op_id, 'replayed', false);
    PERFORM relctl.record(p_env, 'publish', NULL, l.job, l.release, l.generation, l.token, p_op_id,
                          p_client, jsonb_build_object('manifest_id', published.id));
    PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
    RETURN v_reply;
END
$$;

-- A publish without a lease: accepted only while the environment's
-- serialization is off (staged rollout), and still only when fresh.
CREATE FUNCTION relctl.publish_unserialized(p_env text, p_job text, p_release text, p_generation bigint,
                                            p_manifest_text text, p_op_id text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    m relctl.manifests;
    published relctl.manifests;
    v_now timestamptz;
    v_request jsonb;
    v_reply jsonb;
    v_manifest jsonb := relctl.parse_manifest(p_manifest_text);
BEGIN
    PERFORM relctl.require_text('job', p_job);
    PERFORM relctl.require_text('release', p_release);
    IF p_generation IS NULL OR p_generation <= 0 THEN
        PERFORM relctl.invalid('generation must be a positive integer');
    END IF;
    PERFORM relctl.lock_operation(p_op_id);
    e := relctl.lock_environment(p_env);
    v_request := jsonb_build_object('operation', 'publish', 'env', p_env, 'job', p_job, 'release', p_release,
                                    'generation', p_generation, 'manifest_md5', md5(coalesce(v_manifest::text, '')));
    v_reply := relctl.replay(p_op_id, v_request);
    IF v_reply IS NOT NULL THEN
        RETURN v_reply;
    END IF;
    IF e.frozen_at IS NOT NULL THEN
        RETURN relctl.frozen_refusal(e, 'publish', p_job, p_release, p_generation, NULL, p_op_id, p_client);
    END IF;
    IF e.serialization = 'enforced' THEN
        -- Not remembered: the environment's setting may change, and the same
        -- request must then be able to go through.
        PERFORM relctl.record(p_env, 'publish', 'NO_LEASE', p_job, p_release, p_generation, NULL, p_op_id,
                              p_client, jsonb_build_object('serialization', e.serialization));
        RETURN jsonb_build_object(
            'status', 'refused', 'reason', 'NO_LEASE', 'operation', 'publish', 'env', p_env, 'job', p_job,
            'release', p_release, 'generation', p_generation, 'op_id', p_op_id,
            'message', format('NO_LEASE: %s enforces serialization; publish with a lease (relctl lease acquire or relctl run)',
                              p_env));
    END IF;

    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    v_now := clock_timestamp();
    IF m.id IS NOT NULL AND p_generation <= m.generation THEN
        v_reply := jsonb_build_object(
            'status', 'refused', 'reason', 'STALE_GENERATION', 'operation', 'publish', 'env', p_env,
            'job', p_job, 'release', p_release, 'generation', p_generation,
            'current', relctl.manifest_json(m, p_env) - 'manifest' - 'env', 'op_id', p_op_id, 'replayed', false,
            'message', format('STALE_GENERATION: generation %s of %s is not newer than generation %s (%s) published on %s',
                              p_generation, p_release, m.generation, m.release, p_env));
        PERFORM relctl.record(p_env, 'publish', 'STALE_GENERATION', p_job, p_release, p_generation, NULL, p_op_id,
                              p_client, jsonb_build_object('unserialized', true));
        PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
        RETURN v_reply;
    END IF;

    INSERT INTO relctl.manifests (env, release, generation, job, token, published_at, manifest, op_id, serialized)
        VALUES (p_env, p_release, p_generation, p_job, NULL, v_now, v_manifest, p_op_id, false)
        RETURNING * INTO published;
    UPDATE relctl.environments SET current_manifest_id = published.id WHERE name = p_env;
    v_reply := jsonb_build_object(
        'status', 'ok', 'env', p_env, 'release', p_release, 'generation', p_generation, 'job', p_job,
        'token', NULL, 'published_at', v_now, 'serialized', false,
        'previous', CASE WHEN m.id IS NULL THEN NULL ELSE relctl.manifest_json(m, p_env) - 'manifest' - 'env' END,
        'op_id', p_op_id, 'replayed', false);
    PERFORM relctl.record(p_env, 'publish', NULL, p_job, p_release, p_generation, NULL, p_op_id, p_client,
                          jsonb_build_object('manifest_id', published.id, 'unserialized', true));
    PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
    RETURN v_reply;
END
$$;

-- ---------------------------------------------------------------------------
-- Reading: the environment now shows its policy, freeze and queue
-- ---------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION relctl.environment_json(p_env text) RETURNS jsonb
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
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
        'queue', (SELECT coalesce(jsonb_agg(relctl.candidate_json(c) ORDER BY c.generation, c.id), '[]')
                  FROM relctl.candidates c
                  WHERE c.env = e.name AND c.state = 'waiting' AND relctl.candidate_alive(c.id)),
        'pending_supersessions', (SELECT count(*) FROM relctl.supersessions s
                                  WHERE s.env = e.name AND s.state = 'pending'));
END
$$;
