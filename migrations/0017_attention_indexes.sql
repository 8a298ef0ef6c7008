-- Which environments need a person is read from the few rows that can make
-- a reason (relctl.attention_suspects): the last hour's refusals by time,
-- and the frozen environments, each through its own small index rather
-- than a scan of the trail or of every environment.
CREATE INDEX events_refusals_at ON relctl.events (at) WHERE outcome = 'rejected';
CREATE INDEX environments_frozen ON relctl.environments (name) WHERE frozen_at IS NOT NULL;
