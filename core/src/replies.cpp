// What the replies share across domains (relctl/replies.h); each domain's
// JSON keys are in its own replies_<domain>.cpp.

#include "relctl/replies.h"

namespace relctl {

std::string actorWithLogin(const std::string& by, const std::optional<std::string>& login)
{
    if (!login || login->empty() || *login == by)
        return by;
    return by + " (login " + *login + ")";
}

} // namespace relctl
