// relctl-flood-bench: what job logins that flood relctl cost everyone else,
// with the trust boundary's caps in place (docs/security.md: Threat model).
//
//   relctl-flood-bench --dsn CONNINFO [--per-env N] [--json FILE]
//
// Queue flood: 10 environments, each held, and N (default 1,000, the cap)
// live candidates queued on each by 10 sessions of 5 job logins (2,000 per
// login, the cap), as an attacker would queue them, by SQL. The reads a
// person or a job makes meanwhile — `relctl env show` of one flooded
// environment, `relctl env list`, a busy `relctl lease acquire` — are timed
// at a tenth of the flood and at all of it: reads that stay linear grow
// about tenfold (the attack pass found `env show` quadratic: 12–13 s with
// 5,000 waiting). The next candidate over the cap is refused QUEUE_FULL.
//
// Refusal flood: one job session sends 5,000 renews with a wrong lease id;
// all are refused, and the trail grows by the login's budget (100 per
// environment) rather than by 5,000.
//
// The login must be a superuser (it creates the job logins and reads
// relctl's tables); the database must be migrated. Logins and environments
// are prefixed with this process's pid and left behind (scripts/bench.sh runs
// on a throwaway cluster).

#include "goals.h"
#include "support.h"

#include <map>
#include <memory>
#include <pqxx/pqxx>
#include <thread>
#include <unistd.h>

namespace {

using namespace relctl::bench;
using nlohmann::json;

constexpr int kEnvironments = 10;
constexpr int kLogins = 5;

struct Options
{
    std::string dsn;
    int perEnv = 1000;
    std::string json;
};

double msSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class Bench
{
public:
    explicit Bench(Options o) : m_o(std::move(o)), m_admin(m_o.dsn), m_prefix("f" + std::to_string(getpid()))
    {
    }

    void run()
    {
        setUp();
        std::vector<Goal> goals;
        std::printf("queueing %d candidates on each of %d held environments (%d sessions, %d job logins)\n",
                    m_o.perEnv / 10, kEnvironments, kEnvironments, kLogins);
        const double tenthMs = queue(m_o.perEnv / 10);
        const Reads tenth = reads();
        std::printf("queueing the other %d on each\n", m_o.perEnv - m_o.perEnv / 10);
        const double restMs = queue(m_o.perEnv - m_o.perEnv / 10);
        const Reads all = reads();
        const long long live =
            count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting' AND env LIKE " +
                  quote(m_prefix + "-%"));
        std::printf("%lld live candidates; queueing them took %.1f s (the first tenth %.1f s)\n", live,
                    (tenthMs + restMs) / 1000, tenthMs / 1000);
        const std::string n = std::to_string(m_o.perEnv);
        const std::string t = std::to_string(m_o.perEnv / 10);
        goals.push_back(ratioAtMost("env show, " + n + " waiting vs " + t, all.show, tenth.show, "ms", 15));
        goals.push_back(ratioAtMost("env list, " + std::to_string(live) + " live candidates vs a tenth",
                                    all.list, tenth.list, "ms", 15));
        goals.push_back(ratioAtMost("busy lease acquire, " + std::to_string(live) + " live vs a tenth",
                                    all.busy, tenth.busy, "ms", 15));
        goals.push_back(below("env show with " + n + " waiting", all.show, "ms", 1000));
        for (const Goal& g : goals)
            print(g);
        if (m_o.perEnv == 1000) {
            pqxx::nontransaction tx(*m_sessions[0]);
            const json over = json::parse(tx.exec1("SELECT relctl.acquire(" + tx.quote(env(0)) +
                                                   ", 'over', 'r', 5000, NULL, 'flood-over', '{}', true, "
                                                   "'flood-secret-0123456789-over')")[0]
                                              .c_str());
            if (over.value("reason", std::string()) != "QUEUE_FULL")
                fail("the candidate over the cap was not refused QUEUE_FULL: " + over.dump());
            std::printf("the next candidate: %s\n", over.value("message", std::string()).c_str());
        }

        const double refusalsMs = refusalFlood();
        const long long appended =
            count("SELECT count(*) FROM relctl.events WHERE env = " + quote(m_prefix + "-renew") +
                  " AND outcome = 'rejected'");
        std::printf("5,000 refused renews from one job session: %.0f ms, %lld refusals appended\n",
                    refusalsMs, appended);
        goals.push_back(
            below("refusals appended by 5,000 refused renews", static_cast<double>(appended), "events", 101));
        print(goals.back());
        writeJson(
            m_o.json, goals,
            json{{"live_candidates", live},
                 {"queueing_ms", tenthMs + restMs},
                 {"refused_renews_ms", refusalsMs},
                 {"reads_tenth", {{"show_ms", tenth.show}, {"list_ms", tenth.list}, {"busy_ms", tenth.busy}}},
                 {"reads_all", {{"show_ms", all.show}, {"list_ms", all.list}, {"busy_ms", all.busy}}}});
        bool met = true;
        for (const Goal& g : goals)
            met = met && g.met;
        if (!met)
            std::exit(3);
    }

private:
    struct Reads
    {
        double show = 0;
        double list = 0;
        double busy = 0;
    };

