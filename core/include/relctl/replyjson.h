#pragma once

// How every reply type (relctl/replies_*.h) is made JSON: from_json/to_json
// are nlohmann's conversion hooks, declared for each type by
// RELCTL_REPLY_JSON: `reply.get<Environment>()` parses,
// `nlohmann::json(environment)` (or toJson) writes. Their definitions, from
// one list of keys per type, are private to core (src/replyfields.h).

#include <nlohmann/json.hpp>

// Left defined: each replies_*.h uses it, and any of them may come first.
// NOLINTBEGIN(bugprone-macro-parentheses): the argument is a type name
#define RELCTL_REPLY_JSON(Type)                                                                              \
    void to_json(nlohmann::json& j, const Type& value);                                                      \
    void from_json(const nlohmann::json& j, Type& value)
// NOLINTEND(bugprone-macro-parentheses)

namespace relctl {

// A reply as the server sent it: for --json output.
template <class Reply> nlohmann::json toJson(const Reply& reply)
{
    nlohmann::json j;
    to_json(j, reply);
    return j;
}

} // namespace relctl
