-- The lease protocol's tables: environments, leases with fencing tokens, the
-- manifest history, the append-only audit trail and the record of operation
-- outcomes.
--
-- Numbered migrations hold tables, indexes and data changes only, and run
-- once. The functions that make every decision (inside the transaction that
-- makes the write, on the server's clock) live in migrations/functions/, one
-- file per module, and are re-applied whenever one of them changes; so do the
-- append-only triggers, which need their trigger function.

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

REVOKE UPDATE, DELETE, TRUNCATE ON relctl.events, relctl.manifests, relctl.operations FROM PUBLIC;