    std::string env(int i) const { return m_prefix + "-" + std::to_string(i); }
    std::string login(int i) const { return m_prefix + "_job" + std::to_string(i); }

    std::string quote(const std::string& text)
    {
        pqxx::nontransaction tx(m_admin);
        return tx.quote(text);
    }

    long long count(const std::string& sql)
    {
        pqxx::nontransaction tx(m_admin);
        return tx.exec1(sql)[0].as<long long>();
    }

    void setUp()
    {
        pqxx::nontransaction tx(m_admin);
        for (int i = 0; i < kLogins; ++i)
            tx.exec("CREATE ROLE " + tx.quote_name(login(i)) + " LOGIN IN ROLE relctl_job");
        for (int i = 0; i < kEnvironments; ++i) {
            relctl({"env", "add", env(i), "--max-ttl", "2h"});
            tx.exec("SELECT relctl.acquire(" + tx.quote(env(i)) +
                    ", 'holder', 'r1', 1, 3600000, NULL, '{}', false, "
                    "NULL)");
        }
        // Two sessions per login, one per environment: each login stays at its cap.
        for (int i = 0; i < kEnvironments; ++i)
            m_sessions.push_back(std::make_unique<pqxx::connection>(m_o.dsn + " user=" + login(i % kLogins)));
    }

    // Queues `n` more candidates on every environment, the sessions in
    // parallel; the wall time in ms.
    double queue(int n)
    {
        const auto start = Clock::now();
        std::vector<std::thread> threads;
        threads.reserve(kEnvironments);
        for (int i = 0; i < kEnvironments; ++i)
            threads.emplace_back([this, i, n] {
                pqxx::nontransaction tx(*m_sessions[static_cast<std::size_t>(i)]);
                const std::string from = std::to_string(m_queued + 1);
                const std::string to = std::to_string(m_queued + n);
                tx.exec("SELECT relctl.acquire(" + tx.quote(env(i)) + ", 'flood-' || g, 'r', g + 1, NULL, " +
                        tx.quote(env(i) + "-") + " || g, '{}', true, 'flood-secret-0123456789-' || g) " +
                        "FROM generate_series(" + from + ", " + to + ") g");
            });
        for (auto& t : threads)
            t.join();
        m_queued += n;
        return msSince(start);
    }

    // Medians of five, each a whole relctl process.
    Reads reads()
    {
        std::vector<double> show, list, busy;
        for (int round = 0; round < 5; ++round) {
            show.push_back(timed({RELCTL_BIN, "--dsn", m_o.dsn, "--json", "env", "show", env(0)}));
            list.push_back(timed({RELCTL_BIN, "--dsn", m_o.dsn, "--json", "env", "list"}));
            const auto start = Clock::now();
            const int code =
                reap(spawn({RELCTL_BIN, "--dsn", m_o.dsn + " user=" + login(0), "lease", "acquire", "--env",
                            env(0), "--job", "busy", "--release", "rb", "--generation", "9999999"}));
            busy.push_back(msSince(start));
            if (code != 3)
                fail("a lease acquire on a held environment exited " + std::to_string(code) +
                     ", not 3 (busy)");
        }
        return {median(show), median(list), median(busy)};
    }

    double refusalFlood()
    {
        relctl({"env", "add", m_prefix + "-renew"});
        pqxx::connection job(m_o.dsn + " user=" + login(0));
        pqxx::nontransaction tx(job);
        const auto start = Clock::now();
        tx.exec("SELECT relctl.renew(" + tx.quote(m_prefix + "-renew") +
                ", 1, gen_random_uuid(), NULL, '{}') FROM generate_series(1, 5000)");
        return msSince(start);
    }

    void relctl(std::vector<std::string> args)
    {
        args.insert(args.begin(), {RELCTL_BIN, "--dsn", m_o.dsn});
        timed(args);
    }

    Options m_o;
    pqxx::connection m_admin;
    std::string m_prefix;
    std::vector<std::unique_ptr<pqxx::connection>> m_sessions;
    int m_queued = 0;
};

} // namespace

int main(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--dsn")
            o.dsn = optionValue(i, argc, argv);
        else if (arg == "--per-env")
            o.perEnv = std::stoi(optionValue(i, argc, argv));
        else if (arg == "--json")
            o.json = optionValue(i, argc, argv);
        else
            fail("usage: relctl-flood-bench --dsn CONNINFO [--per-env N] [--json FILE]");
    }
    if (o.dsn.empty())
        fail("--dsn is required");
    if (o.perEnv < 10 || o.perEnv > 1000)
        fail("--per-env must be between 10 and 1000 (the cap on one environment's queue)");
    try {
        Bench(o).run();
    } catch (const std::exception& e) {
        fail(e.what());
    }
    return 0;
}
