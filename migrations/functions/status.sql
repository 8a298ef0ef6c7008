-- What became of an operation or a job, read from the database alone, so that
-- nobody retries uncertain work blind. One state model for both:
--
--   unknown            the database never saw it: a retry is safe
--   queued             an acquire waits in its environment's queue
--   rejected           refused: the reason, the server's message, the refusal's event
--   accepted-running   an acquire's lease is live and nothing was published under it
--   completed          published (by the publish, or under the acquire's lease): what,
--                      when, and whether it is still current or superseded since, by whom
--   ended-unpublished  an acquire's lease ended (released, expired, revoked) without a publish
--   cancelled          relctl run was cancelled under the lease and published nothing: what
--                      it stopped, and that external work the command started may go on
--
-- Other recorded operations (renew, release, rollback, ...) are completed with
-- their stored outcome. Each answer says it in a sentence ('summary') and
-- names the next step ('next'). Nothing here writes, and no lease id leaves.

-- How the state reaches a caller: 'state', 'summary' and 'next' beside
-- what identifies the operation or job (p_head), the rest as 'evidence'.
CREATE FUNCTION relctl.state_answer(p_head jsonb, p_state jsonb) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT p_head || jsonb_build_object(
        'state', p_state ->> 'state', 'summary', p_state ->> 'summary', 'next', p_state ->> 'next',
        'evidence', p_state - 'state' - 'summary' - 'next')
$$;

-- A publish as it stands now: current, or superseded by what is.
CREATE FUNCTION relctl.manifest_state(m relctl.manifests) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'state', 'completed', 'env', m.env, 'job', m.job, 'release', m.release, 'generation', m.generation,
        'token', m.token, 'published_at', m.published_at, 'current', cur.id = m.id,
        'superseded_by', CASE WHEN cur.id IS DISTINCT FROM m.id AND cur.id IS NOT NULL THEN jsonb_build_object(
            'job', cur.job, 'release', cur.release, 'generation', cur.generation,
            'published_at', cur.published_at) END,
        'summary', CASE WHEN cur.id = m.id
                        THEN format('completed: %s (generation %s) was published on %s by %s at %s and is still current',
                                    m.release, m.generation, m.env, m.job, m.published_at)
                        ELSE format('completed: %s (generation %s) was published on %s by %s at %s; %s is current since',
                                    m.release, m.generation, m.env, m.job, m.published_at,
                                    coalesce(format('%s (generation %s, by %s)', cur.release, cur.generation, cur.job),
                                             'nothing')) END,
        'next', 'nothing to retry: the publish took effect')
    FROM relctl.environments e
    LEFT JOIN relctl.manifests cur ON cur.id = e.current_manifest_id
    WHERE e.name = m.env
$$;

-- A stop report (relctl.stop_report) in words: "relctl run stopped the
-- command (process group 4242, SIGTERM, exit 143)".
CREATE FUNCTION relctl.stopped_words(p_stopped jsonb) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN (p_stopped ->> 'command_started')::boolean IS FALSE
                THEN 'relctl run stopped before starting the command'
                ELSE 'relctl run stopped the command (' || concat_ws(', ',
                         'process group ' || (p_stopped ->> 'process_group'),
                         p_stopped ->> 'killed_by',
                         'exit ' || (p_stopped ->> 'exit_code'),
                         CASE WHEN (p_stopped ->> 'escalated')::boolean THEN 'SIGKILL after the grace period' END)
                     || ')' END
$$;

-- A lease as it stands now: published under, live, or ended without a publish.
CREATE FUNCTION relctl.lease_state(l relctl.leases, p_now timestamptz) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    m relctl.manifests;
    v_lease jsonb := jsonb_build_object('env', l.env, 'token', l.token, 'job', l.job, 'release', l.release,
                                        'generation', l.generation, 'acquired_at', l.acquired_at);
    v_ending text;
    v_stop jsonb;
    v_stop_at timestamptz;
