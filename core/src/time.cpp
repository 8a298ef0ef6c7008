// Timestamp's text forms. The calendar arithmetic is Howard Hinnant's
// days-from-civil and its inverse (proleptic Gregorian, no time zone
// database): a Timestamp is UTC and an offset in the text is applied by hand,
// so the client's TZ never enters.

#include "relctl/time.h"

#include <array>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>

namespace relctl {

namespace {

constexpr std::int64_t kMicrosPerSecond = 1'000'000;
constexpr std::int64_t kSecondsPerDay = 86'400;

constexpr std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil
{
    std::int64_t year;
    unsigned month;
    unsigned day;
};

constexpr Civil civilFromDays(std::int64_t z)
{
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    return {static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

static_assert(daysFromCivil(1970, 1, 1) == 0);
static_assert(daysFromCivil(2000, 3, 1) == 11017);
static_assert(civilFromDays(11017).year == 2000 && civilFromDays(11017).month == 3);

// Reads exactly `width` digits at `pos`, advancing it.
bool digits(std::string_view s, std::size_t& pos, std::size_t width, unsigned& out)
{
    if (pos + width > s.size())
        return false;
    out = 0;
    for (std::size_t i = 0; i < width; ++i) {
        const char c = s[pos + i];
        if (c < '0' || c > '9')
            return false;
        out = out * 10 + static_cast<unsigned>(c - '0');
    }
    pos += width;
    return true;
}

bool expect(std::string_view s, std::size_t& pos, char c)
{
    if (pos >= s.size() || s[pos] != c)
        return false;
    ++pos;
    return true;
}

void appendPadded(std::string& out, std::int64_t n, int width)
{
    std::array<char, 24> buf{};
    const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), n);
    const auto len = static_cast<int>(end - buf.data());
    out.append(static_cast<std::size_t>(width > len ? width - len : 0), '0');
    out.append(buf.data(), end);
}

} // namespace

std::optional<Timestamp> Timestamp::parse(std::string_view text)
{
    std::size_t pos = 0;
    unsigned year = 0;
    unsigned month = 0;
    unsigned day = 0;
    unsigned hour = 0;
    unsigned minute = 0;
    unsigned second = 0;
    if (!digits(text, pos, 4, year) || !expect(text, pos, '-') || !digits(text, pos, 2, month) ||
        !expect(text, pos, '-') || !digits(text, pos, 2, day))
        return std::nullopt;
    if (pos >= text.size() || (text[pos] != 'T' && text[pos] != ' '))
        return std::nullopt;
    ++pos;
    if (!digits(text, pos, 2, hour) || !expect(text, pos, ':') || !digits(text, pos, 2, minute) ||
        !expect(text, pos, ':') || !digits(text, pos, 2, second))
        return std::nullopt;
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59)
        return std::nullopt;
    std::int64_t fraction = 0;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        std::int64_t scale = 100'000;
        const std::size_t first = pos;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
            if (pos - first >= 6)
                return std::nullopt; // finer than the server keeps
            fraction += (text[pos] - '0') * scale;
            scale /= 10;
            ++pos;
        }
        if (pos == first)
            return std::nullopt;
    }
    std::int64_t offset = 0; // seconds east of UTC
    if (pos < text.size() && text[pos] == 'Z') {
        ++pos;
    } else {
        if (pos >= text.size() || (text[pos] != '+' && text[pos] != '-'))
            return std::nullopt;
        const int sign = text[pos] == '-' ? -1 : 1;
        ++pos;
        unsigned oh = 0;
        unsigned om = 0;
        unsigned os = 0;
        if (!digits(text, pos, 2, oh))
            return std::nullopt;
        if (pos < text.size() && text[pos] == ':' && !(++pos, digits(text, pos, 2, om)))
            return std::nullopt;
        if (pos < text.size() && text[pos] == ':' && !(++pos, digits(text, pos, 2, os)))
            return std::nullopt;
        offset = sign * static_cast<std::int64_t>(oh * 3600 + om * 60 + os);
    }
    if (pos != text.size())
        return std::nullopt;
    const Civil back = civilFromDays(daysFromCivil(year, month, day));
    if (back.month != month || back.day != day)
        return std::nullopt; // 31 February
    const std::int64_t seconds =
        daysFromCivil(year, month, day) * kSecondsPerDay + hour * 3600 + minute * 60 + second - offset;
    return Timestamp(seconds * kMicrosPerSecond + fraction);
}

std::string Timestamp::iso() const
{
    std::int64_t seconds = m_us / kMicrosPerSecond;
    std::int64_t fraction = m_us % kMicrosPerSecond;
    if (fraction < 0) {
        fraction += kMicrosPerSecond;
        --seconds;
    }
    std::int64_t days = seconds / kSecondsPerDay;
    std::int64_t inDay = seconds % kSecondsPerDay;
    if (inDay < 0) {
        inDay += kSecondsPerDay;
        --days;
    }
    const Civil c = civilFromDays(days);
    std::string out;
    out.reserve(32);
    appendPadded(out, c.year, 4);
    out += '-';
    appendPadded(out, c.month, 2);
    out += '-';
    appendPadded(out, c.day, 2);
    out += 'T';
    appendPadded(out, inDay / 3600, 2);
    out += ':';
    appendPadded(out, inDay / 60 % 60, 2);
    out += ':';
    appendPadded(out, inDay % 60, 2);
    if (fraction != 0) {
        std::string micros;
        appendPadded(micros, fraction, 6);
        while (micros.back() == '0')
            micros.pop_back();
        out += '.';
        out += micros;
    }
    out += "+00:00";
    return out;
}

void to_json(nlohmann::json& j, const Timestamp& t)
{
    j = t.iso();
}

void from_json(const nlohmann::json& j, Timestamp& t)
{
    if (j.is_number_integer()) {
        // Beyond what microseconds hold (about 292,000 years either side):
        // refused rather than wrapped.
        constexpr std::int64_t kMaxMillis = std::numeric_limits<std::int64_t>::max() / 1000;
        const std::int64_t ms = j.is_number_unsigned() && j.get<std::uint64_t>() > std::uint64_t(kMaxMillis)
                                    ? kMaxMillis + 1
                                    : j.get<std::int64_t>();
        if (ms > kMaxMillis || ms < -kMaxMillis)
            throw nlohmann::json::type_error::create(302, "a timestamp out of range: " + j.dump(), &j);
        t = Timestamp::fromMillis(ms);
        return;
    }
    if (j.is_string()) {
        if (const auto parsed = Timestamp::parse(j.get_ref<const std::string&>())) {
            t = *parsed;
            return;
        }
        throw nlohmann::json::type_error::create(302, "not a timestamp: " + j.get<std::string>(), &j);
    }
    throw nlohmann::json::type_error::create(302, std::string("a timestamp cannot be ") + j.type_name(), &j);
}

} // namespace relctl
