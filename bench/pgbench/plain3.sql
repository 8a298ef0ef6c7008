-- Three reference transactions: what an acquire, a publish and a release
-- need at least.
BEGIN;
UPDATE relctl_bench.envs SET last_token = last_token + 1 WHERE name = 'bench-' || :client_id;
INSERT INTO relctl_bench.events (env, operation, outcome, job, release, generation, token, detail)
    VALUES ('bench-' || :client_id, 'acquire', 'accepted', 'bench', 'r', 1, 1, '{"ttl_ms": 600000}');
END;
BEGIN;
UPDATE relctl_bench.envs SET last_token = last_token + 1 WHERE name = 'bench-' || :client_id;
INSERT INTO relctl_bench.events (env, operation, outcome, job, release, generation, token, detail)
    VALUES ('bench-' || :client_id, 'publish', 'accepted', 'bench', 'r', 1, 1, '{"manifest_id": 1}');
END;
BEGIN;
UPDATE relctl_bench.envs SET last_token = last_token + 1 WHERE name = 'bench-' || :client_id;
INSERT INTO relctl_bench.events (env, operation, outcome, job, release, generation, token, detail)
    VALUES ('bench-' || :client_id, 'release', 'accepted', 'bench', 'r', 1, 1, '{}');
END;
