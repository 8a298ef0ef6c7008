#pragma once

// A moment on the database server's clock, the one form of time in relctl.
//
// Every time relctl shows or compares was taken by the server (now(), a
// column's default): the client's clock never decides anything. The server
// sends a time in one of two forms, and both become a Timestamp:
// - the protocol's replies and the trail (relctl.audit, relctl.status, ...)
//   carry a timestamptz as JSON encodes it, ISO 8601 with microseconds;
// - the console's and the checker's functions (relctl.console_*,
//   relctl.history) send epoch milliseconds, a number, which is cheaper to
//   read a million of and all a screen or an invariant needs.
// A Timestamp is written back as ISO 8601 in UTC, the way PostgreSQL's JSON
// writes a timestamptz under TimeZone UTC, so `relctl ... --json` passes on
// what the server said.

#include <chrono>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace relctl {

class Timestamp final
{
public:
    constexpr Timestamp() = default;

    static constexpr Timestamp fromMicros(std::int64_t us) { return Timestamp(us); }
    static constexpr Timestamp fromMillis(std::int64_t ms) { return Timestamp(ms * 1000); }

    // ISO 8601 as PostgreSQL writes a timestamptz, in JSON ("2024-01-01T10:00:00.5+00:00")
    // or as text ("2024-01-01 10:00:00.5+00"): a date, 'T' or a space, the
    // time with up to six decimals, and an offset (Z, ±HH, ±HH:MM or ±HH:MM:SS).
    // Empty for anything else.
    static std::optional<Timestamp> parse(std::string_view text);

    constexpr std::int64_t micros() const { return m_us; }
    // Rounded down, so that an event never appears after the moment it shows.
    constexpr std::int64_t millis() const { return m_us >= 0 ? m_us / 1000 : -((-m_us + 999) / 1000); }

    // "2024-01-01T10:00:00.5+00:00": UTC, trailing zeros of the fraction
    // dropped and no fraction at a whole second, as PostgreSQL's JSON has it.
    std::string iso() const;

    // Spelled out rather than <=>: <compare> trips the moc of Qt 6.4, and
    // test and console sources that moc reads include this header.
    friend constexpr bool operator==(Timestamp, Timestamp) = default;
    friend constexpr bool operator<(Timestamp a, Timestamp b) { return a.m_us < b.m_us; }
    friend constexpr bool operator>(Timestamp a, Timestamp b) { return a.m_us > b.m_us; }
    friend constexpr bool operator<=(Timestamp a, Timestamp b) { return a.m_us <= b.m_us; }
    friend constexpr bool operator>=(Timestamp a, Timestamp b) { return a.m_us >= b.m_us; }
    friend constexpr std::chrono::microseconds operator-(Timestamp a, Timestamp b)
    {
        return std::chrono::microseconds(a.m_us - b.m_us);
    }
    friend constexpr Timestamp operator+(Timestamp t, std::chrono::microseconds d)
    {
        return Timestamp(t.m_us + d.count());
    }
    friend constexpr Timestamp operator-(Timestamp t, std::chrono::microseconds d)
    {
        return Timestamp(t.m_us - d.count());
    }

private:
    constexpr explicit Timestamp(std::int64_t us) : m_us(us) {}

    std::int64_t m_us = 0; // since 1970-01-01 00:00:00 UTC
};

// JSON: written as iso(); read from an ISO string or from a number of epoch
// milliseconds (the console's functions). Anything else throws
// nlohmann::json::type_error, as a mistyped member of a reply does.
void to_json(nlohmann::json& j, const Timestamp& t);
void from_json(const nlohmann::json& j, Timestamp& t);

} // namespace relctl
