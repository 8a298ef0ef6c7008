#pragma once

// Export of the audit trail as the audit browser filters and sorts it: every
// matching event, not only the rows a view has loaded, read by one statement
// over one snapshot and streamed, so memory stays flat however many
// events match. No Qt: the CLI can use it as well as the console's worker.

#include "relctl/console.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace relctl {

enum class AuditExportFormat {
    // RFC 4180: a header row of the JSON field names, CRLF line ends, a field
    // holding a comma, quote or line break quoted with its quotes doubled;
    // absent values are empty fields.
    Csv,
    // An array of objects shaped like `relctl audit --json` events (the same
    // field names, in the same order), null for absent values.
    Json,
};

// The field names of an exported event, in order: CSV header and JSON keys.
const std::vector<std::string>& auditExportFields();

struct AuditExportOptions
{
    AuditFilter filter;
    AuditSort sort;
    AuditExportFormat format = AuditExportFormat::Csv;
    // Rows between two progress calls (and cancel checks).
    int pageSize = 5000;
    // Set from another thread to stop at the next page; then the export throws
    // AuditExportCancelled.
    const std::atomic<bool>* cancel = nullptr;
    // Called after each page with the rows written so far.
    std::function<void(std::int64_t rows)> progress;
};

struct AuditExportCancelled final : std::exception
{
    const char* what() const noexcept override { return "the export was cancelled"; }
};

// Writes every event matching the filter, in the sort's order, to `out`.
// Returns the rows written. Throws Error when the database or the stream
// fails, AuditExportCancelled when cancelled.
std::int64_t writeAuditExport(ConsoleQueries& queries, const AuditExportOptions& options, std::ostream& out);

// The same into the file at `path`, all or nothing: the rows go to a
// temporary file in the same directory, renamed over `path` only once
// complete, so a cancelled or failed export leaves no file behind (and an
// existing file at `path` untouched).
std::int64_t exportAuditFile(ConsoleQueries& queries, const AuditExportOptions& options,
                             const std::string& path);

// One event as an export writes it (for tests and the CLI).
void writeAuditCsvRow(std::ostream& out, const Event& event);
void writeAuditJsonObject(std::ostream& out, const Event& event);

} // namespace relctl
