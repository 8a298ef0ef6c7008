-- What a caller's own session cannot change: the isolation level the
-- protocol decides under, and how long another session can keep an
-- environment (or an operation id) from it.
--
-- Every write function is an API any login can call from inside its own
-- transaction, having SET whatever it likes (lock_timeout = 0,
-- idle_in_transaction_session_timeout = 0, statement_timeout = 0). The
-- bounds below are the protocol's, enforced by the callers that need what a
-- session holds, not by the holder's settings:
-- - a caller waits at most wait_bound_ms() for an environment's row or an
--   operation id's lock, then is told to try again (55P03, nothing applied);
-- - a session that holds one in a transaction idle for longer than
--   idle_hold_bound_ms(), or in a transaction older than hold_bound_ms(), or
--   outside any transaction (a session-level advisory lock on an operation
--   id's key, which relctl never takes), is ended by the first caller that
--   needs it (pg_terminate_backend, run as relctl_owner, which migration
--   0013 makes a member of pg_signal_backend and pg_read_all_stats), and the
--   trail records it as 'session-ended' with the session's login, address,
--   pid and what it held. A superuser's session is never ended: superusers
--   are trusted (they could disable the append-only triggers anyway).
-- hold_bound_ms() is larger than wait_bound_ms(), so a legitimate call that
-- waited its full time and then holds the row for milliseconds is never
-- taken for an overdue holder.

CREATE FUNCTION relctl.wait_bound_ms() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 10000::bigint $$;

CREATE FUNCTION relctl.hold_bound_ms() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 15000::bigint $$;

CREATE FUNCTION relctl.idle_hold_bound_ms() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 5000::bigint $$;

-- The protocol decides under READ COMMITTED: every statement of a write
-- function then reads what is committed when it runs, after the locks it
-- waited for. From an older snapshot (REPEATABLE READ, SERIALIZABLE) a
-- caller would see a revoked lease as live, a rollback upstream as not yet
-- made, a renewed holder as expired, and an empty queue, and nothing but
-- the environment row itself would raise a serialization failure. So every
-- write function refuses any other isolation level first, before it reads
-- or locks anything.
CREATE FUNCTION relctl.require_read_committed() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM relctl.invalid(format(
            'relctl''s write functions run in READ COMMITTED transactions only; this one is %s '
            '(a decision taken from an older snapshot could miss a revoke, a rollback or a renewal)',
            upper(current_setting('transaction_isolation'))));
    END IF;
END
$$;

-- The caller's lock_timeout in milliseconds (0: none).
CREATE FUNCTION relctl.caller_lock_timeout_ms() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT setting::bigint FROM pg_catalog.pg_settings WHERE name = 'lock_timeout'
$$;

-- Ends the sessions that hold p_what (p_env's row when p_key is NULL, else
-- the advisory lock on p_key; with p_watch, p_env's watch key exclusively)
-- past the bounds, each recorded on p_env's
-- trail. Returns the moment the next of the others becomes overdue, NULL
-- when none of them can (gone, or a superuser's).
--
-- A session is judged only by a state that covers the moment it was seen
-- holding: pg_locks is read live, but pg_stat_activity is a snapshot a
-- backend takes on first use and keeps until its transaction ends, so a
-- waiter looping in one transaction would otherwise judge a session by
-- what it was doing seconds ago (idle, say, before it took the row a
-- moment ago, and end it at once). So the snapshot is dropped, the holders
-- are read after v_seen, and their state after that (the snapshot dropped
-- again, since finding the holders may have read it first): an idle
-- session counts as holding outside a transaction only when it has been
-- idle since before v_seen; a transaction counts only when it began before
-- v_seen (it is then the one that was seen holding). Anything else ended
-- its hold meanwhile, and the caller simply asks for the lock again.
CREATE FUNCTION relctl.end_overdue(p_env text, p_key bigint, p_what text, p_watch boolean DEFAULT false)
RETURNS timestamptz
LANGUAGE plpgsql AS $$
DECLARE
    a record;
    v_seen timestamptz;
    v_pids integer[];
    v_now timestamptz;
    v_due timestamptz;
    v_next timestamptz;
BEGIN
    PERFORM pg_catalog.pg_stat_clear_snapshot();
    v_seen := clock_timestamp();
    v_pids := CASE WHEN p_watch THEN relctl.watch_holders(p_env)
                   WHEN p_key IS NULL THEN relctl.environment_holders(p_env)
                   ELSE relctl.advisory_holders(p_key) END;
    IF cardinality(v_pids) = 0 THEN
        RETURN NULL;
    END IF;
    -- Finding the holders may have read pg_stat_activity (the row's locker
    -- by its xid) before it read pg_locks: read their state anew, after.
    PERFORM pg_catalog.pg_stat_clear_snapshot();
    v_now := clock_timestamp();
    FOR a IN SELECT s.pid, s.usename, s.state, s.xact_start, s.state_change, s.backend_start,
                    s.application_name, host(s.client_addr) AS client_addr, coalesce(r.rolsuper, true) AS super
             FROM pg_catalog.pg_stat_activity s
             LEFT JOIN pg_catalog.pg_roles r ON r.oid = s.usesysid
             WHERE s.pid = ANY (v_pids) AND s.pid <> pg_backend_pid() LOOP
        v_due := CASE
            WHEN a.state = 'idle' THEN
                CASE WHEN a.state_change < v_seen THEN v_now END
            WHEN a.xact_start IS NULL OR a.xact_start >= v_seen THEN NULL
            WHEN a.state LIKE 'idle in transaction%' THEN
                least(a.state_change + relctl.idle_hold_bound_ms() * interval '1 ms',
                      a.xact_start + relctl.hold_bound_ms() * interval '1 ms')
            ELSE a.xact_start + relctl.hold_bound_ms() * interval '1 ms' END;
        IF a.super OR v_due IS NULL THEN
            CONTINUE;
        END IF;
        IF v_due > v_now THEN
            v_next := least(v_next, v_due);
            CONTINUE;
        END IF;
        -- Waits (up to 5 s) for the backend to exit, so that what it held is
        -- free when the caller asks for it again.
        PERFORM pg_catalog.pg_terminate_backend(a.pid, 5000);
        PERFORM relctl.record(p_env, 'session-ended', NULL, NULL, NULL, NULL, NULL, NULL, '{}',
                              jsonb_build_object('held', p_what, 'pid', a.pid, 'login', a.usename,
                                                 'client_addr', a.client_addr,
                                                 'application_name', left(a.application_name, 200),
                                                 'state', a.state, 'xact_start', a.xact_start,
                                                 'state_change', a.state_change,
                                                 'held_ms', relctl.ms_between(coalesce(a.xact_start, a.state_change), v_now)));
    END LOOP;
    RETURN v_next;
END
$$;

-- The sessions that may hold the environment's row: the transaction whose
-- id locks it, when the row says so; otherwise (a lock taken in a
-- subtransaction, or shared by several) every session holding a row lock
-- on some environment.
CREATE FUNCTION relctl.environment_holders(p_env text) RETURNS integer[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_xmax xid;
    v_pids integer[];
BEGIN
    SELECT xmax INTO v_xmax FROM relctl.environments WHERE name = p_env;
    SELECT array_agg(pid) INTO v_pids FROM pg_catalog.pg_stat_activity
        WHERE backend_xid = v_xmax AND pid <> pg_backend_pid();
    IF v_pids IS NULL THEN
        SELECT array_agg(DISTINCT pid) INTO v_pids FROM pg_catalog.pg_locks
            WHERE locktype = 'relation' AND granted AND relation = 'relctl.environments'::regclass
              AND mode IN ('RowShareLock', 'RowExclusiveLock') AND pid <> pg_backend_pid();
    END IF;
    RETURN coalesce(v_pids, '{}');
END
$$;

-- The sessions holding an advisory lock on a 64-bit key.
CREATE FUNCTION relctl.advisory_holders(p_key bigint) RETURNS integer[]
LANGUAGE sql STABLE AS $$
    SELECT coalesce(array_agg(pid), '{}') FROM pg_catalog.pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 1
      AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
      AND ((classid::bigint << 32) | objid::bigint) = p_key AND pid <> pg_backend_pid()
$$;

-- The sessions holding p_env's watch key exclusively (relctl.watched() does,
-- for the rest of a writer's transaction).
CREATE FUNCTION relctl.watch_holders(p_env text) RETURNS integer[]
LANGUAGE sql STABLE AS $$
    SELECT coalesce(array_agg(pid), '{}') FROM pg_catalog.pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND mode = 'ExclusiveLock'
      AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
      AND classid::bigint = relctl.watch_lock_class() AND objid::bigint = (hashtext(p_env)::bigint & 4294967295)
      AND pid <> pg_backend_pid()
$$;

-- Waits for an environment's row (p_key NULL) or an operation id's
-- advisory lock (p_key), ending overdue holders on the way; at most
-- wait_bound_ms() (or the caller's shorter lock_timeout), and never longer
-- than until the next holder becomes overdue before looking again. The
-- caller tried without waiting first: this is the slow path.
CREATE FUNCTION relctl.wait_for(p_env text, p_key bigint, p_what text) RETURNS relctl.environments
LANGUAGE plpgsql AS $$
DECLARE
    e relctl.environments;
    v_saved text := current_setting('lock_timeout');
    v_caller bigint := relctl.caller_lock_timeout_ms();
    v_deadline timestamptz := clock_timestamp()
        + CASE WHEN v_caller > 0 THEN least(v_caller, relctl.wait_bound_ms()) ELSE relctl.wait_bound_ms() END
          * interval '1 ms';
    v_next timestamptz;
    v_wait bigint;
BEGIN
    LOOP
        v_next := relctl.end_overdue(p_env, p_key, p_what);
        v_wait := greatest(10, relctl.ms_between(clock_timestamp(),
                                                 least(v_deadline, v_next + interval '50 ms')));
        BEGIN
            PERFORM set_config('lock_timeout', v_wait || 'ms', true);
            IF p_key IS NULL THEN
                SELECT * INTO e FROM relctl.environments WHERE name = p_env FOR UPDATE;
            ELSE
                PERFORM pg_advisory_xact_lock(p_key);
            END IF;
            PERFORM set_config('lock_timeout', v_saved, true);
            RETURN e;
        EXCEPTION WHEN lock_not_available THEN
            IF clock_timestamp() >= v_deadline THEN
                RAISE EXCEPTION USING ERRCODE = '55P03',
                    MESSAGE = format('%s is locked by another session (backend %s); nothing was applied, try again',
                                     p_what, array_to_string(CASE WHEN p_key IS NULL
                                         THEN relctl.environment_holders(p_env)
                                         ELSE relctl.advisory_holders(p_key) END, ', '));
            END IF;
        END;
    END LOOP;
END
$$;
