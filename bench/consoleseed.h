// An organisation as the release console opens it: services of five stages
// each (svcK.dev, .test, .staging, .prod, .prod-eu) with promotion paths
// within each service, a history of leases with their
// acquire/renew/publish/release events, manifests, queue candidates (some
// waiting), supersession and promotion requests, and an audit trail of older
// events before them; some environments held, frozen, queued or refused in
// the last hour, as in a working day. All set-based INSERTs (the append-only
// triggers forbid changes, not inserts), times relative to the moment of
// seeding so the newest leases are live.
#pragma once

#include "seed.h"

#include <algorithm>
#include <pqxx/pqxx>
#include <string>

namespace relctl::bench {

struct ConsoleHistory
{
    // A multiple of 5: whole services.
    int environments = 50;
    // One lease a minute (at least two per environment), ending with the
    // newest heldLeases() still held (their environments show a holder and
    // a countdown).
    int leases = 10'000;
    // The whole trail; what the lease history does not fill comes from an
    // EventTrail before it, spread over every environment.
    long long events = 1'000'000;

    int leaseCount() const { return std::max(leases, 2 * environments); }
    // One environment in twenty is held, at least 5.
    int heldLeases() const { return std::max(5, environments / 20); }
};

struct SeededCounts
{
    long long events = 0, leases = 0, manifests = 0, candidates = 0, waiting = 0, promotions = 0;
    // Environments in each state as the attention view sees it.
    long long held = 0, frozen = 0, queued = 0, refused = 0, attention = 0;
};

// What the console sees of an organisation: how many environments are held,
// frozen, queued, refused in the last hour, and need attention at all.
inline void countStates(pqxx::transaction_base& tx, SeededCounts& c)
{
    const pqxx::row r = tx.exec1(
        "SELECT count(*) FILTER (WHERE EXISTS (SELECT 1 FROM relctl.leases l WHERE l.env = e.name AND "
        "l.ended_at IS NULL AND l.expires_at > now())), "
        "count(*) FILTER (WHERE e.frozen_at IS NOT NULL), "
        "count(*) FILTER (WHERE a @> '[{\"reason\": \"waiting\"}]'), "
        "count(*) FILTER (WHERE a @> '[{\"reason\": \"refused\"}]'), "
        "count(*) FILTER (WHERE jsonb_array_length(a) > 0) "
        "FROM relctl.environments e, LATERAL relctl.environment_attention(e, now()) a");
    c.held = r[0].as<long long>();
    c.frozen = r[1].as<long long>();
    c.queued = r[2].as<long long>();
    c.refused = r[3].as<long long>();
    c.attention = r[4].as<long long>();
}

// Seeds an empty, migrated database in one transaction and analyzes it.
// The waiting candidates have no session holding their liveness lock: a
// caller that wants them in the queue holds them (holdWaitingCandidates).
inline SeededCounts seedConsoleHistory(pqxx::connection& conn, const ConsoleHistory& h)
{
    pqxx::work tx(conn);
    const std::string now = tx.exec1("SELECT clock_timestamp()::text")[0].c_str();
    const int envs = std::max(5, h.environments / 5 * 5);
    const int leases = std::max(h.leases, 2 * envs);
    const int held = std::min(envs, std::max(5, envs / 20));
    // Environment k is stage k % 5 of service k / 5 + 1. The devs serve the
    // newest first; every fourth service's prods need approval to supersede;
    // the prods need one approval to be promoted to; each stage promotes
    // from the one before it in its service.
    tx.exec_params("CREATE TEMP TABLE seed_envs ON COMMIT DROP AS "
                   "SELECT k, k % 5 AS stage, format('svc%s.%s', k / 5 + 1, "
                   "(ARRAY['dev', 'test', 'staging', 'prod', 'prod-eu'])[k % 5 + 1]) AS name "
                   "FROM generate_series(0, $1 - 1) k",
                   envs);
    tx.exec("CREATE UNIQUE INDEX ON seed_envs (k)");
    tx.exec_params("INSERT INTO relctl.environments (name, default_ttl_ms, max_ttl_ms, policy, supersede, "
                   "approvals_required, created_at) "
                   "SELECT name, 300000, 3600000, CASE WHEN stage = 0 THEN 'newest' ELSE 'ordered' END, "
                   "CASE WHEN stage >= 3 AND (k / 5) % 4 = 1 THEN 'approval' ELSE 'auto' END, "
                   "CASE WHEN stage >= 3 THEN 1 ELSE 0 END, $1::timestamptz - interval '400 days' "
                   "FROM seed_envs ORDER BY k",
                   now);
    tx.exec("UPDATE relctl.environments e SET promote_from = u.name FROM seed_envs s, seed_envs u "
            "WHERE s.name = e.name AND s.stage > 0 AND u.k = s.k - 1");

    // The lease history: lease n is acquired (L - n) minutes ago in
    // environment (n * 7919) % E (a permutation of each run of E leases, so
    // that the held ones are spread over the services) with the next token
    // there; it renews twice, publishes at 150 s and is released at 170 s
    // (one in 97 revoked instead, before publishing). The newest are still
    // held, acquired 20 s to 9 min ago for an hour, so that they are still
    // held when a benchmark that takes minutes reaches them; one in ten for
    // 10 minutes only, so those expire while it runs (and show as expiring
    // for a while before).
    tx.exec_params("CREATE TEMP TABLE seed_leases ON COMMIT DROP AS "
                   "SELECT n, s.k, s.name AS env, n / $2 + 1 AS token, 'deploy-' || n AS job, "
                   "'v' || (n / $2 + 1) AS release, "
                   "CASE WHEN n >= $1 - $3 THEN $4::timestamptz - ((($1 - n) % 10) * 58 + 20) * "
                   "interval '1 second' ELSE $4::timestamptz - ($1 - n) * interval '60 seconds' END "
                   "AS acquired_at, "
                   "n >= $1 - $3 AS live, n % 97 = 13 AND n < $1 - $3 AS revoked "
                   "FROM generate_series(0, $1 - 1) n JOIN seed_envs s ON s.k = (n::bigint * 7919) % $2",
                   leases, envs, held, now);
    tx.exec_params(
        "INSERT INTO relctl.leases (env, token, job, release, generation, ttl_ms, acquired_at, expires_at, "
        "ended_at, end_reason, ended_by, end_note, op_id, host, pid, job_url) "
        "SELECT env, token, job, release, token, ttl_ms, acquired_at, acquired_at + ttl_ms * interval '1 "
        "millisecond', "
        "CASE WHEN NOT live THEN acquired_at + interval '170 seconds' END, "
        "CASE WHEN live THEN NULL WHEN revoked THEN 'revoked' ELSE 'released' END, "
        "CASE WHEN revoked THEN 'operator-1' END, CASE WHEN revoked THEN 'stuck on a health check' END, "
        "'op-' || job, 'runner-' || (n % 13), 1000 + n % 50000, 'https://ci.example/jobs/' || n "
        "FROM (SELECT *, CASE WHEN NOT live THEN 300000 WHEN ($1 - n) % 10 = 9 THEN 600000 ELSE 3600000 END "
        "AS ttl_ms FROM seed_leases) l ORDER BY acquired_at",
        leases);
    tx.exec(
        "INSERT INTO relctl.manifests (env, release, generation, job, token, published_at, manifest, op_id) "
        "SELECT env, release, token, job, token, acquired_at + interval '150 seconds', "
        "jsonb_build_object('release', release, 'services', jsonb_build_object("
        "'api', 'sha-' || left(md5('api' || n), 12), 'web', 'sha-' || left(md5('web' || n), 12), "
        "'worker', 'sha-' || left(md5('worker' || n), 12)), 'replicas', 2 + n % 3), "
        "'op-publish-' || n "
        "FROM seed_leases WHERE NOT live AND NOT revoked ORDER BY acquired_at");
    tx.exec("UPDATE relctl.environments e SET last_token = l.token, high_water_generation = m.generation, "
            "current_manifest_id = m.id "
            "FROM (SELECT env, max(token) AS token FROM relctl.leases GROUP BY env) l, "
            "(SELECT DISTINCT ON (env) env, id, generation FROM relctl.manifests ORDER BY env, id DESC) m "
            "WHERE l.env = e.name AND m.env = e.name");
    // One environment in 97 frozen two hours ago.
    tx.exec_params("UPDATE relctl.environments SET frozen_at = $1::timestamptz - interval '2 hours', "
                   "frozen_by = 'operator-2', frozen_reason = 'incident 4711: database failover' "
                   "WHERE name IN (SELECT name FROM seed_envs WHERE k % 97 = 11)",
                   now);

    // Every lease was granted to a queued candidate; one in 50 had a rival
    // that left the queue. Four wait now behind one held environment in
    // seven (the newest held one among them); where the environment needs
    // approval to supersede, with a pending request.
    tx.exec("INSERT INTO relctl.candidates (env, job, release, generation, ttl_ms, op_id, queued_at, state, "
            "ended_at, token, host, pid, job_url) "
            "SELECT env, job, release, token, 300000, 'op-' || job, acquired_at - interval '5 seconds', "
            "'granted', acquired_at, token, 'runner-' || (n % 13), 1000 + n % 50000, "
            "'https://ci.example/jobs/' || n FROM seed_leases "
            "UNION ALL "
            "SELECT env, 'rival-' || n, release, token, 300000, 'op-rival-' || n, "
            "acquired_at - interval '4 seconds', 'left', acquired_at + interval '30 seconds', NULL, "
            "'runner-' || (n % 11), 2000 + n, NULL FROM seed_leases WHERE n % 50 = 7 AND NOT live");
    tx.exec_params(
        "INSERT INTO relctl.candidates (env, job, release, generation, ttl_ms, op_id, queued_at, host, "
        "pid, job_url) "
        "SELECT e.name, format('queued-%s-%s', e.name, q), 'v' || (e.last_token + q), e.last_token + q, "
        "300000, format('op-queued-%s-%s', e.name, q), $1::timestamptz - (5 - q) * interval '40 seconds', "
        "'runner-' || q, 3000 + q, format('https://ci.example/jobs/queued-%s-%s', e.name, q) "
        "FROM seed_leases l JOIN relctl.environments e ON e.name = l.env, generate_series(1, 4) q "
        "WHERE l.live AND ($2 - 1 - l.n) % 7 = 0",
        now, leases);
    tx.exec_params(
        "INSERT INTO relctl.supersessions (env, winner, skipped, opened_at) "
        "SELECT c.env, max(c.id), (array_agg(c.id ORDER BY c.id))[1:count(*)::int - 1], "
        "$1::timestamptz - interval '30 seconds' "
        "FROM relctl.candidates c JOIN relctl.environments e ON e.name = c.env AND e.supersede = 'approval' "
        "WHERE c.state = 'waiting' GROUP BY c.env",
        now);

    // Promotion requests where one approval is required: every lease's
    // release was approved by a manager a minute before it was acquired; in
    // one environment in 29 the next release waits for one (and is blocked:
    // the stage before does not have it).
    tx.exec_params(
        "INSERT INTO relctl.promotions (env, release, generation, requested_by, reason, requested_at, state, "
        "decided_at) "
        "SELECT l.env, l.release, l.token, 'release-bot', 'weekly train', l.acquired_at - interval '2 "
        "minutes', "
        "'approved', l.acquired_at - interval '1 minute' "
        "FROM seed_leases l JOIN relctl.environments e ON e.name = l.env AND e.approvals_required > 0 "
        "UNION ALL "
        "SELECT e.name, 'v' || (e.last_token + 1), e.last_token + 1, 'release-bot', 'weekly train', "
        "$1::timestamptz - interval '3 minutes', 'open', NULL "
        "FROM relctl.environments e JOIN seed_envs s ON s.name = e.name "
        "WHERE e.approvals_required > 0 AND s.k % 29 = 3",
        now);
    tx.exec("INSERT INTO relctl.promotion_decisions (promotion, decided_by, approve, reason, decided_at) "
            "SELECT id, 'manager-' || (id % 3), true, 'checked the soak', decided_at "
            "FROM relctl.promotions WHERE state = 'approved'");

    // The lease history's events, in a table first: what it does not fill of
    // the trail is an older trail before it, inserted first so ids follow time.
    tx.exec_params(
        "CREATE TEMP TABLE seed_events ON COMMIT DROP AS "
        "SELECT * FROM ("
        // acquire, two renewals, publish, release or revoke
        "SELECT l.acquired_at + s.offset_s * interval '1 second' AS at, l.env, s.operation, "
        "'accepted'::text AS outcome, NULL::text AS reason, l.job, l.release, l.token AS generation, "
        "l.token, l.token AS current_token, l.token - 1 AS current_generation, "
        "'v' || (l.token - 1) AS current_release, 'op-' || l.job AS op_id, 'runner-' || (l.n % 13) AS host, "
        "1000 + l.n % 50000 AS pid, 'https://ci.example/jobs/' || l.n AS job_url, "
        "CASE WHEN s.operation = 'revoke' THEN 'operator-1' END AS actor, "
        "CASE WHEN s.operation = 'revoke' THEN jsonb_build_object('reason', 'stuck on a health check') END "
        "AS detail "
        "FROM seed_leases l CROSS JOIN LATERAL (VALUES (0, 'acquire'), (60, 'renew'), (120, 'renew'), "
        "(150, 'publish'), (170, 'release'), (170, 'revoke')) s(offset_s, operation) "
        "WHERE CASE s.operation WHEN 'publish' THEN NOT l.live AND NOT l.revoked "
        "WHEN 'release' THEN NOT l.live AND NOT l.revoked WHEN 'revoke' THEN l.revoked "
        "WHEN 'renew' THEN NOT (l.revoked AND s.offset_s > 100) ELSE true END "
        "UNION ALL "
        // one lease in ten: the previous holder, superseded, still tries to publish
        "SELECT l.acquired_at + interval '100 seconds', l.env, 'publish', 'rejected', 'LEASE_SUPERSEDED', "
        "p.job, p.release, p.token, p.token, l.token, l.token - 1, 'v' || (l.token - 1), 'op-late-' || "
        "p.job, "
        "'runner-' || (p.n % 13), 1000 + p.n % 50000, 'https://ci.example/jobs/' || p.n, NULL, NULL "
        "FROM seed_leases l JOIN seed_leases p ON p.n = l.n - $1 WHERE l.n % 10 = 3 AND NOT l.live "
        "UNION ALL "
        // one environment in 31: a job refused in the last hour
        "SELECT $2::timestamptz - (s.k % 50 + 1) * interval '1 minute', s.name, 'publish', 'rejected', "
        "'LEASE_EXPIRED', 'late-' || s.k, 'v1', 1, 1, NULL, NULL, NULL, 'op-late-' || s.k, 'runner-1', "
        "4000 + s.k, NULL, NULL, NULL FROM seed_envs s WHERE s.k % 31 = 7 "
        "UNION ALL "
        "SELECT requested_at, env, 'promotion-requested', 'accepted', NULL, NULL, release, generation, NULL, "
        "NULL, NULL, NULL, NULL, NULL, NULL, NULL, requested_by, "
        "jsonb_build_object('promotion', id, 'reason', reason, 'approvals_required', 1) "
        "FROM relctl.promotions "
        "UNION ALL "
        "SELECT p.decided_at, p.env, 'promotion-approve', 'accepted', NULL, NULL, p.release, p.generation, "
        "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, d.decided_by, "
        "jsonb_build_object('promotion', p.id, 'approvals_given', 1, 'approvals_required', 1) "
        "FROM relctl.promotions p JOIN relctl.promotion_decisions d ON d.promotion = p.id "
        "UNION ALL "
        "SELECT frozen_at, name, 'freeze', 'accepted', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
        "NULL, NULL, NULL, frozen_by, jsonb_build_object('reason', frozen_reason) "
        "FROM relctl.environments WHERE frozen_at IS NOT NULL "
        "UNION ALL "
        "SELECT queued_at, env, 'acquire', 'accepted', NULL, job, release, generation, NULL, NULL, NULL, "
        "NULL, "
        "op_id, host, pid, job_url, NULL, jsonb_build_object('candidate', id, 'queued', true) "
        "FROM relctl.candidates WHERE state = 'waiting') x "
        "WHERE at <= $2::timestamptz",
        envs, now);
    const long long lifecycle = tx.exec1("SELECT count(*) FROM seed_events")[0].as<long long>();

    EventTrail older;
    older.count = std::max(0LL, h.events - lifecycle);
    older.environments.clear();
    for (const pqxx::row& r : tx.exec("SELECT name FROM seed_envs ORDER BY k"))
        older.environments.emplace_back(r[0].c_str());
    older.step = "5 seconds";
    older.start =
        tx.exec_params1("SELECT (min(at) - $1::bigint * interval '5 seconds')::text FROM seed_events",
                        older.count + 1)[0]
            .c_str();
    seedEvents(tx, older);
    tx.exec(
        "INSERT INTO relctl.events (at, env, operation, outcome, reason, job, release, generation, token, "
        "current_token, current_generation, current_release, op_id, host, pid, job_url, actor, detail) "
        "SELECT * FROM seed_events ORDER BY at");

    SeededCounts counts;
    const pqxx::row r =
        tx.exec1("SELECT (SELECT count(*) FROM relctl.events), (SELECT count(*) FROM relctl.leases), "
                 "(SELECT count(*) FROM relctl.manifests), (SELECT count(*) FROM relctl.candidates), "
                 "(SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'), (SELECT count(*) FROM "
                 "relctl.promotions)");
    counts.events = r[0].as<long long>();
    counts.leases = r[1].as<long long>();
    counts.manifests = r[2].as<long long>();
    counts.candidates = r[3].as<long long>();
    counts.waiting = r[4].as<long long>();
    counts.promotions = r[5].as<long long>();
    tx.commit();
    // Like an aged database: visibility map set, statistics current.
    pqxx::nontransaction(conn).exec("VACUUM ANALYZE");
    return counts;
}

// Takes the liveness locks of the waiting candidates on `conn`, as their
// jobs' sessions would: while it stays open they are in the queue.
inline long long holdWaitingCandidates(pqxx::connection& conn)
{
    pqxx::nontransaction tx(conn);
    return tx
        .exec1("SELECT count(pg_advisory_lock(relctl.candidate_lock_class(), lock_key)) "
               "FROM relctl.candidates WHERE state = 'waiting'")[0]
        .as<long long>();
}

} // namespace relctl::bench
