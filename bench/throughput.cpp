// relctl-throughput-bench: what the protocol's operations cost next to the
// one durable transaction each needs, and what a whole `relctl run -- true`
// costs next to Terraform's lock → state → unlock cycle.
//
//   relctl-throughput-bench --dsn CONNINFO [--seconds S] [--rounds R]
//                           [--clients N] [--runs N] [--json FILE]
//                           [--pooled-dsn CONNINFO]
//
// Throughput is pgbench's (bench/pgbench/*.sql): each client works on its own
// environment, so nothing should contend. The reference for renew is plain
// SQL doing what a renewal must at least do, in one transaction: update one
// row and append one event row to a table shaped like relctl.events (same
// columns, defaults and indexes); the reference for an acquire → publish →
// release cycle is three such transactions. Each round measures a reference
// and its subject back to back, so a ratio compares like with like even when
// the disk's flush time drifts; the figures are the medians of the rounds.
// For information it also runs the cycle's writes without the protocol
// (bare.sql): what the rows alone cost.
//
// `relctl run -- true` is a whole process (connect, acquire, run, publish,
// release, exit), timed against `terraform apply` of an empty configuration
// with the pg backend on the same server (where terraform is on PATH), and
// against psql making the same three calls, alternately, median of --runs.
// With --pooled-dsn (PgBouncer in session mode in front of the same database,
// as docs/operations.md deploys it for many jobs) the same
// processes are timed through the pooler as well, terraform's included: a
// pooled job finds a server session that earlier jobs warmed, which is what
// a new session's first calls cost otherwise.
// Goals (issue 30): a direct `relctl run` at most 1.1 times psql's own 3
// calls (a new server session's start-up is most of both), a pooled one at
// most 0.35 times terraform apply through the same pooler; each path prints
// its ratio to the other reference too, and to terraform beside the former
// goal of 0.4, for information.
// The database must be migrated (relctl migrate) and the login a superuser.

#include "goals.h"
#include "support.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

