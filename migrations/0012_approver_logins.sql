-- Approvals from distinct people mean distinct database logins. `--by` is a
-- name the caller types; the login (session_user) is what the server
-- authenticated, so the four-eyes rules are decided on logins
-- (functions/promotions.sql, queue.sql):
--
-- requested_login: the login that opened a promotion request (the job's, for
-- a request its acquire opened; the release manager's, for `promote
-- request`). That login can never approve the request.
-- promotion_decisions.db_user (0006) already records each decision's login;
-- a request's approvals are now counted once per login.
-- supersessions.decided_login: the login that approved or denied a
-- supersession, beside the name it gave.
-- environments.approver_role: when set, only members of this PostgreSQL role
-- may approve or deny the environment's promotion and supersession requests.
ALTER TABLE relctl.promotions ADD COLUMN requested_login text;
ALTER TABLE relctl.supersessions ADD COLUMN decided_login text;
ALTER TABLE relctl.environments ADD COLUMN approver_role text
    CHECK (approver_role IS NULL OR length(approver_role) BETWEEN 1 AND 63);

-- Requests opened before this migration: the login is the one their
-- promotion-requested event recorded (the audit trail names every caller's
-- login). Decisions already record theirs; a request approved twice by one
-- login now counts that login once, and its gate re-checks accordingly.
UPDATE relctl.promotions p SET requested_login = v.db_user
    FROM relctl.events v
    WHERE v.operation = 'promotion-requested' AND v.env = p.env
      AND v.detail ->> 'promotion' = p.id::text;
UPDATE relctl.supersessions s SET decided_login = v.db_user
    FROM relctl.events v
    WHERE v.operation IN ('approve', 'deny') AND v.env = s.env AND v.detail ->> 'request' = s.id::text;

-- The decisions of one login on a request, for the per-login checks.
CREATE INDEX promotion_decisions_login ON relctl.promotion_decisions (promotion, db_user);
