-- The throughput benchmark's fixtures (psql -v clients=N): one environment
-- per pgbench client (client k renews on bench-k and cycles on cycle-k, so
-- nothing should contend),
-- a live lease on each for the renewals, and the plain-SQL reference: a table
-- shaped like relctl.events, with the same columns, defaults and indexes, and
-- a row per environment to update. relctl-bench (bench/throughput.cpp) runs it.
DROP SCHEMA IF EXISTS relctl_bench CASCADE;
CREATE SCHEMA relctl_bench;
CREATE TABLE relctl_bench.envs (name text PRIMARY KEY, last_token bigint NOT NULL DEFAULT 0);
CREATE TABLE relctl_bench.events (LIKE relctl.events INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
CREATE TABLE relctl_bench.leases (client integer PRIMARY KEY, env text NOT NULL, token bigint NOT NULL,
                                  lease_id uuid NOT NULL);

SELECT relctl.env_add(kind || '-' || k, 600000, 3600000, '{}')
FROM generate_series(0, :clients - 1) k, unnest(ARRAY['bench', 'cycle']) kind
WHERE NOT EXISTS (SELECT 1 FROM relctl.environments WHERE name = kind || '-' || k);
INSERT INTO relctl_bench.envs SELECT 'bench-' || k FROM generate_series(0, :clients - 1) k;
