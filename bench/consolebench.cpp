// relctl-console-bench: how fast the release console opens a large
// installation, and how much memory it takes doing it.
//
//   relctl-console-bench [--dsn CONNINFO] [--events N] [--leases N] [--environments N]
//                        [--reps R] [--settle MS] [--database NAME] [--keep] [--seed-only]
//                        [--console PATH] [--json FILE]
//
// Creates a scratch database next to the one CONNINFO names (default
// "dbname=postgres"), migrates it and seeds it (bench/consoleseed.h: 50
// environments, 10,000 leases with their history, manifests, candidates,
// requests, and 1,000,000 events in all), and a second one that is only
// migrated: the same console on an empty database is the reference. Then,
// R times each (default 5; the median is printed), it starts the real
// release-console as a process of its own (QT_QPA_PLATFORM=offscreen,
// --dsn) with RELCTL_CONSOLE_REPORT set, so that it reports the moment it is
// usable (ui/console/startupreport.h): its main window painted, and the
// environments and the audit table painted with their first answers. From
// the moment of the spawn it measures the time to that, its peak resident
// memory (VmHWM, read after it has run --settle ms more, default 2000, so
// the rest of what opening reads is counted), and the first audit page
// (request to painted, in the console). It also times the first page's
// query alone (server and client, through relctl::ConsoleQueries).
//
// --keep keeps the seeded database (NAME, default relctl_console_bench) and
// reuses it on the next run instead of seeding again; --seed-only stops after
// seeding (with --keep: a database to open the console on by hand). --json
// writes the results as {"goals": [{name, value, unit, reference, ratio,
// target, met}, ...]}, the reference being the empty database's figure.

#include "consoleseed.h"
#include "goals.h"
#include "relctl/console.h"
#include "relctl/database.h"
#include "relctl/scratch.h"
#include "seed.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what)
{
    std::fprintf(stderr, "relctl-console-bench: %s\n", what.c_str());
    std::exit(1);
}

double ms(Clock::duration d)
{
    return std::chrono::duration<double, std::milli>(d).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// A field of /proc/PID/status in kB (VmHWM, VmRSS); 0 if it is gone.
long long statusKb(pid_t pid, const std::string& field)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field + ":", 0) == 0)
            return std::atoll(line.c_str() + field.size() + 1);
    return 0;
}

// One opening of the console, in ms from the spawn; memory in kB.
struct Opening
{
    double shown = 0, connected = 0, environments = 0, audit = 0, usable = 0;
    double auditPage = 0;   // the first audit page: requested to painted
    double auditAnswer = 0; // of which requested to its rows in the model
    long long hwmUsable = 0, hwmSettled = 0;
    long long auditRows = 0;
};

struct Options
{
    std::string dsn = "dbname=postgres";
    relctl::bench::ConsoleHistory history;
    int reps = 5;
    int settleMs = 2000;
    std::string database = "relctl_console_bench";
    bool keep = false;
    bool seedOnly = false;
    std::string console = RELCTL_CONSOLE_BIN;
    std::string json;
};

Opening openConsole(const Options& o, const std::string& dsn, const fs::path& dir)
{
    const fs::path report = dir / "report.json";
    const fs::path log = dir / "console.log";
    fs::remove(report);
    // The console's own environment, plus where to report; settings in a
    // directory of their own, so no saved connection or window state counts.
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string kv = *e;
        if (kv.rfind("QT_QPA_PLATFORM=", 0) != 0 && kv.rfind("RELCTL_CONSOLE_REPORT=", 0) != 0 &&
            kv.rfind("XDG_CONFIG_HOME=", 0) != 0)
            env.push_back(kv);
    }
    env.emplace_back("QT_QPA_PLATFORM=offscreen");
    env.push_back("RELCTL_CONSOLE_REPORT=" + report.string());
    env.push_back("XDG_CONFIG_HOME=" + (dir / "config").string());
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (std::string& kv : env)
        envp.push_back(kv.data());
    envp.push_back(nullptr);
    std::string arg0 = o.console, arg1 = "--dsn", arg2 = dsn;
    std::vector<char*> argv{arg0.data(), arg1.data(), arg2.data(), nullptr};

    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    const Clock::time_point start = Clock::now();
    const int rc = posix_spawn(&pid, o.console.c_str(), &files, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&files);
    if (rc != 0)
        fail("cannot start " + o.console + ": " + std::strerror(rc));

    const auto stop = [pid] {
        kill(pid, SIGTERM);
        int status = 0;
        waitpid(pid, &status, 0);
    };
    while (!fs::exists(report)) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            std::ifstream in(log);
            std::stringstream text;
            text << in.rdbuf();
            fail("release-console ended before it was usable:\n" + text.str());
        }
        if (Clock::now() - start > std::chrono::seconds(60)) {
            stop();
            fail("release-console was not usable within 60 s (its output: " + log.string() + ")");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::ifstream in(report);
    const json r = json::parse(in);
    std::this_thread::sleep_for(std::chrono::milliseconds(o.settleMs));
    Opening x;
    x.hwmSettled = statusKb(pid, "VmHWM");
    stop();

    const auto at = [&](const char* key) {
        return r.at(key).is_null()
                   ? 0.0
                   : ms(Clock::time_point(std::chrono::nanoseconds(r.at(key).get<long long>())) - start);
    };
    x.shown = at("shown_ns");
    x.connected = at("connected_ns");
    x.environments = at("environments_painted_ns");
    x.audit = at("audit_painted_ns");
    x.usable = at("usable_ns");
    x.auditPage = x.audit - at("audit_requested_ns");
    x.auditAnswer = at("audit_answered_ns") - at("audit_requested_ns");
    x.hwmUsable = r.at("hwm_kb").get<long long>();
    x.auditRows = r.at("audit_rows").get<long long>();
    return x;
}

