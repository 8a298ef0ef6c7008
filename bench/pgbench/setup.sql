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

-- The floor under a cycle: the rows an acquire, a publish and a release write
-- (the lease, the environment's token, manifest and high water, an event
-- each, the op ids' outcomes), written by the fewest statements, without any
-- of the protocol's checks, replies, lookups or announcements. bare.sql runs
-- them on bare-k; the benchmark prints a cycle's rate against theirs, to show
-- what the protocol's logic costs on top of its writes.
SELECT relctl.env_add('bare-' || k, 600000, 3600000, '{}')
FROM generate_series(0, :clients - 1) k
WHERE NOT EXISTS (SELECT 1 FROM relctl.environments WHERE name = 'bare-' || k);

CREATE FUNCTION relctl_bench.acquire(p_env text, p_generation bigint) RETURNS relctl.leases
LANGUAGE plpgsql AS $$
DECLARE
    e relctl.environments;
    l relctl.leases;
BEGIN
    SELECT * INTO e FROM relctl.environments WHERE name = p_env FOR UPDATE;
    INSERT INTO relctl.leases (env, token, job, release, generation, ttl_ms, acquired_at, expires_at, op_id, host)
        VALUES (p_env, e.last_token + 1, 'bench-bare', 'bare', p_generation, 60000, clock_timestamp(),
                clock_timestamp() + interval '1 minute', gen_random_uuid()::text, 'bench')
        RETURNING * INTO l;
    UPDATE relctl.environments SET last_token = l.token WHERE name = p_env;
    INSERT INTO relctl.events (env, operation, outcome, job, release, generation, token, current_token,
                               high_water_generation, op_id, host, detail)
        VALUES (p_env, 'acquire', 'accepted', l.job, l.release, l.generation, l.token, l.token,
                e.high_water_generation, l.op_id, 'bench', '{"ttl_ms": 60000}');
    INSERT INTO relctl.operations (op_id, operation, request, outcome)
        VALUES (l.op_id, 'acquire', '{"operation": "acquire"}', '{"status": "ok"}');
    RETURN l;
END
$$;

CREATE FUNCTION relctl_bench.publish(p_env text, p_token bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    l relctl.leases;
    m bigint;
    v_op text := gen_random_uuid()::text;
BEGIN
    PERFORM 1 FROM relctl.environments WHERE name = p_env FOR UPDATE;
    SELECT * INTO l FROM relctl.leases WHERE env = p_env AND token = p_token;
    INSERT INTO relctl.manifests (env, release, generation, job, token, published_at, manifest, op_id)
        VALUES (p_env, l.release, l.generation, l.job, l.token, clock_timestamp(), '{"artifact": "bench"}', v_op)
        RETURNING id INTO m;
    UPDATE relctl.environments SET current_manifest_id = m, high_water_generation = l.generation
        WHERE name = p_env;
    INSERT INTO relctl.events (env, operation, outcome, job, release, generation, token, current_token, op_id,
                               host, detail)
        VALUES (p_env, 'publish', 'accepted', l.job, l.release, l.generation, l.token, l.token, v_op, 'bench',
                jsonb_build_object('manifest_id', m));
    INSERT INTO relctl.operations (op_id, operation, request, outcome)
        VALUES (v_op, 'publish', '{"operation": "publish"}', '{"status": "ok"}');
END
$$;

CREATE FUNCTION relctl_bench.release(p_env text, p_token bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM relctl.environments WHERE name = p_env FOR UPDATE;
    UPDATE relctl.leases SET ended_at = clock_timestamp(), end_reason = 'released'
        WHERE env = p_env AND token = p_token;
    INSERT INTO relctl.events (env, operation, outcome, job, release, generation, token, current_token, host,
                               detail)
        VALUES (p_env, 'release', 'accepted', 'bench-bare', 'bare', NULL, p_token, p_token, 'bench',
                '{"state": "released"}');
END
$$;
