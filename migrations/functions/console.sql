-- The release console's read queries: each is one function returning one
-- JSON value, so the console reads everything in one round trip and no SQL
-- text lives in the UI. Times leave the server as epoch milliseconds, so the
-- client never parses a timestamp. Nothing here writes, and nothing returns a
-- lease id: they are the reviewer's window.
--
-- The bulky answers (audit pages, the timeline) are built as json, not jsonb:
-- they are only sent, never stored or queried, and json_build_object is about
-- four times cheaper per row than jsonb_build_object (a 500-event page: ~10 ms
-- instead of ~40 ms of server time). The client parses the text either way.
--
-- This module holds what the console's queries share (an event and a lease
-- as JSON) and the environments overview. The audit browser and its export
-- (relctl.console_audit and its helpers) are in console_audit.sql, the
-- timeline in console_timeline.sql, the trace of one refusal in
-- console_trace.sql; the numbered migrations written before that split (0003,
-- 0004, 0009, 0010) still name this file for them, as their text is fixed.

CREATE FUNCTION relctl.console_event_json(v relctl.events) RETURNS json
LANGUAGE sql STABLE AS $$
    SELECT json_build_object(
        'id', v.id, 'at', relctl.epoch_ms(v.at), 'env', v.env, 'operation', v.operation,
        'outcome', v.outcome, 'reason', v.reason, 'job', v.job, 'release', v.release,
        'generation', v.generation, 'token', v.token, 'current_token', v.current_token,
        'current_generation', v.current_generation, 'current_release', v.current_release,
        'op_id', v.op_id, 'host', v.host, 'pid', v.pid, 'job_url', v.job_url, 'actor', v.actor,
        'db_user', v.db_user, 'client_addr', host(v.client_addr), 'detail', v.detail)
$$;

-- A lease as a span on the timeline. A lease that was neither released nor
-- revoked ended when it expired (or, if it has not yet, it is live).
CREATE FUNCTION relctl.console_lease_json(l relctl.leases, p_now timestamptz) RETURNS json
LANGUAGE sql STABLE AS $$
    SELECT json_build_object(
        'env', l.env, 'token', l.token, 'job', l.job, 'release', l.release, 'generation', l.generation,
        'acquired_at', relctl.epoch_ms(l.acquired_at),
        'ends_at', relctl.epoch_ms(coalesce(l.ended_at, l.expires_at)),
        'ending', CASE WHEN l.end_reason IS NOT NULL THEN l.end_reason
                       WHEN l.expires_at <= p_now THEN 'expired'
                       ELSE 'live' END)
$$;

-- ---------------------------------------------------------------------------
-- Environments overview
-- ---------------------------------------------------------------------------

-- One clock reading decides which lease is live and is returned as
-- server_now, so the console's countdowns agree with what it was shown.
-- p_names: only these environments (NULL: every one), which is how a console
-- applies a live event: it reads again only the environments the event
-- touched, so its cost does not grow with the organisation. A name that is
-- not an environment (any more) is simply absent from the answer.
--
-- json, not jsonb, for the reason given above: 10,000 environments are about
-- 5 MB of it, built once and sent.
CREATE FUNCTION relctl.console_environments(p_names text[] DEFAULT NULL) RETURNS json
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    SELECT json_build_object(
        'server_now', relctl.epoch_ms(n.now),
        'environments', coalesce(json_agg(json_build_object(
            'name', e.name, 'group', relctl.env_group(e), 'policy', e.policy, 'supersede', e.supersede,
            'serialization', e.serialization, 'promote_from', e.promote_from,
            'current_release', m.release, 'current_generation', m.generation,
            'published_by', m.job, 'published_at', relctl.epoch_ms(m.published_at),
            'holder_job', l.job, 'holder_release', l.release, 'holder_token', l.token,
            'holder_generation', l.generation, 'holder_acquired_at', relctl.epoch_ms(l.acquired_at),
            'holder_host', l.host,
            'lease_expires_at', relctl.epoch_ms(l.expires_at),
            'queue_length', coalesce(json_array_length(q.queue), 0), 'queue', coalesce(q.queue, '[]'),
            'pending_supersessions', (SELECT count(*) FROM relctl.supersessions s
                                      WHERE s.env = e.name AND s.state = 'pending'),
            'pending_promotions', (SELECT count(*) FROM relctl.promotions p
                                   WHERE p.env = e.name AND p.state = 'open'),
            'frozen', e.frozen_at IS NOT NULL, 'frozen_by', e.frozen_by, 'frozen_reason', e.frozen_reason,
            'frozen_at', relctl.epoch_ms(e.frozen_at),
            'attention', relctl.environment_attention(e, n.now))
            ORDER BY e.name) FILTER (WHERE e.name IS NOT NULL), '[]'))
    FROM (SELECT clock_timestamp() AS now) n
    LEFT JOIN relctl.environments e ON p_names IS NULL OR e.name = ANY (p_names)
    LEFT JOIN relctl.manifests m ON m.id = e.current_manifest_id
    LEFT JOIN relctl.leases l ON l.env = e.name AND l.token = e.last_token
                             AND l.ended_at IS NULL AND l.expires_at > n.now
    -- The waiting candidates in the order the queue serves them: after
    -- refresh_queue every policy serves the lowest waiting generation first
    -- (under 'newest' the lower ones were superseded, or wait for an
    -- approval that would supersede them; see relctl.queue_head). A waiter
    -- whose session is gone is not shown, even before the next write on the
    -- environment marks it as having left. 'skipped_by' names the pending or
    -- approved supersession request that would skip it.
    LEFT JOIN LATERAL (
        SELECT json_agg(json_build_object(
                   'candidate', c.id, 'position', c.position, 'job', c.job, 'release', c.release,
                   'generation', c.generation, 'queued_at', relctl.epoch_ms(c.queued_at),
                   'host', c.host, 'job_url', c.job_url,
                   'skipped_by', (SELECT s.id FROM relctl.supersessions s
                                  WHERE s.env = e.name AND s.state IN ('pending', 'approved')
                                    AND c.id = ANY (s.skipped) ORDER BY s.id DESC LIMIT 1),
                   'wins', (SELECT s.id FROM relctl.supersessions s
                            WHERE s.env = e.name AND s.state IN ('pending', 'approved') AND s.winner = c.id
                            ORDER BY s.id DESC LIMIT 1))
                   ORDER BY c.position) AS queue
        FROM (SELECT x.*, row_number() OVER (ORDER BY x.generation, x.id) AS position
              FROM relctl.live_candidates(e.name) x
              WHERE EXISTS (SELECT 1 FROM relctl.candidates w WHERE w.env = e.name AND w.state = 'waiting')) c
    ) q ON e.name IS NOT NULL
    GROUP BY n.now
$$;

GRANT EXECUTE ON FUNCTION relctl.console_environments TO relctl_reviewer;
