-- The audit browser sorts on the server: one page of the filtered trail under
-- a sort column and direction, with keyset pagination on (sort key, id), and
-- "newer than" pages for live updates.
--
-- Sort keys. "time" is the id: ids are taken by the same INSERT that stamps
-- `at` (both defaults), so they follow time to within concurrent inserts, are
-- unique and never NULL, and the primary key and every existing (column, id)
-- index already serve them. Sorting by `at` instead would need (at, id) and
-- (env, at, id)-style indexes to page fast under a filter, for the same order.
-- The other keys are whitelisted below with their type and nullability;
-- anything else is refused, and no text from the client reaches the
-- statement's text (columns are picked from the whitelist, values are
-- parameters).
--
-- NULL order: PostgreSQL's own, NULL is larger than every value (last when
-- ascending, first when descending). It is the order a btree index on
-- (column, id) yields in both scan directions, so the indexed sorts (env, job,
-- operation, reason) read their pages straight off an index.
--
-- Keyset: a page follows the row (key, id) it continues from. A NULL key makes
-- a row comparison unknown, so the non-NULL and the NULL rows are read as two
-- branches, each with an index-friendly predicate and its own LIMIT, and the
-- few rows they return are merged: no OFFSET, and no row is skipped or repeated
-- between pages however deep.
--
-- Indexes: none added. Every index costs every protocol write on this
-- append-only table, forever; env, job, operation and reason (the filters and
-- the sorts a reviewer uses) have (column, id) indexes since 0001/0003, and the
-- time sort uses the primary key. The remaining sorts (outcome, release,
-- generation, token, host, actor) read the filtered rows after the cursor and
-- keep the top of them (a top-N sort): bench/auditbench.cpp measures what that
-- costs on a million events.

DROP FUNCTION relctl.console_audit(text, text, text, text, bigint, bigint, text, bigint, integer);

CREATE FUNCTION relctl.console_audit(p_env text, p_job text, p_operation text, p_reason text,
                                     p_from bigint, p_to bigint, p_text text,
                                     p_sort text, p_descending boolean,
                                     p_after_key text, p_after_id bigint,
                                     p_newer_than bigint, p_limit integer)
RETURNS json
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_where text[] := ARRAY['true'];
    v_filter text;
    v_needle text;
    v_column text;   -- the sort key's column, from the whitelist
    v_cast text;     -- how the cursor's key (sent as text) becomes the column's type
    v_nullable boolean;
    v_dir text := CASE WHEN p_descending THEN 'DESC' ELSE 'ASC' END;
    v_cmp text := CASE WHEN p_descending THEN '<' ELSE '>' END;
    v_branches text[] := ARRAY[]::text[];
    v_page_sql text;
    v_order text;
    v_page json;
