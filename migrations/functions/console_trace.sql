-- The release console's trace of one refusal: why an event was rejected, from
-- the leases, the manifest and the gate's record as they were at that moment.
-- The event and its leases have the JSON shapes console.sql gives them.

-- The refused job's own lease, the lease that beat it (the environment's
-- newest token at that moment, when it was not the job's own) and the
-- manifest current at that moment; JSON null for an unknown id or an accepted
-- event, so the console can tell "nothing to trace" from an error.
--
-- A promotion gate's refusal (and a refused self-approval) carries what the
-- gate saw in the event's detail: the upstream's answer, the approvals given
-- and required, the denial. It is passed on as 'gate', flattened, with its
-- times as epoch milliseconds like every other time here. Only the refusal's
-- own detail is used, never the request as it stands now: the trace explains
-- the refusal as it happened.
CREATE FUNCTION relctl.console_gate_json(v relctl.events) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN v.reason IN ('NOT_PROMOTED', 'APPROVAL_REQUIRED', 'APPROVAL_DENIED', 'SELF_APPROVAL',
                                  'NOT_APPROVER', 'DUPLICATE_APPROVAL')
    THEN jsonb_build_object(
        'upstream_env', v.detail #>> '{upstream,env}',
        'soak_ms', (v.detail #>> '{upstream,soak_ms}')::bigint,
        'upstream_accepted_at', relctl.epoch_ms((v.detail #>> '{upstream,accepted_at}')::timestamptz),
        'soaked_ms', (v.detail #>> '{upstream,soaked_ms}')::bigint,
        'soak_remaining_ms', (v.detail #>> '{upstream,soak_remaining_ms}')::bigint,
        'upstream_release', v.detail #>> '{upstream,current,release}',
        'upstream_generation', (v.detail #>> '{upstream,current,generation}')::bigint,
        'promotion', (v.detail ->> 'promotion')::bigint,
        -- A gate's refusal lists the votes; a decision's event counts them.
        'approved_by', CASE WHEN jsonb_typeof(v.detail -> 'approvals') = 'array' THEN
            (SELECT coalesce(jsonb_agg(a ->> 'by' ORDER BY ord), '[]')
             FROM jsonb_array_elements(v.detail -> 'approvals') WITH ORDINALITY AS x(a, ord)) END,
        'approvals_required', (v.detail ->> 'approvals_required')::bigint,
        'denied_by', v.detail #>> '{denial,by}',
        'denial_reason', v.detail #>> '{denial,reason}',
        'denied_at', relctl.epoch_ms((v.detail #>> '{denial,at}')::timestamptz),
        'requested_by', v.detail ->> 'requested_by',
        -- The approver rules' refusals: whose login asked, which role admits
        -- deciders, and the decision a login already made.
        'requested_login', v.detail ->> 'requested_login',
        'approver_role', v.detail ->> 'approver_role',
        'decided_by', v.detail ->> 'decided_by',
        'decided_login', v.detail ->> 'decided_login') END
$$;

CREATE FUNCTION relctl.console_trace(p_event bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    SELECT coalesce((
        SELECT jsonb_build_object(
            'event', relctl.console_event_json(v),
            'lease', CASE WHEN own.token IS NULL THEN NULL ELSE relctl.console_lease_json(own, n.now) END,
            'superseded_by', CASE WHEN beat.token IS NULL THEN NULL ELSE
                relctl.console_lease_json(beat, n.now)::jsonb
                || jsonb_build_object('host', beat.host, 'pid', beat.pid, 'job_url', beat.job_url) END,
            'current', CASE WHEN cur.id IS NULL THEN NULL ELSE jsonb_build_object(
                'release', cur.release, 'generation', cur.generation, 'job', cur.job,
                'published_at', relctl.epoch_ms(cur.published_at),
                'published_before_ms', relctl.ms_between(cur.published_at, v.at)) END,
            'gate', relctl.console_gate_json(v),
            -- The cause with its time as epoch milliseconds, like every console time.
            'cause', (SELECT x.c || jsonb_build_object('at', relctl.epoch_ms((x.c ->> 'at')::timestamptz))
                      FROM relctl.refusal_cause(v) AS x(c)))
        FROM (SELECT clock_timestamp() AS now) n
        JOIN relctl.events v ON v.id = p_event AND v.outcome = 'rejected'
        LEFT JOIN relctl.leases own ON own.env = v.env AND own.token = v.token AND own.job = v.job
        LEFT JOIN relctl.leases beat ON beat.env = v.env AND beat.token = v.current_token
                                    AND v.current_token IS DISTINCT FROM v.token
        LEFT JOIN relctl.manifests cur ON cur.env = v.env AND cur.generation = v.current_generation),
        'null'::jsonb)
$$;

GRANT EXECUTE ON FUNCTION relctl.console_trace TO relctl_reviewer;