namespace {

using namespace relctl::bench;
namespace fs = std::filesystem;

struct Options
{
    std::string dsn;
    int seconds = 5;
    int rounds = 3;
    int clients = 8;
    int runs = 15;
    std::string json;
    // Where PgBouncer (session mode) pools the same database: whole processes
    // are timed through it too, relctl and terraform alike.
    std::string pooledDsn;
};

std::string script(const std::string& name)
{
    return std::string(RELCTL_BENCH_DIR) + "/pgbench/" + name + ".sql";
}

void psqlFile(const Options& o, const std::string& file)
{
    capture({"psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "clients=" + std::to_string(o.clients), "-d",
             o.dsn, "-f", file});
}

// A program's output without its trailing newline.
std::string trimmed(std::string out)
{
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return out;
}

std::string psqlValue(const Options& o, const std::string& sql)
{
    return trimmed(capture({"psql", "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-d", o.dsn, "-c", sql}));
}

// The machine's CPU time so far, from /proc/stat's first line: all of it and
// the part spent idle (idle + iowait), in clock ticks.
struct CpuTimes
{
    long long total = 0;
    long long idle = 0;
};

CpuTimes cpuTimes()
{
    std::ifstream stat("/proc/stat");
    std::string cpu;
    stat >> cpu;
    CpuTimes t;
    long long v = 0;
    for (int field = 0; field < 10 && stat >> v; ++field) {
        t.total += v;
        if (field == 3 || field == 4)
            t.idle += v;
    }
    return t;
}

// How many of the machine's cores were busy between two readings (server,
// pgbench and everything else together).
double busyCores(const CpuTimes& from, const CpuTimes& to)
{
    const double total = static_cast<double>(to.total - from.total);
    if (total <= 0)
        return 0;
    return (total - static_cast<double>(to.idle - from.idle)) / total * std::thread::hardware_concurrency();
}

// Transactions (script executions) per second. `variables`: pgbench -D NAME=VALUE.
// `busy` receives how many cores the run kept busy.
double pgbench(const Options& o, const std::string& name, int clients,
               const std::vector<std::string>& variables, double& busy)
{
    std::vector<std::string> args{"pgbench", "-n",
                                  "-c",      std::to_string(clients),
                                  "-j",      std::to_string(clients),
                                  "-T",      std::to_string(o.seconds),
                                  "-f",      script(name)};
    for (const std::string& v : variables) {
        args.emplace_back("-D");
        args.push_back(v);
    }
    args.push_back(o.dsn);
    const CpuTimes before = cpuTimes();
    const std::string out = capture(args);
    busy = busyCores(before, cpuTimes());
    std::smatch m;
    if (std::regex_search(out, m, std::regex(R"(number of failed transactions: ([1-9][0-9]*))")))
        fail("pgbench " + name + ": transactions failed:\n" + out);
    if (!std::regex_search(out, m, std::regex(R"(tps = ([0-9.]+) \(without initial connection time\))")))
        fail("pgbench " + name + " printed no rate:\n" + out);
    const double tps = std::stod(m[1].str());
    std::printf("  %-8s %d client%s %9.1f/s\n", name.c_str(), clients, clients == 1 ? " " : "s", tps);
    std::fflush(stdout);
    return tps;
}

// cycle.sql declares generations as a job does, without asking the database:
// each client counts up (k) from above every cycle environment's high water
// (bare.sql's too: a manifest's generation is unique on its environment).
// The directory of the PostgreSQL client programs (pg_config --bindir), or
// "" without pg_config.
std::string psqlBinDir()
{
    if (!onPath("pg_config"))
        return {};
    return trimmed(capture({"pg_config", "--bindir"}));
}

std::vector<std::string> cycleVariables(const Options& o)
{
    return {"base=" + psqlValue(o, "SELECT coalesce(max(high_water_generation), 0) FROM relctl.environments "
                                   "WHERE name LIKE 'cycle-%' OR name LIKE 'bare-%'"),
            "k=0"};
}

// `info` receives the figures printed for information (not goals).
std::vector<Goal> throughput(const Options& o, nlohmann::json& info)
{
    psqlFile(o, script("setup"));
    psqlFile(o, script("renew-setup"));
    const std::string firstEvent = psqlValue(o, "SELECT coalesce(max(id), 0) FROM relctl.events");
    std::map<std::string, std::vector<double>> runs;
    const std::string n = std::to_string(o.clients);
    // Each run's rate under `key`, and under `key + " busy"` the cores it kept busy.
    const auto measure = [&](const std::string& key, const std::string& name, int clients,
                             const std::vector<std::string>& variables) {
        double busy = 0;
        runs[key].push_back(pgbench(o, name, clients, variables, busy));
        runs[key + " busy"].push_back(busy);
    };
    for (int round = 1; round <= o.rounds; ++round) {
        std::printf("round %d of %d (%d s each)\n", round, o.rounds, o.seconds);
        measure("plain 1", "plain", 1, {});
        measure("renew 1", "renew", 1, {});
        measure("plain " + n, "plain", o.clients, {});
        measure("renew " + n, "renew", o.clients, {});
        measure("cycle 1", "cycle", 1, cycleVariables(o));
        measure("cycle " + n, "cycle", o.clients, cycleVariables(o));
        measure("plain3 " + n, "plain3", o.clients, {});
        measure("bare " + n, "bare", o.clients, cycleVariables(o));
    }
    // pgbench does not read the functions' answers: a refusal would count as
    // a transaction. Every operation the bench made must have been accepted.
    const std::string refused =
        psqlValue(o, "SELECT count(*) FROM relctl.events WHERE outcome = 'rejected' "
                     "AND id > " +
                         firstEvent + " AND (env LIKE 'bench-%' OR env LIKE 'cycle-%')");
    if (refused != "0")
        fail(refused + " of the benchmark's operations were refused");

    const auto m = [&](const std::string& key) { return median(runs.at(key)); };
    // For information, not a goal: how much of a cycle's cost is the
    // protocol's logic rather than the rows it must write.
    std::printf("acquire-publish-release, %s clients: %.1f cycles/s; the same writes without the protocol's "
                "checks (bare.sql): %.1f/s, ratio %.2f\n",
                n.c_str(), m("cycle " + n), m("bare " + n), m("cycle " + n) / m("bare " + n));
    // Nor this: how far the reference transaction itself scales here. A
    // client waits for its commit's flush, which more clients share; once
    // the cores are busy, a transaction that costs more CPU than the
    // reference gains less from that sharing, so where this is below the
    // cycle's target the machine, not the protocol, sets the limit.
    std::printf("plain UPDATE + INSERT, %s clients vs 1 client: %.1f vs %.1f tx/s, ratio %.2f (the machine's "
                "scaling for the reference; the cycle's target is 3.00)\n",
                n.c_str(), m("plain " + n), m("plain 1"), m("plain " + n) / m("plain 1"));
    // Nor this: what the cores allow. One client already keeps some of the
    // machine busy (its server process, its pgbench thread, the kernel); more
    // clients can only fill the rest, so no number of them exceeds cores /
    // busy times its rate, and less where each transaction costs more CPU
    // with more clients (CPU per transaction: busy cores / rate).
    const double cores = std::thread::hardware_concurrency();
    const auto cpuMs = [&](const std::string& key) { return m(key + " busy") / m(key) * 1000; };
    std::printf(
        "acquire-publish-release, 1 client keeps %.2f of %.0f cores busy: more clients can do at most "
        "%.2f times its rate here\n",
        m("cycle 1 busy"), cores, m("cycle 1 busy") > 0 ? cores / m("cycle 1 busy") : 0.0);
    std::printf("CPU per transaction (all processes), 1 vs %s clients: plain %.2f vs %.2f ms, cycle %.2f vs "
                "%.2f ms\n",
                n.c_str(), cpuMs("plain 1"), cpuMs("plain " + n), cpuMs("cycle 1"), cpuMs("cycle " + n));
    info["plain " + n + " vs 1 client"] = m("plain " + n) / m("plain 1");
    info["cycle " + n + " clients vs bare writes"] = m("cycle " + n) / m("bare " + n);
    info["cycle 1 client busy cores"] = m("cycle 1 busy");
    info["CPU ms per plain tx, 1 client"] = cpuMs("plain 1");
    info["CPU ms per plain tx, " + n + " clients"] = cpuMs("plain " + n);
    info["CPU ms per cycle, 1 client"] = cpuMs("cycle 1");
    info["CPU ms per cycle, " + n + " clients"] = cpuMs("cycle " + n);
    info["cores"] = cores;
    return {
        ratioAtLeast("renew, 1 client, vs plain UPDATE + INSERT", m("renew 1"), m("plain 1"), "tx/s", 0.8),
        ratioAtLeast("renew, " + n + " clients, vs plain UPDATE + INSERT", m("renew " + n), m("plain " + n),
                     "tx/s", 0.8),
        ratioAtLeast("acquire-publish-release, " + n + " clients, vs 1 client", m("cycle " + n), m("cycle 1"),
                     "cycles/s", 3.0),
        ratioAtLeast("acquire-publish-release, " + n + " clients, vs 3 plain tx", m("cycle " + n),
                     m("plain3 " + n), "cycles/s", 0.6),
    };
}

// One way for jobs to reach the server: the conninfo relctl and psql take
// (terraformUrl gives terraform's for the same place), what its goals'
// names and information keys say of it, and its goals (issue 30): a
// reference a goal does not use is printed for information.
struct Path
{
    std::string name;
    std::string dsn;
    std::string goalSuffix;
    std::string infoSuffix;
    // The most `relctl run -- true` may take, as a ratio to psql making the
    // same 3 calls and to terraform apply; 0: no goal against it.
    double psqlGoal = 0;
    double terraformGoal = 0;
};

// The goal every path had against terraform before issue 30: a direct
// `relctl run` opens a new server session, whose start-up alone (psql's bare
// cycle is 0.37 of terraform) leaves it no room under 0.4, so the direct
// path is held to psql's own calls instead and the pooled one to 0.35. The
// ratio is still printed beside it.
constexpr double kFormerTerraformGoal = 0.4;

std::string terraformUrl(const std::string& dsn)
{
    std::smatch m;
    std::string url = "postgres:///postgres?host=";
    url += std::regex_search(dsn, m, std::regex(R"(host=(\S+))")) ? m[1].str() : std::string("/tmp");
    if (std::regex_search(dsn, m, std::regex(R"(port=(\d+))")))
        url += "&port=" + m[1].str();
    return url + "&user=postgres&sslmode=disable";
}

std::string fmt2(double x)
{
    char text[16];
    std::snprintf(text, sizeof text, "%.2f", x);
    return text;
}

// What one path's whole processes took, medians in ms.
struct Processes
{
    double relctl = 0;
    double psql = 0;
    double terraform = 0;
    double bare = 0;
    double empty = 0;
};

std::vector<Goal> wholeProcess(const Options& o, nlohmann::json& info)
{
    const std::string env = "run-bench";
    psqlValue(o, "SELECT relctl.env_add('" + env +
                     "', 60000, 600000, '{}') WHERE NOT EXISTS "
                     "(SELECT 1 FROM relctl.environments WHERE name = '" +
                     env + "')");
    const fs::path dir = fs::temp_directory_path() / ("relctl-bench-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string calls = (dir / "calls.sql").string();
    std::ofstream(calls) << "SELECT r ->> 'token' AS token, r ->> 'lease_id' AS lease_id\n"
                            "FROM (SELECT relctl.acquire('"
                         << env
                         << "', 'psql', 'psql', :generation, 60000, "
                            "gen_random_uuid()::text, '{}', false, NULL) AS r) acquired\n"
                            "\\gset\n"
                            "SELECT relctl.publish('"
                         << env
                         << "', :token, :'lease_id', '{}', gen_random_uuid()::text, '{}');\n"
                            "SELECT relctl.release('"
                         << env << "', :token, :'lease_id', '{}', NULL);\n";
    // For information: the floor under any client on this server, a new
    // session that only writes the cycle's rows (setup.sql's bare functions,
    // no checks), and a new session that runs nothing.
    psqlFile(o, script("setup"));
    const std::string bareEnv = "bare-0";
    const std::string bare = (dir / "bare.sql").string();
    std::ofstream(bare) << "SELECT token FROM relctl_bench.acquire('" << bareEnv
                        << "', :generation)\n"
                           "\\gset\n"
                           "SELECT relctl_bench.publish('"
                        << bareEnv
                        << "', :token);\n"
                           "SELECT relctl_bench.release('"
                        << bareEnv << "', :token);\n";
    const auto highWater = [&](const std::string& name) {
        return std::stoll(psqlValue(
            o, "SELECT high_water_generation FROM relctl.environments WHERE name = '" + name + "'"));
    };
    long long bareGeneration = highWater(bareEnv);

    // Terraform: an empty configuration whose state lives in this database.
    const bool terraform = onPath("terraform");
    const std::vector<std::string> tfCommon = {"TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1",
                                               "TF_CLI_CONFIG_FILE=/dev/null"};
    const auto tfEnv = [&](const Path& path) {
        std::vector<std::string> e = tfCommon;
        e.push_back("PG_CONN_STR=" + terraformUrl(path.dsn));
        return e;
    };
    std::vector<Path> paths = {{"direct", o.dsn, "", "", 1.1, 0}};
    if (!o.pooledDsn.empty())
        paths.push_back({"pooled", o.pooledDsn, ", both through PgBouncer", " (pooled)", 0, 0.35});
    // A directory per path: terraform init records where the state lives.
    const auto tfDir = [&](const Path& path) { return (dir / ("terraform-" + path.name)).string(); };
    if (terraform)
        for (const Path& path : paths) {
            fs::create_directories(tfDir(path));
            std::ofstream(tfDir(path) + "/main.tf") << "terraform {\n  backend \"pg\" {}\n}\n";
            capture({"terraform", "init", "-input=false", "-no-color"}, tfEnv(path), tfDir(path));
        }

    // The server's psql, not Debian's wrapper on PATH (a Perl script that
    // costs more than the calls it makes).
    const std::string bindir = psqlBinDir();
    const std::string psqlProgram =
        !bindir.empty() && fs::exists(bindir + "/psql") ? bindir + "/psql" : "psql";
    std::printf("psql: %s; the server preloads: %s\n", psqlProgram.c_str(),
                psqlValue(o, "SELECT coalesce(nullif(current_setting('shared_preload_libraries'), ''), "
                             "'nothing')")
                    .c_str());

    long long generation = highWater(env);
    const auto measure = [&](const Path& path) {
        std::vector<double> relctl, psql, tf, bareSession, emptySession;
        const std::vector<std::string> tfVars = tfEnv(path);
        for (int i = 0; i < o.runs + 1; ++i) {
            ++generation;
            const double r = timed({RELCTL_BIN, "--dsn", path.dsn, "run", "--env", env, "--job", "bench-run",
                                    "--release", "r" + std::to_string(generation), "--generation",
                                    std::to_string(generation), "--", "true"});
            // psql declares its generation too (the next one), as relctl run does.
            generation += 1;
            const double p = timed({psqlProgram, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v",
                                    "generation=" + std::to_string(generation), "-d", path.dsn, "-f", calls});
            double t = 0;
            if (terraform)
                t = timed({"terraform", "apply", "-auto-approve", "-input=false", "-no-color"}, tfVars,
                          tfDir(path));
            const double b =
                timed({psqlProgram, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v",
                       "generation=" + std::to_string(++bareGeneration), "-d", path.dsn, "-f", bare});
            const double e = timed({psqlProgram, "-X", "-q", "-d", path.dsn, "-c", "SELECT 1"});
            if (i == 0)
                continue; // warm-up: the first of each pays for cold caches (and fills a pool)
            relctl.push_back(r);
            psql.push_back(p);
            bareSession.push_back(b);
            emptySession.push_back(e);
            if (terraform)
                tf.push_back(t);
        }
        return Processes{median(relctl), median(psql), terraform ? median(tf) : 0, median(bareSession),
                         median(emptySession)};
    };

    std::vector<Goal> goals;
    for (const Path& path : paths) {
        const Processes m = measure(path);
        const double reference = terraform ? m.terraform : m.psql;
        std::printf("%s: for information, whole psql processes (new client sessions) next to %s at %.1f ms:\n"
                    "  SELECT 1 only                            %6.1f ms  ratio %.2f\n"
                    "  the cycle's rows only (bare, no checks)  %6.1f ms  ratio %.2f\n"
                    "  the protocol's 3 calls                   %6.1f ms  ratio %.2f\n",
                    path.name.c_str(), terraform ? "terraform apply" : "psql's 3 calls", reference, m.empty,
                    m.empty / reference, m.bare, m.bare / reference, m.psql, m.psql / reference);
        info["psql SELECT 1, ms" + path.infoSuffix] = m.empty;
        info["psql bare writes, ms" + path.infoSuffix] = m.bare;
        info["psql 3 calls, ms" + path.infoSuffix] = m.psql;
        info["relctl run, ms" + path.infoSuffix] = m.relctl;
        if (terraform)
            info["terraform apply, ms" + path.infoSuffix] = m.terraform;
        const auto ratio = [](double value, double base, double goal, double former) {
            char text[96];
            std::snprintf(text, sizeof text, "ratio %.2f (%s%s)", value / base,
                          goal > 0 ? (std::string("goal <= ") + fmt2(goal)).c_str() : "information",
                          former > 0 ? (std::string(", former goal <= ") + fmt2(former)).c_str() : "");
            return std::string(text);
        };
        std::printf("%s: relctl run -- true %.1f ms\n  vs psql's 3 calls       %6.1f ms  %s\n",
                    path.name.c_str(), m.relctl, m.psql, ratio(m.relctl, m.psql, path.psqlGoal, 0).c_str());
        if (terraform)
            std::printf("  vs terraform apply       %6.1f ms  %s\n", m.terraform,
                        ratio(m.relctl, m.terraform, path.terraformGoal, kFormerTerraformGoal).c_str());
        else
            std::printf("  terraform is not on PATH: no figure against terraform apply%s\n",
                        path.terraformGoal > 0 ? ", and its goal is not measured" : "");
        if (path.psqlGoal > 0)
            goals.push_back(
                ratioAtMost("relctl run -- true vs psql making the same 3 calls" + path.goalSuffix, m.relctl,
                            m.psql, "ms", path.psqlGoal));
        if (terraform && path.terraformGoal > 0)
            goals.push_back(
                ratioAtMost("relctl run -- true vs terraform apply (pg backend)" + path.goalSuffix, m.relctl,
                            m.terraform, "ms", path.terraformGoal));
    }
    fs::remove_all(dir);
    return goals;
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    if (const char* dsn = std::getenv("RELCTL_DSN"))
        o.dsn = dsn;
    std::string part;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&] { return optionValue(i, argc, argv); };
        if (a == "--dsn")
            o.dsn = next();
        else if (a == "--seconds")
            o.seconds = std::max(1, std::stoi(next()));
        else if (a == "--rounds")
            o.rounds = std::max(1, std::stoi(next()));
        else if (a == "--clients")
            o.clients = std::max(2, std::stoi(next()));
        else if (a == "--runs")
            o.runs = std::max(1, std::stoi(next()));
        else if (a == "--json")
            o.json = next();
        else if (a == "--pooled-dsn")
            o.pooledDsn = next();
        else if (a == "--only")
            part = next();
        else
            fail("usage: relctl-throughput-bench --dsn CONNINFO [--seconds S] [--rounds R] [--clients N] "
                 "[--runs N] [--json FILE] [--pooled-dsn CONNINFO] [--only throughput|run]");
    }
    if (o.dsn.empty())
        fail("no database: give --dsn or set RELCTL_DSN");
    std::vector<Goal> goals;
    nlohmann::json info = nlohmann::json::object();
    if (part.empty() || part == "throughput")
        for (Goal& g : throughput(o, info))
            goals.push_back(std::move(g));
    if (part.empty() || part == "run")
        for (Goal& g : wholeProcess(o, info))
            goals.push_back(std::move(g));
    for (const Goal& g : goals)
        print(g);
    writeJson(o.json, goals, {{"information", info}});
    return 0;
}
