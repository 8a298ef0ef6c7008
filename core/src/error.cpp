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
    for (const catalogue::ExitStatus& s : catalogue::kExitStatuses)
        if (s.code == code)
            return s.name;
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
