-- An organisation's environments: hundreds of services, each with its
-- stages (svc.test, svc.staging, svc.prod). An environment belongs to a
-- group; NULL here means the default, its name up to the first '.'
-- (relctl.env_group, functions/attention.sql), so a service's stages group
-- together without anyone setting anything.
ALTER TABLE relctl.environments ADD COLUMN group_name text
    CHECK (group_name IS NULL OR group_name ~ '^[a-z0-9][a-z0-9._-]{0,62}$');
CREATE INDEX environments_group ON relctl.environments ((coalesce(group_name, split_part(name, '.', 1))), name);

-- "A refusal in the last hour" is asked of every environment at once (the
-- attention view): one index probe per environment, not a scan of the trail.
CREATE INDEX events_refusals_env ON relctl.events (env, at) WHERE outcome = 'rejected';

-- A live event's promotions are read for the environments it touched and
-- those promoted from them (relctl.console_promotions): by environment, not
-- by a scan of every request or every environment.
CREATE INDEX promotions_env ON relctl.promotions (env, id);
CREATE INDEX environments_promote_from ON relctl.environments (promote_from) WHERE promote_from IS NOT NULL;
