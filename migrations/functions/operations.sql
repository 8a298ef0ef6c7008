-- Operation ids: the first outcome of every op id is stored in the
-- transaction that made its effect, so a retry after a lost reply is answered,
-- not re-applied.
--
-- An op id is not a credential. Op ids are predictable (CI job ids) and
-- printed in logs and in the audit trail, so nothing that knowing one gives
-- access to may reveal a live lease id: stored outcomes and requests keep no
-- lease id (a request keeps its digest), and the replay of an acquire returns
-- the lease's id only to a retry that presents the secret of the request that
-- made it. The client generates that secret and keeps it with the op id; the
-- server keeps its SHA-256 only.

-- Takes an advisory lock on a key for the rest of the transaction: at once
-- when it is free, else through relctl.wait_for (bounds.sql). Keys are
-- computable by anyone and advisory locks are open to every login, so a
-- session may hold one by hand, outside any transaction: wait_for ends such
-- a session, and one that holds the key in a transaction past the bounds,
-- instead of waiting for it.
CREATE FUNCTION relctl.lock_key(p_key bigint, p_what text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(p_key) THEN
        PERFORM relctl.wait_for(NULL, p_key, p_what);
    END IF;
END
$$;

CREATE FUNCTION relctl.operation_key(p_op_id text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT hashtextextended('relctl.op:' || p_op_id, 0) $$;

-- Serialises concurrent uses of one operation id (possibly on different
-- environments). Always taken before the environment lock, so the two lock
-- kinds are acquired in one global order and cannot deadlock; what is done
-- on a queued candidate's behalf, under the environment lock, only tries it
-- (relctl.remember).
CREATE FUNCTION relctl.lock_operation(p_op_id text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_op_id IS NULL THEN
        RETURN;
    END IF;
    IF length(p_op_id) NOT BETWEEN 1 AND 200 THEN
        PERFORM relctl.invalid('an operation id has 1 to 200 characters');
    END IF;
    PERFORM relctl.lock_key(relctl.operation_key(p_op_id), format('operation id "%s"', p_op_id));
END
$$;

-- The digest kept of a request secret; NULL for none.
CREATE FUNCTION relctl.secret_digest(p_secret text) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_secret IS NULL THEN
        RETURN NULL;
    END IF;
    IF octet_length(p_secret) NOT BETWEEN 16 AND 1000 THEN
        PERFORM relctl.invalid('a request secret has 16 to 1000 bytes');
    END IF;
    RETURN sha256(convert_to(p_secret, 'UTF8'));
END
$$;

-- A lease's credentials as a reply carries them: its id and the handle
-- (ENV:TOKEN:LEASE_ID) the client passes back.
CREATE FUNCTION relctl.credentials(l relctl.leases) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('lease_id', relctl.lease_id_hex(l.lease_id),
                              'handle', format('%s:%s:%s', l.env, l.token, relctl.lease_id_hex(l.lease_id)))
$$;

-- An outcome as it may be stored and shown: without a lease's credentials.
CREATE FUNCTION relctl.without_credentials(p_outcome jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT p_outcome - 'lease_id' - 'handle' $$;

-- The stored outcome of an operation id, marked as replayed; NULL when the id
-- is new. The same id with a different request is refused (RC008). An
-- accepted acquire is answered with its lease's credentials only when
-- p_secret is the original request's secret; otherwise the retry is refused
-- REQUEST_SECRET_MISMATCH and recorded, since it is either a job that lost
-- its secret or someone replaying another job's request.
CREATE FUNCTION relctl.replay(p_op_id text, p_request jsonb, p_secret text DEFAULT NULL,
                              p_client jsonb DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    o relctl.operations;
    l relctl.leases;
    v_reply jsonb;
BEGIN
    IF p_op_id IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT * INTO o FROM relctl.operations WHERE op_id = p_op_id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF o.request <> p_request THEN
        -- Refused and recorded, not raised: a raise would roll the record
        -- back. The reply names neither the stored request nor its job: an
        -- op id is predictable, and what another job asked is not the
        -- caller's to read.
        PERFORM relctl.record(p_request ->> 'env', p_request ->> 'operation', 'OP_ID_CONFLICT', NULL, NULL, NULL,
                              NULL, p_op_id, p_client,
                              jsonb_build_object('recorded_operation', o.operation, 'recorded_at', o.recorded_at));
        RETURN jsonb_build_object(
            'status', 'refused', 'reason', 'OP_ID_CONFLICT', 'operation', p_request ->> 'operation',
            'env', p_request ->> 'env', 'op_id', p_op_id, 'replayed', false,
            'message', format('OP_ID_CONFLICT: operation id "%s" was already used for a different request '
                              '(a %s at %s); use a new op id for a new request', p_op_id, o.operation,
                              to_char(o.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')));
    END IF;
    v_reply := relctl.without_credentials(o.outcome) || jsonb_build_object('replayed', true);
    IF o.operation <> 'acquire' OR o.outcome ->> 'status' IS DISTINCT FROM 'ok' THEN
        RETURN v_reply;
    END IF;
    IF o.secret_sha256 IS NOT NULL AND relctl.secret_digest(p_secret) IS NOT DISTINCT FROM o.secret_sha256 THEN
        SELECT * INTO l FROM relctl.leases
            WHERE env = o.outcome ->> 'env' AND token = (o.outcome ->> 'token')::bigint;
        RETURN v_reply || relctl.credentials(l);
    END IF;
    PERFORM relctl.record(o.outcome ->> 'env', 'acquire', 'REQUEST_SECRET_MISMATCH', o.outcome ->> 'job',
                          o.outcome ->> 'release', (o.outcome ->> 'generation')::bigint,
                          (o.outcome ->> 'token')::bigint, p_op_id, p_client,
                          jsonb_build_object('secret_given', p_secret IS NOT NULL));
    RETURN jsonb_build_object(
        'status', 'refused', 'reason', 'REQUEST_SECRET_MISMATCH', 'operation', 'acquire',
        'env', o.outcome ->> 'env', 'token', (o.outcome ->> 'token')::bigint, 'op_id', p_op_id,
        'replayed', true,
        'message', format('REQUEST_SECRET_MISMATCH: operation id "%s" acquired lease %s on %s, but this retry '
                          'does not present the secret of the request that made it, so the lease id is '
                          'withheld (retry from where the first attempt ran, or with the same '
                          'RELCTL_OP_KEY)', p_op_id, o.outcome ->> 'token', o.outcome ->> 'env'));
END
$$;

-- Stores the first outcome of an op id. A request of the caller's own has
-- its op id locked and checked (relctl.replay) already. One decided on a
-- queued candidate's behalf (p_for_candidate: its grant or refusal, in
-- whatever session brings the queue up to date) takes the op id's lock
-- only if it is free, and stores nothing when it is not or when the op id
-- has an outcome already: op ids are predictable, another request may have
-- used the candidate's since it queued, and waiting here (with the
-- environment locked) or failing would let that request stall the queue.
-- Its waiter reads the candidate's own row instead (relctl.candidate_outcome).
CREATE FUNCTION relctl.remember(p_op_id text, p_operation text, p_request jsonb, p_outcome jsonb,
                                p_secret_sha256 bytea DEFAULT NULL, p_for_candidate boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- PL/pgSQL so that the INSERT's plan is kept for the session (see live_lease).
    IF p_op_id IS NULL THEN
        RETURN;
    END IF;
    IF p_for_candidate AND NOT pg_try_advisory_xact_lock(relctl.operation_key(p_op_id)) THEN
        RETURN;
    END IF;
    INSERT INTO relctl.operations (op_id, operation, request, outcome, secret_sha256)
        VALUES (p_op_id, p_operation, p_request, relctl.without_credentials(p_outcome), p_secret_sha256)
        ON CONFLICT (op_id) DO NOTHING;
END
$$;

-- Outcomes stored before lease ids were withheld may still hold one: the
-- reply strips them too.
-- With what became of it since (status.sql): 'state' in a word, its
-- 'summary' and the 'next' step, and the evidence they rest on. An op id no
-- operation could have had (NULL, empty, too long) is simply not found.
CREATE FUNCTION relctl.op_show(p_op_id text) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    SELECT coalesce(
        (SELECT jsonb_build_object('op_id', o.op_id, 'status', 'recorded', 'operation', o.operation,
                                   'request', o.request - 'lease_id',
                                   'outcome', relctl.without_credentials(o.outcome),
                                   'recorded_at', o.recorded_at)
         FROM relctl.operations o WHERE o.op_id = p_op_id),
        jsonb_build_object('op_id', p_op_id, 'status', 'not-found'))
        || CASE WHEN length(p_op_id) BETWEEN 1 AND 200
                THEN relctl.state_answer('{}', relctl.operation_state(p_op_id) - 'op_id' - 'operation')
                ELSE '{}'::jsonb END
$$;

GRANT EXECUTE ON FUNCTION relctl.op_show TO relctl_job, relctl_reviewer;
