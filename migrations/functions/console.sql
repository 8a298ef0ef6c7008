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
CREATE FUNCTION relctl.console_environments() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    SELECT jsonb_build_object(
        'server_now', relctl.epoch_ms(n.now),
        'environments', coalesce(jsonb_agg(jsonb_build_object(
            'name', e.name, 'policy', e.policy, 'supersede', e.supersede,
            'serialization', e.serialization,
            'current_release', m.release, 'current_generation', m.generation,
            'published_by', m.job, 'published_at', relctl.epoch_ms(m.published_at),
            'holder_job', l.job, 'holder_release', l.release, 'holder_token', l.token,
            'holder_generation', l.generation, 'holder_acquired_at', relctl.epoch_ms(l.acquired_at),
            'holder_host', l.host,
            'lease_expires_at', relctl.epoch_ms(l.expires_at),
            'queue_length', coalesce(jsonb_array_length(q.queue), 0), 'queue', coalesce(q.queue, '[]'),
            'pending_supersessions', (SELECT count(*) FROM relctl.supersessions s
                                      WHERE s.env = e.name AND s.state = 'pending'),
            'pending_promotions', (SELECT count(*) FROM relctl.promotions p
                                   WHERE p.env = e.name AND p.state = 'open'),
            'frozen', e.frozen_at IS NOT NULL, 'frozen_by', e.frozen_by, 'frozen_reason', e.frozen_reason,
            'frozen_at', relctl.epoch_ms(e.frozen_at))
            ORDER BY e.name) FILTER (WHERE e.name IS NOT NULL), '[]'))
    FROM (SELECT clock_timestamp() AS now) n
    LEFT JOIN relctl.environments e ON true
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
        SELECT jsonb_agg(jsonb_build_object(
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

-- ---------------------------------------------------------------------------
-- Audit browser
-- ---------------------------------------------------------------------------

-- The audit browser sorts on the server: one page of the filtered trail under
-- a sort column and direction, with keyset pagination on (sort key, id), and
-- "newer than" pages for live updates.
--
-- Sort keys. "time" is the id: ids are taken by the same INSERT that stamps
-- `at` (both defaults), so they follow time to within concurrent inserts, are
-- unique and never NULL, and the primary key and every existing (column, id)
-- index already serve them. Sorting by `at` instead would need (at, id) and
-- (env, at, id)-style indexes to page fast under a filter, for the same order.
-- The other keys are whitelisted (relctl.audit_sort_key) with their type and
-- nullability; anything else is refused, and no text from the client reaches
-- the statement's text (columns are picked from the whitelist, values are
-- parameters).
--
-- NULL order: PostgreSQL's own, NULL is larger than every value (last when
-- ascending, first when descending). It is the order a btree index on
-- (column, id) yields in both scan directions, so each sort reads its page
-- straight off an index.
--
-- Keyset: a page follows the row (key, id) it continues from. A NULL key makes
-- a row comparison unknown, so the non-NULL and the NULL rows are read as two
-- branches, each with an index-friendly predicate and its own LIMIT, and the
-- few rows they return are merged: no OFFSET, and no row is skipped or repeated
-- between pages however deep.
--
-- Indexes. Every index costs every protocol write on this append-only table,
-- forever, so each sort has exactly one (0001, 0003, 0009):
--   time: the primary key; env, job, operation, reason: (column, id), which
--     also serve an environment filter as a filter (a page reads about the
--     page size divided by the environment's share of the trail);
--   release, generation, token, host, actor: (env, column, id) (actor's
--     partial, without the NULLs). Under an environment filter a page is one
--     range of the index, whatever the environment's share or how its values
--     fall. Without one, each environment's range gives its first page's
--     worth and the merge keeps the best (the environments are found by
--     skipping through events_env, one probe each): a page reads about page
--     size x environments rows, from the index, never the whole trail;
--   outcome: accepted and rejected, read as one branch per value in id order:
--     the rejected ones from a partial (env, id) index, the accepted ones (the
--     great majority) from events_env or the primary key with a filter.
-- An index's NULL rows are read with "column IS NULL" and ordered by
-- (column, id), which the planner can match to the index; where the index
-- holds no NULLs (reason, actor) the NULL rows are most rows and are read in
-- id order instead.
--
-- Sorted by env under an environment filter, every row has the same key: the
-- order is the id's, and the page reads the primary key's order of that
-- environment (events_env) after the cursor's id.

-- The sort keys: the column, the type a cursor's key is cast to, whether it
-- can be NULL, whether its index leads with env (pages without an
-- environment filter merge one range per environment), and whether its index
-- holds the NULL rows. NULL for a key that is not a sort key.
CREATE FUNCTION relctl.audit_sort_key(p_sort text,
                                      OUT col text, OUT cast_to text, OUT nullable boolean,
                                      OUT per_env boolean, OUT nulls_indexed boolean)
LANGUAGE sql IMMUTABLE AS $$
    SELECT w.col, w.cast_to, w.nullable, w.per_env, w.nulls_indexed
    FROM (VALUES ('time', 'id', 'bigint', false, false, false),
                 ('env', 'env', 'text', true, false, true),
                 ('operation', 'operation', 'text', false, false, false),
                 ('outcome', 'outcome', 'text', false, true, false),
                 ('reason', 'reason', 'text', true, false, false),
                 ('job', 'job', 'text', true, false, true),
                 ('release', 'release', 'text', true, true, true),
                 ('generation', 'generation', 'bigint', true, true, true),
                 ('token', 'token', 'bigint', true, true, true),
                 ('host', 'host', 'text', true, true, true),
                 ('actor', 'actor', 'text', true, true, false)) AS w(name, col, cast_to, nullable, per_env,
                                                                    nulls_indexed)
    WHERE w.name = p_sort
$$;

-- A sort as the pages and the export accept it: a whitelisted key (time by
-- default) and a direction; anything else is refused (RC002).
CREATE FUNCTION relctl.audit_sort(p_sort text, p_descending boolean,
                                  OUT col text, OUT cast_to text, OUT nullable boolean,
                                  OUT per_env boolean, OUT nulls_indexed boolean)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT * INTO col, cast_to, nullable, per_env, nulls_indexed
        FROM relctl.audit_sort_key(coalesce(p_sort, 'time'));
    IF col IS NULL THEN
        PERFORM relctl.invalid(format('the audit trail cannot be sorted by "%s"', p_sort));
    END IF;
    IF p_descending IS NULL THEN
        PERFORM relctl.invalid('a sort needs a direction');
    END IF;
END
$$;

-- The audit browser's filters as one predicate over relctl.events, for the
-- browser's pages and for the export alike, so both mean the same rows. It
-- refers to the statement's parameters: $1 env, $2 job, $3 operation,
-- $4 reason, $5 from and $6 to (timestamps: relctl.audit_time of the epoch
-- milliseconds given), $7 the free text in lower case, $14 outcome; only the
-- filters given appear. Refuses (RC002) an outcome other than accepted or
-- rejected and a time range that ends before it starts.
--
-- It calls no function of relctl's: the export's view holds this predicate
-- and is read with its reader's rights, which reach no relctl function but
-- the granted ones (a view reads tables as its owner, but calls functions as
-- its reader). So the detail's values are spelled out here rather than in a
-- function: for free-text search, an operator's reason, a gate's upstream,
-- the freeze an unfreeze lifted; keys are left out, or every unfreeze would
-- match "frozen".
CREATE FUNCTION relctl.audit_filter(p_env text, p_job text, p_operation text, p_reason text,
                                    p_from bigint, p_to bigint, p_text text, p_outcome text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_where text[] := ARRAY['true'];
BEGIN
    IF p_from IS NOT NULL AND p_to IS NOT NULL AND p_from > p_to THEN
        PERFORM relctl.invalid('the time range ends before it starts');
    END IF;
    IF p_env IS NOT NULL THEN v_where := array_append(v_where, 'env = $1'); END IF;
    -- The job filter is a case-insensitive substring (a reviewer types part
    -- of a job's name or its pipeline number), like the free text.
    IF nullif(p_job, '') IS NOT NULL THEN
        v_where := array_append(v_where, 'strpos(lower(job), lower($2)) > 0');
    END IF;
    IF p_outcome IS NOT NULL THEN
        IF p_outcome NOT IN ('accepted', 'rejected') THEN
            PERFORM relctl.invalid('outcome must be accepted or rejected');
        END IF;
        v_where := array_append(v_where, 'outcome = $14');
    END IF;
    IF p_operation IS NOT NULL THEN v_where := array_append(v_where, 'operation = $3'); END IF;
    IF p_reason IS NOT NULL THEN v_where := array_append(v_where, 'reason = $4'); END IF;
    IF p_from IS NOT NULL THEN
        v_where := array_append(v_where, 'at >= $5');
    END IF;
    -- "to" names a millisecond; events within it (microseconds later) belong to it.
    IF p_to IS NOT NULL THEN
        v_where := array_append(v_where, '(at < $6 + interval ''1 millisecond'')');
    END IF;
    IF nullif(p_text, '') IS NOT NULL THEN
        -- A plain substring test: nothing the user types acts as a wildcard.
        v_where := array_append(v_where,
            '(strpos(lower(job), $7) > 0 OR strpos(lower(release), $7) > 0 OR strpos(lower(op_id), $7) > 0 '
            'OR strpos(lower(host), $7) > 0 OR strpos(lower(reason), $7) > 0 '
            'OR strpos(lower(actor), $7) > 0 OR strpos(lower(job_url), $7) > 0 '
            'OR strpos(lower(db_user), $7) > 0 '
            'OR strpos(lower(CASE jsonb_typeof(detail) '
            '                WHEN ''object'' THEN (SELECT string_agg(d.value, '' '') FROM jsonb_each_text(detail) d) '
            '                ELSE detail #>> ''{}'' END), $7) > 0)');
    END IF;
    RETURN array_to_string(v_where, ' AND ');
END
$$;

-- A time bound within what a timestamp holds (about 4685 BC .. 287,000 AD, as
-- the timeline clamps), so that no bound a caller sends makes the filter fail
-- with an overflow.
CREATE FUNCTION relctl.audit_bound(p_ms bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT least(greatest(p_ms, -210000000000000), 9000000000000000) $$;

-- A filter's time bound as the filter compares it.
CREATE FUNCTION relctl.audit_time(p_ms bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$ SELECT relctl.from_epoch_ms(relctl.audit_bound(p_ms)) $$;

-- The environments the trail names (not the ones that exist now: a refusal
-- may name one that never did), each found with one probe of events_env.
CREATE FUNCTION relctl.audit_envs() RETURNS text[]
LANGUAGE sql STABLE AS $$
    WITH RECURSIVE envs(env) AS (
        (SELECT v.env FROM relctl.events v WHERE v.env IS NOT NULL ORDER BY v.env LIMIT 1)
        UNION ALL
        SELECT (SELECT v.env FROM relctl.events v WHERE v.env > envs.env ORDER BY v.env LIMIT 1)
        FROM envs WHERE envs.env IS NOT NULL)
    SELECT coalesce(array_agg(envs.env ORDER BY envs.env), '{}') FROM envs WHERE envs.env IS NOT NULL
$$;

CREATE FUNCTION relctl.console_audit(p_env text, p_job text, p_operation text, p_reason text,
                                     p_from bigint, p_to bigint, p_text text,
                                     p_sort text, p_descending boolean,
                                     p_after_key text, p_after_id bigint,
                                     p_newer_than bigint, p_limit integer,
                                     p_outcome text DEFAULT NULL)
RETURNS json
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_filter text;
    v_key record;    -- the sort key, from the whitelist
    v_dir text := CASE WHEN p_descending THEN 'DESC' ELSE 'ASC' END;
    v_cmp text := CASE WHEN p_descending THEN '<' ELSE '>' END;
    v_branches text[] := ARRAY[]::text[];
    v_selects text[] := ARRAY[]::text[];
    v_per_env boolean[] := ARRAY[]::boolean[];
    v_value text;
    v_after text;
    v_page_sql text;
    v_order text;
    v_envs text[];
    v_page json;
BEGIN
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 5000 THEN
        PERFORM relctl.invalid(format('a page holds 1 to 5000 events, not %s', p_limit));
    END IF;
    SELECT * INTO v_key FROM relctl.audit_sort(p_sort, p_descending);
    v_filter := relctl.audit_filter(p_env, p_job, p_operation, p_reason, p_from, p_to, p_text, p_outcome);
    -- Sorted by env, the cursor's key is the env of the event it names, read
    -- here (one probe of the primary key; the trail is append-only, so the
    -- id decides it). A client cannot always send it: an event without an
    -- environment and one named '' both reach it as "" (AuditEvent::env), and
    -- a '' sent as NULL made a page after it start over or skip the rest. A
    -- cursor that names no event keeps the key it came with.
    IF v_key.col = 'env' AND p_after_id IS NOT NULL AND p_newer_than IS NULL THEN
        SELECT v.env INTO v_value FROM relctl.events v WHERE v.id = p_after_id;
        IF FOUND THEN
            p_after_key := v_value;
        END IF;
    END IF;

    IF p_newer_than IS NOT NULL THEN
        -- Live updates: what arrived after the newest event the console has,
        -- oldest first, so a caller that loops page by page catches up
        -- without a gap whatever the burst.
        v_order := 'id ASC';
        v_page_sql := format('SELECT * FROM relctl.events WHERE %s AND id > $12 ORDER BY id ASC LIMIT $13 + 1',
                             v_filter);
    ELSIF v_key.col = 'id' OR (v_key.col = 'env' AND p_env IS NOT NULL) THEN
        v_order := format('id %s', v_dir);
        -- Under the time sort the id is the key. Sorted by env within one
        -- environment, the rows after the cursor (key, id) are: those after
        -- its id when the key is this environment; all or none when it is
        -- another key (NULL included: the largest), as that key comes before
        -- or after this environment in the order.
        v_after := CASE WHEN p_after_id IS NULL THEN ''
                        WHEN v_key.col = 'id' OR p_after_key = p_env THEN format('AND id %s $11', v_cmp)
                        WHEN p_after_key IS NULL THEN CASE WHEN p_descending THEN '' ELSE 'AND false' END
                        WHEN (p_after_key > p_env) = p_descending THEN ''
                        ELSE 'AND false' END;
        v_page_sql := format('SELECT * FROM relctl.events WHERE %s %s ORDER BY id %s LIMIT $13 + 1',
                             v_filter, v_after, v_dir);
    ELSE
        v_order := format('%I %s, id %s', v_key.col, v_dir, v_dir); -- NULLs: last ascending, first descending
        -- Each branch: what it selects, its predicate and order, and whether
        -- it is read once per environment (see below).
        IF v_key.col = 'outcome' THEN
            -- One branch per value, in the sort's order, each in id order:
            -- after the cursor's id within the cursor's value, all of a
            -- value that comes after it, none of one before it. The accepted
            -- rows are most rows: the primary key (or events_env) finds a
            -- page of them in id order with a filter, in one pass.
            FOREACH v_value IN ARRAY CASE WHEN p_descending THEN ARRAY['rejected', 'accepted']
                                          ELSE ARRAY['accepted', 'rejected'] END LOOP
                v_after := CASE WHEN p_after_id IS NULL THEN ''
                                WHEN p_after_key IS NULL THEN CASE WHEN p_descending THEN '' END
                                WHEN p_after_key = v_value THEN format('AND id %s $11', v_cmp)
                                WHEN (v_value > p_after_key) <> p_descending THEN '' END;
                IF v_after IS NOT NULL THEN
                    v_selects := array_append(v_selects, format('id, %L::text AS outcome', v_value));
                    v_branches := array_append(v_branches,
                                               format('outcome = %L %s ORDER BY id %s', v_value, v_after, v_dir));
                    v_per_env := array_append(v_per_env, v_value = 'rejected');
                END IF;
            END LOOP;
        ELSE
            -- The rows with a key, after the cursor. When the cursor's row has a
            -- NULL key: all of them when descending (they follow the NULLs), none
            -- when ascending (they came before).
            IF p_after_id IS NULL OR p_after_key IS NOT NULL OR p_descending THEN
                v_selects := array_append(v_selects, format('id, %I', v_key.col));
                v_branches := array_append(v_branches, format(
                    '%I IS NOT NULL %s ORDER BY %s', v_key.col,
                    CASE WHEN p_after_id IS NULL OR p_after_key IS NULL THEN ''
                         ELSE format('AND (%I, id) %s ($10::%s, $11)', v_key.col, v_cmp, v_key.cast_to) END,
                    v_order));
                v_per_env := array_append(v_per_env, v_key.per_env);
            END IF;
            -- The rows without a key, by id: all of them ascending after a
            -- keyed cursor, none descending after one (they came first).
            IF v_key.nullable AND (p_after_id IS NULL OR p_after_key IS NULL OR NOT p_descending) THEN
                v_selects := array_append(v_selects, format('id, %I', v_key.col));
                v_branches := array_append(v_branches, format(
                    '%I IS NULL %s ORDER BY %s', v_key.col,
                    CASE WHEN p_after_id IS NOT NULL AND p_after_key IS NULL THEN format('AND id %s $11', v_cmp)
                         ELSE '' END,
                    CASE WHEN v_key.nulls_indexed THEN v_order ELSE format('id %s', v_dir) END));
                v_per_env := array_append(v_per_env, v_key.per_env);
            END IF;
        END IF;
        -- Each branch reads at most a page (and one row) of keys and ids,
        -- from the index alone where it can; under an index that leads with
        -- env and no environment filter, once per environment of the trail
        -- and once for the events without one. Only the page's rows are then
        -- read from the table.
        IF p_env IS NULL AND true = ANY (v_per_env) THEN
            v_envs := relctl.audit_envs();
        END IF;
        SELECT coalesce(array_agg(CASE WHEN x.per_env AND p_env IS NULL THEN format(
                   '(SELECT p.* FROM unnest($15::text[]) AS d(env) CROSS JOIN LATERAL ('
                   'SELECT %1$s FROM relctl.events WHERE %2$s AND env = d.env AND %3$s LIMIT $13 + 1) p) '
                   'UNION ALL (SELECT %1$s FROM relctl.events WHERE %2$s AND env IS NULL AND %3$s LIMIT $13 + 1)',
                   x.sel, v_filter, x.branch)
               ELSE format('(SELECT %s FROM relctl.events WHERE %s AND %s LIMIT $13 + 1)', x.sel, v_filter, x.branch)
               END ORDER BY x.n), '{}')
        INTO v_branches
        FROM unnest(v_selects, v_branches, v_per_env) WITH ORDINALITY AS x(sel, branch, per_env, n);
        v_page_sql := CASE WHEN cardinality(v_branches) = 0 THEN 'SELECT * FROM relctl.events WHERE false'
                           ELSE format('SELECT e.* FROM (SELECT b.id FROM (%s) b ORDER BY %s LIMIT $13 + 1) k '
                                       'JOIN relctl.events e ON e.id = k.id',
                                       array_to_string(v_branches, ' UNION ALL '), v_order) END;
    END IF;

    -- The page reads one row more than the limit to tell whether another page
    -- exists. The horizon is the newest id this snapshot sees: events after it
    -- are new to whoever holds this page.
    EXECUTE format('WITH page AS MATERIALIZED (%s) '
                   'SELECT json_build_object('
                   '    ''events'', coalesce((SELECT json_agg(relctl.console_event_json(p) ORDER BY %s) '
                   '                         FROM (SELECT * FROM page ORDER BY %s LIMIT $13) p), ''[]''), '
                   '    ''more'', (SELECT count(*) FROM page) > $13, '
                   '    ''horizon'', coalesce((SELECT max(id) FROM relctl.events), 0))',
                   v_page_sql, v_order, v_order)
        INTO v_page
        USING p_env, p_job, p_operation, p_reason, relctl.audit_time(p_from), relctl.audit_time(p_to),
              lower(p_text), p_sort, p_descending,
              p_after_key, p_after_id, p_newer_than, p_limit, p_outcome, v_envs;
    RETURN v_page;
END
$$;

-- The export: every event the browser's filter matches, in its order, as one
-- statement over one snapshot, for `COPY (SELECT * FROM
-- relctl.console_audit_export(...)) TO STDOUT`. The client reads it where it
-- cannot make the faster view of console_audit_export_view below (a
-- read-only session, a standby); both give the same rows.
-- The columns are the export's fields in their order (auditExportFields()),
-- with client_addr as its text, like the browser's pages. `at` leaves as the
-- timestamptz it is, unlike the pages' epoch milliseconds: the export writes
-- it as ISO text, which the client takes from the timestamp's own output
-- (the transaction sets TimeZone UTC and DateStyle ISO), whereas epoch_ms's
-- numeric arithmetic was a fifth of the server's time per exported row.
--
-- Called in FROM, the function's rows are stored (a tuplestore, spilled to a
-- temporary file past work_mem) before COPY sends the first. A SQL function
-- called in the target list would hand them over one at a time instead, but
-- a SECURITY DEFINER function with SET search_path sets and resets the
-- setting on every call, that is for every row: measured on 1,000,000
-- events, that cost about a second more than storing them, and a larger
-- work_mem did not make storing them cheaper. Nor does a cursor that streams
-- them: this function opening one (OPEN ... FOR EXECUTE, checked with the
-- owner's rights) and returning its name, a client fetching 10,000 rows at a
-- time spent 2.3-3.0 s of CPU on 1,000,000 events where a COPY of this
-- function spends 0.15-0.2 s (libpq stores each fetched field in a result),
-- and the server 2.5-3.4 s against 2.0 s (each row a message of fields), so
-- the export ran at 0.2-0.3 of COPY against this function's 0.5-0.7 on the
-- same busy machine; one text column per row (ROW(...)::text) cut the
-- client's CPU to 0.9 s but raised the server's to 3.0-3.3 s. A SQL function
-- in the target list, even without SET clauses, was slower still, and so was
-- the export read in chunks of 20,000 or 100,000 rows, each stored in memory.
-- A reviewer may call it like console_audit, with any
-- arguments: the sort is whitelisted, the filter checked and the bounds
-- clamped as for a page; a NULL direction is refused. It returns what the
-- caller could read page by page, no more.
CREATE FUNCTION relctl.console_audit_export(p_env text, p_job text, p_operation text, p_reason text,
                                            p_from bigint, p_to bigint, p_text text,
                                            p_sort text, p_descending boolean, p_outcome text DEFAULT NULL)
RETURNS TABLE (id bigint, at timestamptz, env text, operation text, outcome text, reason text, job text,
               release text, generation bigint, token bigint, current_token bigint,
               current_generation bigint, current_release text, op_id text, host text, pid integer,
               job_url text, actor text, db_user text, client_addr text, detail jsonb)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_key record;
    v_dir text := CASE WHEN p_descending THEN 'DESC' ELSE 'ASC' END;
BEGIN
    SELECT * INTO v_key FROM relctl.audit_sort(p_sort, p_descending);
    RETURN QUERY EXECUTE format(
        'SELECT e.id, e.at, e.env, e.operation, e.outcome, e.reason, e.job, e.release, '
        '       e.generation, e.token, e.current_token, e.current_generation, e.current_release, e.op_id, '
        '       e.host, e.pid, e.job_url, e.actor, e.db_user, host(e.client_addr), e.detail '
        'FROM relctl.events e WHERE %s ORDER BY %s',
        relctl.audit_filter(p_env, p_job, p_operation, p_reason, p_from, p_to, p_text, p_outcome),
        CASE WHEN v_key.col = 'id' THEN format('e.id %s', v_dir)
             ELSE format('e.%I %s, e.id %s', v_key.col, v_dir, v_dir) END)
        USING p_env, p_job, p_operation, p_reason, relctl.audit_time(p_from), relctl.audit_time(p_to),
              lower(p_text), NULL::text, NULL::boolean,
              NULL::text, NULL::bigint, NULL::bigint, NULL::integer, p_outcome;
END
$$;

-- The export as the client reads it: the same rows, columns and order as
-- relctl.console_audit_export, as a temporary view that this function makes
-- in the caller's session and the caller reads with `COPY (SELECT * FROM
-- pg_temp.relctl_audit_export) TO STDOUT` in the same transaction, which it
-- then rolls back (core/src/console.cpp). Returns the view's name.
--
-- Why a view: the rows of a function called in FROM are stored before COPY
-- sends the first, which cost 0.3-0.4 s per million events on top of COPY's
-- own 0.9 s, so that no export through such a function reached 0.8 of a
-- COPY of the table (see console_audit_export above). A view is read like
-- the table: the same plan, and nothing stored on either side.
--
-- What it grants is this one view, in the caller's own temporary schema, for
-- the rest of the transaction (or the session, if the caller commits): no
-- standing privilege on relctl.events or on any view of it. The view runs
-- with the owner's rights (it is made under SECURITY DEFINER) and holds the
-- filter the caller could have given console_audit or console_audit_export:
-- the same checks, the sort from the whitelist, the values as literals of
-- their types. SELECT is granted to PUBLIC because the session's role may be
-- any the login can SET ROLE to, and a session's temporary schema is
-- reachable from that session alone (and by superusers). A caller's own
-- object of that name in pg_temp makes the call fail ("must be owner"): it
-- can only stop its own export. Making a view writes the catalogue, so a
-- read-only transaction or a standby refuses it (SQLSTATE 25006); the client
-- then reads console_audit_export instead.
CREATE FUNCTION relctl.console_audit_export_view(p_env text, p_job text, p_operation text, p_reason text,
                                                 p_from bigint, p_to bigint, p_text text,
                                                 p_sort text, p_descending boolean, p_outcome text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
    SET DateStyle = 'ISO, YMD' AS $$
DECLARE
    v_key record;
    v_dir text := CASE WHEN p_descending THEN 'DESC' ELSE 'ASC' END;
    -- The filter refers to the parameters as $n (audit_filter); here they
    -- become the columns p1..p14 of a row of literals joined to the events.
    -- The filter's text is made of relctl's constants only, never of a
    -- caller's value, so rewriting its $n cannot touch what the caller sent.
    v_filter text;
BEGIN
    SELECT * INTO v_key FROM relctl.audit_sort(p_sort, p_descending);
    v_filter := regexp_replace(
        relctl.audit_filter(p_env, p_job, p_operation, p_reason, p_from, p_to, p_text, p_outcome),
        '\$([0-9]+)', 'p.p\1', 'g');
    -- (Checked first: DROP ... IF EXISTS would send the caller a notice
    -- while the session has no temporary schema yet.)
    IF to_regclass('pg_temp.relctl_audit_export') IS NOT NULL THEN
        DROP VIEW pg_temp.relctl_audit_export;
    END IF;
    EXECUTE format(
        'CREATE TEMPORARY VIEW relctl_audit_export AS '
        'SELECT e.id, e.at, e.env, e.operation, e.outcome, e.reason, e.job, e.release, '
        '       e.generation, e.token, e.current_token, e.current_generation, e.current_release, e.op_id, '
        '       e.host, e.pid, e.job_url, e.actor, e.db_user, host(e.client_addr) AS client_addr, e.detail '
        'FROM relctl.events e '
        'CROSS JOIN (SELECT %L::text AS p1, %L::text AS p2, %L::text AS p3, %L::text AS p4, '
        '                   %L::timestamptz AS p5, %L::timestamptz AS p6, %L::text AS p7, %L::text AS p14) p '
        'WHERE %s ORDER BY %s',
        p_env, p_job, p_operation, p_reason, relctl.audit_time(p_from), relctl.audit_time(p_to), lower(p_text),
        p_outcome,
        v_filter,
        CASE WHEN v_key.col = 'id' THEN format('e.id %s', v_dir)
             ELSE format('e.%I %s, e.id %s', v_key.col, v_dir, v_dir) END);
    GRANT SELECT ON pg_temp.relctl_audit_export TO PUBLIC;
    RETURN 'pg_temp.relctl_audit_export';
END
$$;

-- The distinct values of a column for the filter drop-downs, by skipping
-- through its index one value at a time instead of reading every event.
CREATE FUNCTION relctl.console_operations() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    WITH RECURSIVE ops(operation) AS (
        (SELECT operation FROM relctl.events ORDER BY operation LIMIT 1)
        UNION ALL
        SELECT (SELECT v.operation FROM relctl.events v WHERE v.operation > ops.operation
                ORDER BY v.operation LIMIT 1)
        FROM ops WHERE ops.operation IS NOT NULL)
    SELECT coalesce(jsonb_agg(operation ORDER BY operation), '[]') FROM ops WHERE operation IS NOT NULL
$$;

CREATE FUNCTION relctl.console_reasons() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
    WITH RECURSIVE reasons(reason) AS (
        (SELECT reason FROM relctl.events WHERE reason IS NOT NULL ORDER BY reason LIMIT 1)
        UNION ALL
        SELECT (SELECT v.reason FROM relctl.events v WHERE v.reason > reasons.reason
                ORDER BY v.reason LIMIT 1)
        FROM reasons WHERE reasons.reason IS NOT NULL)
    SELECT coalesce(jsonb_agg(reason ORDER BY reason), '[]') FROM reasons WHERE reason IS NOT NULL
$$;

-- ---------------------------------------------------------------------------
-- Timeline
-- ---------------------------------------------------------------------------

-- Leases overlapping [p_from, p_to] and markers within it. The result is
-- capped (the newest 20,000 leases and 50,000 markers are kept) so that a
-- window over years of history cannot exhaust the server's or the console's
-- memory; the console zooms in to see more.
--
-- Freezes overlapping the window are sent as spans, so the console can shade
-- the time an environment refused work. A freeze is the span from a 'freeze'
-- event to the next 'unfreeze' of its environment (freeze and unfreeze record
-- an event only when they change the state, so the two alternate); the one
-- still in force is read from the environment itself, open-ended, since it
-- has no unfreeze yet. A freeze that began before the window still covers
-- its start: for each environment, the last freeze before the window is a
-- candidate too, so a week-long freeze is shaded however far one zooms in.
-- The candidates are the freezes within the window plus one per environment,
-- each paired through (operation, id) with one index probe: the cost follows
-- the window, not the length of the trail.
--
-- history_first/history_last are the times of the trail's first and last
-- events (the ends of the primary key: two index probes), so "zoom to the
-- whole history" needs no slice over all of it.
--
-- Any reviewer may call this with any arguments. A NULL bound names no
-- window: the answer still carries the lanes, the clock and the history's
-- extent, with no items (a cheap way to learn the extent). Bounds beyond
-- what a timestamp holds are clamped, so no argument makes the function fail
-- with an overflow; only a window that ends before it starts is refused.
CREATE FUNCTION relctl.console_timeline(p_from bigint, p_to bigint) RETURNS json
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    -- About 4685 BC .. 287,000 AD: inside timestamptz's range, with room for
    -- the millisecond added to the end.
    c_min constant bigint := -210000000000000;
    c_max constant bigint := 9000000000000000;
    v_from timestamptz;
    v_to timestamptz;
    v_window boolean := p_from IS NOT NULL AND p_to IS NOT NULL;
BEGIN
    IF v_window AND p_from > p_to THEN
        PERFORM relctl.invalid('a timeline window needs a start that is not after its end');
    END IF;
    IF v_window THEN
        v_from := relctl.from_epoch_ms(least(greatest(p_from, c_min), c_max));
        -- p_to names a millisecond; everything within it belongs to the window.
        v_to := relctl.from_epoch_ms(least(greatest(p_to, c_min), c_max)) + interval '1 millisecond';
    ELSE
        -- An empty window: every item test below compares with NULL and fails.
        v_from := NULL;
        v_to := NULL;
    END IF;
    RETURN json_build_object(
        'server_now', relctl.epoch_ms(v_now),
        'environments', (SELECT coalesce(json_agg(name ORDER BY name), '[]') FROM relctl.environments),
        'history_first', relctl.epoch_ms((SELECT at FROM relctl.events ORDER BY id LIMIT 1)),
        'history_last', relctl.epoch_ms((SELECT at FROM relctl.events ORDER BY id DESC LIMIT 1)),
        'freezes', (
            SELECT coalesce(json_agg(json_build_object('env', f.env, 'from', relctl.epoch_ms(f.began),
                                                       'to', relctl.epoch_ms(f.ended), 'by', f.by,
                                                       'reason', f.reason)
                                     ORDER BY f.env, f.began), '[]')
            FROM (SELECT fz.env, fz.at AS began, uf.at AS ended, fz.actor AS by, fz.detail ->> 'reason' AS reason
                  FROM (SELECT * FROM relctl.events v
                        WHERE v.operation = 'freeze' AND v.outcome = 'accepted' AND v.env IS NOT NULL
                          AND v.at >= v_from AND v.at < v_to
                        UNION ALL -- disjoint: in the window, and before it
                        SELECT b.* FROM relctl.environments e
                        CROSS JOIN LATERAL (
                            SELECT * FROM relctl.events v
                            WHERE v.operation = 'freeze' AND v.outcome = 'accepted' AND v.env = e.name
                              AND v.at < v_from
                            ORDER BY v.id DESC LIMIT 1) b) fz
                  CROSS JOIN LATERAL (
                      SELECT u.at FROM relctl.events u
                      WHERE u.operation = 'unfreeze' AND u.outcome = 'accepted' AND u.env = fz.env
                        AND u.id > fz.id
                      ORDER BY u.id LIMIT 1) uf
                  WHERE uf.at >= v_from
                  UNION ALL
                  SELECT e.name, e.frozen_at, NULL, e.frozen_by, e.frozen_reason
                  FROM relctl.environments e
                  WHERE e.frozen_at IS NOT NULL AND e.frozen_at < v_to) f),
        'leases', (
            SELECT coalesce(json_agg(relctl.console_lease_json(l, v_now) ORDER BY l.env, l.acquired_at, l.token),
                            '[]')
            -- Overlapping: acquired before the window ends, ended (or, never
            -- ended, expiring) at or after it starts. As two disjoint
            -- branches, each read through leases_ended (0010): a
            -- coalesce(ended_at, expires_at) >= v_from as one test reads every
            -- lease of the history to keep the few in a recent window.
            FROM (SELECT * FROM relctl.leases
                  WHERE ended_at >= v_from AND acquired_at < v_to
                  UNION ALL
                  SELECT * FROM relctl.leases
                  WHERE ended_at IS NULL AND expires_at >= v_from AND acquired_at < v_to
                  ORDER BY acquired_at DESC LIMIT 20000) l),
        'markers', (
            SELECT coalesce(json_agg(json_build_object('event', k.event, 'env', k.env,
                                                       'at', relctl.epoch_ms(k.at), 'kind', k.kind,
                                                       'label', k.label, 'job', k.job)
                                     ORDER BY k.env, k.at, k.event), '[]')
            FROM (SELECT * FROM (
                      SELECT v.id AS event, v.env, v.at,
                             -- A rollback and a promotion decision change what an
                             -- environment runs (or may run) by a person's hand: each
                             -- has a kind of its own, so the timeline can tell them
                             -- from the routine operator actions.
                             CASE WHEN v.reason = 'SUPERSEDED' THEN 'superseded'
                                  WHEN v.outcome = 'rejected' THEN 'refusal'
                                  WHEN v.operation = 'publish' THEN 'publish'
                                  WHEN v.operation = 'rollback' THEN 'rollback'
                                  WHEN v.operation IN ('promotion-approve', 'promotion-deny') THEN 'promotion'
                                  ELSE 'operator' END AS kind,
                             CASE WHEN v.outcome = 'rejected' THEN concat_ws(' ', v.reason, v.job)
                                  WHEN v.operation = 'publish' THEN concat_ws(' ', v.release, v.job)
                                  WHEN v.operation = 'rollback' THEN
                                      format('rollback to %s (from %s) by %s', v.release,
                                             v.detail ->> 'replaced_release', v.actor)
                                  WHEN v.operation = 'promotion-approve' THEN
                                      format('%s approved by %s (%s of %s)', v.release, v.actor,
                                             v.detail ->> 'approvals_given', v.detail ->> 'approvals_required')
                                  WHEN v.operation = 'promotion-deny' THEN
                                      format('%s denied by %s', v.release, v.actor)
                                  ELSE concat_ws(' ', v.operation, v.actor) END AS label,
                             v.job
                      FROM relctl.events v
                      WHERE v.at >= v_from AND v.at < v_to AND v.env IS NOT NULL
                        AND (v.outcome = 'rejected' OR v.operation IN
                             ('publish', 'revoke', 'freeze', 'unfreeze', 'approve', 'deny', 'env-set',
                              'rollback', 'promotion-requested', 'promotion-approve', 'promotion-deny'))
                      ORDER BY v.at DESC LIMIT 50000) evs
                  UNION ALL
                  SELECT * FROM (
                      SELECT 0::bigint, c.env, c.queued_at, 'queued', format('%s gen %s', c.job, c.generation),
                             c.job
                      FROM relctl.candidates c -- through candidates_queued (0010)
                      WHERE c.queued_at >= v_from AND c.queued_at < v_to
                      ORDER BY c.queued_at DESC LIMIT 50000) cands
                  ORDER BY at DESC LIMIT 50000) k));
END
$$;

-- ---------------------------------------------------------------------------
-- Trace of one refusal
-- ---------------------------------------------------------------------------

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

GRANT EXECUTE ON FUNCTION relctl.console_environments, relctl.console_audit, relctl.console_audit_export,
                          relctl.console_audit_export_view, relctl.console_operations, relctl.console_reasons,
                          relctl.console_timeline, relctl.console_trace
    TO relctl_reviewer;
