#pragma once

// Private to core: reading the fields of rows the server's set-returning
// functions answer (relctl.console_environments, relctl.env_brief), as
// jsonfields.h reads members of its JSON replies: NULL is no value, and a
// value that does not convert is an unreadable reply.

#include "relctl/error.h"
#include "relctl/time.h"

#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <type_traits>
#include <utility>

namespace relctl::rowfields {

// Text as it is, a Timestamp from epoch milliseconds, anything else as
// libpqxx converts it.
template <typename T> std::optional<T> optional(const pqxx::field& f)
{
    if (f.is_null())
        return std::nullopt;
    if constexpr (std::is_same_v<T, std::string>)
        return std::string(f.c_str(), f.size());
    else if constexpr (std::is_same_v<T, Timestamp>)
        return Timestamp::fromMillis(f.as<std::int64_t>());
    else
        return f.as<T>();
}

template <typename T> T required(const pqxx::field& f)
{
    std::optional<T> v = optional<T>(f);
    if (!v)
        throw Error(ExitCode::Internal,
                    std::string("unreadable reply from the database: ") + f.name() + " is NULL");
    return std::move(*v);
}

} // namespace relctl::rowfields
