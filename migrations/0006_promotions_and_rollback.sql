-- Promotion paths, approval gates bound to a release, and rollback that keeps
-- the freshness bar (migrations/functions/promotions.sql decides them).

-- promote_from: the environment a candidate must have been accepted on first
-- (published there, at least soak_ms ago by the database clock).
-- approvals_required: how many distinct people must approve a candidate's
-- promotion request before it may acquire or publish here.
-- high_water_generation: the highest generation ever accepted here. The
-- freshness check compares with it, never with the current manifest, so a
-- rollback (which moves current_manifest_id back) does not lower the bar.
ALTER TABLE relctl.environments
    ADD COLUMN promote_from text REFERENCES relctl.environments (name),
    ADD COLUMN soak_ms bigint NOT NULL DEFAULT 0 CHECK (soak_ms >= 0),
    ADD COLUMN approvals_required integer NOT NULL DEFAULT 0 CHECK (approvals_required BETWEEN 0 AND 10),
    ADD COLUMN high_water_generation bigint NOT NULL DEFAULT 0 CHECK (high_water_generation >= 0),
    ADD CHECK (promote_from IS DISTINCT FROM name);

-- An existing database: the bar is what was ever published there.
UPDATE relctl.environments e
    SET high_water_generation = coalesce((SELECT max(m.generation) FROM relctl.manifests m WHERE m.env = e.name), 0);

-- A rollback makes an earlier accepted manifest current again. It takes the
-- environment's next fencing token (the lease row it holds for the moment of
-- the switch), so everything before it is fenced out.
CREATE TABLE relctl.rollbacks (
    id                   bigserial PRIMARY KEY,
    env                  text NOT NULL REFERENCES relctl.environments (name),
    restored_manifest_id bigint NOT NULL REFERENCES relctl.manifests (id),
    replaced_manifest_id bigint NOT NULL REFERENCES relctl.manifests (id),
    token                bigint NOT NULL,
    rolled_back_by       text NOT NULL,
    reason               text NOT NULL,
    rolled_back_at       timestamptz NOT NULL,
    op_id                text,
    FOREIGN KEY (env, token) REFERENCES relctl.leases (env, token),
    UNIQUE (env, token)
);
CREATE INDEX rollbacks_env ON relctl.rollbacks (env, id);
CREATE INDEX rollbacks_replaced ON relctl.rollbacks (replaced_manifest_id);

-- A promotion request: one per (environment, release, generation), so a
-- retried job keeps its approvals and a newer candidate needs its own.
-- state: open, approved (enough distinct approvals when the last one came)
-- or denied (final).
CREATE TABLE relctl.promotions (
    id           bigserial PRIMARY KEY,
    env          text NOT NULL REFERENCES relctl.environments (name),
    release      text NOT NULL,
    generation   bigint NOT NULL CHECK (generation > 0),
    requested_by text NOT NULL,
    reason       text,
    requested_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    state        text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'approved', 'denied')),
    decided_at   timestamptz,
    UNIQUE (env, release, generation)
);
CREATE INDEX promotions_open ON relctl.promotions (env, id) WHERE state = 'open';

-- Every decision on a request; one person decides once.
CREATE TABLE relctl.promotion_decisions (
    promotion  bigint NOT NULL REFERENCES relctl.promotions (id),
    decided_by text NOT NULL,
    approve    boolean NOT NULL,
    reason     text,
    decided_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    db_user    text NOT NULL DEFAULT session_user,
    PRIMARY KEY (promotion, decided_by)
);

REVOKE ALL ON relctl.rollbacks, relctl.promotions, relctl.promotion_decisions FROM PUBLIC;

-- A queued candidate whose promotion was refused (not accepted upstream, or
-- denied) leaves the queue as 'refused'.
ALTER TABLE relctl.candidates DROP CONSTRAINT candidates_state_check;
ALTER TABLE relctl.candidates
    ADD CONSTRAINT candidates_state_check
    CHECK (state IN ('waiting', 'granted', 'superseded', 'stale', 'timeout', 'left', 'refused'));

-- Every event snapshots the environment's high-water generation too, so that
-- a STALE_GENERATION refusal after a rollback is explained by its row alone.
ALTER TABLE relctl.events ADD COLUMN high_water_generation bigint;
