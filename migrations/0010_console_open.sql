-- What the release console reads when it opens (and whenever it follows
-- now) stays proportional to what it shows, not to the length of the
-- history: its timeline slice read every lease and every queue candidate
-- ever recorded (a sequential scan of each) to keep the few in the window.
-- See migrations/functions/console.sql (console_timeline).

-- Leases overlapping a window: those that ended in or after it, found by
-- when they ended, and those that never ended (live, or expired without a
-- release), the entries whose ended_at is NULL. Not an index on expires_at
-- or coalesce(ended_at, expires_at): every renewal moves expires_at, and an
-- index on it would cost each renewal an insertion into every index of the
-- table (no heap-only update); ended_at is set once, when the lease ends.
CREATE INDEX leases_ended ON relctl.leases (ended_at);

-- The timeline's "queued" markers: candidates by the time they joined the
-- queue, which is set once.
CREATE INDEX candidates_queued ON relctl.candidates (queued_at);
