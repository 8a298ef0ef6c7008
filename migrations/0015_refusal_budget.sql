-- The trail's growth is bounded per login (relctl.record, functions/audit.sql):
-- a login's recent refusals are counted by this index (only refusals, so it
-- stays a fraction of the trail), and what a flooding login was refused
-- beyond its budget is counted here, to be recorded as one event.
CREATE INDEX events_refusals_login ON relctl.events (db_user, at) WHERE outcome = 'rejected';

CREATE TABLE relctl.unrecorded_refusals (
    db_user   text PRIMARY KEY,
    first_at  timestamptz NOT NULL,
    last_at   timestamptz NOT NULL,
    refusals  bigint NOT NULL,
    -- {"ENV": {"REASON": n}}; "" for calls that named no environment.
    counts    jsonb NOT NULL
);
REVOKE ALL ON relctl.unrecorded_refusals FROM PUBLIC;
