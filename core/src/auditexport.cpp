// Export of the filtered, sorted audit trail: pages of 5,000 through the
// same keyset cursor the browser uses (no OFFSET, so a deep page costs what
// the first does, and events inserted meanwhile neither repeat nor shift
// rows), each written as soon as it arrives.

#include "relctl/auditexport.h"

#include "relctl/error.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace relctl {

namespace {

// ISO 8601 in UTC with milliseconds, as the console shows and the model's
// export wrote: 2024-01-01T00:00:00.010Z.
std::string utcIso(EpochMs ms)
{
    const auto floorDiv = [](EpochMs a, EpochMs b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
    const std::time_t seconds = std::time_t(floorDiv(ms, 1000));
    const int millis = int(ms - EpochMs(seconds) * 1000);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
    return buffer;
}

using Value = nlohmann::ordered_json;

Value json(const std::optional<std::string>& s)
{
    return s ? Value(*s) : Value(nullptr);
}

Value json(const std::optional<std::int64_t>& n)
{
    return n ? Value(*n) : Value(nullptr);
}

// The one list both formats use, so CSV headers and JSON keys cannot drift
// apart; the names and order of `relctl audit --json` events.
struct Field
{
    const char* name;
    Value (*value)(const AuditEvent&);
};

const Field fields[] = {
    {"id", [](const AuditEvent& e) { return Value(e.id); }},
    {"at", [](const AuditEvent& e) { return Value(utcIso(e.at)); }},
    // An event without an environment reaches core as "": it is absent.
    {"env", [](const AuditEvent& e) { return e.env.empty() ? Value(nullptr) : Value(e.env); }},
    {"operation", [](const AuditEvent& e) { return Value(e.operation); }},
    {"outcome", [](const AuditEvent& e) { return Value(e.outcome); }},
    {"reason", [](const AuditEvent& e) { return json(e.reason); }},
    {"job", [](const AuditEvent& e) { return json(e.job); }},
    {"release", [](const AuditEvent& e) { return json(e.release); }},
    {"generation", [](const AuditEvent& e) { return json(e.generation); }},
    {"token", [](const AuditEvent& e) { return json(e.token); }},
    {"current_token", [](const AuditEvent& e) { return json(e.currentToken); }},
    {"current_generation", [](const AuditEvent& e) { return json(e.currentGeneration); }},
    {"current_release", [](const AuditEvent& e) { return json(e.currentRelease); }},
    {"op_id", [](const AuditEvent& e) { return json(e.opId); }},
    {"host", [](const AuditEvent& e) { return json(e.host); }},
    {"pid", [](const AuditEvent& e) { return json(e.pid); }},
    {"job_url", [](const AuditEvent& e) { return json(e.jobUrl); }},
    {"actor", [](const AuditEvent& e) { return json(e.actor); }},
    {"db_user", [](const AuditEvent& e) { return json(e.dbUser); }},
    {"client_addr", [](const AuditEvent& e) { return json(e.clientAddr); }},
    // The detail stays structured in JSON exports; CSV gets its compact text.
    {"detail", [](const AuditEvent& e) { return e.detail ? Value::parse(*e.detail) : Value(nullptr); }},
};

void writeCsvField(std::ostream& out, const std::string& s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos) {
        out << s;
        return;
    }
    out << '"';
    for (const char c : s) {
        if (c == '"')
            out << '"';
        out << c;
    }
    out << '"';
}

void writeCsvHeader(std::ostream& out)
{
    bool first = true;
    for (const Field& f : fields) {
        if (!std::exchange(first, false))
            out << ',';
        out << f.name;
    }
    out << "\r\n";
}

[[noreturn]] void streamFailed(const std::string& what)
{
    throw Error(ExitCode::Internal, "could not write the export: " + what);
}

} // namespace

const std::vector<std::string>& auditExportFields()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const Field& f : fields)
            v.emplace_back(f.name);
        return v;
    }();
    return names;
}

void writeAuditCsvRow(std::ostream& out, const AuditEvent& e)
{
    bool first = true;
    for (const Field& f : fields) {
        if (!std::exchange(first, false))
            out << ',';
        const Value v = f.value(e);
        if (v.is_string())
            writeCsvField(out, v.get_ref<const std::string&>());
        else if (v.is_number_integer())
            out << v.get<std::int64_t>();
        else if (v.is_structured())
            writeCsvField(out, v.dump());
    }
    out << "\r\n";
}

void writeAuditJsonObject(std::ostream& out, const AuditEvent& e)
{
    Value object = Value::object();
    for (const Field& f : fields)
        object[f.name] = f.value(e);
    out << object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::int64_t writeAuditExport(ConsoleQueries& queries, const AuditExportOptions& options, std::ostream& out)
{
    const bool csv = options.format == AuditExportFormat::Csv;
    if (csv)
        writeCsvHeader(out);
    else
        out << '[';
    AuditPageRequest request{options.filter, options.sort, std::nullopt, std::nullopt, options.pageSize};
    std::int64_t rows = 0;
    for (;;) {
        if (options.cancel && options.cancel->load())
            throw AuditExportCancelled();
        const AuditPage page = queries.auditPage(request);
        for (const AuditEvent& e : page.events) {
            if (csv) {
                writeAuditCsvRow(out, e);
            } else {
                out << (rows == 0 ? "\n" : ",\n");
                writeAuditJsonObject(out, e);
            }
            ++rows;
        }
        if (!out)
            streamFailed(std::strerror(errno));
        if (options.progress)
            options.progress(rows);
        if (!page.more || page.events.empty())
            break;
        request.after = auditCursorAfter(page.events.back(), options.sort.column);
    }
    if (!csv)
        out << "\n]\n";
    out.flush();
    if (!out)
        streamFailed(std::strerror(errno));
    return rows;
}

std::int64_t exportAuditFile(ConsoleQueries& queries, const AuditExportOptions& options,
                             const std::string& path)
{
    // In the target's directory, so the final rename is atomic (one file system).
    std::string temporary = path + ".part-XXXXXX";
    const int fd = mkstemp(temporary.data());
    if (fd < 0)
        throw Error(ExitCode::Internal,
                    "could not create a file next to " + path + ": " + std::strerror(errno));
    // mkstemp's 0600 would make the export unreadable to the reviewer's group.
    fchmod(fd, 0644);
    ::close(fd);
    struct Cleanup
    {
        const std::string& file;
        bool keep = false;
        ~Cleanup()
        {
            if (!keep)
                std::remove(file.c_str());
        }
    } cleanup{temporary};

    std::int64_t rows = 0;
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out)
            throw Error(ExitCode::Internal, "could not open " + temporary + ": " + std::strerror(errno));
        rows = writeAuditExport(queries, options, out);
        out.close();
        if (!out)
            streamFailed(temporary);
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0)
        throw Error(ExitCode::Internal,
                    "could not rename the export to " + path + ": " + std::strerror(errno));
    cleanup.keep = true;
    return rows;
}

} // namespace relctl
