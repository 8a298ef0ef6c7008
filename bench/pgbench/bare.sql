-- A cycle's writes without the protocol (relctl_bench.acquire, publish and
-- release in setup.sql): the floor that cycle.sql is measured against, for
-- information. The same generations as cycle.sql (-D base=N -D k=0).
\set k :k + 1
SELECT token FROM relctl_bench.acquire('bare-' || :client_id, :base + :k)
\gset
SELECT relctl_bench.publish('bare-' || :client_id, :token);
SELECT relctl_bench.release('bare-' || :client_id, :token);
