-- A live lease on every bench environment, for renew.sql.
SELECT relctl.revoke(name, 'relctl-bench', 'a new measurement', '{}')
FROM relctl.environments WHERE name LIKE 'bench-%';
INSERT INTO relctl_bench.leases
SELECT k, 'bench-' || k, (r ->> 'token')::bigint, (r ->> 'lease_id')::uuid
FROM generate_series(0, :clients - 1) k,
     LATERAL relctl.acquire('bench-' || k, 'bench-renew', 'renew-' || k,
                            (SELECT high_water_generation + 1 FROM relctl.environments WHERE name = 'bench-' || k),
                            3600000, NULL, '{}', false) r;
