-- The trust boundary, second pass: what the protocol needs to hold against a
-- login that combines functions, keeps its own transaction open, or takes
-- advisory locks by hand.

-- A waiting candidate is alive while the session that queued it is: its
-- backend's pid and start time, which no other login can take over (the
-- candidate's advisory lock key is visible in pg_locks, and any login can
-- take a lock its waiter no longer holds). NULL for candidates queued before
-- this migration: their lock alone says they are alive, as before.
ALTER TABLE relctl.candidates
    ADD COLUMN backend_pid integer,
    ADD COLUMN backend_start timestamptz,
    ADD COLUMN dropped_by text,
    ADD COLUMN drop_reason text;

-- A release manager may take a candidate out of the queue (relctl.queue_drop).
ALTER TABLE relctl.candidates DROP CONSTRAINT candidates_state_check;
ALTER TABLE relctl.candidates ADD CONSTRAINT candidates_state_check
    CHECK (state IN ('waiting', 'granted', 'superseded', 'stale', 'timeout', 'left', 'refused', 'dropped'));

-- The caps on waiting candidates are counted per login.
CREATE INDEX candidates_waiting_login ON relctl.candidates (db_user) WHERE state = 'waiting';

-- Only the owner acts on other sessions, and only inside the protocol's
-- functions: it reads their transaction's start (pg_read_all_stats) to find a
-- session that holds an environment's row, or an operation id's lock, longer
-- than the protocol allows, and ends it (pg_signal_backend; never a
-- superuser's session). Without both, the bound on how long a session can
-- hold an environment does not hold, so the migration refuses to go on.
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['pg_read_all_stats', 'pg_signal_backend'] LOOP
        IF NOT pg_catalog.pg_has_role('relctl_owner', r, 'MEMBER') THEN
            BEGIN
                EXECUTE format('GRANT %I TO relctl_owner', r);
            EXCEPTION
                WHEN unique_violation OR duplicate_object THEN
                    NULL; -- granted concurrently by another database's migration
                WHEN insufficient_privilege THEN
                    RAISE EXCEPTION USING ERRCODE = '42501',
                        MESSAGE = format('relctl migrate must grant %s to relctl_owner: run it as a superuser '
                                         'or a login with CREATEROLE', r),
                        HINT = 'or grant it once by hand: GRANT pg_read_all_stats, pg_signal_backend TO relctl_owner';
            END;
        END IF;
    END LOOP;
END
$$;
