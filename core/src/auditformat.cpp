// Formatting of the audit export: the one field table both formats share,
// CSV and JSON cell writing, and the row writer that turns a row of cells
// (an event's, or the server's text from relctl.console_audit_export) into
// CSV or JSON. Apart from auditexport.cpp, which reads the rows and moves the
// bytes to the file, so that the format can change without the transport.
// Only an event's detail goes through a JSON parser, so that both formats
// give it exactly as before (compact, keys in order).

#include "auditformat.h"

#include "relctl/auditexport.h"
#include "relctl/error.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <ostream>
#include <utility>
#include <vector>

namespace relctl::detail {

// How a field is written.
enum class Kind {
    Integer, // its decimal digits; absent: empty (CSV), null (JSON)
    Time,    // written as 2024-01-01T00:00:00.010Z; from an event, epoch ms; from the server, its text
    Env,     // text; an event without an environment reaches core as "": absent
    Text,    // text, CSV-quoted or a JSON string
    // JSON: structured in JSON exports, its compact text in CSV (a string
    // detail as the string, a number as the number).
    Detail,
};

namespace {

// ISO 8601 in UTC to the second, as the console shows and the model's export
// wrote: 2024-01-01T00:00:00 (the milliseconds follow).
std::string utcSeconds(std::time_t seconds)
{
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return buffer;
}

using Value = nlohmann::ordered_json;

// The one list both formats use, so CSV headers and JSON keys cannot drift
// apart; the names and order of `relctl audit --json` events, and the columns
// of relctl.console_audit_export.
struct Field
{
    const char* name;
    Kind kind;
};

constexpr Field fields[] = {
    {"id", Kind::Integer},
    {"at", Kind::Time},
    {"env", Kind::Env},
    {"operation", Kind::Text},
    {"outcome", Kind::Text},
    {"reason", Kind::Text},
    {"job", Kind::Text},
    {"release", Kind::Text},
    {"generation", Kind::Integer},
    {"token", Kind::Integer},
    {"current_token", Kind::Integer},
    {"current_generation", Kind::Integer},
    {"current_release", Kind::Text},
    {"op_id", Kind::Text},
    {"host", Kind::Text},
    {"pid", Kind::Integer},
    {"job_url", Kind::Text},
    {"actor", Kind::Text},
    {"db_user", Kind::Text},
    {"client_addr", Kind::Text},
    {"detail", Kind::Detail},
};
constexpr std::size_t kFields = std::size(fields);

// The bytes that make a CSV field quoted, as a table: find_first_of with a
// set calls memchr over the set for every byte of the field, which was the
// largest part of the client's time in a large export.
constexpr std::array<bool, 256> csvQuoted = [] {
    std::array<bool, 256> t{};
    for (const char c : {',', '"', '\r', '\n'})
        t[static_cast<unsigned char>(c)] = true;
    return t;
}();

void appendCsvField(std::string& out, std::string_view s)
{
    if (std::none_of(s.begin(), s.end(), [](char c) { return csvQuoted[static_cast<unsigned char>(c)]; })) {
        out += s;
        return;
    }
    out += '"';
    for (const char c : s) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
}

// A JSON string as nlohmann::json writes one (UTF-8 kept, invalid bytes
// replaced): printable ASCII as it is, anything else through the library.
void appendJsonString(std::string& out, std::string_view s)
{
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
            out += Value(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            return;
        }
    }
    out += '"';
    out += s;
    out += '"';
}

void appendInteger(std::string& out, std::int64_t n)
{
    char digits[24];
    const auto end = std::to_chars(std::begin(digits), std::end(digits), n).ptr;
    out.append(digits, end);
}

[[noreturn]] void unreadable(const std::string& what)
{
    throw Error(ExitCode::Internal, "unreadable export row from the database: " + what);
}

// What comes before each value of a JSON object: the brace or comma and the
// key, made once (a million-row export writes 21 million of them).
const std::array<std::string, kFields>& jsonKeys()
{
    static const std::array<std::string, kFields> keys = [] {
        std::array<std::string, kFields> k;
        for (std::size_t i = 0; i < kFields; ++i)
            k.at(i) = std::string(i == 0 ? "{" : ",") + '"' + fields[i].name + "\":";
        return k;
    }();
    return keys;
}

// A detail as jsonb writes it, when it is a flat object of integers and plain
// strings (every detail the protocol writes: {"ttl_ms": 60000}, {"state":
// "released"}, ...), into `out` exactly as nlohmann::json writes it once read
// (keys in byte order, compact), without building one: reading each detail
// into a JSON value took most of the client's time in an export of a real
// trail (1.4 s of CPU per million events). False, with `out` unspecified,
// for anything else: nested values, floats, booleans, null, escapes or
// non-ASCII text, which the JSON library writes its own way.
bool compactFlatObject(std::string_view text,
                       std::vector<std::pair<std::string_view, std::string_view>>& members, std::string& out)
{
    members.clear();
    std::size_t i = 0;
    const auto skipSpaces = [&] {
        while (i < text.size() && text[i] == ' ')
            ++i;
    };
    // A string of printable ASCII without escapes, with its quotes.
    const auto plainString = [&](std::string_view& into) {
        if (i >= text.size() || text[i] != '"')
            return false;
        const std::size_t start = i++;
        while (i < text.size() && text[i] != '"') {
            const auto c = static_cast<unsigned char>(text[i]);
            if (c < 0x20 || c >= 0x7f || c == '\\')
                return false;
            ++i;
        }
        if (i >= text.size())
            return false;
        into = text.substr(start, ++i - start);
        return true;
    };
    // An integer as jsonb writes one: no leading zero, no "-0", few enough
    // digits for an int64.
    const auto integer = [&](std::string_view& into) {
        const std::size_t start = i;
        if (i < text.size() && text[i] == '-')
            ++i;
        const std::size_t digits = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9')
            ++i;
        const std::size_t n = i - digits;
        if (n == 0 || n > 18 || (n > 1 && text[digits] == '0') || (text[start] == '-' && text[digits] == '0'))
            return false;
        into = text.substr(start, i - start);
        return true;
    };
    // The next character past any spaces, taken when it is `c`.
    const auto accept = [&](char c) {
        skipSpaces();
        if (i >= text.size() || text[i] != c)
            return false;
        ++i;
        return true;
    };
    if (!accept('{'))
        return false;
    if (!accept('}')) {
        do {
            std::string_view key;
            std::string_view value;
            skipSpaces();
            if (!plainString(key) || !accept(':'))
                return false;
            skipSpaces();
            if (!(i < text.size() && text[i] == '"' ? plainString(value) : integer(value)))
                return false;
            members.emplace_back(key, value);
        } while (accept(','));
        if (!accept('}'))
            return false;
    }
    skipSpaces();
    if (i != text.size())
        return false;
    // Keys compared as nlohmann::json's std::map compares them, their
    // quotes aside (a shorter key sorts first).
    std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
        return a.first.substr(1, a.first.size() - 2) < b.first.substr(1, b.first.size() - 2);
    });
    for (std::size_t m = 1; m < members.size(); ++m)
        if (members[m].first == members[m - 1].first)
            return false; // not jsonb's: it keeps one of each key
    out.clear();
    out += '{';
    for (std::size_t m = 0; m < members.size(); ++m) {
        if (m > 0)
            out += ',';
        out += members[m].first;
        out += ':';
        out += members[m].second;
    }
    out += '}';
    return true;
}

} // namespace

