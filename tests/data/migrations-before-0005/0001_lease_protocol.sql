-- The lease protocol: environments, leases with fencing tokens, the manifest
-- history, the append-only audit trail and the record of operation outcomes.
--
-- Every decision is made by a function below, inside the transaction that
-- makes the write, on the server's clock (clock_timestamp(), never now(), which
-- is frozen for the transaction, and never the client's clock). Each function
-- first locks the environment row, so all operations on one environment are
-- serialised by the database itself; operations on different environments do
-- not wait for each other.
--
-- Custom SQLSTATEs (the client maps them onto relctl's exit codes):
--   RC002  invalid input (exit 2); the transaction is rolled back, nothing is written
--   RC008  operation id reused for a different request (exit 8)
--   RC010  attempt to change an append-only table

CREATE TABLE relctl.environments (
    name                text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
    default_ttl_ms      bigint NOT NULL CHECK (default_ttl_ms > 0),
    max_ttl_ms          bigint NOT NULL CHECK (max_ttl_ms >= default_ttl_ms),
    -- Highest fencing token ever issued here. Tokens are never reused: the
    -- counter only moves forward, under the environment's row lock.
    last_token          bigint NOT NULL DEFAULT 0 CHECK (last_token >= 0),
    -- The environment's current pointer into the manifest history.
    current_manifest_id bigint,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE relctl.leases (
    env         text NOT NULL REFERENCES relctl.environments (name),
    token       bigint NOT NULL CHECK (token > 0),
    -- 122 random bits; the client proves it holds the lease by presenting it.
    lease_id    uuid NOT NULL DEFAULT gen_random_uuid(),
    job         text NOT NULL,
    release     text NOT NULL,
    generation  bigint NOT NULL CHECK (generation > 0),
    ttl_ms      bigint NOT NULL CHECK (ttl_ms > 0),
    acquired_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    ended_at    timestamptz,
    end_reason  text CHECK (end_reason IN ('released', 'revoked')),
    op_id       text,
    host        text,
    pid         integer,
    job_url     text,
    PRIMARY KEY (env, token),
    CHECK ((ended_at IS NULL) = (end_reason IS NULL))
);
CREATE INDEX leases_job ON relctl.leases (job);

CREATE TABLE relctl.manifests (
    id           bigserial PRIMARY KEY,
    env          text NOT NULL REFERENCES relctl.environments (name),
    release      text NOT NULL,
    generation   bigint NOT NULL CHECK (generation > 0),
    job          text NOT NULL,
    token        bigint NOT NULL,
    published_at timestamptz NOT NULL,
    manifest     jsonb,
    op_id        text,
    FOREIGN KEY (env, token) REFERENCES relctl.leases (env, token),
    -- Defence in depth behind the freshness check: a generation is published
    -- at most once per environment, and a lease publishes at most once.
    UNIQUE (env, generation),
    UNIQUE (env, token)
);

ALTER TABLE relctl.environments
    ADD FOREIGN KEY (current_manifest_id) REFERENCES relctl.manifests (id);

CREATE TABLE relctl.events (
    id                 bigserial PRIMARY KEY,
    at                 timestamptz NOT NULL DEFAULT clock_timestamp(),
    env                text,
    operation          text NOT NULL,
    outcome            text NOT NULL CHECK (outcome IN ('accepted', 'rejected')),
    reason             text,
    job                text,
    release            text,
    generation         bigint,
    token              bigint,
    -- The environment as it stood when the event happened, so a refusal can be
    -- explained from this row alone.
    current_token      bigint,
    current_generation bigint,
    current_release    text,
    op_id              text,
    host               text,
    pid                integer,
    job_url            text,
    client_addr        inet DEFAULT inet_client_addr(),
    db_user            text NOT NULL DEFAULT session_user,
    detail             jsonb,
    CHECK ((outcome = 'accepted') = (reason IS NULL))
);
CREATE INDEX events_env ON relctl.events (env, id);
CREATE INDEX events_job ON relctl.events (job, id);
CREATE INDEX events_reason ON relctl.events (reason, id) WHERE reason IS NOT NULL;
CREATE INDEX events_op_id ON relctl.events (op_id) WHERE op_id IS NOT NULL;

-- The first outcome of every operation id, stored in the transaction that
-- made its effect, so a retry after a lost reply is answered, not re-applied.
CREATE TABLE relctl.operations (
    op_id       text PRIMARY KEY CHECK (length(op_id) BETWEEN 1 AND 200),
    operation   text NOT NULL,
    request     jsonb NOT NULL,
    outcome     jsonb NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Append-only: history, the audit trail and operation outcomes are never
-- rewritten. Triggers bind superusers too (short of disabling triggers, which
-- needs table ownership: production should connect as a role that owns nothing).
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

REVOKE UPDATE, DELETE, TRUNCATE ON relctl.events, relctl.manifests, relctl.operations FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- Helpers
-- ---------------------------------------------------------------------------

CREATE FUNCTION relctl.invalid(p_message text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'RC002', MESSAGE = p_message;
END
$$;

CREATE FUNCTION relctl.lease_id_hex(p_id uuid) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT replace(p_id::text, '-', '') $$;

CREATE FUNCTION relctl.ms_between(p_from timestamptz, p_to timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT floor(extract(epoch FROM (p_to - p_from)) * 1000)::bigint $$;

-- Locks the environment row for the rest of the transaction: this is what
-- serialises acquire, renew, release and publish on one environment.
CREATE FUNCTION relctl.lock_environment(p_env text) RETURNS relctl.environments
LANGUAGE plpgsql AS $$
DECLARE
    e relctl.environments;
BEGIN
    SELECT * INTO e FROM relctl.environments WHERE name = p_env FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown environment "%s"', p_env));
    END IF;
    RETURN e;
END
$$;

-- Serialises concurrent uses of one operation id (possibly on different
-- environments). Always taken before the environment lock, so the two lock
-- kinds are acquired in one global order and cannot deadlock.
CREATE FUNCTION relctl.lock_operation(p_op_id text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_op_id IS NULL THEN
        RETURN;
    END IF;
    IF length(p_op_id) NOT BETWEEN 1 AND 200 THEN
        PERFORM relctl.invalid('an operation id has 1 to 200 characters');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('relctl.op:' || p_op_id, 0));
END
$$;

-- The stored outcome of an operation id, marked as replayed; NULL when the id
-- is new. The same id with a different request is refused (RC008).
CREATE FUNCTION relctl.replay(p_op_id text, p_request jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    o relctl.operations;
BEGIN
    IF p_op_id IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT * INTO o FROM relctl.operations WHERE op_id = p_op_id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF o.request <> p_request THEN
        RAISE EXCEPTION USING ERRCODE = 'RC008',
            MESSAGE = format('operation id "%s" was already used for a different request', p_op_id),
            DETAIL = o.request::text;
    END IF;
    RETURN o.outcome || jsonb_build_object('replayed', true);
END
$$;

CREATE FUNCTION relctl.remember(p_op_id text, p_operation text, p_request jsonb, p_outcome jsonb)
RETURNS void
LANGUAGE sql AS $$
    INSERT INTO relctl.operations (op_id, operation, request, outcome)
    SELECT p_op_id, p_operation, p_request, p_outcome
    WHERE p_op_id IS NOT NULL
$$;

CREATE FUNCTION relctl.manifest_json(m relctl.manifests, p_env text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'env', p_env, 'release', m.release, 'generation', m.generation, 'job', m.job,
        'token', m.token, 'published_at', m.published_at, 'manifest', m.manifest)
$$;

CREATE FUNCTION relctl.lease_json(l relctl.leases, p_now timestamptz) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN l.token IS NULL THEN NULL ELSE jsonb_build_object(
        'token', l.token, 'job', l.job, 'release', l.release, 'generation', l.generation,
        'acquired_at', l.acquired_at, 'expires_at', l.expires_at, 'ttl_ms', l.ttl_ms,
        'remaining_ms', greatest(0, relctl.ms_between(p_now, l.expires_at)),
        'host', l.host, 'pid', l.pid, 'job_url', l.job_url) END
$$;

-- Appends one event, snapshotting the environment's newest token and current
-- release/generation so that the row alone explains a refusal.
CREATE FUNCTION relctl.record(
    p_env text, p_operation text, p_reason text, p_job text, p_release text,
    p_generation bigint, p_token bigint, p_op_id text, p_client jsonb, p_detail jsonb)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO relctl.events (env, operation, outcome, reason, job, release, generation, token,
                               current_token, current_generation, current_release,
                               op_id, host, pid, job_url, detail)
    SELECT p_env, p_operation, CASE WHEN p_reason IS NULL THEN 'accepted' ELSE 'rejected' END,
           p_reason, p_job, p_release, p_generation, p_token,
           e.last_token, m.generation, m.release,
           p_op_id, p_client ->> 'host', (p_client ->> 'pid')::integer, p_client ->> 'job_url', p_detail
    FROM (SELECT 1) AS one
    LEFT JOIN relctl.environments e ON e.name = p_env
    LEFT JOIN relctl.manifests m ON m.id = e.current_manifest_id
    RETURNING id INTO v_id;
    PERFORM pg_notify('relctl', jsonb_build_object('env', p_env, 'event', v_id,
                                                   'operation', p_operation)::text);
    RETURN v_id;
END
$$;

-- Why a presented lease may not act now, or NULL when it is the environment's
-- live lease. Credentials first (a stranger learns nothing about the lease),
-- then how the lease ended.
CREATE FUNCTION relctl.lease_refusal(e relctl.environments, l relctl.leases, p_lease_id uuid,
                                     p_now timestamptz)
RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN l.token IS NULL THEN 'UNKNOWN_LEASE'
        WHEN l.lease_id <> p_lease_id THEN 'BAD_LEASE_ID'
        WHEN l.end_reason = 'released' THEN 'LEASE_RELEASED'
        WHEN l.end_reason = 'revoked' THEN 'LEASE_REVOKED'
        WHEN e.last_token > l.token THEN 'LEASE_SUPERSEDED'
        WHEN l.expires_at <= p_now THEN 'LEASE_EXPIRED'
    END
$$;

CREATE FUNCTION relctl.refusal_message(p_reason text, p_env text, p_token bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
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

CREATE FUNCTION relctl.require_text(p_what text, p_value text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_value IS NULL OR length(p_value) = 0 OR length(p_value) > 200 THEN
        PERFORM relctl.invalid(format('%s must have 1 to 200 characters', p_what));
    END IF;
END
$$;

-- ---------------------------------------------------------------------------
-- Environments
-- ---------------------------------------------------------------------------

CREATE FUNCTION relctl.environment_json(p_env text) RETURNS jsonb
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    m relctl.manifests;
    l relctl.leases;
    v_now timestamptz := clock_timestamp();
BEGIN
    SELECT * INTO e FROM relctl.environments WHERE name = p_env;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown environment "%s"', p_env));
    END IF;
    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    SELECT * INTO l FROM relctl.leases
        WHERE env = e.name AND token = e.last_token AND ended_at IS NULL AND expires_at > v_now;
    RETURN jsonb_build_object(
        'name', e.name, 'default_ttl_ms', e.default_ttl_ms, 'max_ttl_ms', e.max_ttl_ms,
        'last_token', e.last_token, 'created_at', e.created_at,
        'current', CASE WHEN m.id IS NULL THEN NULL ELSE relctl.manifest_json(m, e.name) - 'env' END,
        'lease', relctl.lease_json(l, v_now));
END
$$;

CREATE FUNCTION relctl.env_add(p_name text, p_default_ttl_ms bigint, p_max_ttl_ms bigint,
                               p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    v_default bigint := coalesce(p_default_ttl_ms, least(60000, coalesce(p_max_ttl_ms, 60000)));
    v_max bigint := coalesce(p_max_ttl_ms, greatest(600000, v_default));
    e relctl.environments;
BEGIN
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

CREATE FUNCTION relctl.env_list() RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('environments', coalesce(jsonb_agg(relctl.environment_json(name) ORDER BY name), '[]'))
    FROM relctl.environments
$$;

-- ---------------------------------------------------------------------------
-- Acquire
-- ---------------------------------------------------------------------------

CREATE FUNCTION relctl.acquire(p_env text, p_job text, p_release text, p_generation bigint,
                               p_ttl_ms bigint, p_op_id text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    m relctl.manifests;
    holder relctl.leases;
    l relctl.leases;
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
    v_request := jsonb_build_object('operation', 'acquire', 'env', p_env, 'job', p_job,
                                    'release', p_release, 'generation', p_generation, 'ttl_ms', v_ttl);
    v_reply := relctl.replay(p_op_id, v_request);
    IF v_reply IS NOT NULL THEN
        RETURN v_reply;
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

    -- Only the newest token can be live: every grant supersedes all before it.
    SELECT * INTO holder FROM relctl.leases
        WHERE env = p_env AND token = e.last_token AND ended_at IS NULL AND expires_at > v_now;
    IF FOUND THEN
        -- Busy is a transient answer, not an outcome: it is neither recorded as
        -- a refusal nor remembered under the op id, so a retry can succeed.
        RETURN jsonb_build_object(
            'status', 'busy', 'env', p_env, 'op_id', p_op_id,
            'holder', relctl.lease_json(holder, v_now),
            'message', format('environment %s is held by job %s (release %s, generation %s, token %s) for another %s ms',
                              p_env, holder.job, holder.release, holder.generation, holder.token,
                              greatest(0, relctl.ms_between(v_now, holder.expires_at))));
    END IF;

    INSERT INTO relctl.leases (env, token, job, release, generation, ttl_ms, acquired_at, expires_at,
                               op_id, host, pid, job_url)
    VALUES (p_env, e.last_token + 1, p_job, p_release, p_generation, v_ttl, v_now,
            v_now + v_ttl * interval '1 millisecond', p_op_id,
            p_client ->> 'host', (p_client ->> 'pid')::integer, p_client ->> 'job_url')
    RETURNING * INTO l;
    UPDATE relctl.environments SET last_token = l.token WHERE name = p_env;

    v_reply := jsonb_build_object(
        'status', 'ok', 'env', p_env, 'token', l.token, 'lease_id', relctl.lease_id_hex(l.lease_id),
        'handle', format('%s:%s:%s', p_env, l.token, relctl.lease_id_hex(l.lease_id)),
        'job', p_job, 'release', p_release, 'generation', p_generation,
        'acquired_at', l.acquired_at, 'expires_at', l.expires_at, 'ttl_ms', v_ttl,
        'op_id', p_op_id, 'replayed', false);
    PERFORM relctl.record(p_env, 'acquire', NULL, p_job, p_release, p_generation, l.token,
                          p_op_id, p_client, jsonb_build_object('ttl_ms', v_ttl));
    PERFORM relctl.remember(p_op_id, 'acquire', v_request, v_reply);
    RETURN v_reply;
END
$$;

-- ---------------------------------------------------------------------------
-- Renew, release
-- ---------------------------------------------------------------------------

CREATE FUNCTION relctl.renew(p_env text, p_token bigint, p_lease_id uuid, p_ttl_ms bigint,
                             p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    l relctl.leases;
    v_now timestamptz;
    v_ttl bigint;
    v_reason text;
    v_trusted boolean;
BEGIN
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

    UPDATE relctl.leases SET expires_at = v_now + v_ttl * interval '1 millisecond', ttl_ms = v_ttl
        WHERE env = p_env AND token = p_token
        RETURNING * INTO l;
    PERFORM relctl.record(p_env, 'renew', NULL, l.job, l.release, l.generation, p_token, NULL,
                          p_client, jsonb_build_object('ttl_ms', v_ttl, 'expires_at', l.expires_at));
    RETURN jsonb_build_object('status', 'ok', 'env', p_env, 'token', p_token, 'job', l.job,
                              'release', l.release, 'generation', l.generation,
                              'expires_at', l.expires_at, 'ttl_ms', v_ttl);
END
$$;

-- Ends the caller's own lease. Idempotent: releasing a lease that has already
-- ended (released, revoked, expired or superseded) succeeds and changes
-- nothing, because it only ever touches the row of the presented token.
CREATE FUNCTION relctl.release(p_env text, p_token bigint, p_lease_id uuid, p_client jsonb)
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
        UPDATE relctl.leases SET ended_at = v_now, end_reason = 'released'
            WHERE env = p_env AND token = p_token;
    END IF;
    IF v_state <> 'already-released' THEN
        PERFORM relctl.record(p_env, 'release', NULL, l.job, l.release, l.generation, p_token, NULL,
                              p_client, jsonb_build_object('state', v_state));
    END IF;
    RETURN jsonb_build_object('status', 'ok', 'env', p_env, 'token', p_token, 'job', l.job,
                              'release', l.release, 'generation', l.generation,
                              'released', v_reason IS NULL, 'state', v_state);
END
$$;

-- ---------------------------------------------------------------------------
-- Publish
-- ---------------------------------------------------------------------------

-- The manifest arrives as text so that its size limit is measured on what the
-- client sent (jsonb's own text form adds spaces).
CREATE FUNCTION relctl.publish(p_env text, p_token bigint, p_lease_id uuid, p_manifest_text text,
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
    v_manifest jsonb;
BEGIN
    IF p_manifest_text IS NOT NULL THEN
        IF octet_length(p_manifest_text) > 65536 THEN
            PERFORM relctl.invalid('a manifest may not exceed 64 KiB');
        END IF;
        BEGIN
            v_manifest := p_manifest_text::jsonb;
        EXCEPTION WHEN invalid_text_representation OR untranslatable_character THEN
            PERFORM relctl.invalid('the manifest is not valid JSON: ' || SQLERRM);
        END;
        IF jsonb_typeof(v_manifest) <> 'object' THEN
            PERFORM relctl.invalid('a manifest must be a JSON object');
        END IF;
    END IF;
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
                                  'lease_end_reason', l.end_reason) END);
        PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
        RETURN v_reply;
    END IF;

    INSERT INTO relctl.manifests (env, release, generation, job, token, published_at, manifest, op_id)
        VALUES (p_env, l.release, l.generation, l.job, l.token, v_now, v_manifest, p_op_id)
        RETURNING * INTO published;
    UPDATE relctl.environments SET current_manifest_id = published.id WHERE name = p_env;

    v_reply := jsonb_build_object(
        'status', 'ok', 'env', p_env, 'release', l.release, 'generation', l.generation,
        'job', l.job, 'token', l.token, 'published_at', v_now,
        'previous', CASE WHEN m.id IS NULL THEN NULL ELSE relctl.manifest_json(m, p_env) - 'manifest' - 'env' END,
        'op_id', p_op_id, 'replayed', false);
    PERFORM relctl.record(p_env, 'publish', NULL, l.job, l.release, l.generation, l.token, p_op_id,
                          p_client, jsonb_build_object('manifest_id', published.id));
    PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
    RETURN v_reply;
END
$$;

-- ---------------------------------------------------------------------------
-- Reading: lease, manifest, audit, trace, operations
-- ---------------------------------------------------------------------------

CREATE FUNCTION relctl.lease_show(p_env text) RETURNS jsonb
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
DECLARE
    v_env jsonb := relctl.environment_json(p_env);
BEGIN
    RETURN jsonb_build_object('env', p_env, 'lease', v_env -> 'lease');
END
$$;

CREATE FUNCTION relctl.manifest_show(p_env text, p_history boolean) RETURNS jsonb
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    m relctl.manifests;
BEGIN
    SELECT * INTO e FROM relctl.environments WHERE name = p_env;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown environment "%s"', p_env));
    END IF;
    IF p_history THEN
        RETURN jsonb_build_object('env', p_env, 'history',
            (SELECT coalesce(jsonb_agg(relctl.manifest_json(h, p_env) ORDER BY h.id), '[]')
             FROM relctl.manifests h WHERE h.env = p_env));
    END IF;
    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    RETURN relctl.manifest_json(m, p_env);
END
$$;

CREATE FUNCTION relctl.event_json(v relctl.events) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', v.id, 'at', v.at, 'env', v.env, 'operation', v.operation, 'outcome', v.outcome,
        'reason', v.reason, 'job', v.job, 'release', v.release, 'generation', v.generation,
        'token', v.token, 'current_token', v.current_token, 'current_generation', v.current_generation,
        'current_release', v.current_release, 'op_id', v.op_id, 'host', v.host, 'pid', v.pid,
        'job_url', v.job_url, 'detail', v.detail)
$$;

-- The newest p_limit matching events, oldest first (like a log's tail).
CREATE FUNCTION relctl.audit(p_env text, p_job text, p_reason text, p_operation text,
                             p_since timestamptz, p_limit integer)
RETURNS jsonb
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
BEGIN
    IF p_limit IS NOT NULL AND p_limit <= 0 THEN
        PERFORM relctl.invalid('limit must be positive');
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

-- Every refusal of a job, each with the job's own lease, the lease that beat
-- it (the environment's newest token at that moment, when it was not the
-- job's), and the manifest that was current at that moment.
CREATE FUNCTION relctl.trace(p_job text) RETURNS jsonb
LANGUAGE sql STABLE SET TimeZone = 'UTC' AS $$
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
                'published_before_ms', relctl.ms_between(cur.published_at, v.at)) END)
        ORDER BY v.id), '[]'))
    FROM relctl.events v
    LEFT JOIN relctl.leases own ON own.env = v.env AND own.token = v.token AND own.job = v.job
    LEFT JOIN relctl.leases beat ON beat.env = v.env AND beat.token = v.current_token
                                AND v.current_token IS DISTINCT FROM v.token
    LEFT JOIN relctl.manifests cur ON cur.env = v.env AND cur.generation = v.current_generation
    WHERE v.job = p_job AND v.outcome = 'rejected'
$$;

CREATE FUNCTION relctl.op_show(p_op_id text) RETURNS jsonb
LANGUAGE sql STABLE SET TimeZone = 'UTC' AS $$
    SELECT coalesce(
        (SELECT jsonb_build_object('op_id', o.op_id, 'status', 'recorded', 'operation', o.operation,
                                   'request', o.request, 'outcome', o.outcome,
                                   'recorded_at', o.recorded_at)
         FROM relctl.operations o WHERE o.op_id = p_op_id),
        jsonb_build_object('op_id', p_op_id, 'status', 'not-found'))
$$;
