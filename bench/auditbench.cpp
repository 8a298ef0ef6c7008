// relctl-audit-bench: what the audit browser's pages and exports cost on a
// large trail, against the goals of issues 14 and 30.
//
//   relctl-audit-bench [--dsn CONNINFO] [--events N] [--reps R] [--json FILE]
//                      [--exports-only]
//
// Creates a scratch database next to the one CONNINFO names (default
// "dbname=postgres"), migrates it, seeds N events (default 1,000,000) with
// one INSERT (the trail's triggers forbid changes, not inserts), vacuums and
// analyzes it like an aged trail, then prints the median (p50) of R runs
// (default 5) of:
//   - the first page (500 events) and a page from the middle of the order,
//     for each sort column in both directions, with and without an
//     environment filter; goal: under 50 ms;
//   - a full CSV and JSON export (all events, and one environment's), next
//     to PostgreSQL's own COPY (SELECT * FROM relctl.events ...) TO STDOUT of
//     the same rows in the same order, read by the same client library in the
//     same run (R runs each, at least 5, alternating); goal: at least 0.8 of
//     its rate (the p50s' ratio; the lowest and highest of the runs' ratios
//     are printed beside it). Also the private memory (RssAnon) of this
//     client and of the server backend, sampled every 100,000 rows: goals,
//     the client's peak under 100 MB and the backend's growth under 16 MB;
//     and, for information, what the server wrote to temporary files;
//   - what an event insert costs with and without the indexes of
//     migrations/0009 (one 100,000-row INSERT, and 10,000 single-row
//     INSERTs each its own transaction), alternating; no goal, the price.
// --exports-only skips the pages and the inserts.
// --json FILE writes the goals as every benchmark does (goals.h): for a page,
// value is its p50 in ms and the target "< 50 ms"; for an export, value is
// its rows/s, reference COPY's rows/s and the target "ratio >= 0.80", and
// its memory in MB. The scratch database is dropped at the end.

#include "goals.h"
#include "relctl/auditexport.h"
#include "relctl/catalogue.h"
#include "relctl/console.h"
#include "relctl/database.h"
#include "relctl/scratch.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using namespace relctl;

[[noreturn]] void fail(const std::string& what)
{
    std::fprintf(stderr, "relctl-audit-bench: %s\n", what.c_str());
    std::exit(1);
}

double ms(Clock::duration d)
{
    return std::chrono::duration<double, std::milli>(d).count();
}

template <typename F> double median(int reps, F&& f)
{
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        const auto start = Clock::now();
        f();
        t.push_back(ms(Clock::now() - start));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

using relctl::bench::Goal;

constexpr double kPageTargetMs = 50;
constexpr double kExportTargetRatio = 0.8;
// An export's private memory: the client's peak, whatever the number of rows
// (issue 30: a 10,000,000-event export under 100 MB), and the server
// backend's growth while it sends them.
constexpr double kExportClientMb = 100;
constexpr double kExportBackendGrowthMb = 16;

// RssAnon of /proc/PID/status in MB ("self": this process); empty when it
// cannot be read.
std::optional<double> rssAnonMb(const std::string& pid)
{
    std::ifstream status("/proc/" + pid + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("RssAnon:", 0) == 0)
            return std::atof(line.c_str() + 8) / 1024; // kB
    return std::nullopt;
}

// CPU seconds (user + system) a process has used: "self" or a backend's pid.
double cpuSeconds(const std::string& pid)
{
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text;
    std::getline(stat, text);
    const std::size_t name = text.rfind(')'); // the command name may hold spaces
    if (name == std::string::npos)
        return 0;
    std::istringstream fields(text.substr(name + 2));
    std::string field;
    long long ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i)
        if (i == 14 || i == 15) // utime, stime
            ticks += std::atoll(field.c_str());
    return double(ticks) / double(sysconf(_SC_CLK_TCK));
}

