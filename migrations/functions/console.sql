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

-- One row per environment, ordered by name. One clock reading decides which
-- lease is live and is returned on every row as server_now, so the
-- console's countdowns agree with what it was shown. p_names: only these
-- environments (NULL: every one), which is how a console applies a live
-- event: it reads again only the environments the event touched, so its
-- cost does not grow with the organisation. A name that is not an
-- environment (any more) is simply absent from the answer.
--
-- Rows, not one JSON document: at 10,000 environments a document was 6 MB
-- that took the server about 650 ms to build and the console about a second
-- to receive and parse; these rows take the server about 110 ms. Only the
-- two nested lists are JSON, and they are '[]' on most rows. Times are epoch
-- milliseconds.
--
-- attention is relctl.environment_attention's answer: on a read of every
-- environment through relctl.attention_now (its set-based reading of the
-- environments that need a person: about 600 of 10,000 in the benchmark's
-- organisation), on a read of named ones environment_attention itself for
-- each, so that a live event does not pay for finding those of the whole
-- organisation.
CREATE FUNCTION relctl.console_environments(p_names text[] DEFAULT NULL)
RETURNS TABLE (
    name text, "group" text, policy text, supersede text, serialization text, promote_from text,
    current_release text, current_generation bigint, published_by text, published_at bigint,
    holder_job text, holder_release text, holder_token bigint, holder_generation bigint,
    holder_acquired_at bigint, holder_host text, lease_expires_at bigint,
    pending_supersessions bigint, pending_promotions bigint,
    frozen boolean, frozen_by text, frozen_reason text, frozen_at bigint,
    queue json, attention jsonb, server_now bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET jit = off AS $$
#variable_conflict use_column
DECLARE
    -- A variable, not a column of the query: the attention's tests against
    -- it are then each one hashed set, not a scan per environment.
    v_now timestamptz := clock_timestamp();
    -- Every environment's read: the reasons of those that need a person, by
    -- name (relctl.attention_now). Read before the query rather than joined
    -- in it, so that a live event's read of a few names does not plan and
    -- start that reading too (it tripled the cost of such a read).
    v_attention jsonb;
BEGIN
    IF p_names IS NULL THEN
        SELECT coalesce(jsonb_object_agg(t.name, t.attention), '{}') INTO v_attention
        FROM relctl.attention_now(v_now) t;
    END IF;
    RETURN QUERY
    SELECT
        e.name, relctl.env_group(e), e.policy, e.supersede, e.serialization, e.promote_from,
        m.release, m.generation, m.job, relctl.epoch_ms(m.published_at),
        l.job, l.release, l.token, l.generation, relctl.epoch_ms(l.acquired_at), l.host,
        relctl.epoch_ms(l.expires_at),
        coalesce(ps.n, 0), coalesce(pp.n, 0),
        e.frozen_at IS NOT NULL, e.frozen_by, e.frozen_reason, relctl.epoch_ms(e.frozen_at),
        -- The waiting candidates in the order the queue serves them: after
        -- refresh_queue every policy serves the lowest waiting generation
        -- first (under 'newest' the lower ones were superseded, or wait for
        -- an approval that would supersede them; see relctl.queue_head). A
        -- waiter whose session is gone is not shown, even before the next
        -- write on the environment marks it as having left. 'skipped_by'
        -- names the pending or approved supersession request that would skip
        -- it. Read only where someone waits (the CASE does not run the
        -- subquery elsewhere).
        CASE WHEN e.name IN (SELECT w.env FROM relctl.candidates w WHERE w.state = 'waiting') THEN
            coalesce((
                SELECT json_agg(json_build_object(
                           'candidate', c.id, 'position', c.position, 'job', c.job, 'release', c.release,
                           'generation', c.generation, 'queued_at', relctl.epoch_ms(c.queued_at),
                           'host', c.host, 'job_url', c.job_url,
                           'skipped_by', (SELECT s.id FROM relctl.supersessions s
                                          WHERE s.env = e.name AND s.state IN ('pending', 'approved')
                                            AND c.id = ANY (s.skipped) ORDER BY s.id DESC LIMIT 1),
                           'wins', (SELECT s.id FROM relctl.supersessions s
                                    WHERE s.env = e.name AND s.state IN ('pending', 'approved')
                                      AND s.winner = c.id
                                    ORDER BY s.id DESC LIMIT 1))
                           ORDER BY c.position)
                FROM (SELECT x.*, row_number() OVER (ORDER BY x.generation, x.id) AS position
                      FROM relctl.live_candidates(e.name) x) c), '[]')
        ELSE '[]' END,
        -- Some named ones (a live event's): the definition,
        -- environment_attention, for each.
        CASE WHEN p_names IS NOT NULL THEN relctl.environment_attention(e, v_now)
             ELSE coalesce(v_attention -> e.name, '[]') END,
        relctl.epoch_ms(v_now)
    FROM relctl.environments e
    LEFT JOIN relctl.manifests m ON m.id = e.current_manifest_id
    LEFT JOIN relctl.leases l ON l.env = e.name AND l.token = e.last_token
                             AND l.ended_at IS NULL AND l.expires_at > v_now
    LEFT JOIN (SELECT s.env, count(*) AS n FROM relctl.supersessions s WHERE s.state = 'pending'
               GROUP BY s.env) ps ON ps.env = e.name
    LEFT JOIN (SELECT p.env, count(*) AS n FROM relctl.promotions p WHERE p.state = 'open'
               GROUP BY p.env) pp ON pp.env = e.name
    -- In no particular order: the console sorts names naturally (svc2
    -- before svc10) itself, so a sort here by the database's collation would
    -- be thrown away, and at 10,000 environments it cost a quarter of the
    -- read.
    WHERE p_names IS NULL OR e.name = ANY (p_names);
END
$$;

GRANT EXECUTE ON FUNCTION relctl.console_environments TO relctl_reviewer;