BEGIN
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 5000 THEN
        PERFORM relctl.invalid(format('a page holds 1 to 5000 events, not %s', p_limit));
    END IF;
    IF p_from IS NOT NULL AND p_to IS NOT NULL AND p_from > p_to THEN
        PERFORM relctl.invalid('the time range ends before it starts');
    END IF;
    SELECT w.col, w.cast_to, w.nullable INTO v_column, v_cast, v_nullable
    FROM (VALUES ('time', 'id', 'bigint', false),
                 ('env', 'env', 'text', true),
                 ('operation', 'operation', 'text', false),
                 ('outcome', 'outcome', 'text', false),
                 ('reason', 'reason', 'text', true),
                 ('job', 'job', 'text', true),
                 ('release', 'release', 'text', true),
                 ('generation', 'generation', 'bigint', true),
                 ('token', 'token', 'bigint', true),
                 ('host', 'host', 'text', true),
                 ('actor', 'actor', 'text', true)) AS w(name, col, cast_to, nullable)
    WHERE w.name = coalesce(p_sort, 'time');
    IF v_column IS NULL THEN
        PERFORM relctl.invalid(format('the audit trail cannot be sorted by "%s"', p_sort));
    END IF;
    IF p_descending IS NULL THEN
        PERFORM relctl.invalid('a sort needs a direction');
    END IF;

    IF p_env IS NOT NULL THEN v_where := array_append(v_where, 'env = $1'); END IF;
    IF p_job IS NOT NULL THEN v_where := array_append(v_where, 'job = $2'); END IF;
    IF p_operation IS NOT NULL THEN v_where := array_append(v_where, 'operation = $3'); END IF;
    IF p_reason IS NOT NULL THEN v_where := array_append(v_where, 'reason = $4'); END IF;
    IF p_from IS NOT NULL THEN v_where := array_append(v_where, 'at >= relctl.from_epoch_ms($5)'); END IF;
    -- "to" names a millisecond; events within it (microseconds later) belong to it.
    IF p_to IS NOT NULL THEN
        v_where := array_append(v_where, '(at < relctl.from_epoch_ms($6) + interval ''1 millisecond'')');
    END IF;
    IF nullif(p_text, '') IS NOT NULL THEN
        -- A plain substring test: nothing the user types acts as a wildcard.
        v_needle := lower(p_text);
        v_where := array_append(v_where,
            '(strpos(lower(job), $7) > 0 OR strpos(lower(release), $7) > 0 OR strpos(lower(op_id), $7) > 0 '
            'OR strpos(lower(host), $7) > 0 OR strpos(lower(reason), $7) > 0 '
            'OR strpos(lower(actor), $7) > 0 OR strpos(lower(job_url), $7) > 0)');
    END IF;
    v_filter := array_to_string(v_where, ' AND ');

    IF p_newer_than IS NOT NULL THEN
        -- Live updates: what arrived after the newest event the console has,
        -- oldest first, so a caller that loops page by page catches up
        -- without a gap whatever the burst.
        v_order := 'id ASC';
        v_page_sql := format('SELECT * FROM relctl.events WHERE %s AND id > $12 ORDER BY id ASC LIMIT $13 + 1',
                             v_filter);
    ELSIF v_column = 'id' THEN
        v_order := format('id %s', v_dir);
        v_page_sql := format('SELECT * FROM relctl.events WHERE %s %s ORDER BY id %s LIMIT $13 + 1', v_filter,
                             CASE WHEN p_after_id IS NULL THEN '' ELSE format('AND id %s $11', v_cmp) END, v_dir);
    ELSE
        v_order := format('%I %s, id %s', v_column, v_dir, v_dir); -- NULLs: last ascending, first descending
        -- The rows with a key, after the cursor. When the cursor's row has a
        -- NULL key: all of them when descending (they follow the NULLs), none
        -- when ascending (they came before).
        IF p_after_id IS NULL OR p_after_key IS NOT NULL OR p_descending THEN
            v_branches := array_append(v_branches, format(
                '(SELECT * FROM relctl.events WHERE %s AND %I IS NOT NULL %s ORDER BY %I %s, id %s LIMIT $13 + 1)',
                v_filter, v_column,
                CASE WHEN p_after_id IS NULL OR p_after_key IS NULL THEN ''
                     ELSE format('AND (%I, id) %s ($10::%s, $11)', v_column, v_cmp, v_cast) END,
                v_column, v_dir, v_dir));
        END IF;
        -- The rows without a key, ordered by id: all of them ascending after a
        -- keyed cursor, none descending after one (they came first).
        IF v_nullable AND (p_after_id IS NULL OR p_after_key IS NULL OR NOT p_descending) THEN
            v_branches := array_append(v_branches, format(
                '(SELECT * FROM relctl.events WHERE %s AND %I IS NULL %s ORDER BY id %s LIMIT $13 + 1)',
                v_filter, v_column,
                CASE WHEN p_after_id IS NOT NULL AND p_after_key IS NULL THEN format('AND id %s $11', v_cmp)
                     ELSE '' END,
                v_dir));
        END IF;
        v_page_sql := format('SELECT * FROM (%s) b ORDER BY %s LIMIT $13 + 1',
                             array_to_string(v_branches, ' UNION ALL '), v_order);
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
        USING p_env, p_job, p_operation, p_reason, p_from, p_to, v_needle, p_sort, p_descending,
              p_after_key, p_after_id, p_newer_than, p_limit;
    RETURN v_page;
END
$$;
