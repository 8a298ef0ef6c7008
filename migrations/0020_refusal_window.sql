-- The last hour's refusals by time, with their environment in the index:
-- relctl.attention_now counts them per environment from the index alone,
-- rather than visiting a page of the trail for each refusal, which a new
-- session first had to map (at 10,000 environments, 270 pages for 320
-- refusals). Replaces 0017's index on the time alone.
DROP INDEX relctl.events_refusals_at;
CREATE INDEX events_refusals_at ON relctl.events (at) INCLUDE (env) WHERE outcome = 'rejected';