void RowWriter::row(std::span<const Cell> cells, std::string& out)
{
    if (cells.size() != kFields)
        unreadable(std::to_string(cells.size()) + " fields, not " + std::to_string(kFields));
    const auto& keys = jsonKeys();
    for (std::size_t i = 0; i < kFields; ++i) {
        if (!m_csv)
            out += keys[i];
        else if (i > 0)
            out += ',';
        cell(fields[i].kind, cells[i], out);
    }
    out += m_csv ? "\r\n" : "}";
}

void RowWriter::cell(Kind kind, const Cell& c, std::string& out)
{
    const bool absent = !c || (kind == Kind::Env && c->empty());
    if (absent) {
        if (!m_csv)
            out += "null";
        return;
    }
    switch (kind) {
    case Kind::Integer:
        out += *c; // the server's decimal digits, as an int64 prints
        break;
    case Kind::Time:
        if (!m_csv)
            out += '"';
        if (m_fromServer)
            serverTime(*c, out);
        else
            time(*c, out);
        if (!m_csv)
            out += '"';
        break;
    case Kind::Env:
    case Kind::Text:
        if (m_csv)
            appendCsvField(out, *c);
        else
            appendJsonString(out, *c);
        break;
    case Kind::Detail:
        detail(*c, out);
        break;
    }
}

