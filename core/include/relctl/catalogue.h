#pragma once

// The protocol's vocabulary, defined once: the refusal reasons with the exit
// code each maps onto, the operations the audit trail records, and the
// columns the audit trail can be sorted by. The CLI, the console's filters,
// the exporter, the benchmarks and the tests read them from here; the SQL
// side checks the same lists (relctl.refusal_reasons() and
// relctl.audited_operations() in migrations/functions/catalogue.sql, and the
// whitelist of relctl.console_audit), and tests/test_security.cpp compares
// them, so adding a reason or an operation is one edit here and one there.

#include "relctl/error.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace relctl::catalogue {

struct Reason
{
    std::string_view code;
    ExitCode exit;
    std::string_view meaning; // one line, for help texts and tooltips
};

// Every reason a refusal is recorded with, most common first (the order of
// the console's filter).
inline constexpr std::array kReasons{
    Reason{"STALE_GENERATION", ExitCode::Stale, "the generation is not newer than the published one"},
    Reason{"SUPERSEDED", ExitCode::Stale, "a queued candidate was skipped for a newer one"},
    Reason{"LEASE_EXPIRED", ExitCode::LeaseLost, "the lease ran out on the server's clock"},
    Reason{"LEASE_SUPERSEDED", ExitCode::LeaseLost, "a newer lease was granted"},
    Reason{"LEASE_RELEASED", ExitCode::LeaseLost, "the lease was released"},
    Reason{"LEASE_REVOKED", ExitCode::LeaseLost, "an operator revoked the lease"},
    Reason{"BAD_LEASE_ID", ExitCode::BadCredentials, "the lease exists but the lease id does not match"},
    Reason{"UNKNOWN_LEASE", ExitCode::BadCredentials, "no such lease"},
    Reason{"REQUEST_SECRET_MISMATCH", ExitCode::BadCredentials,
           "a retried acquire without the first attempt's request secret"},
    Reason{"DISPATCH_FROZEN", ExitCode::Frozen, "the environment is frozen"},
    Reason{"NO_LEASE", ExitCode::LeaseLost, "a publish without a lease while serialization is enforced"},
    Reason{"NOT_PROMOTED", ExitCode::NotPromoted,
           "the release was not accepted on the environment it is promoted from (or not long enough)"},
    Reason{"APPROVAL_REQUIRED", ExitCode::NotPromoted,
           "the promotion lacks the approvals the environment requires"},
    Reason{"APPROVAL_DENIED", ExitCode::NotPromoted,
           "the promotion was denied (final for that release and generation)"},
    Reason{"SELF_APPROVAL", ExitCode::NotPromoted,
           "the requester of a promotion (its login or name) tried to approve it"},
    Reason{"NOT_APPROVER", ExitCode::NotPromoted,
           "the login is not a member of the environment's approver role"},
    Reason{"DUPLICATE_APPROVAL", ExitCode::NotPromoted,
           "the login already decided the request (one login counts once), or the name was another login's"},
    Reason{"QUEUE_FULL", ExitCode::Busy,
           "the environment's queue, or the login's waiting candidates, reached their cap; try later"},
    Reason{"NOT_OWN_CANDIDATE", ExitCode::BadCredentials,
           "a call on a queued candidate from a session or secret other than the one that queued it"},
    Reason{"CANDIDATE_DROPPED", ExitCode::Stale, "a release manager took the candidate out of the queue"},
    Reason{"OP_ID_CONFLICT", ExitCode::OpConflict,
           "the operation id was already used for a different request"},
    Reason{"PROMOTIONS_FULL", ExitCode::Busy,
           "the environment's open promotion requests, or the login's, reached their cap; try later"},
};

// The reason with this code, if it is one.
constexpr std::optional<Reason> reason(std::string_view code)
{
    for (const Reason& r : kReasons)
        if (r.code == code)
            return r;
    return std::nullopt;
}

// Every operation the audit trail records, in the console's filter order.
inline constexpr std::array<std::string_view, 19> kOperations{
    "acquire",
    "renew",
    "release",
    "publish",
    "revoke",
    "freeze",
    "unfreeze",
    "approve",
    "deny",
    "env-add",
    "env-set",
    "supersession-requested",
    "promotion-requested",
    "promotion-approve",
    "promotion-deny",
    "rollback",
    "queue-drop",
    "session-ended",
    "refusals-unrecorded",
};

