// relctl-console-bench: how the release console copes with an organisation
// of 50, 2,000 and 10,000 environments: how fast it opens, how much memory it
// takes, what one live event costs it, whether it keeps up with a burst of
// events, and how long `relctl env list` and `relctl status --attention` take
// at the largest size.
//
//   relctl-console-bench [--dsn CONNINFO] [--environments N[,N...]] [--events N] [--leases N]
//                        [--reps R] [--settle MS] [--live-events M] [--burst-seconds S]
//                        [--burst-rate R] [--burst-connections C] [--burst-environments N]
//                        [--cli-reps R] [--pooled-dsn CONNINFO]
//                        [--database PREFIX] [--keep] [--seed-only]
//                        [--console PATH] [--relctl PATH] [--json FILE] [--logs DIR]
//
// For each size N (default 50,2000,10000) it creates a scratch database next
// to the one CONNINFO names (default "dbname=postgres") and seeds an
// organisation (bench/consoleseed.h: N/5 services of five stages with
// promotion paths, some environments held, queued, frozen or refused in the
// last hour, a history of leases and 1,000,000 events in all), and one more
// that is only migrated: the same console on an empty database is the
// reference. Then:
//
// - Opening: R times each (default 5; medians printed), it starts the real
//   release-console as a process of its own (QT_QPA_PLATFORM=offscreen,
//   --dsn) with RELCTL_CONSOLE_REPORT set, so that it reports the moment it
//   is usable (ui/console/startupreport.h): its main window painted, and the
//   environments and the audit table painted with their first answers. From
//   the spawn it measures the time to that and its peak resident memory
//   (VmHWM, read after --settle ms more, default 2000, so the rest of what
//   opening reads is counted).
// - One live event, at each size: the console open on the seeded database,
//   M times (default 20) the bench freezes or unfreezes one environment and
//   reads, from the console's report, the GUI thread's time applying each
//   live update that names it, of every kind: its row, its timeline lane,
//   its promotions (ConsoleSession::liveUpdateApplied). Apart from
//   the console it times the queries the console runs for one event, through
//   relctl::ConsoleQueries limited to that environment (its row, and the
//   timeline's last two hours of its lane), and the server's part of them
//   (EXPLAIN ANALYZE).
// - Burst, at the largest size (--burst-environments): --burst-rate events a
//   second (default 100) for --burst-seconds (default 60; 0: none) from
//   --burst-connections (default 8), half an operator's freeze or unfreeze, half a job's acquire
//   or release, spread over the environments; the lag of each is from the
//   bench's commit to the console's first live update of that environment
//   after it (both on CLOCK_MONOTONIC), and the backlog is whether the lag
//   of the last ten seconds exceeds that of the first ten.
// - `relctl env list` and `relctl status --attention` at the largest size, as
//   whole processes, the median of --cli-reps (default 5) after one warm-up;
//   a relctl without `status --attention` is reported as not measured.
//   Each straight to the server (every process a new server session, whose
//   first statements pay for the backend's first touch of the tables), and,
//   with --pooled-dsn (PgBouncer in session mode in front of the same
//   server, routing any database name), through the pooler, as
//   docs/operations.md deploys relctl for many short jobs: a job then finds
//   a server session an earlier one warmed. Each has as its reference the
//   same command the same way at the smallest size, and `relctl --version`
//   is printed beside them: what starting the process alone costs.
//
// --keep keeps the seeded databases (PREFIX_N, default relctl_console_bench_N)
// and reuses them on the next run instead of seeding again; --seed-only stops
// after seeding. --logs DIR keeps each phase's console report and output
// there (DIR/open-N, live-N, burst). --json writes the results as {"goals": [{name, value, unit,
// reference, ratio, target, met}, ...]} (bench/goals.h).

#include "consoleseed.h"
#include "goals.h"
#include "relctl/console.h"
#include "relctl/database.h"
#include "relctl/scratch.h"
#include "seed.h"
#include "support.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <set>
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

// This process's steady clock in ns: CLOCK_MONOTONIC, as the console's report.
long long nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

double median(const std::vector<double>& v)
{
    return relctl::bench::median(v);
}

double maxOf(const std::vector<double>& v)
{
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
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

std::string withCommas(long long n)
{
    std::string s = std::to_string(n);
    for (int i = int(s.size()) - 3; i > 0; i -= 3)
        s.insert(std::size_t(i), ",");
    return s;
}

struct Options
{
    std::string dsn = "dbname=postgres";
    std::vector<int> sizes{50, 2000, 10000};
    relctl::bench::ConsoleHistory history;
    int reps = 5;
    int settleMs = 2000;
    int liveEvents = 20;
    int burstSeconds = 60;
    int burstRate = 100;
    int burstConnections = 8;
    int burstEnvironments = 0; // 0: the largest size
    int cliReps = 5;
    std::string pooledDsn; // empty: the CLI is timed straight to the server only
    std::string database = "relctl_console_bench";
    bool keep = false;
    bool seedOnly = false;
    std::string console = RELCTL_CONSOLE_BIN;
    std::string relctl = RELCTL_BIN;
    std::string json;
    std::string logs; // where the consoles' reports and output are kept; empty: a temporary directory
};

// What the console appended to its report after the startup line: one live
// update applied on the GUI thread (StartupReport).
struct LiveLine
{
    std::string kind; // environments | timeline | promotions
    std::vector<std::string> envs;
    long long guiNs = 0;
    long long atNs = 0;
};

// The report file as the console writes it: the startup line (written
// atomically once usable), then live updates appended line by line. Reads
// the complete lines added since the last call.
class ReportTail
{
public:
    explicit ReportTail(fs::path path) : m_path(std::move(path)) {}

    std::optional<json> startup() const { return m_startup; }

    // The live updates read by this call.
    std::vector<LiveLine> poll()
    {
        std::vector<LiveLine> out;
        std::ifstream in(m_path, std::ios::binary);
        if (!in)
            return out;
        in.seekg(m_offset);
        std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::size_t start = 0;
        for (std::size_t end; (end = chunk.find('\n', start)) != std::string::npos; start = end + 1) {
            const json line = json::parse(chunk.substr(start, end - start), nullptr, false);
            if (line.is_discarded())
                continue;
            if (!m_startup && !line.contains("live")) {
                m_startup = line;
                continue;
            }
            if (!line.contains("live"))
                continue;
            LiveLine l;
            l.kind = line.value("live", std::string());
            for (const auto& e : line.value("envs", json::array()))
                l.envs.push_back(e.get<std::string>());
            l.guiNs = line.value("gui_ns", 0LL);
            l.atNs = line.value("at_ns", 0LL);
            out.push_back(std::move(l));
        }
        m_offset += std::streamoff(start);
        return out;
    }

private:
    fs::path m_path;
    std::streamoff m_offset = 0;
    std::optional<json> m_startup;
};

// A release-console process of the bench's, reporting to dir/report.json.
class ConsoleProcess
{
public:
    ConsoleProcess(const Options& o, const std::string& dsn, const fs::path& dir)
        : m_report(dir / "report.json"), m_log(dir / "console.log"), m_tail(m_report)
    {
        fs::remove(m_report);
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
        env.push_back("RELCTL_CONSOLE_REPORT=" + m_report.string());
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
        posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, m_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                         0644);
        posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
        m_start = Clock::now();
        const int rc = posix_spawn(&m_pid, o.console.c_str(), &files, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&files);
        if (rc != 0)
            fail("cannot start " + o.console + ": " + std::strerror(rc));
    }

    ~ConsoleProcess() { stop(); }
    ConsoleProcess(const ConsoleProcess&) = delete;
    ConsoleProcess& operator=(const ConsoleProcess&) = delete;

    pid_t pid() const { return m_pid; }
    Clock::time_point started() const { return m_start; }
    ReportTail& tail() { return m_tail; }

    // The startup report, once the console is usable (live lines read on
    // the way are dropped: nothing happened yet).
    json waitUsable()
    {
        while (!m_tail.startup()) {
            int status = 0;
            if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
                m_pid = 0;
                std::ifstream in(m_log);
                std::stringstream text;
                text << in.rdbuf();
                fail("release-console ended before it was usable:\n" + text.str());
            }
            if (Clock::now() - m_start > std::chrono::seconds(60)) {
                stop();
                fail("release-console was not usable within 60 s (its output: " + m_log.string() + ")");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            m_tail.poll();
        }
        return *m_tail.startup();
    }

    void stop()
    {
        if (m_pid <= 0)
            return;
        kill(m_pid, SIGTERM);
        int status = 0;
        waitpid(m_pid, &status, 0);
        m_pid = 0;
    }

private:
    fs::path m_report, m_log;
    ReportTail m_tail;
    pid_t m_pid = 0;
    Clock::time_point m_start;
};

