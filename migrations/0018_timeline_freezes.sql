-- The freezes and unfreezes of the audit trail, by environment: the
-- console's timeline (relctl.console_timeline) finds the environments ever
-- frozen by skipping through it, the last freeze before its window and the
-- unfreeze that ended each freeze by one probe, without reading an
-- environment's other events or visiting the table for `at`.
CREATE INDEX events_freezes ON relctl.events (operation, env, id) INCLUDE (at)
    WHERE outcome = 'accepted' AND operation IN ('freeze', 'unfreeze');
