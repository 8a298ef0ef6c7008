#pragma once

// Private to core: reading members of the server's JSON replies where a
// missing member and JSON null both mean "no value" (the server writes null
// for NULL columns).

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

namespace relctl::jsonfields {

template <typename T> std::optional<T> optional(const nlohmann::json& j, const char* key)
{
    const auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return std::nullopt;
    return it->get<T>();
}

template <typename T> T value(const nlohmann::json& j, const char* key, T fallback = T())
{
    return optional<T>(j, key).value_or(std::move(fallback));
}

} // namespace relctl::jsonfields
