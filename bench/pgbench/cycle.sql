-- One release through the protocol, as `relctl run` makes it: acquire (with
-- an op id), publish (with an op id), release; each its own transaction, each
-- one `SELECT relctl.f(...)` as the client sends it. The job declares its
-- generation: each client counts up from :base (above every cycle
-- environment's high water when the run starts; bench/throughput.cpp passes
-- it with -D base=N -D k=0), so no statement of the cycle reads anything else.
\set k :k + 1
SELECT r ->> 'token' AS token, r ->> 'lease_id' AS lease_id
FROM (SELECT relctl.acquire('cycle-' || :client_id, 'bench-cycle', 'cycle', :base + :k, 60000,
                            gen_random_uuid()::text, '{"host": "bench"}', false, NULL) AS r) acquired
\gset
SELECT relctl.publish('cycle-' || :client_id, :token, ':lease_id', '{"artifact": "bench"}',
                      gen_random_uuid()::text, '{"host": "bench"}');
SELECT relctl.release('cycle-' || :client_id, :token, ':lease_id', '{"host": "bench"}', NULL);