// Context switches (voluntary and not) of a process's main thread: each is
// a sleep and a wake-up, which a virtual machine makes dear. An export whose
// client falls behind makes its backend wait on a full socket as well.
double contextSwitches(const std::string& pid)
{
    std::ifstream status("/proc/" + pid + "/status");
    double n = 0;
    for (std::string line; std::getline(status, line);)
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0 ||
            line.rfind("nonvoluntary_ctxt_switches:", 0) == 0)
            n += std::atof(line.c_str() + line.find(':') + 1);
    return n;
}

std::string fmtMb(double mb)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", mb);
    return text;
}

// The indexes migrations/0009 adds, and how they are made: dropped and made
// again here to price them.
const std::pair<const char*, const char*> kSortIndexes[] = {
    {"events_rejected", "(env, id) WHERE outcome = 'rejected'"},
    {"events_env_release", "(env, release, id)"},
    {"events_env_generation", "(env, generation, id)"},
    {"events_env_token", "(env, token, id)"},
    {"events_env_host", "(env, host, id)"},
    {"events_env_actor", "(env, actor, id) WHERE actor IS NOT NULL"},
};

// Events shaped like the seed's, numbered from `first` to `last` (SQL expressions).
std::string eventRows(const std::string& first, const std::string& last)
{
    // Five environments, one event in 37 refused, a job per 10 events, an
    // actor on one in 50 and a host missing on one in 20 (NULL keys); each
    // event's detail as the protocol writes it (an acquire its TTL, a renewal
    // its TTL and new expiry, a release its state, a publish its manifest).
    return "SELECT timestamptz '2024-01-01 00:00Z' + i * interval '10 milliseconds', "
           "(ARRAY['test', 'staging', 'prod', 'qa', 'perf'])[1 + i % 5], "
           "(ARRAY['acquire', 'renew', 'renew', 'renew', 'release', 'publish'])[1 + i % 6], "
           "CASE WHEN i % 37 = 0 THEN 'rejected' ELSE 'accepted' END, "
           "CASE WHEN i % 37 = 0 THEN (ARRAY['STALE_GENERATION', 'LEASE_EXPIRED', 'BAD_LEASE_ID', "
           "'DISPATCH_FROZEN'])[1 + (i / 37) % 4] END, "
           "'job-' || (i / 10), 'v' || (i / 100), i / 100 + 1, i / 10 + 1, 'op-' || i, "
           "CASE WHEN i % 20 = 0 THEN NULL ELSE 'runner-' || (i % 13) END, 1000 + i % 50000, "
           "'https://ci.example/jobs/' || (i / 10), CASE WHEN i % 50 = 0 THEN 'operator-' || (i % 7) END, "
           "CASE i % 6 WHEN 0 THEN jsonb_build_object('ttl_ms', 60000) "
           "WHEN 4 THEN jsonb_build_object('state', 'released') "
           "WHEN 5 THEN jsonb_build_object('manifest_id', i / 6) "
           "ELSE jsonb_build_object('ttl_ms', 60000, 'expires_at', to_char(timestamptz '2024-01-01 00:01Z' + "
           "i * interval '10 milliseconds', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')) END "
           "FROM generate_series(" +
           first + ", " + last + ") AS i";
}

const char* kEventColumns = "INSERT INTO relctl.events (at, env, operation, outcome, reason, job, release, "
                            "generation, token, op_id, host, pid, job_url, actor, detail) ";

} // namespace

