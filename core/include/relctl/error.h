#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace relctl {

// The outcome classes of every operation. The values are relctl's exit codes
// and part of its contract: CI scripts branch on them. Their names and
// meanings are catalogue::kExitStatuses; the reasons that map onto each are
// catalogue::kReasons.
enum class ExitCode : int {
    Ok = 0,
    Internal = 1,
    Usage = 2,          // bad names, numbers, durations, unknown environment, bad manifest, malformed handle
    Busy = 3,           // another job holds the live lease
    Stale = 4,          // STALE_GENERATION
    LeaseLost = 5,      // LEASE_EXPIRED, LEASE_SUPERSEDED, LEASE_RELEASED, LEASE_REVOKED
    Frozen = 6,         // DISPATCH_FROZEN
    BadCredentials = 7, // BAD_LEASE_ID, UNKNOWN_LEASE, REQUEST_SECRET_MISMATCH, NOT_OWN_CANDIDATE
    OpConflict = 8,     // an operation id reused for a different request
    Unavailable = 9,    // the database cannot be reached (or the outcome of a write is unknown)
    Violations = 10,    // verify or rehearse found a broken invariant (relctl/history.h)
    NotPromoted = 11,   // the promotion gate (catalogue::reasonsFor lists its reasons)
};

// The exit code a refusal reason maps onto (Internal for an unknown reason).
ExitCode exitCodeForReason(std::string_view reason);

// The short machine-readable code of an error class ("busy", "usage", ...),
// used as "error" in JSON output when there is no refusal reason.
std::string_view errorCodeName(ExitCode code);

// A failure that stops an operation before it has an outcome: invalid input,
// an unreachable database, an op-id conflict. Thrown inside core and the CLI,
// caught at the edge and turned into an exit code.
class Error : public std::runtime_error
{
public:
    Error(ExitCode code, const std::string& message, std::string reason = {},
          nlohmann::json detail = nullptr);

    ExitCode code() const noexcept { return m_code; }
    // The refusal reason or, when there is none, errorCodeName(code()).
    const std::string& reason() const noexcept { return m_reason; }
    const nlohmann::json& detail() const noexcept { return m_detail; }

private:
    ExitCode m_code;
    std::string m_reason;
    nlohmann::json m_detail;
};

[[noreturn]] void throwUsage(const std::string& message);

} // namespace relctl
