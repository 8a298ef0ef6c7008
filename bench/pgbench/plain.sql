-- The reference: the one durable transaction an operation needs, in plain
-- SQL: update the environment's row and append an event row.
BEGIN;
UPDATE relctl_bench.envs SET last_token = last_token + 1 WHERE name = 'bench-' || :client_id;
INSERT INTO relctl_bench.events (env, operation, outcome, job, release, generation, token, detail)
    VALUES ('bench-' || :client_id, 'renew', 'accepted', 'bench', 'r', 1, 1, '{"ttl_ms": 600000}');
END;
