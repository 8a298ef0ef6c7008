-- The release console's audit browser: one sorted, filtered page of the trail
-- at a time, the export of every event the same filter matches, and the
-- values its filter drop-downs offer. A module of its own because sorting
-- and paging on the server is most of the console's SQL. A page's events have
-- the JSON shape of relctl.console_event_json (console.sql), as the trace's do.

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

GRANT EXECUTE ON FUNCTION relctl.console_audit, relctl.console_audit_export, relctl.console_audit_export_view,
                          relctl.console_operations, relctl.console_reasons
    TO relctl_reviewer;
