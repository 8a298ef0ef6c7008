-- One release through the protocol, as `relctl run` makes it: acquire (with
-- an op id), publish (with an op id), release; each its own transaction.
SELECT r ->> 'token' AS token, r ->> 'lease_id' AS lease_id, r ->> 'generation' AS generation
FROM relctl.acquire('cycle-' || :client_id, 'bench-cycle', 'cycle',
                    (SELECT high_water_generation + 1 FROM relctl.environments WHERE name = 'cycle-' || :client_id),
                    60000, gen_random_uuid()::text, '{"host": "bench"}', false, NULL) r
\gset
SELECT relctl.publish('cycle-' || :client_id, :token, ':lease_id', '{"artifact": "bench"}',
                      gen_random_uuid()::text, '{"host": "bench"}');
SELECT relctl.release('cycle-' || :client_id, :token, ':lease_id', '{"host": "bench"}', NULL);
