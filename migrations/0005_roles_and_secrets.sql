-- The trust boundary: who may do what, and the secrets a retry must prove.
--
-- Roles. Every guarantee of the protocol must hold for anyone with a database
-- login, not only for relctl, so nobody but the NOLOGIN owner has a privilege
-- on a table: clients act only through the protocol's functions, which run as
-- the owner (SECURITY DEFINER, fixed search_path) and record the real session
-- user. Group roles, granted to logins:
--   relctl_job       acquire, renew, release, publish, op show; read environments
--   relctl_reviewer  read environments, audit trail, traces, approvals, the console's queries
--   relctl_manager   both of the above, plus env add/set, revoke, freeze, approvals
--   relctl_owner     owns the schema, its tables and functions; nobody logs in
--                    as it, or is a member of it (the owner could disable the
--                    append-only triggers)
-- Roles are cluster-wide: several relctl databases on one server share them.
-- Creating them is idempotent and safe when two databases migrate at once.
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['relctl_owner', 'relctl_job', 'relctl_reviewer', 'relctl_manager'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL; -- another database's migration created it meanwhile
            END;
        END IF;
    END LOOP;
END
$$;

DO $$
BEGIN
    GRANT relctl_job, relctl_reviewer TO relctl_manager;
EXCEPTION WHEN unique_violation OR duplicate_object THEN
    NULL; -- granted concurrently by another database's migration
END
$$;

ALTER SCHEMA relctl OWNER TO relctl_owner;
REVOKE ALL ON SCHEMA relctl FROM PUBLIC;
GRANT USAGE ON SCHEMA relctl TO relctl_job, relctl_reviewer, relctl_manager;
-- Tables, sequences and functions are handed to relctl_owner by `relctl
-- migrate` after every run (core/src/migrations.cpp), so later migrations
-- need not repeat it. The schema version is no secret: the console and
-- `migrate --status` read it.
GRANT SELECT ON relctl.schema_migrations TO relctl_job, relctl_reviewer, relctl_manager;

-- An op id is not a credential: it is printed in logs and in the audit trail.
-- A retry proves it is the request that made an acquire by presenting that
-- request's secret, of which only the SHA-256 is kept.
ALTER TABLE relctl.operations ADD COLUMN secret_sha256 bytea;
ALTER TABLE relctl.candidates ADD COLUMN secret_sha256 bytea;

-- A waiting candidate's liveness lock is keyed by a random number, not by its
-- id: advisory locks are open to every login, and locks on predictable keys
-- could be taken in advance to block every later waiter.
ALTER TABLE relctl.candidates
    ADD COLUMN lock_key integer NOT NULL
        DEFAULT (floor(random() * 2147483647))::integer;

-- Sessions of people and scripts (psql included) get bounds that no one has
-- to remember: a transaction left open after a protocol call would keep the
-- environment's row locked for every job. Role settings are not inherited by
-- members in PostgreSQL, so they are set on the database. relctl's own
-- sessions set them as well (and keep TCP keepalives).
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET idle_in_transaction_session_timeout = %L',
                   current_database(), '15s');
    EXECUTE format('ALTER DATABASE %I SET lock_timeout = %L', current_database(), '10s');
END
$$;
