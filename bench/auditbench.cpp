// relctl-audit-bench: what the audit browser's pages and exports cost on a
// large trail.
//
//   relctl-audit-bench [--dsn CONNINFO] [--events N] [--reps R]
//
// Creates a scratch database next to the one CONNINFO names (default
// "dbname=postgres"), migrates it, seeds N events (default 1,000,000) with
// one INSERT (the trail's triggers forbid changes, not inserts), vacuums and
// analyzes it like an aged trail, then prints the median (p50) of R runs
// (default 5) of: the first page (500 events) and a page from the middle of
// the order, for each sort column in both directions, with and without an
// environment filter; and the throughput of a full CSV and JSON export. The
// scratch database is dropped at the end.

#include "relctl/auditexport.h"
#include "relctl/catalogue.h"
#include "relctl/console.h"
#include "relctl/database.h"
#include "seed.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <pqxx/pqxx>
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

} // namespace

int main(int argc, char** argv)
{
    std::string dsn = "dbname=postgres";
    long long events = 1'000'000;
    int reps = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--dsn" && i + 1 < argc)
            dsn = argv[++i];
        else if (a == "--events" && i + 1 < argc)
            events = std::atoll(argv[++i]);
        else if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else
            fail("usage: relctl-audit-bench [--dsn CONNINFO] [--events N] [--reps R]");
    }
    const std::string name = "relctl_audit_bench_" + std::to_string(getpid());
    try {
        const relctl::bench::ScratchDatabase scratchDb(dsn, name);
        const std::string& scratch = scratchDb.dsn();
        Database db(scratch);
        pqxx::connection raw(scratch);
        auto start = Clock::now();
        {
            pqxx::work tx(raw);
            relctl::bench::EventTrail trail; // five environments, from 2024-01-01 at 10 ms
            trail.count = events;
            relctl::bench::seedEvents(tx, trail);
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
        std::printf("p50 of %d runs, ms; a page is 500 events; \"middle\" continues from the row halfway "
                    "through the order\n",
                    reps);
        std::printf("%-11s %-4s | %10s %10s | %14s %14s\n", "sort", "dir", "first", "middle",
                    "first env=prod", "middle env=prod");
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
                    const std::string order =
                        sql == "id" ? "id" + dir : sql + dir + ", id" + dir;
                    pqxx::read_transaction tx(raw);
                    const pqxx::row r =
                        tx.exec1(std::string("SELECT ") + sql + "::text AS sort_key, id FROM relctl.events" +
                                 (filtered ? " WHERE env = 'prod'" : "") + " ORDER BY " + order + " OFFSET " +
                                 std::to_string((filtered ? events / 5 : events) / 2) + " LIMIT 1");
                    AuditCursor cursor{r[0].is_null() ? std::nullopt : std::optional(r[0].as<std::string>()),
                                       r[1].as<std::int64_t>()};
                    t[k++] = median(reps, [&] { q.auditPage({filter, sort, cursor, std::nullopt, 500}); });
                }
                std::printf("%-11s %-4s | %10.1f %10.1f | %14.1f %14.1f\n", auditSortKey(column),
                            descending ? "desc" : "asc", t[0], t[1], t[2], t[3]);
            }
        }

        // "Newer than" on an idle trail: what every live update costs when nothing matched.
        const double newer = median(reps, [&] {
            q.auditPage({{}, {}, std::nullopt, std::int64_t(events), 500});
        });
        std::printf("\nnewer-than (live update, nothing new): %.1f ms\n\n", newer);

        const std::string dir = std::filesystem::temp_directory_path() / name;
        std::filesystem::create_directories(dir);
        for (const bool json : {false, true}) {
            for (const bool filtered : {false, true}) {
                AuditExportOptions options;
                options.format = json ? AuditExportFormat::Json : AuditExportFormat::Csv;
                if (filtered)
                    options.filter.env = "prod";
                const std::string path = dir + (json ? "/audit.json" : "/audit.csv");
                start = Clock::now();
                const std::int64_t rows = exportAuditFile(q, options, path);
                const double seconds = ms(Clock::now() - start) / 1000;
                std::printf("export %s%s: %lld rows, %.1f MB in %.2f s: %.0f rows/s\n", json ? "JSON" : "CSV",
                            filtered ? " env=prod" : "", static_cast<long long>(rows),
                            double(std::filesystem::file_size(path)) / 1e6, seconds, double(rows) / seconds);
            }
        }
        std::filesystem::remove_all(dir);
    } catch (const std::exception& e) {
        fail(e.what());
    }
    return 0;
}
