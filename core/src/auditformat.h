#pragma once

// Private to core: what the audit export's transport (auditexport.cpp) needs
// of its formatting (auditformat.cpp): the CSV header and a writer of rows of
// cells, one field per cell in the order of auditExportFields().

#include "relctl/console.h"

#include <climits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relctl::detail {

// One field of a row: the server's text (or an event's value as text); absent
// for SQL NULL.
using Cell = std::optional<std::string_view>;

enum class Kind; // how a field is written (auditformat.cpp)

// Writes rows of cells in one format into a string. Keeps the last second's
// text: consecutive events mostly share it.
class RowWriter
{
public:
    RowWriter(bool csv, bool fromServer) : m_csv(csv), m_fromServer(fromServer) {}

    // Appends one row, `cells` in the order of the fields, to `out`: a CSV
    // line with its CRLF, or a JSON object.
    void row(std::span<const Cell> cells, std::string& out);

private:
    void cell(Kind kind, const Cell& c, std::string& out);
    void time(std::string_view text, std::string& out);
    void serverTime(std::string_view t, std::string& out);
    void epochTime(std::int64_t ms, std::string& out);
    void detail(std::string_view text, std::string& out);
    template <typename Json> void writeDetail(const Json& v, std::string& out);

    bool m_csv;
    bool m_fromServer;
    std::vector<std::pair<std::string_view, std::string_view>> m_members; // compactFlatObject's scratch
    std::string m_compact;
    std::int64_t m_second = LLONG_MIN;
    std::string m_secondText;
};

// The CSV header row, the field names, with its CRLF.
void appendCsvHeader(std::string& out);

} // namespace relctl::detail
