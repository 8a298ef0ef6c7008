-- Helpers every module uses: input checks, time and id formats.
--
-- The functions in migrations/functions/ are re-applied as a whole by `relctl
-- migrate` whenever one of these files changes: in one transaction, every
-- function of the schema is dropped and these files are run again (in name
-- order, with function bodies checked after all are created), owned by
-- relctl_owner. Helpers are callable only by the owner, that is from inside
-- the protocol's entry points; each entry point is SECURITY DEFINER with a
-- fixed search_path, and its grants stand at the end of its module.
--
-- Custom SQLSTATEs (the client maps them onto relctl's exit codes):
--   RC002  invalid input (exit 2); the transaction is rolled back, nothing is written
--   RC008  operation id reused for a different request (exit 8)
--   RC010  attempt to change an append-only table

CREATE FUNCTION relctl.invalid(p_message text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'RC002', MESSAGE = p_message;
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

-- What a candidate for an environment declares about itself.
CREATE FUNCTION relctl.require_candidate(p_job text, p_release text, p_generation bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM relctl.require_text('job', p_job);
    PERFORM relctl.require_text('release', p_release);
    IF p_generation IS NULL OR p_generation <= 0 THEN
        PERFORM relctl.invalid('generation must be a positive integer');
    END IF;
END
$$;

-- A lease's credentials: both halves must be given. A NULL would make every
-- comparison with the stored id unknown, and an unknown test must never be
-- read as a pass.
CREATE FUNCTION relctl.require_credentials(p_token bigint, p_lease_id uuid) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_token IS NULL OR p_token <= 0 THEN
        PERFORM relctl.invalid('a lease token must be a positive integer');
    END IF;
    IF p_lease_id IS NULL THEN
        PERFORM relctl.invalid('a lease id is required');
    END IF;
END
$$;

-- What a client says about itself (host, pid, job URL) is recorded with every
-- event; it is bounded so that no caller can bloat the audit trail, and its
-- pid must be a number.
CREATE FUNCTION relctl.client_info(p_client jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_pid text := CASE WHEN jsonb_typeof(p_client) = 'object' THEN p_client ->> 'pid' END;
BEGIN
    IF p_client IS NULL OR jsonb_typeof(p_client) <> 'object' THEN
        RETURN '{}'::jsonb;
    END IF;
    IF v_pid IS NOT NULL AND v_pid !~ '^[0-9]{1,9}$' THEN
        PERFORM relctl.invalid('a client pid must be a non-negative integer');
    END IF;
    IF length(p_client ->> 'host') > 255 OR length(p_client ->> 'job_url') > 2000 THEN
        PERFORM relctl.invalid('a client host has at most 255 characters, a job URL at most 2000');
    END IF;
    RETURN jsonb_build_object('host', p_client ->> 'host', 'pid', v_pid::integer,
                              'job_url', p_client ->> 'job_url');
END
$$;

CREATE FUNCTION relctl.lease_id_hex(p_id uuid) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT replace(p_id::text, '-', '') $$;

-- What an operation's stored request keeps of a lease id: its digest. The
-- request is shown by `op show`, and a live lease's id must never be.
CREATE FUNCTION relctl.lease_id_digest(p_id uuid) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT encode(sha256(convert_to(relctl.lease_id_hex(p_id), 'UTF8')), 'hex')
$$;

CREATE FUNCTION relctl.ms_between(p_from timestamptz, p_to timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT floor(extract(epoch FROM (p_to - p_from)) * 1000)::bigint $$;

-- floor, not a cast: a cast rounds, and an event at .0005 s would then fall
-- outside a window that starts at the millisecond it shows.
CREATE FUNCTION relctl.epoch_ms(p_at timestamptz) RETURNS bigint
LANGUAGE sql STABLE AS $$ SELECT floor(extract(epoch FROM p_at) * 1000)::bigint $$;

CREATE FUNCTION relctl.from_epoch_ms(p_ms bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$ SELECT timestamptz 'epoch' + p_ms * interval '1 millisecond' $$;
