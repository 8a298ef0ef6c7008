-- A waiting candidate's login and address, as the server saw them when it
-- queued. A release now hands the lease to the next candidate in its own
-- transaction (relctl.hand_over, functions/queue.sql), on that candidate's
-- behalf; the audit row of that grant, and of a refusal decided while some
-- other session brought the queue up to date, must name the candidate's
-- login, not the session that happened to make the write.
--
-- Candidates that ended before this migration keep NULL: who queued them was
-- not recorded, and a default would name the migrating login instead.
ALTER TABLE relctl.candidates ADD COLUMN db_user text, ADD COLUMN client_addr inet;
ALTER TABLE relctl.candidates ALTER COLUMN db_user SET DEFAULT session_user,
                              ALTER COLUMN client_addr SET DEFAULT inet_client_addr();