// The medians of R openings.
Opening openings(const Options& o, const std::string& dsn, const fs::path& dir)
{
    std::vector<Opening> runs;
    runs.reserve(std::size_t(o.reps));
    for (int i = 0; i < o.reps; ++i)
        runs.push_back(openConsole(o, dsn, dir));
    const auto med = [&runs](auto field) {
        std::vector<double> v;
        v.reserve(runs.size());
        for (const Opening& r : runs)
            v.push_back(double(r.*field));
        return median(v);
    };
    Opening m;
    m.shown = med(&Opening::shown);
    m.connected = med(&Opening::connected);
    m.environments = med(&Opening::environments);
    m.audit = med(&Opening::audit);
    m.usable = med(&Opening::usable);
    m.auditPage = med(&Opening::auditPage);
    m.auditAnswer = med(&Opening::auditAnswer);
    m.hwmUsable = static_cast<long long>(med(&Opening::hwmUsable));
    m.hwmSettled = static_cast<long long>(med(&Opening::hwmSettled));
    m.auditRows = runs.back().auditRows;
    return m;
}

// The first audit page's query alone, as the console asks for it through
// relctl::ConsoleQueries (round trip, server, parsing): on a new connection,
// as a console that has just connected asks (the median of 5 connections),
// and warm (the median of 20 calls); and the server's part of a warm call
// (EXPLAIN ANALYZE of the same call).
struct PageQuery
{
    double first = 0, warm = 0, server = 0;
};

PageQuery pageQuery(const std::string& dsn)
{
    const relctl::AuditPageRequest request{{}, {}, std::nullopt, std::nullopt, 500};
    std::vector<double> first, warm, server;
    for (int i = 0; i < 5; ++i) {
        relctl::Database db(dsn);
        relctl::ConsoleQueries q(db);
        db.serverInfo(); // connected, as the console is before it asks
        const Clock::time_point start = Clock::now();
        q.auditPage(request);
        first.push_back(ms(Clock::now() - start));
    }
    relctl::Database db(dsn);
    relctl::ConsoleQueries q(db);
    q.auditPage(request);
    for (int i = 0; i < 20; ++i) {
        const Clock::time_point start = Clock::now();
        q.auditPage(request);
        warm.push_back(ms(Clock::now() - start));
    }
    pqxx::connection raw(dsn);
    for (int i = 0; i < 20; ++i) {
        pqxx::read_transaction tx(raw);
        const pqxx::row r = tx.exec1("EXPLAIN (ANALYZE, FORMAT JSON) SELECT relctl.console_audit(NULL, NULL, "
                                     "NULL, NULL, NULL, NULL, NULL, "
                                     "'time', true, NULL, NULL, NULL, 500, NULL)");
        server.push_back(json::parse(r[0].c_str()).at(0).at("Execution Time").get<double>());
    }
    return {median(first), median(warm), median(server)};
}

Options parse(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool value = i + 1 < argc;
        if (a == "--dsn" && value)
            o.dsn = argv[++i];
        else if (a == "--events" && value)
            o.history.events = std::atoll(argv[++i]);
        else if (a == "--leases" && value)
            o.history.leases = std::max(o.history.liveLeases + 1, std::atoi(argv[++i]));
        else if (a == "--environments" && value)
            o.history.environments = std::clamp(std::atoi(argv[++i]), 30, 100);
        else if (a == "--reps" && value)
            o.reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--settle" && value)
            o.settleMs = std::max(0, std::atoi(argv[++i]));
        else if (a == "--database" && value)
            o.database = argv[++i];
        else if (a == "--console" && value)
            o.console = argv[++i];
        else if (a == "--json" && value)
            o.json = argv[++i];
        else if (a == "--keep")
            o.keep = true;
        else if (a == "--seed-only")
            o.seedOnly = true;
        else
            fail("usage: relctl-console-bench [--dsn CONNINFO] [--events N] [--leases N] [--environments N] "
                 "[--reps R] [--settle MS] [--database NAME] [--keep] [--seed-only] [--console PATH] "
                 "[--json FILE]");
    }
    return o;
}

