#pragma once

// The history checker: the protocol's invariants, judged from what the
// database recorded (leases, manifests, the audit trail and the record of
// operation outcomes), not from what any client believes. `relctl verify`
// runs it read-only against any relctl database, production included, and
// every rehearsal ends with it on its scratch database.
//
// The checks are pure functions of a History value, so each is unit-tested on
// fabricated histories that break exactly that check (tests/test_history.cpp);
// nothing in the protocol has to be bypassed to show that a check can fail.

#include "relctl/event.h"
#include "relctl/time.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace relctl {

class Database;

namespace history {

struct EnvironmentRow
{
    std::string name;
    std::int64_t lastToken = 0;
    std::optional<std::int64_t> currentManifestId;
};

struct LeaseRow
{
    std::string env;
    std::int64_t token = 0;
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    Timestamp acquiredAt;
    // A renewal moves it only while the lease is live and newest (one that
    // has expired, ended or been superseded is refused), so a lease was live
    // exactly on [acquiredAt, min(expiresAt, endedAt)), and once a newer token
    // is granted neither moves again.
    Timestamp expiresAt;
    std::optional<Timestamp> endedAt;
    std::optional<std::string> endReason; // released | revoked
    std::optional<std::string> opId;
};

struct ManifestRow
{
    std::int64_t id = 0;
    std::string env;
    std::string release;
    std::int64_t generation = 0;
    std::string job;
    std::optional<std::int64_t> token; // empty: published with serialization off
    Timestamp publishedAt;
    std::optional<std::string> opId;
};

// A rollback made an older manifest of its environment current again, with
// no new manifest row. It took the environment's next fencing token through a
// lease that ended at once (no acquire event: its `rollback` event grants it),
// so every lease before it is fenced out. The freshness bar does not move back.
struct RollbackRow
{
    std::int64_t id = 0;
    std::string env;
    std::int64_t token = 0;
    std::int64_t restoredManifestId = 0;
    std::int64_t replacedManifestId = 0; // current until the rollback
    Timestamp at;
    std::optional<std::string> opId;
};

// The first recorded outcome of an operation id.
struct OperationRow
{
    std::string opId;
    std::string operation;
    std::string status; // ok | refused | busy | queued ...
    std::optional<std::string> reason;
    std::optional<std::string> env;
    Timestamp recordedAt;
};

struct History
{
    std::vector<EnvironmentRow> environments;
    std::vector<LeaseRow> leases;       // by env, token
    std::vector<ManifestRow> manifests; // by id
    std::vector<RollbackRow> rollbacks; // by env, token
    std::vector<Event> events;          // by id
    std::vector<OperationRow> operations;
    // What the history was read for (`--env`, `--since`); empty: everything.
    std::optional<std::string> env;
    std::optional<Timestamp> since;
};

// Reads the history from a relctl database through relctl.history() (granted
// to relctl_reviewer): one read-only transaction, so the tables are seen at
// one instant. With `since` (from the start of its millisecond: the checks
// judge whole milliseconds), rows before it are left out except what the
// checks need to judge the rows after it (each environment's last manifest
// and last rollback before it, the manifests a rollback names, the leases
// live at it with their acquire events, and every env-set). With `env` or
// `since`, the history also holds, as context, the manifests by which an
// environment the judged ones were ever promoted from accepted what they
// published, and the rollbacks that replaced or restored those. `since` is
// what `relctl audit --since` takes: a duration ("2h") is an age on the
// server's clock, anything else a time PostgreSQL reads as timestamptz. Throws Error(Usage) for an
// unknown environment or an unreadable time, Error(Unavailable) when the
// database cannot be reached.
History load(Database& db, const std::optional<std::string>& env = {},
             const std::optional<std::string>& since = {});

struct Verdict
{
    std::string name; // e.g. "fencing-tokens-increase"
    bool passed = true;
    std::string detail;                  // one line: what was checked, or the first violation
    std::vector<std::string> violations; // every violation found, one line each
};

struct Expectations
{
    // The release that must be current on the environment at the end.
    std::optional<std::string> env;
    std::optional<std::string> currentRelease;
};

struct CheckInfo
{
    std::string name;
    std::string meaning; // one sentence, for help texts and reports
};

// The checks, in the order check() reports them.
const std::vector<CheckInfo>& checks();

// Every check on the history (and "expected-current-manifest" when the
// expectations name a release). Never throws on a malformed history: a row
// that cannot be judged is itself a violation. With history.env, only that
// environment is judged; with history.since, only rows at or after it (older
// rows are context: what the first judged row is compared with).
//
// Times are whole milliseconds (floored on the server), so two instants in
// the same millisecond cannot be ordered: comparisons that need an order
// (published before expiry, a newer lease acquired before a publish) treat
// equal milliseconds as the protocol's order.
std::vector<Verdict> check(const History& history, const Expectations& expected = {});

bool allPassed(const std::vector<Verdict>& verdicts);

} // namespace history
} // namespace relctl
