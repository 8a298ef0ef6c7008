#pragma once

#include <chrono>
#include <string>

// The demo (release-console --demo) lives in a cluster of its own beside the
// embedded one (EmbeddedCluster::demoForCurrentUser), which nothing but --demo
// opens. Its history is a week written through the protocol itself (no SQL)
// by people and jobs with logins of their own, while the demo's server runs
// on a clock only the demo controls (libfaketime): three environments with a
// promotion path test → staging → prod (prod needing a two-hour soak and two
// approvals), dozens of releases at working hours, races, expired leases, a
// freeze with a rollback on prod; and today an incident with a refused stale
// write, a revoke, a rollback on staging, the promotion gate's refusals, two
// requests open for prod, a job holding test and prod frozen.
namespace relctl {

class EmbeddedCluster;

// Writes the week into `cluster`'s relctl database (dropped and created again
// first), its last event just before `end`; the server is back on the real
// clock afterwards. Refused unless `cluster` is a demo cluster. About two
// seconds beside restarting the server twice.
void seedDemoWeek(EmbeddedCluster& cluster, std::chrono::system_clock::time_point end);

// The login the demo's pipelines run their jobs as (relctl_job), beside the
// people's own: a supersession queued by a job is approved from another login.
const std::string& demoJobLogin();

// The demo's database, seeded first when it has no environments or its newest
// event is more than 12 hours old; returns its conninfo (the OS user's login).
// Takes seconds when it seeds: run it off the GUI thread.
std::string openDemo(EmbeddedCluster& cluster);

} // namespace relctl
