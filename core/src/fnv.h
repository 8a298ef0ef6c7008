#pragma once

// Private to core: a hash that is the same in every build and on every
// machine (std::hash may differ), for names and stamps that must stay stable
// across relctl versions.

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace relctl::detail {

// FNV-1a, 64 bits. Fed piece by piece; the pieces' boundaries do not count.
class Fnv1a final
{
public:
    static constexpr std::uint64_t kOffsetBasis = 14695981039346656037ULL;

    explicit constexpr Fnv1a(std::uint64_t seed = kOffsetBasis) : m_value(seed) {}

    constexpr Fnv1a& add(std::string_view text)
    {
        for (const char c : text)
            m_value = (m_value ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
        return *this;
    }

    constexpr std::uint64_t value() const { return m_value; }

    // Sixteen lower-case hex digits.
    std::string hex() const
    {
        char text[17];
        std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(m_value));
        return text;
    }

private:
    std::uint64_t m_value;
};

} // namespace relctl::detail
