-- The waiting queue and its policies, supersession approvals, revoke, dispatch
-- freeze and staged rollout of serialization: their tables. The functions are
-- in migrations/functions/ (queue.sql, operator.sql).

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