// The sort keys relctl.console_audit accepts, in AuditSort::Column order.
inline constexpr std::array<std::string_view, 11> kAuditSortKeys{
    "time", "env", "operation", "outcome", "reason", "job", "release", "generation", "token", "host", "actor",
};

// relctl's exit statuses, each with its machine-readable name (JSON output's
// "error" when there is no refusal reason) and what it means. The reasons
// above say which refusals map onto each; --help's notes, the manual page's
// EXIT STATUS and the command reference are generated from both.
struct ExitStatus
{
    ExitCode code;
    std::string_view name;
    std::string_view meaning;
};

inline constexpr std::array kExitStatuses{
    ExitStatus{ExitCode::Ok, "ok", "done"},
    ExitStatus{ExitCode::Internal, "internal",
               "an internal error, or a login without the relctl role the command needs"},
    ExitStatus{ExitCode::Usage, "usage",
               "invalid input (names, numbers, durations, an unknown environment, a bad manifest or handle); "
               "nothing was written"},
    ExitStatus{ExitCode::Busy, "busy", "another job holds the live lease, or a cap was reached; try later"},
    ExitStatus{ExitCode::Stale, "stale", "the generation is not newer than the environment's bar"},
    ExitStatus{ExitCode::LeaseLost, "lease_lost", "the lease ran out, was superseded, released or revoked"},
    ExitStatus{ExitCode::Frozen, "frozen", "the environment's dispatch is frozen"},
    ExitStatus{ExitCode::BadCredentials, "bad_credentials",
               "the lease id or the request secret does not match, or the call was not the candidate's own"},
    ExitStatus{ExitCode::OpConflict, "op_id_conflict",
               "the operation id was already used for a different request"},
    ExitStatus{ExitCode::Unavailable, "unavailable",
               "the database cannot be reached, or a write's outcome is unknown (retry with the same op id)"},
    ExitStatus{ExitCode::Violations, "violations", "verify or rehearse found a broken invariant"},
    ExitStatus{ExitCode::NotPromoted, "not_promoted",
               "the promotion gate: not accepted upstream (or not long enough), approvals missing or denied"},
};

// The reasons that map onto an exit status, comma-separated, in the
// catalogue's order ("" when none does).
inline std::string reasonsFor(ExitCode code)
{
    std::string list;
    for (const Reason& r : kReasons)
        if (r.exit == code)
            list += (list.empty() ? "" : ", ") + std::string(r.code);
    return list;
}

// The environment variables relctl reads, and those `run` sets for its command.
struct Variable
{
    std::string_view name;
    std::string_view meaning;
    bool setForCommand = false; // set by `relctl run` for the command it runs
};

inline constexpr std::array kVariables{
    Variable{"RELCTL_DSN", "the database (a libpq connection string or URI) when --dsn is not given"},
    Variable{"RELCTL_LEASE", "the lease handle ENV:TOKEN:LEASE_ID of renew, release and publish"},
    Variable{"RELCTL_OP_KEY",
             "a key of 16 to 512 characters: each op id's request secret is its HMAC-SHA256 under it, "
             "so a retry on another runner proves itself"},
    Variable{"RELCTL_STATE_DIR", "where request secrets are kept (default $XDG_STATE_HOME/relctl)"},
    Variable{"RELCTL_STATE_RETENTION",
             "how long a request secret is kept after its last use (default 7 days)"},
    Variable{"RELCTL_STATE_MAX_FILES", "how many request secrets are kept at most (default 10000)"},
    Variable{"RELCTL_CALL_TIMEOUT", "how long one call waits for the server before exit 9 (default 35s)"},
    Variable{"RELCTL_RECONNECT_TIMEOUT",
             "how long a lost connection is tried again to settle a write (default 15s; 0 turns it off)"},
    Variable{"RELCTL_LOG", "the log level on standard error (trace, debug, info, warn, error; default warn)"},
    Variable{"RELCTL_PG_BINDIR", "where the embedded database's PostgreSQL server programs are"},
    Variable{"RELCTL_EXECUTABLE", "the relctl executable rehearsals run (default: this one)"},
    Variable{"RELCTL_LEASE", "the command's lease handle, for relctl lease renew", true},
    Variable{"RELCTL_FENCING_TOKEN", "the lease's fencing token, to present to the deploy target", true},
    Variable{"RELCTL_ENV", "the environment", true},
    Variable{"RELCTL_RELEASE", "the release", true},
    Variable{"RELCTL_GENERATION", "the generation", true},
};

} // namespace relctl::catalogue
