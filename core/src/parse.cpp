#include "relctl/parse.h"

#include <charconv>
#include <limits>

namespace relctl {

namespace {

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}
bool isLowerHex(char c)
{
    return isDigit(c) || (c >= 'a' && c <= 'f');
}

// Plain decimal digits only: from_chars alone would accept a leading '-'.
std::optional<std::int64_t> parseDigits(std::string_view text)
{
    if (text.empty() || text.size() > 19)
        return std::nullopt;
    for (char c : text)
        if (!isDigit(c))
            return std::nullopt;
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

} // namespace

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text)
{
    std::int64_t scale = 1000;
    std::string_view digits = text;
    auto strip = [&](std::string_view suffix, std::int64_t factor) {
        if (digits.size() > suffix.size() && digits.ends_with(suffix)) {
            digits.remove_suffix(suffix.size());
            scale = factor;
            return true;
        }
        return false;
    };
    // "ms" before "s" and "m": it ends with both.
    strip("ms", 1) || strip("s", 1000) || strip("m", 60'000) || strip("h", 3'600'000);
    auto value = parseDigits(digits);
    if (!value || *value > std::numeric_limits<std::int64_t>::max() / scale)
        return std::nullopt;
    return std::chrono::milliseconds(*value * scale);
}

std::optional<std::int64_t> parsePositiveInt(std::string_view text)
{
    auto value = parseDigits(text);
    if (!value || *value <= 0)
        return std::nullopt;
    return value;
}

bool isValidEnvironmentName(std::string_view name)
{
    if (name.empty() || name.size() > 63)
        return false;
    auto first = [](char c) { return isDigit(c) || (c >= 'a' && c <= 'z'); };
    if (!first(name.front()))
        return false;
    for (char c : name.substr(1))
        if (!first(c) && c != '.' && c != '_' && c != '-')
            return false;
    return true;
}

std::string Handle::toString() const
{
    return env + ':' + std::to_string(token) + ':' + leaseId;
}

std::optional<Handle> parseHandle(std::string_view text)
{
    // Environment names cannot contain ':', so the two separators are unambiguous.
    auto first = text.find(':');
    if (first == std::string_view::npos)
        return std::nullopt;
    auto second = text.find(':', first + 1);
    if (second == std::string_view::npos)
        return std::nullopt;
    Handle h;
    h.env = std::string(text.substr(0, first));
    auto token = parsePositiveInt(text.substr(first + 1, second - first - 1));
    std::string_view id = text.substr(second + 1);
    if (!isValidEnvironmentName(h.env) || !token || id.size() != 32)
        return std::nullopt;
    for (char c : id)
        if (!isLowerHex(c))
            return std::nullopt;
    h.token = *token;
    h.leaseId = std::string(id);
    return h;
}

std::string formatDuration(std::chrono::milliseconds d)
{
    auto ms = d.count();
    if (ms % 3'600'000 == 0 && ms != 0)
        return std::to_string(ms / 3'600'000) + "h";
    if (ms % 60'000 == 0 && ms != 0)
        return std::to_string(ms / 60'000) + "m";
    if (ms % 1000 == 0)
        return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

} // namespace relctl