void RowWriter::time(std::string_view text, std::string& out)
{
    std::int64_t ms = 0;
    if (std::from_chars(text.data(), text.data() + text.size(), ms).ec != std::errc())
        unreadable("a time of \"" + std::string(text) + "\"");
    epochTime(ms, out);
}

// A timestamptz as the server writes it under TimeZone UTC and DateStyle
// ISO: 2024-01-01 00:00:00.01+00, the fraction 0 to 6 digits, a year of
// more than four digits as it is, " BC" after a year before 1 AD. The
// calendar fields are those of the second the instant falls in (also
// before 1970), so the milliseconds are the fraction's first three
// digits: the same floor as epoch milliseconds. A four-digit AD year is
// copied as it stands; any other goes through epoch milliseconds, so it
// is written exactly as an event's time is.
void RowWriter::serverTime(std::string_view t, std::string& out)
{
    const auto digits = [&t](std::size_t from, std::size_t n) {
        return from + n <= t.size() &&
               std::all_of(t.begin() + std::ptrdiff_t(from), t.begin() + std::ptrdiff_t(from + n),
                           [](char c) { return c >= '0' && c <= '9'; });
    };
    const auto number = [&t](std::size_t from, std::size_t n) {
        std::int64_t v = 0;
        for (std::size_t i = from; i < from + n; ++i)
            v = v * 10 + (t[i] - '0');
        return v;
    };
    std::size_t year = 0; // the year's digits
    while (year < t.size() && t[year] >= '0' && t[year] <= '9')
        ++year;
    const std::size_t p = year; // where "-MM-DD HH:MM:SS" begins
    if (year == 0 || year > 9 || !digits(p + 1, 2) || !digits(p + 4, 2) || !digits(p + 7, 2) ||
        !digits(p + 10, 2) || !digits(p + 13, 2) || t.size() < p + 15 || t[p] != '-' || t[p + 3] != '-' ||
        t[p + 6] != ' ' || t[p + 9] != ':' || t[p + 12] != ':')
        unreadable("a time of \"" + std::string(t) + "\"");
    std::size_t end = p + 15;
    std::size_t fraction = 0;
    if (end < t.size() && t[end] == '.') {
        while (end + 1 + fraction < t.size() && t[end + 1 + fraction] >= '0' && t[end + 1 + fraction] <= '9')
            ++fraction;
        if (fraction == 0 || fraction > 6)
            unreadable("a time of \"" + std::string(t) + "\"");
    }
    const std::string_view zone = t.substr(end + (fraction > 0 ? 1 + fraction : 0));
    const bool bc = zone == "+00 BC";
    if (zone != "+00" && !bc)
        unreadable("a time of \"" + std::string(t) + "\"");
    char millis[3] = {'0', '0', '0'};
    for (std::size_t i = 0; i < std::min<std::size_t>(fraction, 3); ++i)
        millis[i] = t[end + 1 + i];
    if (year == 4 && !bc) {
        out.append(t.data(), p + 6); // YYYY-MM-DD
        out += 'T';
        out.append(t.data() + p + 7, 8); // HH:MM:SS
        out += '.';
        out.append(millis, 3);
        out += 'Z';
        return;
    }
    // Days since 1970-01-01 of a proleptic Gregorian date, the year
    // astronomical (1 BC is year 0); Howard Hinnant's days_from_civil.
    const std::int64_t y0 = bc ? 1 - number(0, year) : number(0, year);
    const std::int64_t m = number(p + 1, 2), d = number(p + 4, 2);
    const std::int64_t y = m <= 2 ? y0 - 1 : y0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    const std::int64_t days = era * 146097 + doe - 719468;
    const std::int64_t seconds =
        days * 86400 + number(p + 7, 2) * 3600 + number(p + 10, 2) * 60 + number(p + 13, 2);
    epochTime(seconds * 1000 + (millis[0] - '0') * 100 + (millis[1] - '0') * 10 + (millis[2] - '0'), out);
}

