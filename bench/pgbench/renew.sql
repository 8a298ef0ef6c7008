-- relctl.renew of the client's own lease, as `relctl lease renew` calls it.
SELECT relctl.renew(env, token, lease_id, 600000, '{"host": "bench"}') FROM relctl_bench.leases
WHERE client = :client_id;