// One opening of the console, in ms from the spawn; memory in kB.
struct Opening
{
    double shown = 0, connected = 0, environments = 0, audit = 0, usable = 0;
    double auditPage = 0;   // the first audit page: requested to painted
    double auditAnswer = 0; // of which requested to its rows in the model
    long long hwmUsable = 0, hwmSettled = 0;
    long long auditRows = 0;
};

Opening openConsole(const Options& o, const std::string& dsn, const fs::path& dir)
{
    ConsoleProcess console(o, dsn, dir);
    const json r = console.waitUsable();
    std::this_thread::sleep_for(std::chrono::milliseconds(o.settleMs));
    Opening x;
    x.hwmSettled = statusKb(console.pid(), "VmHWM");
    console.stop();

    const Clock::time_point start = console.started();
    const auto at = [&](const char* key) {
        return !r.contains(key) || r.at(key).is_null()
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
    x.hwmUsable = r.value("hwm_kb", 0LL);
    x.auditRows = r.value("audit_rows", 0LL);
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
// relctl::ConsoleQueries: on a new connection (the median of 5 connections).
double pageQueryNewConnection(const std::string& dsn)
{
    const relctl::AuditPageRequest request{{}, {}, std::nullopt, std::nullopt, 500};
    std::vector<double> first;
    for (int i = 0; i < 5; ++i) {
        relctl::Database db(dsn);
        relctl::ConsoleQueries q(db);
        db.serverInfo(); // connected, as the console is before it asks
        const Clock::time_point start = Clock::now();
        q.auditPage(request);
        first.push_back(ms(Clock::now() - start));
    }
    return median(first);
}

// What one live event costs, at one size.
struct LiveFigures
{
    // Through relctl::ConsoleQueries, one environment: its row, its lane of
    // the last two hours, and both (medians of 30, ms).
    double queryEnvironment = 0, queryTimeline = 0, query = 0;
    // The server's part (EXPLAIN ANALYZE, medians of 30, ms).
    double serverEnvironment = 0, serverTimeline = 0, server = 0;
    // The console's GUI thread, per event (every live update naming the
    // environment after the event's commit; ms): median and largest.
    double gui = 0, guiMax = 0;
    // From the commit to the console's first update naming the environment.
    double lag = 0;
    int events = 0, seen = 0;
    std::map<std::string, int> updates; // of each kind
};

const char* const kLiveEnvironment = "svc1.test";

void timeQueries(const std::string& dsn, const std::string& env, LiveFigures& f)
{
    relctl::Database db(dsn);
    relctl::ConsoleQueries q(db);
    const std::vector<std::string> names{env};
    const auto window = [] {
        const long long nowMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
        return std::pair(relctl::Timestamp::fromMillis(nowMs - 2 * 3600 * 1000),
                         relctl::Timestamp::fromMillis(nowMs + 30 * 60 * 1000));
    };
    std::vector<double> rows, lanes, both;
    for (int i = 0; i < 35; ++i) {
        const auto [from, to] = window();
        const Clock::time_point a = Clock::now();
        q.environments(names);
        const Clock::time_point b = Clock::now();
        q.timeline(from, to, names);
        const Clock::time_point c = Clock::now();
        if (i < 5)
            continue; // warming the session, as a console's is
        rows.push_back(ms(b - a));
        lanes.push_back(ms(c - b));
        both.push_back(ms(c - a));
    }
    f.queryEnvironment = median(rows);
    f.queryTimeline = median(lanes);
    f.query = median(both);

    pqxx::connection raw(dsn);
    std::vector<double> sRows, sLanes, sBoth;
    for (int i = 0; i < 35; ++i) {
        const auto [from, to] = window();
        pqxx::read_transaction tx(raw);
        const auto explain = [&tx](const std::string& call) {
            const pqxx::row r = tx.exec1("EXPLAIN (ANALYZE, FORMAT JSON) " + call);
            return json::parse(r[0].c_str()).at(0).at("Execution Time").get<double>();
        };
        const double e = explain("SELECT * FROM relctl.console_environments(ARRAY[" + tx.quote(env) + "])");
        const double t = explain("SELECT relctl.console_timeline(" + std::to_string(from.millis()) + ", " +
                                 std::to_string(to.millis()) + ", ARRAY[" + tx.quote(env) + "])");
        if (i < 5)
            continue;
        sRows.push_back(e);
        sLanes.push_back(t);
        sBoth.push_back(e + t);
    }
    f.serverEnvironment = median(sRows);
    f.serverTimeline = median(sLanes);
    f.server = median(sBoth);
}

bool mentions(const LiveLine& l, const std::string& env)
{
    return std::find(l.envs.begin(), l.envs.end(), env) != l.envs.end();
}

// M single events on one environment with the console open; then the
// queries alone.
LiveFigures liveEvents(const Options& o, const std::string& dsn, const fs::path& dir)
{
    LiveFigures f;
    const std::string env = kLiveEnvironment;
    {
        ConsoleProcess console(o, dsn, dir);
        console.waitUsable();
        // Whatever opening still reads (the timeline, the other docks) is done.
        std::this_thread::sleep_for(std::chrono::milliseconds(std::max(1000, o.settleMs)));
        console.tail().poll();
        pqxx::connection conn(dsn);
        std::vector<double> gui, lag;
        for (int i = 0; i < o.liveEvents; ++i) {
            {
                pqxx::work tx(conn);
                if (i % 2 == 0)
                    tx.exec_params("SELECT relctl.freeze($1, 'bench-manager', 'bench: one live event', "
                                   "'{\"host\": \"bench\"}')",
                                   env);
                else
                    tx.exec_params("SELECT relctl.unfreeze($1, 'bench-manager', '{\"host\": \"bench\"}')",
                                   env);
                tx.commit();
            }
            const long long committed = nowNs();
            ++f.events;
            // The event's updates: those naming it, of every kind, until
            // 500 ms after the first (a timeline or promotions update may
            // follow the row's), at most 5 s. Its lag is to the update of
            // its row.
            double guiNs = 0;
            std::optional<long long> first, row;
            const Clock::time_point deadline = Clock::now() + std::chrono::seconds(5);
            while (Clock::now() < deadline && (!first || nowNs() - *first < 500'000'000LL)) {
                for (const LiveLine& l : console.tail().poll()) {
                    if (!mentions(l, env) || l.atNs < committed)
                        continue;
                    ++f.updates[l.kind];
                    guiNs += double(l.guiNs);
                    if (!first)
                        first = l.atNs;
                    if (!row && l.kind == "environments")
                        row = l.atNs;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            if (row) {
                ++f.seen;
                gui.push_back(guiNs / 1e6);
                lag.push_back(double(*row - committed) / 1e6);
            }
        }
        f.gui = median(gui);
        f.guiMax = maxOf(gui);
        f.lag = median(lag);
        // Left as it was found.
        pqxx::work tx(conn);
        tx.exec_params("SELECT relctl.unfreeze($1, 'bench-manager', '{\"host\": \"bench\"}')", env);
        tx.commit();
    }
    timeQueries(dsn, env, f);
    return f;
}

// The burst: events from a few connections at a steady rate, the console
// following.
struct BurstEvent
{
    std::string env;
    bool job = false; // a job's acquire or release; else an operator's freeze or unfreeze
    long long committedNs = 0;
    double atS = 0; // since the burst's start
};

struct BurstFigures
{
    int size = 0;
    long long planned = 0, committed = 0, failed = 0, seen = 0;
    double seconds = 0;
    double lagMedian = 0, lagP95 = 0, lagMax = 0;
    double operatorLagMax = 0, jobLagMax = 0, operatorLagMedian = 0, jobLagMedian = 0;
    double firstMedian = 0, lastMedian = 0; // the first and last ten seconds (a third, if shorter)
    long long firstSeen = 0, lastSeen = 0;  // events of each seen by the console
    double timelineLagMax = 0;
    long long timelineSeen = 0;
    long long updates = 0;
    double guiMedian = 0, guiMax = 0, guiTotalS = 0; // per update; in all
    std::string firstError;
};

BurstFigures burst(const Options& o, const std::string& dsn, const fs::path& dir, int size)
{
    BurstFigures b;
    b.size = size;
    // Operators' environments: not frozen and not queued, not a dev; jobs':
    // the devs nobody holds.
    std::vector<std::string> operatorEnvs, jobEnvs;
    {
        pqxx::connection conn(dsn);
        pqxx::read_transaction tx(conn);
        for (const pqxx::row& r :
             tx.exec("SELECT e.name, e.name LIKE '%.dev' FROM relctl.environments e "
                     "WHERE e.frozen_at IS NULL AND e.name <> " +
                     tx.quote(std::string(kLiveEnvironment)) +
                     " AND NOT EXISTS (SELECT 1 FROM relctl.candidates c WHERE c.env = e.name AND c.state = "
                     "'waiting') AND NOT EXISTS (SELECT 1 FROM relctl.leases l WHERE l.env = e.name AND "
                     "l.ended_at IS NULL) ORDER BY md5(e.name)"))
            (r[1].as<bool>() ? jobEnvs : operatorEnvs).emplace_back(r[0].c_str());
    }
    const int threads = o.burstConnections;
    const long long total = static_cast<long long>(o.burstRate) * o.burstSeconds;
    b.planned = total;
    if (jobEnvs.size() < std::size_t(threads) || operatorEnvs.size() < std::size_t(threads)) {
        b.firstError = "too few free environments for a burst";
        return b;
    }

    ConsoleProcess console(o, dsn, dir);
    console.waitUsable();
    std::this_thread::sleep_for(std::chrono::milliseconds(std::max(1000, o.settleMs)));
    console.tail().poll();

    std::vector<std::vector<BurstEvent>> done(static_cast<std::size_t>(threads));
    std::atomic<long long> failures{0};
    std::mutex errorLock;
    const Clock::time_point start = Clock::now() + std::chrono::milliseconds(200);
    const auto worker = [&](int t) {
        pqxx::connection conn(dsn);
        // Thread t's share of each list: no two connections touch one environment.
        std::vector<std::string> ops, jobs;
        for (std::size_t i = std::size_t(t); i < operatorEnvs.size(); i += std::size_t(threads))
            ops.push_back(operatorEnvs[i]);
        for (std::size_t i = std::size_t(t); i < jobEnvs.size(); i += std::size_t(threads))
            jobs.push_back(jobEnvs[i]);
        std::set<std::string> frozen;
        std::map<std::string, std::pair<long long, std::string>> held; // token, lease id
        std::size_t nextOp = 0, nextJob = 0;
        long long generation = 1'000'000'000;
        for (long long i = t; i < total; i += threads) {
            const Clock::time_point due =
                start + std::chrono::nanoseconds(i * 1'000'000'000LL / std::max(1, o.burstRate));
            std::this_thread::sleep_until(due);
            BurstEvent ev;
            ev.job = (i / threads) % 2 == 1;
            ev.env = ev.job ? jobs[nextJob++ % jobs.size()] : ops[nextOp++ % ops.size()];
            try {
                pqxx::work tx(conn);
                std::optional<std::pair<long long, std::string>> acquired;
                if (!ev.job) {
                    if (frozen.count(ev.env))
                        tx.exec_params("SELECT relctl.unfreeze($1, 'bench-manager', '{\"host\": \"bench\"}')",
                                       ev.env);
                    else
                        tx.exec_params("SELECT relctl.freeze($1, 'bench-manager', 'bench: burst', "
                                       "'{\"host\": \"bench\"}')",
                                       ev.env);
                } else if (const auto h = held.find(ev.env); h != held.end()) {
                    tx.exec_params("SELECT relctl.release($1, $2, $3::uuid, '{\"host\": \"bench\"}', NULL)",
                                   ev.env, h->second.first, h->second.second);
                } else {
                    const json r = json::parse(
                        tx.exec_params1("SELECT relctl.acquire($1, 'burst-job', 'burst', $2, 600000, "
                                        "gen_random_uuid()::text, '{\"host\": \"bench\"}', false, "
                                        "NULL)",
                                        ev.env, ++generation)[0]
                            .c_str());
                    if (r.value("status", std::string()) != "ok")
                        throw std::runtime_error("acquire refused: " + r.dump());
                    acquired = std::pair(r.at("token").get<long long>(), r.at("lease_id").get<std::string>());
                }
                tx.commit();
                ev.committedNs = nowNs();
                ev.atS = ms(Clock::now() - start) / 1000;
                if (!ev.job) {
                    if (!frozen.erase(ev.env))
                        frozen.insert(ev.env);
                } else if (acquired) {
                    held[ev.env] = *acquired;
                } else {
                    held.erase(ev.env);
                }
                done[std::size_t(t)].push_back(ev);
            } catch (const std::exception& e) {
                ++failures;
                const std::lock_guard lock(errorLock);
                if (b.firstError.empty())
                    b.firstError = e.what();
            }
        }
        // What is still frozen or held is left as the seed had it.
        for (const std::string& env : frozen) {
            pqxx::work tx(conn);
            tx.exec_params("SELECT relctl.unfreeze($1, 'bench-manager', '{\"host\": \"bench\"}')", env);
            tx.commit();
        }
        for (const auto& [env, lease] : held) {
            pqxx::work tx(conn);
            tx.exec_params("SELECT relctl.release($1, $2, $3::uuid, '{\"host\": \"bench\"}', NULL)", env,
                           lease.first, lease.second);
            tx.commit();
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(std::size_t(threads));
    for (int t = 0; t < threads; ++t)
        pool.emplace_back(worker, t);
    for (std::thread& t : pool)
        t.join();
    b.seconds = ms(Clock::now() - start) / 1000;
    b.failed = failures;

    std::vector<BurstEvent> events;
    for (auto& d : done)
        events.insert(events.end(), d.begin(), d.end());
    b.committed = static_cast<long long>(events.size());

    // The console's updates, until every event is seen or 5 s after the last.
    std::map<std::string, std::vector<long long>> envUpdates, laneUpdates;
    std::vector<double> gui;
    const auto collect = [&] {
        for (const LiveLine& l : console.tail().poll()) {
            ++b.updates;
            gui.push_back(double(l.guiNs) / 1e6);
            // An event's lag is to its row's update (and its lane's); a
            // promotions update counts in the GUI thread's time only.
            if (l.kind != "environments" && l.kind != "timeline")
                continue;
            for (const std::string& env : l.envs)
                (l.kind == "timeline" ? laneUpdates : envUpdates)[env].push_back(l.atNs);
        }
    };
    const auto firstAfter = [](const std::map<std::string, std::vector<long long>>& updates,
                               const BurstEvent& ev) -> std::optional<long long> {
        const auto it = updates.find(ev.env);
        if (it == updates.end())
            return std::nullopt;
        const auto at = std::lower_bound(it->second.begin(), it->second.end(), ev.committedNs);
        if (at == it->second.end())
            return std::nullopt;
        return *at - ev.committedNs;
    };
    const Clock::time_point waitUntil = Clock::now() + std::chrono::seconds(5);
    for (;;) {
        collect();
        const bool all = std::all_of(events.begin(), events.end(), [&](const BurstEvent& ev) {
            return firstAfter(envUpdates, ev).has_value();
        });
        if (all || Clock::now() > waitUntil)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    console.stop();
    for (auto& [env, at] : envUpdates)
        std::sort(at.begin(), at.end());
    for (auto& [env, at] : laneUpdates)
        std::sort(at.begin(), at.end());

    const double window = std::min(10.0, b.seconds / 3);
    std::vector<double> lag, opLag, jobLag, first, last, laneLag;
    for (const BurstEvent& ev : events) {
        if (const auto l = firstAfter(laneUpdates, ev)) {
            ++b.timelineSeen;
            laneLag.push_back(double(*l) / 1e6);
        }
        const auto l = firstAfter(envUpdates, ev);
        if (!l)
            continue;
        ++b.seen;
        const double v = double(*l) / 1e6;
        lag.push_back(v);
        (ev.job ? jobLag : opLag).push_back(v);
        if (ev.atS < window)
            first.push_back(v);
        else if (ev.atS >= b.seconds - window)
            last.push_back(v);
    }
    b.lagMedian = median(lag);
    b.lagP95 = relctl::bench::percentile(lag, 0.95);
    b.lagMax = maxOf(lag);
    b.operatorLagMedian = median(opLag);
    b.operatorLagMax = maxOf(opLag);
    b.jobLagMedian = median(jobLag);
    b.jobLagMax = maxOf(jobLag);
    b.firstMedian = median(first);
    b.lastMedian = median(last);
    b.firstSeen = static_cast<long long>(first.size());
    b.lastSeen = static_cast<long long>(last.size());
    b.timelineLagMax = maxOf(laneLag);
    b.guiMedian = median(gui);
    b.guiMax = maxOf(gui);
    double sum = 0;
    for (double g : gui)
        sum += g;
    b.guiTotalS = sum / 1000;
    return b;
}

// Runs a program to its end: its exit status (or a failure to start, as
// 127 with the reason) and its output's first line.
struct Ran
{
    int code = 0;
    std::string firstLine;
    double ms = 0;
};

Ran runOnce(const std::vector<std::string>& args)
{
    char path[] = "/tmp/relctl-console-bench-cli-XXXXXX";
    const relctl::Fd file(mkstemp(path));
    if (file.get() < 0)
        fail("cannot create a temporary file");
    unlink(path);
    relctl::SpawnOptions options;
    options.argv = args;
    options.environment = relctl::environmentWith({});
    options.output = file.get();
    Ran r;
    const Clock::time_point start = Clock::now();
    const relctl::Spawned spawned = relctl::spawn(options);
    if (spawned.error != 0) {
        r.code = 127;
        r.firstLine = std::string("cannot start it: ") + std::strerror(spawned.error);
        return r;
    }
    r.code = relctl::bench::reap(spawned.pid);
    r.ms = ms(Clock::now() - start);
    std::string out(512, '\0');
    lseek(file.get(), 0, SEEK_SET);
    const ssize_t n = read(file.get(), out.data(), out.size());
    out.resize(std::size_t(std::max<ssize_t>(0, n)));
    r.firstLine = out.substr(0, out.find('\n'));
    return r;
}

// A whole relctl process at the largest size: the median of R after one
// warm-up; not measured (and why) when it does not run.
struct CliFigure
{
    std::optional<double> ms;
    std::string why;
};

CliFigure timeCli(const Options& o, const std::string& dsn, const std::vector<std::string>& command)
{
    std::vector<std::string> args{o.relctl};
    if (!dsn.empty())
        args.insert(args.end(), {"--dsn", dsn});
    args.insert(args.end(), command.begin(), command.end());
    CliFigure f;
    const Ran warm = runOnce(args);
    if (warm.code != 0) {
        f.why = "exit " + std::to_string(warm.code) + ": " + warm.firstLine;
        return f;
    }
    std::vector<double> runs;
    for (int i = 0; i < o.cliReps; ++i) {
        const Ran r = runOnce(args);
        if (r.code != 0) {
            f.why = "exit " + std::to_string(r.code) + ": " + r.firstLine;
            return f;
        }
        runs.push_back(r.ms);
    }
    f.ms = median(runs);
    return f;
}

// The programs measured, copied where the bench runs: other work rebuilding
// the build directory meanwhile does not change them under it (a copy taken
// mid-link does not answer --version, and is taken again).
std::string privateCopy(const std::string& program, const fs::path& dir)
{
    fs::create_directories(dir);
    const fs::path copy = dir / fs::path(program).filename();
    for (int attempt = 0;; ++attempt) {
        std::error_code error;
        fs::copy_file(program, copy, fs::copy_options::overwrite_existing, error);
        if (!error && runOnce({copy.string(), "--version"}).code == 0)
            return copy.string();
        if (attempt == 12)
            fail("cannot take a working copy of " + program);
        std::this_thread::sleep_for(std::chrono::seconds(10));
    }
}

std::vector<int> parseSizes(const std::string& text)
{
    std::vector<int> sizes;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');) {
        const int n = std::atoi(part.c_str()) / 5 * 5;
        if (n < 5)
            fail("--environments takes multiples of 5 (whole services), at least 5: " + text);
        sizes.push_back(n);
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
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
            o.history.leases = std::max(10, std::atoi(argv[++i]));
        else if (a == "--environments" && value)
            o.sizes = parseSizes(argv[++i]);
        else if (a == "--reps" && value)
            o.reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--settle" && value)
            o.settleMs = std::max(0, std::atoi(argv[++i]));
        else if (a == "--live-events" && value)
            o.liveEvents = std::max(1, std::atoi(argv[++i]));
        else if (a == "--burst-seconds" && value)
            o.burstSeconds = std::max(0, std::atoi(argv[++i]));
        else if (a == "--burst-rate" && value)
            o.burstRate = std::max(1, std::atoi(argv[++i]));
        else if (a == "--burst-connections" && value)
            o.burstConnections = std::max(1, std::atoi(argv[++i]));
        else if (a == "--burst-environments" && value)
            o.burstEnvironments = std::atoi(argv[++i]) / 5 * 5;
        else if (a == "--cli-reps" && value)
            o.cliReps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--pooled-dsn" && value)
            o.pooledDsn = argv[++i];
        else if (a == "--database" && value)
            o.database = argv[++i];
        else if (a == "--console" && value)
            o.console = argv[++i];
        else if (a == "--relctl" && value)
            o.relctl = argv[++i];
        else if (a == "--json" && value)
            o.json = argv[++i];
        else if (a == "--logs" && value)
            o.logs = argv[++i];
        else if (a == "--keep")
            o.keep = true;
        else if (a == "--seed-only")
            o.seedOnly = true;
        else
            fail("usage: relctl-console-bench [--dsn CONNINFO] [--environments N[,N...]] [--events N] "
                 "[--leases N] [--reps R] [--settle MS] [--live-events M] [--burst-seconds S] "
                 "[--burst-rate R] [--burst-connections C] [--burst-environments N] [--cli-reps R] "
                 "[--pooled-dsn CONNINFO] "
                 "[--database PREFIX] [--keep] "
                 "[--seed-only] [--console PATH] [--relctl PATH] [--json FILE] [--logs DIR]");
    }
    if (o.burstEnvironments == 0)
        o.burstEnvironments = o.sizes.back();
    if (std::find(o.sizes.begin(), o.sizes.end(), o.burstEnvironments) == o.sizes.end())
        fail("--burst-environments must be one of the sizes measured");
    return o;
}

// A limit in the goal's own unit, with a reference for information (the
// report prints both).
relctl::bench::Goal goal(const std::string& name, double value, const std::string& unit,
                         std::optional<double> reference, double limit)
{
    relctl::bench::Goal g = relctl::bench::below(name, value, unit, limit);
    g.reference = reference;
    return g;
}

// One organisation: its database, kept open with its waiting candidates held.
struct Organisation
{
    int size = 0;
    std::unique_ptr<relctl::ScratchDatabase> db;
    std::unique_ptr<pqxx::connection> holder;
    relctl::bench::SeededCounts counts;
    long long waiting = 0;
};

Organisation prepare(const Options& o, int size)
{
    using relctl::ScratchDatabase;
    Organisation org;
    org.size = size;
    const std::string name = o.database + "_" + std::to_string(size);
    // Reused as it is when kept: a seeded database serves several runs.
    org.db = std::make_unique<ScratchDatabase>(
        o.dsn, name, o.keep ? ScratchDatabase::Existing::Reuse : ScratchDatabase::Existing::Drop);
    if (o.keep)
        org.db->keep();
    relctl::Database(org.db->conninfo()).migrate();
    org.holder = std::make_unique<pqxx::connection>(org.db->conninfo());
    pqxx::connection& conn = *org.holder;
    const bool seeded =
        pqxx::read_transaction(conn).exec1("SELECT EXISTS (SELECT 1 FROM relctl.events)")[0].as<bool>();
    if (seeded) {
        pqxx::read_transaction tx(conn);
        const pqxx::row r =
            tx.exec1("SELECT date_trunc('second', clock_timestamp() - max(at))::text || ' ago', "
                     "(SELECT count(*) FROM relctl.events) FROM relctl.events");
        org.counts.events = r[1].as<long long>();
        std::printf("reusing %s (seeded %s)\n", name.c_str(), r[0].c_str());
    } else {
        relctl::bench::ConsoleHistory h = o.history;
        h.environments = size;
        const Clock::time_point start = Clock::now();
        org.counts = relctl::bench::seedConsoleHistory(conn, h);
        const relctl::bench::SeededCounts& c = org.counts;
        std::printf("seeded %s in %.1f s: %d environments, %s events, %lld leases, %lld manifests, "
                    "%lld candidates (%lld waiting), %lld promotion requests\n",
                    name.c_str(), ms(Clock::now() - start) / 1000, size, withCommas(c.events).c_str(),
                    c.leases, c.manifests, c.candidates, c.waiting, c.promotions);
    }
    // The waiting candidates' sessions: while this connection is open they queue.
    org.waiting = relctl::bench::holdWaitingCandidates(conn);
    {
        pqxx::read_transaction tx(conn);
        relctl::bench::countStates(tx, org.counts);
    }
    std::printf(
        "  %d environments: %lld held, %lld frozen, %lld with candidates waiting, %lld refused in the "
        "last hour; %lld need attention\n",
        size, org.counts.held, org.counts.frozen, org.counts.queued, org.counts.refused,
        org.counts.attention);
    // Seeding (here or by an earlier run) leaves dirty buffers behind:
    // written out now, not by a checkpoint while the console opens. The
    // kernel then still holds about 1.8 GB per seeded database in its
    // cache, which it writes back over the next half minute: waited for
    // here, so that the openings measure the console and not that (the
    // empty database's opening took 213 ms during it against 164 after).
    pqxx::nontransaction(conn).exec("CHECKPOINT");
    ::sync();
    return org;
}

std::string sizeName(int size)
{
    return withCommas(size);
}

} // namespace

int main(int argc, char** argv)
{
    Options o = parse(argc, argv);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        std::vector<Organisation> orgs;
        for (int size : o.sizes)
            orgs.push_back(prepare(o, size));
        if (o.seedOnly) {
            for (const Organisation& org : orgs)
                std::printf("%s: %s\n", o.keep ? "kept" : "dropped", org.db->conninfo().c_str());
            return 0;
        }
        const fs::path programs =
            fs::temp_directory_path() / ("relctl-console-bench-bin-" + std::to_string(getpid()));
        o.console = privateCopy(o.console, programs);
        o.relctl = privateCopy(o.relctl, programs);
        const relctl::ScratchDatabase empty(o.dsn, o.database + "_empty_");
        relctl::Database(empty.conninfo()).migrate();

        const fs::path dir =
            o.logs.empty() ? fs::temp_directory_path() / ("relctl-console-bench-" + std::to_string(getpid()))
                           : fs::path(o.logs);
        // Each phase's console reports in a directory of its own (kept with --logs).
        const auto phase = [&dir](const std::string& name) {
            fs::create_directories(dir / name / "config");
            return dir / name;
        };

        std::printf("\nopening the console, %d times each\n", o.reps);
        const Opening e = openings(o, empty.conninfo(), phase("open-empty"));
        std::vector<Opening> opened;
        for (const Organisation& org : orgs) {
            opened.push_back(openings(o, org.db->conninfo(), phase("open-" + std::to_string(org.size))));
            std::printf("  %s environments: usable in %.1f ms, %.1f MB\n", sizeName(org.size).c_str(),
                        opened.back().usable, double(opened.back().hwmSettled) / 1024);
        }
        const double pageEmpty = pageQueryNewConnection(empty.conninfo());
        std::vector<double> page;
        page.reserve(orgs.size());
        for (const Organisation& org : orgs)
            page.push_back(pageQueryNewConnection(org.db->conninfo()));

        std::printf("\none live event on %s, %d times at each size\n", kLiveEnvironment, o.liveEvents);
        std::vector<LiveFigures> live;
        for (const Organisation& org : orgs) {
            live.push_back(liveEvents(o, org.db->conninfo(), phase("live-" + std::to_string(org.size))));
            const LiveFigures& f = live.back();
            std::printf("  %s environments: %d of %d events seen; updates:", sizeName(org.size).c_str(),
                        f.seen, f.events);
            for (const auto& [kind, n] : f.updates)
                std::printf(" %s %d", kind.c_str(), n);
            std::printf("\n");
        }

        std::optional<BurstFigures> burstFigures;
        const Organisation* burstOrg = nullptr;
        for (const Organisation& org : orgs)
            if (org.size == o.burstEnvironments)
                burstOrg = &org;
        if (o.burstSeconds > 0 && burstOrg) {
            std::printf("\nburst: %d events/s for %d s at %s environments\n", o.burstRate, o.burstSeconds,
                        sizeName(burstOrg->size).c_str());
            burstFigures = burst(o, burstOrg->db->conninfo(), phase("burst"), burstOrg->size);
        }
        if (o.logs.empty())
            fs::remove_all(dir);

        const Organisation& largest = orgs.back();
        const CliFigure envList = timeCli(o, largest.db->conninfo(), {"env", "list"});
        const CliFigure attention = timeCli(o, largest.db->conninfo(), {"status", "--attention"});
        // The same database through the pooler: its name after the pooler's
        // conninfo (libpq takes the last of a repeated keyword).
        const auto pooledTo = [&](const Organisation& org) {
            return o.pooledDsn + " dbname=" + org.db->name();
        };
        std::optional<CliFigure> envListPooled, attentionPooled;
        if (!o.pooledDsn.empty()) {
            envListPooled = timeCli(o, pooledTo(largest), {"env", "list"});
            attentionPooled = timeCli(o, pooledTo(largest), {"status", "--attention"});
        }
        // Their references: the same commands the same way at the smallest
        // size, so that the ratio shows what the organisation adds and a slow
        // machine shows as one (the goal itself is the figure).
        struct CliReference
        {
            std::optional<double> envList, attention, envListPooled, attentionPooled;
        } cliRef;
        if (orgs.size() > 1) {
            const Organisation& smallestOrg = orgs.front();
            cliRef.envList = timeCli(o, smallestOrg.db->conninfo(), {"env", "list"}).ms;
            cliRef.attention = timeCli(o, smallestOrg.db->conninfo(), {"status", "--attention"}).ms;
            if (!o.pooledDsn.empty()) {
                cliRef.envListPooled = timeCli(o, pooledTo(smallestOrg), {"env", "list"}).ms;
                cliRef.attentionPooled = timeCli(o, pooledTo(smallestOrg), {"status", "--attention"}).ms;
            }
        }
        const CliFigure start = timeCli(o, std::string(), {"--version"});

        // The table: every figure side by side, at each size.
        std::printf("\nrelease-console on an organisation; medians; ms unless said\n");
        std::printf("%-48s %10s", "", "empty");
        for (const Organisation& org : orgs)
            std::printf(" %10s", sizeName(org.size).c_str());
        std::printf("   target\n");
        const auto row = [&](const char* what, std::optional<double> onEmpty, const std::vector<double>& v,
                             const char* target) {
            std::printf("%-48s", what);
            if (onEmpty)
                std::printf(" %10.1f", *onEmpty);
            else
                std::printf(" %10s", "");
            for (double x : v)
                std::printf(" %10.1f", x);
            std::printf("   %s\n", target);
        };
        const auto each = [&](auto field) {
            std::vector<double> v;
            v.reserve(opened.size());
            for (const Opening& x : opened)
                v.push_back(double(x.*field));
            return v;
        };
        const auto eachLive = [&](auto field) {
            std::vector<double> v;
            v.reserve(live.size());
            for (const LiveFigures& x : live)
                v.push_back(double(x.*field));
            return v;
        };
        std::vector<double> heldCounts, attentionCounts;
        for (const Organisation& org : orgs) {
            heldCounts.push_back(double(org.counts.held));
            attentionCounts.push_back(double(org.counts.attention));
        }
        row("environments held (count)", std::nullopt, heldCounts, "");
        row("environments needing attention (count)", std::nullopt, attentionCounts, "");
        row("  main window painted", e.shown, each(&Opening::shown), "");
        row("  connected", e.connected, each(&Opening::connected), "");
        row("  environments painted", e.environments, each(&Opening::environments), "");
        row("  first audit page painted", e.audit, each(&Opening::audit), "");
        row("usable window (all of the above)", e.usable, each(&Opening::usable),
            "<= 300 at 2k, <= 500 at 10k");
        std::vector<double> hwmUsable, hwm;
        for (const Opening& x : opened) {
            hwmUsable.push_back(double(x.hwmUsable) / 1024);
            hwm.push_back(double(x.hwmSettled) / 1024);
        }
        row("peak RSS when usable (MB)", double(e.hwmUsable) / 1024, hwmUsable, "");
        row("peak RSS after settling (MB)", double(e.hwmSettled) / 1024, hwm, "<= 150 at 10k");
        row("first audit page, request to painted", e.auditPage, each(&Opening::auditPage), "< 50");
        row("first audit page query, new connection", pageEmpty, page, "< 50");
        row("one live event: its queries, round trip", std::nullopt, eachLive(&LiveFigures::query), "<= 5");
        row("  environment row", std::nullopt, eachLive(&LiveFigures::queryEnvironment), "");
        row("  timeline lane, last 2 h", std::nullopt, eachLive(&LiveFigures::queryTimeline), "");
        row("  server only (EXPLAIN ANALYZE)", std::nullopt, eachLive(&LiveFigures::server), "");
        row("one live event: GUI thread, median", std::nullopt, eachLive(&LiveFigures::gui), "<= 5");
        row("  largest of the events", std::nullopt, eachLive(&LiveFigures::guiMax), "");
        row("  commit to applied, median", std::nullopt, eachLive(&LiveFigures::lag), "");
        if (burstFigures) {
            const BurstFigures& b = *burstFigures;
            std::printf(
                "\nburst at %s environments: %lld of %lld events committed in %.1f s (%lld failed%s%s), "
                "%lld seen by the console, %lld live updates (GUI thread %.2f s in all, median %.2f ms, "
                "largest %.2f ms)\n",
                sizeName(b.size).c_str(), b.committed, b.planned, b.seconds, b.failed,
                b.firstError.empty() ? "" : "; first: ", b.firstError.c_str(), b.seen, b.updates, b.guiTotalS,
                b.guiMedian, b.guiMax);
            std::printf("  lag, commit to the console's update: median %.1f ms, p95 %.1f ms, max %.1f ms\n",
                        b.lagMedian, b.lagP95, b.lagMax);
            std::printf(
                "  operators' freezes (announced): median %.1f ms, max %.1f ms; jobs' acquires and releases "
                "(followed): median %.1f ms, max %.1f ms\n",
                b.operatorLagMedian, b.operatorLagMax, b.jobLagMedian, b.jobLagMax);
            std::printf(
                "  first %.0f s median %.1f ms, last %.0f s median %.1f ms; timeline lanes updated for %lld "
                "events (max lag %.1f ms)\n",
                std::min(10.0, b.seconds / 3), b.firstMedian, std::min(10.0, b.seconds / 3), b.lastMedian,
                b.timelineSeen, b.timelineLagMax);
        }
        const auto cliLine = [&](const char* what, const CliFigure& f,
                                 std::optional<double> reference = std::nullopt) {
            char against[64] = "";
            if (reference)
                std::snprintf(against, sizeof against, "; %.1f ms at %s environments", *reference,
                              sizeName(orgs.front().size).c_str());
            if (f.ms)
                std::printf("%s at %s environments: %.1f ms (median of %d%s)\n", what,
                            sizeName(largest.size).c_str(), *f.ms, o.cliReps, against);
            else
                std::printf("%s at %s environments: not measured (%s)\n", what,
                            sizeName(largest.size).c_str(), f.why.c_str());
        };
        std::printf("\n");
        cliLine("relctl env list, straight to the server", envList, cliRef.envList);
        cliLine("relctl status --attention, straight to the server", attention, cliRef.attention);
        if (envListPooled) {
            cliLine("relctl env list, through PgBouncer", *envListPooled, cliRef.envListPooled);
            cliLine("relctl status --attention, through PgBouncer", *attentionPooled, cliRef.attentionPooled);
        }
        cliLine("relctl --version (the process alone)", start);

        // The goals: at the sizes the issue names, each with the empty
        // database's figure (opening) or the smallest size's (per event) as
        // its reference.
        std::vector<relctl::bench::Goal> goals;
        const LiveFigures& smallest = live.front();
        for (std::size_t i = 0; i < orgs.size(); ++i) {
            const std::string at = " at " + sizeName(orgs[i].size) + " environments";
            const int n = orgs[i].size;
            if (n == 2000 || n == 10000)
                goals.push_back(
                    goal("console usable" + at, opened[i].usable, "ms", e.usable, n == 2000 ? 300 : 500));
            else
                goals.push_back(goal("console usable" + at, opened[i].usable, "ms", e.usable, 1000));
            if (n == 10000)
                goals.push_back(
                    goal("console peak RSS" + at, hwm[i], "MB", double(e.hwmSettled) / 1024, 150));
            else
                goals.push_back(
                    goal("console peak RSS" + at, hwm[i], "MB", double(e.hwmSettled) / 1024, 300));
            const std::optional<double> refQuery = i == 0 ? std::nullopt : std::optional(smallest.query);
            const std::optional<double> refGui = i == 0 ? std::nullopt : std::optional(smallest.gui);
            goals.push_back(
                goal("one live event, queries (round trip)" + at, live[i].query, "ms", refQuery, 5));
            relctl::bench::Goal g = goal("one live event, GUI thread" + at, live[i].gui, "ms", refGui, 5);
            if (live[i].seen < live[i].events)
                g.met = false, g.name += " (" + std::to_string(live[i].events - live[i].seen) + " not seen)";
            goals.push_back(g);
        }
        if (orgs.size() > 1) {
            // The same at every size: the largest against the smallest.
            const std::string vs =
                ", " + sizeName(largest.size) + " against " + sizeName(orgs.front().size) + " environments";
            goals.push_back(relctl::bench::ratioAtMost("one live event, queries" + vs, live.back().query,
                                                       smallest.query, "ms", 2.0));
            goals.push_back(relctl::bench::ratioAtMost("one live event, GUI thread" + vs, live.back().gui,
                                                       smallest.gui, "ms", 2.0));
        }
        // The first audit page, as before, on the smallest organisation.
        goals.push_back(goal("console first audit page, request to painted, " + sizeName(orgs.front().size) +
                                 " environments",
                             opened.front().auditPage, "ms", e.auditPage, 50));
        goals.push_back(goal("console first audit page query, new connection, " +
                                 sizeName(orgs.front().size) + " environments",
                             page.front(), "ms", pageEmpty, 50));
        if (burstFigures) {
            const BurstFigures& b = *burstFigures;
            const std::string at = ", " + sizeName(b.size) + " environments";
            goals.push_back(goal("burst of " + std::to_string(o.burstRate) + "/s for " +
                                     std::to_string(o.burstSeconds) + " s, max lag" + at,
                                 b.lagMax, "ms", b.lagMedian, 1000));
            relctl::bench::Goal backlog = goal("burst, lag of the last 10 s over the first 10 s" + at,
                                               b.lastMedian - b.firstMedian, "ms", b.firstMedian, 100);
            // No event of either end seen: no backlog measured, which is not its absence.
            if (b.firstSeen == 0 || b.lastSeen == 0)
                backlog.met = false, backlog.name += " (no event of the first or last 10 s seen)";
            goals.push_back(backlog);
            goals.push_back(goal("burst, events the console did not show" + at, double(b.committed - b.seen),
                                 "events", std::nullopt, 1));
            goals.push_back(goal("burst, events not committed" + at, double(b.planned - b.committed),
                                 "events", std::nullopt, 1));
        }
        const auto cliGoal = [&](const std::string& what, const CliFigure& f, const std::string& how,
                                 std::optional<double> reference) {
            const std::string name = what + " at " + sizeName(largest.size) + " environments" + how;
            if (f.ms)
                return goal(name, *f.ms, "ms", reference, 100);
            relctl::bench::Goal g = goal(name + " (not measured: " + f.why + ")", 0, "ms", reference, 100);
            g.met = false;
            return g;
        };
        goals.push_back(cliGoal("relctl env list", envList, ", straight to the server", cliRef.envList));
        goals.push_back(
            cliGoal("relctl status --attention", attention, ", straight to the server", cliRef.attention));
        if (envListPooled) {
            goals.push_back(
                cliGoal("relctl env list", *envListPooled, ", through PgBouncer", cliRef.envListPooled));
            goals.push_back(cliGoal("relctl status --attention", *attentionPooled, ", through PgBouncer",
                                    cliRef.attentionPooled));
        }

        std::printf("\n");
        for (const relctl::bench::Goal& g : goals)
            relctl::bench::print(g);
        // Every figure of the table, for whoever compares runs.
        json info = json::object();
        for (std::size_t i = 0; i < orgs.size(); ++i) {
            const Opening& x = opened[i];
            const LiveFigures& f = live[i];
            info[std::to_string(orgs[i].size)] = {
                {"held", orgs[i].counts.held},
                {"attention", orgs[i].counts.attention},
                {"usable_ms", x.usable},
                {"environments_painted_ms", x.environments},
                {"rss_mb", double(x.hwmSettled) / 1024},
                {"live_query_ms", f.query},
                {"live_server_ms", f.server},
                {"live_gui_ms", f.gui},
                {"live_gui_max_ms", f.guiMax},
                {"live_lag_ms", f.lag},
                {"live_seen", f.seen},
                {"live_events", f.events},
            };
        }
        info["empty"] = {{"usable_ms", e.usable}, {"rss_mb", double(e.hwmSettled) / 1024}};
        if (burstFigures) {
            const BurstFigures& b = *burstFigures;
            info["burst"] = {{"environments", b.size},
                             {"planned", b.planned},
                             {"committed", b.committed},
                             {"seconds", b.seconds},
                             {"seen", b.seen},
                             {"updates", b.updates},
                             {"lag_median_ms", b.lagMedian},
                             {"lag_p95_ms", b.lagP95},
                             {"lag_max_ms", b.lagMax},
                             {"first_median_ms", b.firstMedian},
                             {"last_median_ms", b.lastMedian},
                             {"gui_total_s", b.guiTotalS}};
        }
        relctl::bench::writeJson(o.json, goals, {{"information", info}});
        fs::remove_all(programs);
    } catch (const std::exception& ex) {
        fail(ex.what());
    }
    return 0;
}