BEGIN
    SELECT * INTO m FROM relctl.manifests WHERE env = l.env AND token = l.token;
    IF m.id IS NOT NULL THEN
        RETURN relctl.manifest_state(m) || jsonb_build_object('lease', v_lease);
    END IF;
    IF l.ended_at IS NULL AND l.expires_at > p_now THEN
        RETURN v_lease || jsonb_build_object(
            'state', 'accepted-running', 'expires_at', l.expires_at,
            'expires_in_ms', relctl.ms_between(p_now, l.expires_at),
            'summary', format('accepted, still running: %s holds %s with fencing token %s (%s, generation %s), '
                              'acquired at %s, expiring in %s; nothing published yet',
                              l.job, l.env, l.token, l.release, l.generation, l.acquired_at,
                              relctl.format_ms(relctl.ms_between(p_now, l.expires_at))),
            'next', 'do not start the work again: the holder is still running; wait for it, or revoke the lease');
    END IF;
    v_ending := coalesce(l.end_reason, 'expired');
    -- What relctl run stopped when it was cancelled or lost the lease.
    SELECT v.detail, v.at INTO v_stop, v_stop_at FROM relctl.events v
        WHERE v.job = l.job AND v.env = l.env AND v.token = l.token AND v.operation = 'release'
          AND v.detail ? 'stopped'
        ORDER BY v.id DESC LIMIT 1;
    IF v_stop -> 'stopped' ->> 'cause' = 'cancelled' THEN
        RETURN v_lease || jsonb_strip_nulls(jsonb_build_object(
            'state', 'cancelled', 'ending', v_ending, 'ended_at', coalesce(l.ended_at, l.expires_at),
            'cancelled_at', v_stop_at, 'stopped', v_stop -> 'stopped', 'caveat', v_stop ->> 'caveat',
            'summary', format('cancelled: the run of %s on %s (token %s) was cancelled%s at %s and published nothing; %s',
                              l.job, l.env, l.token,
                              coalesce(' by ' || (v_stop -> 'stopped' ->> 'signal'), ''), v_stop_at,
                              relctl.stopped_words(v_stop -> 'stopped')),
            'next', 'check the deploy target for work the command started (' || (v_stop ->> 'caveat') ||
                    '); then a new run (a new op id) may deploy'));
    END IF;
    RETURN v_lease || jsonb_strip_nulls(jsonb_build_object(
        'state', 'ended-unpublished', 'ending', v_ending, 'ended_at', coalesce(l.ended_at, l.expires_at),
        'ended_by', l.ended_by, 'note', l.end_note,
        'stopped', v_stop -> 'stopped', 'caveat', v_stop ->> 'caveat',
        'summary', format('ended without a publish: the lease of %s on %s (token %s) was %s at %s%s%s',
                          l.job, l.env, l.token, v_ending, coalesce(l.ended_at, l.expires_at),
                          CASE WHEN l.ended_by IS NOT NULL THEN format(' by %s (%s)', l.ended_by, l.end_note)
                               ELSE '' END,
                          CASE WHEN v_stop IS NOT NULL THEN '; ' || relctl.stopped_words(v_stop -> 'stopped')
                               ELSE '' END),
        'next', CASE WHEN v_stop IS NOT NULL
                     THEN 'nothing was published under it; check the deploy target for work the command started ('
                          || (v_stop ->> 'caveat') || '); then a new run (a new op id) may deploy'
                     ELSE 'nothing was published under it: a new run (a new op id) may deploy; external work it '
                          'started may still have to be checked' END));
END
$$;

CREATE FUNCTION relctl.refused_state(p_op_id text, p_outcome jsonb) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'state', 'rejected', 'reason', p_outcome ->> 'reason', 'env', p_outcome ->> 'env',
        'job', p_outcome ->> 'job', 'message', p_outcome ->> 'message',
        'event', (SELECT max(v.id) FROM relctl.events v
                  WHERE v.op_id = p_op_id AND v.reason = p_outcome ->> 'reason'),
        'summary', format('rejected: %s', coalesce(p_outcome ->> 'message', p_outcome ->> 'reason')),
        'next', 'a retry with the same op id gets the same refusal; relctl trace JOB says what decided it'))
$$;

CREATE FUNCTION relctl.queued_state(c relctl.candidates) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'state', 'queued', 'env', c.env, 'job', c.job, 'release', c.release, 'generation', c.generation,
        'queued_at', c.queued_at, 'waiting', relctl.candidate_alive(c),
        'summary', format('queued: %s (%s, generation %s) waits for %s since %s%s', c.job, c.release,
                          c.generation, c.env, c.queued_at,
                          CASE WHEN relctl.candidate_alive(c) THEN '' ELSE ', but its waiter is gone' END),
        'next', CASE WHEN relctl.candidate_alive(c) THEN 'its waiter is still connected: do not start another'
                     ELSE 'its waiter is gone: a retry with the same op id queues it again' END)
$$;

-- A candidate that left the queue without a grant or a refusal: its waiter
-- went away (a cancelled or killed job) or its --wait ran out.
CREATE FUNCTION relctl.left_queue_state(c relctl.candidates) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'state', 'ended-unpublished', 'env', c.env, 'job', c.job, 'release', c.release,
        'generation', c.generation, 'queued_at', c.queued_at, 'ended_at', c.ended_at,
        'ending', CASE c.state WHEN 'timeout' THEN 'wait-ran-out' ELSE 'left-queue' END,
        'summary', format('ended without a lease: %s (%s, generation %s) waited for %s from %s and %s at %s',
                          c.job, c.release, c.generation, c.env, c.queued_at,
                          CASE c.state WHEN 'timeout' THEN 'its --wait ran out'
                                       ELSE 'left the queue (its waiter was gone)' END, c.ended_at),
        'next', 'it never held the environment and published nothing: a retry with the same op id queues it again')
$$;

