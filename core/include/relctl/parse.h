#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace relctl {

// "250ms", "30s", "5m", "1h"; a bare integer means seconds. Zero is a valid
// duration (callers that need a positive one check); negative, fractional or
// overflowing text is not.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view text);

// A strictly positive 64-bit integer in plain decimal (no sign, no spaces).
std::optional<std::int64_t> parsePositiveInt(std::string_view text);

// ^[a-z0-9][a-z0-9._-]{0,62}$
bool isValidEnvironmentName(std::string_view name);

// A lease handle, ENV:TOKEN:LEASE_ID with the lease id as 32 lowercase hex digits.
struct Handle
{
    std::string env;
    std::int64_t token = 0;
    std::string leaseId;

    std::string toString() const;
    friend bool operator==(const Handle&, const Handle&) = default;
};

std::optional<Handle> parseHandle(std::string_view text);

// Human form of a duration for messages: "60s", "1500ms", "10m".
std::string formatDuration(std::chrono::milliseconds d);

} // namespace relctl
