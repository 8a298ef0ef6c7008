// Shared by the benchmarks: an audit trail seeded with one set-based INSERT
// (the trail's triggers forbid changes, not inserts). Their scratch databases
// are core's (relctl/scratch.h), as the rehearsals' and the tests' are.
#pragma once

#include "relctl/database.h"

#include <pqxx/pqxx>
#include <string>
#include <utility>
#include <vector>

namespace relctl::bench {

// The shape of a synthetic trail: event i (1..count) happens at start + i *
// step in environments[i % size]; a job per 10 events, a release per 100,
// operations cycling through acquire, renew x3, release, publish; one event in
// 37 refused (four reasons in turn), an actor on one in 50 and a host missing
// on one in 20 (NULL keys for the sorts). The defaults are the audit
// benchmark's trail.
struct EventTrail
{
    long long count = 1'000'000;
    std::vector<std::string> environments{"test", "staging", "prod", "qa", "perf"};
    std::string start = "2024-01-01 00:00Z"; // a timestamptz
    std::string step = "10 milliseconds";    // an interval
    std::string jobPrefix = "job-";
};

// Appends the trail in one INSERT; ids follow `at`, as they do in a trail the
// protocol wrote.
inline void seedEvents(pqxx::transaction_base& tx, const EventTrail& trail)
{
    // Environment names cannot hold a comma (their CHECK): joined with one,
    // they cross as one text parameter.
    std::string envs;
    for (const std::string& env : trail.environments)
        envs += (envs.empty() ? "" : ",") + env;
    tx.exec_params(
        "INSERT INTO relctl.events (at, env, operation, outcome, reason, job, release, generation, "
        "token, op_id, host, pid, job_url, actor) "
        "SELECT $2::timestamptz + i * $3::interval, "
        "e.envs[1 + i % cardinality(e.envs)], "
        "(ARRAY['acquire', 'renew', 'renew', 'renew', 'release', 'publish'])[1 + i % 6], "
        "CASE WHEN i % 37 = 0 THEN 'rejected' ELSE 'accepted' END, "
        "CASE WHEN i % 37 = 0 THEN (ARRAY['STALE_GENERATION', 'LEASE_EXPIRED', 'BAD_LEASE_ID', "
        "'DISPATCH_FROZEN'])[1 + (i / 37) % 4] END, "
        "$5 || (i / 10), 'v' || (i / 100), i / 100 + 1, i / 10 + 1, 'op-' || i, "
        "CASE WHEN i % 20 = 0 THEN NULL ELSE 'runner-' || (i % 13) END, 1000 + i % 50000, "
        "'https://ci.example/jobs/' || (i / 10), CASE WHEN i % 50 = 0 THEN 'operator-' || (i % 7) "
        "END "
        "FROM (SELECT string_to_array($1, ',') AS envs) e, generate_series(1, $4::bigint) AS i",
        envs, trail.start, trail.step, trail.count, trail.jobPrefix);
}

} // namespace relctl::bench
