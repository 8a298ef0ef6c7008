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
    Reason{"OP_ID_CONFLICT", ExitCode::OpConflict, "the operation id was already used for a different request"},
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

} // namespace relctl::catalogue