int main(int argc, char** argv)
{
    std::string dsn = "dbname=postgres";
    long long events = 1'000'000;
    int reps = 5;
    std::string jsonPath;
    bool exportsOnly = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--dsn" && i + 1 < argc)
            dsn = argv[++i];
        else if (a == "--events" && i + 1 < argc)
            events = std::atoll(argv[++i]);
        else if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--json" && i + 1 < argc)
            jsonPath = argv[++i];
        else if (a == "--exports-only")
            exportsOnly = true;
        else
            fail("usage: relctl-audit-bench [--dsn CONNINFO] [--events N] [--reps R] [--json FILE] "
                 "[--exports-only]");
    }
    bool failed = false;
    try {
        const relctl::ScratchDatabase database(dsn, "relctl_audit_bench_");
        const std::string& scratch = database.conninfo();
        Database db(scratch);
        db.migrate();
        pqxx::connection raw(scratch);
        auto start = Clock::now();
        {
            pqxx::work tx(raw);
            tx.exec(kEventColumns + eventRows("1", std::to_string(events)));
            tx.commit();
        }
        pqxx::nontransaction(raw).exec("VACUUM ANALYZE relctl.events");
        std::printf("seeded %lld events in %.1f s (insert, vacuum, analyze)\n\n", events,
                    ms(Clock::now() - start) / 1000);

        ConsoleQueries q(db);
        q.operations(); // a warm connection and catalogue, as in a running console
        // Every sort key of the catalogue; its SQL column is its name, but
        // for time, which is the id.
        std::vector<std::pair<AuditSort::Column, std::string>> columns;
        for (std::size_t i = 0; i < catalogue::kAuditSortKeys.size(); ++i) {
            const std::string key(catalogue::kAuditSortKeys[i]);
            columns.emplace_back(static_cast<AuditSort::Column>(i), key == "time" ? "id" : key);
        }
        std::vector<Goal> goals;
        if (!exportsOnly) {
            int pagesMissed = 0;
            std::printf("p50 of %d runs, ms; a page is 500 events; \"middle\" continues from the row halfway "
                        "through the order; * marks a page over %.0f ms\n",
                        reps, kPageTargetMs);
            std::printf("%-11s %-4s | %10s %10s | %15s %15s\n", "sort", "dir", "first", "middle",
                        "first env=prod", "middle env=prod");
            const auto cell = [](double t) {
                char text[32];
                std::snprintf(text, sizeof text, "%.1f%s", t, t < kPageTargetMs ? " " : "*");
                return std::string(text);
            };
            for (const auto& [column, sql] : columns) {
                for (const bool descending : {true, false}) {
                    double t[4];
                    int k = 0;
                    for (const bool filtered : {false, true}) {
                        AuditFilter filter;
                        if (filtered)
                            filter.env = "prod";
                        const AuditSort sort{column, descending};
                        t[k++] = median(reps, [&] {
                            q.auditPage({filter, sort, std::nullopt, std::nullopt, 500});
                        });
                        // The row halfway through this order (found with OFFSET here only,
                        // to place the cursor), then the page after it.
                        const std::string dir = descending ? " DESC" : " ASC";
                        const std::string order = sql == "id" ? "id" + dir : sql + dir + ", id" + dir;
                        pqxx::read_transaction tx(raw);
                        const pqxx::row r = tx.exec1(
                            std::string("SELECT ") + sql + "::text AS sort_key, id FROM relctl.events" +
                            (filtered ? " WHERE env = 'prod'" : "") + " ORDER BY " + order + " OFFSET " +
                            std::to_string((filtered ? events / 5 : events) / 2) + " LIMIT 1");
                        AuditCursor cursor{r[0].is_null() ? std::nullopt
                                                          : std::optional(r[0].as<std::string>()),
                                           r[1].as<std::int64_t>()};
                        t[k++] = median(reps, [&] {
                            q.auditPage({filter, sort, cursor, std::nullopt, 500});
                        });
                    }
                    std::printf("%-11s %-4s | %10s %10s | %15s %15s\n", auditSortKey(column),
                                descending ? "desc" : "asc", cell(t[0]).c_str(), cell(t[1]).c_str(),
                                cell(t[2]).c_str(), cell(t[3]).c_str());
                    const char* where[] = {"first", "middle", "first env=prod", "middle env=prod"};
                    for (int i = 0; i < 4; ++i) {
                        goals.push_back(relctl::bench::below(std::string("audit page ") +
                                                                 auditSortKey(column) +
                                                                 (descending ? " desc " : " asc ") + where[i],
                                                             t[i], "ms", kPageTargetMs));
                        pagesMissed += t[i] < kPageTargetMs ? 0 : 1;
                    }
                }
            }
            std::printf("pages under %.0f ms: %zu of %zu\n", kPageTargetMs,
                        goals.size() - std::size_t(pagesMissed), goals.size());

            // "Newer than" on an idle trail: what every live update costs when nothing matched.
            const double newer = median(reps, [&] {
                q.auditPage({{}, {}, std::nullopt, std::int64_t(events), 500});
            });
            std::printf("\nnewer-than (live update, nothing new): %.1f ms\n\n", newer);
        }

        // Exports, each next to COPY of the same rows in the same order: the
        // reference a client cannot beat, read line by line and dropped.
        const std::string dir = std::filesystem::temp_directory_path() / database.name();
        std::filesystem::create_directories(dir);
        const auto copyRows = [&](bool filtered) {
            pqxx::read_transaction tx(raw);
            pqxx::stream_from copy(tx, std::string("(SELECT * FROM relctl.events") +
                                           (filtered ? " WHERE env = 'prod'" : "") + " ORDER BY id DESC)");
            std::string line;
            std::int64_t n = 0;
            while (copy.get_raw_line(line))
                ++n;
            copy.complete();
            return n;
        };
        // The sessions' private memory (RssAnon: the backend's shared buffers
        // are shared, not its own), sampled as the rows arrive, so that a
        // result stored whole on either side shows as growth.
        const std::vector<int> backends = [&] {
            std::vector<int> pids;
            for (const auto& r : pqxx::nontransaction(raw).exec(
                     "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                     "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"))
                pids.push_back(r[0].as<int>());
            return pids;
        }();
        const auto backendMb = [&] {
            std::optional<double> most;
            for (const int pid : backends)
                if (const auto mb = rssAnonMb(std::to_string(pid)))
                    most = std::max(most.value_or(0), *mb);
            return most;
        };
        // The CPU the client (this process) and the backends used (the
        // export's, and the one COPY reads through), to tell which side
        // bounds an export.
        const int copyBackend = pqxx::nontransaction(raw).exec1("SELECT pg_backend_pid()")[0].as<int>();
        const auto backendCpu = [&] {
            double sum = cpuSeconds(std::to_string(copyBackend));
            for (const int pid : backends)
                sum += cpuSeconds(std::to_string(pid));
            return sum;
        };
        const auto backendSwitches = [&] {
            double sum = contextSwitches(std::to_string(copyBackend));
            for (const int pid : backends)
                sum += contextSwitches(std::to_string(pid));
            return sum;
        };
        // What the server writes to temporary files for an export (the
        // database's temp_bytes, which a backend reports when it goes idle).
        const auto tempBytes = [&] {
            pqxx::read_transaction tx(raw);
            return tx.exec1("SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()")[0]
                .as<double>();
        };
        const int kExportRuns = std::max(5, reps);
        std::printf("rows/s, p50 of %d runs; the export into a file, COPY read and dropped; "
                    "ratio of the p50s, and the lowest and highest of the runs' ratios (each export "
                    "against the COPY just before it)\n",
                    kExportRuns);
        for (const bool json : {false, true}) {
            for (const bool filtered : {false, true}) {
                AuditExportOptions options;
                options.format = json ? AuditExportFormat::Json : AuditExportFormat::Csv;
                if (filtered)
                    options.filter.env = "prod";
                const std::string path = dir + (json ? "/audit.json" : "/audit.csv");
                const double clientBefore = rssAnonMb("self").value_or(0);
                const std::optional<double> backendBefore = backendMb();
                double clientPeak = clientBefore;
                std::optional<double> backendPeak = backendBefore;
                options.progress = [&](std::int64_t written) {
                    if (written % 100'000 != 0)
                        return;
                    clientPeak = std::max(clientPeak, rssAnonMb("self").value_or(0));
                    if (const auto b = backendMb())
                        backendPeak = std::max(backendPeak.value_or(0), *b);
                };
                std::int64_t rows = 0;
                std::int64_t copied = 0;
                std::vector<double> exportMs;
                std::vector<double> copyMs;
                // The same export written to /dev/null: the streaming alone,
                // without the file system's share of the wall time.
                std::vector<double> streamMs;
                std::vector<double> ratios;
                double tempMb = 0;
                // CPU seconds per run: [0] client, [1] server; COPY, export.
                std::array<std::vector<double>, 2> copyCpu, exportCpu;
                // Context switches per run, the same way.
                std::array<std::vector<double>, 2> copySwitches, exportSwitches;
                for (int run = 0; run < kExportRuns; ++run) {
                    double client = cpuSeconds("self"), server = backendCpu();
                    double clientSw = contextSwitches("self"), serverSw = backendSwitches();
                    auto begin = Clock::now();
                    copied = copyRows(filtered);
                    copyMs.push_back(ms(Clock::now() - begin));
                    copyCpu[0].push_back(cpuSeconds("self") - client);
                    copyCpu[1].push_back(backendCpu() - server);
                    copySwitches[0].push_back(contextSwitches("self") - clientSw);
                    copySwitches[1].push_back(backendSwitches() - serverSw);
                    const double tempBefore = tempBytes();
                    // Each run writes a new file, as an export named by its
                    // date does: replacing the last run's (up to 450 MB in
                    // the page cache) would time its deletion too (0.1 s).
                    std::filesystem::remove(path);
                    client = cpuSeconds("self");
                    server = backendCpu();
                    clientSw = contextSwitches("self");
                    serverSw = backendSwitches();
                    begin = Clock::now();
                    rows = exportAuditFile(q, options, path);
                    exportMs.push_back(ms(Clock::now() - begin));
                    exportCpu[0].push_back(cpuSeconds("self") - client);
                    exportCpu[1].push_back(backendCpu() - server);
                    exportSwitches[0].push_back(contextSwitches("self") - clientSw);
                    exportSwitches[1].push_back(backendSwitches() - serverSw);
                    {
                        std::ofstream devNull("/dev/null", std::ios::binary);
                        begin = Clock::now();
                        writeAuditExport(q, options, devNull);
                        streamMs.push_back(ms(Clock::now() - begin));
                    }
                    tempMb = std::max(tempMb, (tempBytes() - tempBefore) / 1e6);
                    ratios.push_back(copyMs.back() / exportMs.back() * double(rows) / double(copied));
                }
                if (rows != copied)
                    throw std::runtime_error("the export wrote " + std::to_string(rows) +
                                             " rows, COPY read " + std::to_string(copied));
                std::sort(exportMs.begin(), exportMs.end());
                std::sort(copyMs.begin(), copyMs.end());
                std::sort(ratios.begin(), ratios.end());
                const double rate = double(rows) / (exportMs[std::size_t(kExportRuns) / 2] / 1000);
                const double reference = double(copied) / (copyMs[std::size_t(kExportRuns) / 2] / 1000);
                const double ratio = rate / reference;
                const std::string what = std::string(json ? "JSON" : "CSV") + (filtered ? " env=prod" : "");
                std::printf("export %-13s %lld rows, %6.1f MB: %8.0f rows/s; COPY %8.0f rows/s; ratio %.2f "
                            "(runs %.2f-%.2f; %s %.1f)\n",
                            what.c_str(), static_cast<long long>(rows),
                            double(std::filesystem::file_size(path)) / 1e6, rate, reference, ratio,
                            ratios.front(), ratios.back(),
                            ratio >= kExportTargetRatio ? "met, target" : "MISSED, target",
                            kExportTargetRatio);
                std::printf(
                    "  private memory, MB: client %.1f -> peak %.1f; server backend %s; server temporary "
                    "files %.1f MB\n",
                    clientBefore, clientPeak,
                    backendPeak ? (fmtMb(*backendBefore) + " -> peak " + fmtMb(*backendPeak)).c_str()
                                : "not readable (/proc of another user or host)",
                    tempMb);
                const auto p50 = [](std::vector<double> v) {
                    std::sort(v.begin(), v.end());
                    return v[v.size() / 2];
                };
                std::printf("  CPU s (p50): export client %.2f, server %.2f; COPY client %.2f, server %.2f\n",
                            p50(exportCpu[0]), p50(exportCpu[1]), p50(copyCpu[0]), p50(copyCpu[1]));
                std::printf("  the same export into /dev/null: %.0f rows/s, ratio %.2f to COPY\n",
                            double(rows) / (p50(streamMs) / 1000),
                            copyMs[std::size_t(kExportRuns) / 2] / p50(streamMs) * double(rows) /
                                double(copied));
                std::printf("  context switches (p50): export client %.0f, server %.0f; COPY client %.0f, "
                            "server %.0f\n",
                            p50(exportSwitches[0]), p50(exportSwitches[1]), p50(copySwitches[0]),
                            p50(copySwitches[1]));
                goals.push_back(relctl::bench::ratioAtLeast("audit export " + what, rate, reference, "rows/s",
                                                            kExportTargetRatio));
                goals.push_back(relctl::bench::below("audit export " + what + " client memory", clientPeak,
                                                     "MB", kExportClientMb));
                if (backendPeak)
                    goals.push_back(relctl::bench::below("audit export " + what + " backend growth",
                                                         *backendPeak - *backendBefore, "MB",
                                                         kExportBackendGrowthMb));
            }
        }
        std::filesystem::remove_all(dir);

        if (!exportsOnly) {
            // What the sort indexes cost an insert: the same inserts with them and
            // without, alternating, on the trail as it now stands.
            long long next = events + 1;
            const auto bulk = [&] {
                const auto begin = Clock::now();
                pqxx::nontransaction(raw).exec(
                    kEventColumns + eventRows(std::to_string(next), std::to_string(next + 99'999)));
                next += 100'000;
                return ms(Clock::now() - begin) * 1000 / 100'000; // us per event
            };
            const auto single = [&] {
                raw.prepare("relctl_bench_insert", kEventColumns + eventRows("$1::bigint", "$1::bigint"));
                const auto begin = Clock::now();
                for (int i = 0; i < 10'000; ++i)
                    pqxx::nontransaction(raw).exec_prepared("relctl_bench_insert", next++);
                raw.unprepare("relctl_bench_insert");
                return ms(Clock::now() - begin) * 1000 / 10'000;
            };
            const auto setIndexes = [&](bool present) {
                for (const auto& [index, definition] : kSortIndexes)
                    pqxx::nontransaction(raw).exec(present ? std::string("CREATE INDEX ") + index +
                                                                 " ON relctl.events " + definition
                                                           : std::string("DROP INDEX relctl.") + index);
                pqxx::nontransaction(raw).exec("VACUUM ANALYZE relctl.events");
            };
            std::vector<double> bulkWith, bulkWithout, singleWith, singleWithout;
            for (int round = 0; round < 2; ++round) {
                if (round > 0)
                    setIndexes(true);
                bulkWith.push_back(bulk());
                singleWith.push_back(single());
                setIndexes(false);
                bulkWithout.push_back(bulk());
                singleWithout.push_back(single());
            }
            const auto mean = [](const std::vector<double>& v) { return (v[0] + v[1]) / 2; };
            std::printf(
                "\nevent insert, us per event (mean of 2 rounds), with the %zu indexes of 0009 / without:\n"
                "  one 100,000-row INSERT: %.2f / %.2f (+%.0f%%)\n"
                "  single-row INSERTs, each its own transaction: %.1f / %.1f (+%.0f%%)\n",
                std::size(kSortIndexes), mean(bulkWith), mean(bulkWithout),
                100 * (mean(bulkWith) / mean(bulkWithout) - 1), mean(singleWith), mean(singleWithout),
                100 * (mean(singleWith) / mean(singleWithout) - 1));
        }

        relctl::bench::writeJson(jsonPath, goals);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "relctl-audit-bench: %s\n", e.what());
        failed = true;
    }
    return failed ? 1 : 0;
}
