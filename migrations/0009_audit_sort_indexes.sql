-- The audit browser's remaining sorts read their pages off an index, like
-- time, env, job, operation and reason already do (0001, 0003). How
-- relctl.console_audit (migrations/functions/console.sql) reads them is
-- described there; in short:
--   release, generation, token, host, actor: (env, column, id). Under an
--     environment filter a page is one range of the index, however small the
--     environment's share of the trail or however its values fall; without
--     one, a page merges the first page's worth of each environment's range.
--     NULLs sort largest, ties by id: the index's own order in both scan
--     directions, and its row comparison (column, id) > (key, id) starts a
--     deep page where the cursor left off.
--   outcome: two values. Accepted events are the great majority and are read
--     in id order off events_env or the primary key with a cheap filter; only
--     the rejected ones need an index of their own.
--
-- Every index is paid for by every event insert, forever (each protocol call
-- records one), so there is one per sort and no more, and the two whose rows
-- are few are partial: the rejected events, and the events naming an actor
-- (an operator's actions; the NULL rows are most rows and are read in id
-- order). bench/auditbench.cpp measures the pages; README "Benchmarks" gives
-- what the indexes cost an insert.
CREATE INDEX events_rejected ON relctl.events (env, id) WHERE outcome = 'rejected';
CREATE INDEX events_env_release ON relctl.events (env, release, id);
CREATE INDEX events_env_generation ON relctl.events (env, generation, id);
CREATE INDEX events_env_token ON relctl.events (env, token, id);
CREATE INDEX events_env_host ON relctl.events (env, host, id);
CREATE INDEX events_env_actor ON relctl.events (env, actor, id) WHERE actor IS NOT NULL;