-- Caller: relctl.op_show, relctl.op_state (which check the op id).
CREATE FUNCTION relctl.operation_state(p_op_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    o relctl.operations;
    c relctl.candidates;
    l relctl.leases;
    m relctl.manifests;
    v_state jsonb;
BEGIN
    SELECT * INTO o FROM relctl.operations WHERE op_id = p_op_id;
    IF o.op_id IS NULL THEN
        SELECT * INTO c FROM relctl.candidates WHERE op_id = p_op_id ORDER BY id DESC LIMIT 1;
        v_state := CASE WHEN c.state = 'waiting' THEN relctl.queued_state(c)
                        WHEN c.state IN ('left', 'timeout') THEN relctl.left_queue_state(c)
                        ELSE jsonb_build_object(
                            'state', 'unknown',
                            'summary', format('unknown: the database has no record of op id %s', p_op_id),
                            'next', 'the operation never reached the database: a retry with the same op id is safe')
                   END;
    ELSIF o.outcome ->> 'status' = 'refused' THEN
        v_state := relctl.refused_state(p_op_id, o.outcome);
    ELSIF o.operation = 'acquire' THEN
        SELECT * INTO l FROM relctl.leases
            WHERE env = o.outcome ->> 'env' AND token = (o.outcome ->> 'token')::bigint;
        v_state := relctl.lease_state(l, clock_timestamp());
    ELSIF o.operation = 'publish' THEN
        SELECT * INTO m FROM relctl.manifests
            WHERE env = o.outcome ->> 'env' AND generation = (o.outcome ->> 'generation')::bigint;
        v_state := relctl.manifest_state(m);
    END IF;
    RETURN jsonb_build_object('op_id', p_op_id, 'operation', o.operation)
           || coalesce(v_state, jsonb_build_object(
                  'state', 'completed',
                  'summary', format('completed: %s was recorded at %s', o.operation, o.recorded_at),
                  'next', 'nothing to retry: it took effect'));
END
$$;

-- A job's state: its newest candidate still waiting, else its newest refusal
-- if it came after its newest lease and was not about that lease, else that
-- lease; unknown when the database never saw the job. A refused renew or
-- publish of the lease itself does not hide what became of the lease: a
-- late renew after a completed publish leaves the job completed.
CREATE FUNCTION relctl.job_state(p_job text) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    c relctl.candidates;
    l relctl.leases;
    v relctl.events;
BEGIN
    PERFORM relctl.require_text('job', p_job);
    SELECT * INTO c FROM relctl.candidates WHERE job = p_job AND state = 'waiting' ORDER BY id DESC LIMIT 1;
    IF c.id IS NOT NULL THEN
        RETURN relctl.state_answer(jsonb_build_object('job', p_job, 'op_id', c.op_id), relctl.queued_state(c));
    END IF;
    SELECT * INTO l FROM relctl.leases WHERE job = p_job ORDER BY acquired_at DESC, token DESC LIMIT 1;
    SELECT * INTO v FROM relctl.events WHERE job = p_job AND outcome = 'rejected' ORDER BY id DESC LIMIT 1;
    IF v.id IS NOT NULL AND (l.token IS NULL OR (v.at > l.acquired_at AND v.token IS DISTINCT FROM l.token)) THEN
        RETURN relctl.state_answer(jsonb_strip_nulls(jsonb_build_object('job', p_job, 'op_id', v.op_id)),
            jsonb_build_object(
                'state', 'rejected', 'operation', v.operation, 'reason', v.reason, 'env', v.env, 'event', v.id,
                'at', v.at,
                'summary', format('rejected: %s on %s was refused %s at %s', v.operation, v.env, v.reason, v.at),
                'next', 'a retry with the same op id gets the same refusal; relctl trace JOB says what decided it'));
    END IF;
    SELECT * INTO c FROM relctl.candidates WHERE job = p_job AND state IN ('left', 'timeout')
        ORDER BY id DESC LIMIT 1;
    IF c.id IS NOT NULL AND (l.token IS NULL OR c.queued_at > l.acquired_at)
       AND (v.id IS NULL OR v.at < c.queued_at) THEN
        RETURN relctl.state_answer(jsonb_strip_nulls(jsonb_build_object('job', p_job, 'op_id', c.op_id)),
                                   relctl.left_queue_state(c));
    END IF;
    IF l.token IS NOT NULL THEN
        RETURN relctl.state_answer(jsonb_strip_nulls(jsonb_build_object('job', p_job, 'op_id', l.op_id)),
                                   relctl.lease_state(l, clock_timestamp()));
    END IF;
    RETURN relctl.state_answer(jsonb_build_object('job', p_job), jsonb_build_object(
        'state', 'unknown',
        'summary', format('unknown: the database has no lease, candidate or refusal of job %s', p_job),
        'next', 'the job never reached the database: running it is safe'));
END
$$;

CREATE FUNCTION relctl.op_state(p_op_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
BEGIN
    PERFORM relctl.require_text('an op id', p_op_id);
    RETURN relctl.state_answer(jsonb_build_object('op_id', p_op_id),
                               relctl.operation_state(p_op_id) - 'op_id');
END
$$;

GRANT EXECUTE ON FUNCTION relctl.op_state, relctl.job_state TO relctl_job, relctl_reviewer;
