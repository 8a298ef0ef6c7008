#include "relctl/error.h"

#include "relctl/catalogue.h"

namespace relctl {

ExitCode exitCodeForReason(std::string_view reason)
{
    if (reason == "busy")
        return ExitCode::Busy;
    if (const auto r = catalogue::reason(reason))
        return r->exit;
    return ExitCode::Internal;
}

std::string_view errorCodeName(ExitCode code)
{
    switch (code) {
    case ExitCode::Ok:
        return "ok";
    case ExitCode::Internal:
        return "internal";
    case ExitCode::Usage:
        return "usage";
    case ExitCode::Busy:
        return "busy";
    case ExitCode::Stale:
        return "stale";
    case ExitCode::LeaseLost:
        return "lease_lost";
    case ExitCode::Frozen:
        return "frozen";
    case ExitCode::BadCredentials:
        return "bad_credentials";
    case ExitCode::OpConflict:
        return "op_id_conflict";
    case ExitCode::Violations:
        return "violations";
    case ExitCode::NotPromoted:
        return "not_promoted";
    case ExitCode::Unavailable:
        return "unavailable";
    }
    return "internal";
}

Error::Error(ExitCode code, const std::string& message, std::string reason, nlohmann::json detail)
    : std::runtime_error(message), m_code(code),
      m_reason(reason.empty() ? std::string(errorCodeName(code)) : std::move(reason)),
      m_detail(std::move(detail))
{
}

void throwUsage(const std::string& message)
{
    throw Error(ExitCode::Usage, message);
}

} // namespace relctl