void RowWriter::epochTime(std::int64_t ms, std::string& out)
{
    const std::int64_t seconds = ms / 1000 - ((ms % 1000 != 0) && (ms < 0)); // floor
    if (seconds != m_second) {
        m_second = seconds;
        m_secondText = utcSeconds(std::time_t(seconds));
    }
    const int millis = int(ms - seconds * 1000);
    out += m_secondText;
    out += '.';
    out += char('0' + millis / 100);
    out += char('0' + millis / 10 % 10);
    out += char('0' + millis % 10);
    out += 'Z';
}

// The detail as the export always wrote it. From the server it is
// jsonb's text, read the way the console reads an event: into
// nlohmann::json, whose keys are in byte order, written compact. An
// event's detail keeps its keys' order. JSON null writes as no detail.
void RowWriter::detail(std::string_view text, std::string& out)
{
    if (m_fromServer && compactFlatObject(text, m_members, m_compact)) {
        if (m_csv)
            appendCsvField(out, m_compact);
        else
            out += m_compact;
        return;
    }
    try {
        if (m_fromServer)
            writeDetail(nlohmann::json::parse(text.begin(), text.end()), out);
        else
            writeDetail(Value::parse(text.begin(), text.end()), out);
    } catch (const nlohmann::json::exception& e) {
        // As when the console's reply held it: the database's fault.
        throw Error(ExitCode::Internal, std::string("unreadable reply from the database: ") + e.what());
    }
}

template <typename Json> void RowWriter::writeDetail(const Json& v, std::string& out)
{
    if (!m_csv)
        out += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    else if (v.is_string())
        appendCsvField(out, v.template get_ref<const std::string&>());
    else if (v.is_number_integer())
        appendInteger(out, v.template get<std::int64_t>());
    else if (v.is_structured())
        appendCsvField(out, v.dump());
}

namespace {

// An event's fields as cells, in the order of `fields`; `numbers` holds the
// digits the integer cells point to.
std::array<Cell, kFields> cellsOf(const Event& e, std::array<std::string, 7>& numbers)
{
    std::size_t next = 0;
    const auto number = [&](std::optional<std::int64_t> n) -> Cell {
        if (!n)
            return std::nullopt;
        numbers.at(next) = std::to_string(*n);
        return std::string_view(numbers.at(next++));
    };
    const auto text = [](const std::optional<std::string>& s) -> Cell {
        return s ? Cell(std::string_view(*s)) : std::nullopt;
    };
    return {number(e.id),
            number(e.at.millis()),
            text(e.env),
            Cell(std::string_view(e.operation)),
            Cell(std::string_view(e.outcome)),
            text(e.reason),
            text(e.job),
            text(e.release),
            number(e.generation),
            number(e.token),
            number(e.currentToken),
            number(e.currentGeneration),
            text(e.currentRelease),
            text(e.opId),
            text(e.host),
            number(e.pid),
            text(e.jobUrl),
            text(e.actor),
            text(e.dbUser),
            text(e.clientAddr),
            text(e.detail)};
}

void writeEvent(std::ostream& out, const Event& e, bool csv)
{
    std::array<std::string, 7> numbers;
    const auto cells = cellsOf(e, numbers);
    std::string text;
    RowWriter(csv, false).row(cells, text);
    out << text;
}

} // namespace

void appendCsvHeader(std::string& out)
{
    bool first = true;
    for (const Field& f : fields) {
        if (!std::exchange(first, false))
            out += ',';
        out += f.name;
    }
    out += "\r\n";
}

} // namespace relctl::detail

namespace relctl {

const std::vector<std::string>& auditExportFields()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const detail::Field& f : detail::fields)
            v.emplace_back(f.name);
        return v;
    }();
    return names;
}

void writeAuditCsvRow(std::ostream& out, const Event& e)
{
    detail::writeEvent(out, e, true);
}

void writeAuditJsonObject(std::ostream& out, const Event& e)
{
    detail::writeEvent(out, e, false);
}

} // namespace relctl
