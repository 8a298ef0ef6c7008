-- The release console's read queries live in migrations/functions/console.sql;
-- these are the indexes they need.

-- The audit browser pages newest first by id; these keep its filtered pages
-- and the timeline's time window off a sequential scan of the whole trail.
CREATE INDEX events_operation ON relctl.events (operation, id);
CREATE INDEX events_at ON relctl.events (at);
-- "Refusals of one environment" is the reviewer's most common question: with
-- (env, id) alone a rare reason in a busy environment walks most of its rows.
CREATE INDEX events_env_reason ON relctl.events (env, reason, id) WHERE reason IS NOT NULL;