// A limit in the goal's own unit, with the empty database's figure as its
// reference, for information (the report prints both).
relctl::bench::Goal goal(const std::string& name, double value, const std::string& unit, double reference,
                         double limit)
{
    relctl::bench::Goal g = relctl::bench::below(name, value, unit, limit);
    g.reference = reference;
    return g;
}

} // namespace

int main(int argc, char** argv)
{
    const Options o = parse(argc, argv);
    using relctl::ScratchDatabase;
    try {
        // Reused as it is when kept: a seeded database serves several runs.
        ScratchDatabase large(o.dsn, o.database,
                              o.keep ? ScratchDatabase::Existing::Reuse : ScratchDatabase::Existing::Drop);
        if (o.keep)
            large.keep();
        relctl::Database(large.conninfo()).migrate();
        pqxx::connection conn(large.conninfo());
        const bool seeded =
            pqxx::read_transaction(conn).exec1("SELECT EXISTS (SELECT 1 FROM relctl.events)")[0].as<bool>();
        if (seeded) {
            std::printf("reusing %s (seeded %s)\n", o.database.c_str(),
                        pqxx::read_transaction(conn)
                            .exec1("SELECT date_trunc('second', clock_timestamp() - max(at))::text || ' ago' "
                                   "FROM relctl.events")[0]
                            .c_str());
        } else {
            const Clock::time_point start = Clock::now();
            const relctl::bench::SeededCounts c = relctl::bench::seedConsoleHistory(conn, o.history);
            std::printf("seeded %s in %.1f s: %lld events, %lld leases, %lld manifests, %lld candidates "
                        "(%lld waiting), %lld promotion requests, %d environments\n",
                        o.database.c_str(), ms(Clock::now() - start) / 1000, c.events, c.leases, c.manifests,
                        c.candidates, c.waiting, c.promotions, o.history.environments);
        }
        // The waiting candidates' sessions: while this connection is open they queue.
        const long long waiting = relctl::bench::holdWaitingCandidates(conn);
        // Seeding (here or by an earlier run) leaves dirty buffers behind:
        // written out now, not by a checkpoint while the console opens.
        pqxx::nontransaction(conn).exec("CHECKPOINT");
        if (o.seedOnly) {
            std::printf("%s: %s\n", o.keep ? "kept" : "dropped", large.conninfo().c_str());
            return 0;
        }
        const ScratchDatabase empty(o.dsn, o.database + "_empty_");
        relctl::Database(empty.conninfo()).migrate();

        const fs::path dir = fs::temp_directory_path() / ("relctl-console-bench-" + std::to_string(getpid()));
        fs::create_directories(dir / "config");
        const Opening e = openings(o, empty.conninfo(), dir);
        const Opening l = openings(o, large.conninfo(), dir);
        fs::remove_all(dir);
        const PageQuery pe = pageQuery(empty.conninfo());
        const PageQuery pl = pageQuery(large.conninfo());

        std::printf("\nrelease-console opening, median of %d; ms from the process's start; %lld candidates "
                    "waiting\n",
                    o.reps, waiting);
        std::printf("%-44s %12s %12s %10s\n", "", "empty", "large", "target");
        const auto row = [](const char* what, double onEmpty, double onLarge, const char* target, bool met) {
            std::printf("%-44s %12.1f %12.1f %10s%s\n", what, onEmpty, onLarge, target,
                        *target ? (met ? "  met" : "  NOT MET") : "");
        };
        row("  main window painted", e.shown, l.shown, "", true);
        row("  connected", e.connected, l.connected, "", true);
        row("  environments painted", e.environments, l.environments, "", true);
        row("  first audit page painted", e.audit, l.audit, "", true);
        row("usable window (all of the above)", e.usable, l.usable, "< 1000", l.usable < 1000);
        row("peak RSS when usable (MB)", double(e.hwmUsable) / 1024, double(l.hwmUsable) / 1024, "", true);
        const double rssE = double(e.hwmSettled) / 1024, rssL = double(l.hwmSettled) / 1024;
        row("peak RSS after settling (MB)", rssE, rssL, "< 300", rssL < 300);
        row("first audit page, request to painted", e.auditPage, l.auditPage, "< 50", l.auditPage < 50);
        row("  of which until its rows were in the model", e.auditAnswer, l.auditAnswer, "", true);
        row("first audit page query, new connection", pe.first, pl.first, "< 50", pl.first < 50);
        row("first audit page query, warm", pe.warm, pl.warm, "", true);
        row("  of which server", pe.server, pl.server, "", true);
        std::printf("(the first audit page holds %lld events)\n", l.auditRows);

        relctl::bench::writeJson(
            o.json, {goal("console usable on the large database", l.usable, "ms", e.usable, 1000),
                     goal("console peak RSS after settling", rssL, "MB", rssE, 300),
                     goal("console first audit page, request to painted", l.auditPage, "ms", e.auditPage, 50),
                     goal("console first audit page query, new connection", pl.first, "ms", pe.first, 50)});
    } catch (const std::exception& ex) {
        fail(ex.what());
    }
    return 0;
}
