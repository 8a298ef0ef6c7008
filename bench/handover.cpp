// relctl-bench: how fast a lease reaches the next waiter, and what one
// `relctl run -- true` costs.
//
//   relctl-bench [--dsn CONNINFO] [--rounds N]
//
// Handover latency is measured on the server's clock: from the release's
// audit event (written in the releasing transaction) or the lease's
// expires_at, to the waiter's acquire event. It includes the notification,
// the waiter waking and its re-evaluation, and nothing of process start-up:
// the waiter, a separate `relctl lease acquire --wait` process, is queued
// before the lease ends. The database must be migrated (relctl migrate).

#include "relctl/database.h"
#include "relctl/process.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>


namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

[[noreturn]] void fail(const std::string& what)
{
    std::fprintf(stderr, "relctl-bench: %s\n", what.c_str());
    std::exit(1);
}

// Starts a relctl with its output discarded (the bench reads the database).
pid_t spawn(const std::vector<std::string>& args)
{
    static const relctl::Fd devNull(open("/dev/null", O_WRONLY | O_CLOEXEC));
    relctl::SpawnOptions options;
    options.argv = args;
    options.environment = relctl::environmentWith({});
    options.output = devNull.get();
    const relctl::Spawned spawned = relctl::spawn(options);
    if (spawned.error != 0)
        fail("cannot start " + args.at(0) + ": " + std::strerror(spawned.error));
    return spawned.pid;
}

int reap(pid_t pid)
{
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// "2026-11-30T10:48:46.433912+00:00" (UTC, as relctl writes times) → seconds.
double epochSeconds(const std::string& at)
{
    std::tm tm{};
    if (at.size() < 19 || !strptime(at.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &tm))
        fail("unreadable time " + at);
    double fraction = 0;
    if (at.size() > 19 && at[19] == '.')
        fraction = std::stod("0" + at.substr(19, at.find_first_of("+-Z", 19) - 19));
    return static_cast<double>(timegm(&tm)) + fraction;
}

double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(std::lround(p * static_cast<double>(v.size() - 1))))];
}

void report(const char* what, const std::vector<double>& ms)
{
    std::printf("%-40s n=%-3zu p50 %7.2f ms   p99 %7.2f ms   max %7.2f ms\n", what, ms.size(),
                percentile(ms, 0.5), percentile(ms, 0.99), *std::max_element(ms.begin(), ms.end()));
    std::fflush(stdout);
}

class Bench
{
public:
    Bench(const std::string& dsn) : m_db(dsn), m_env("bench-" + std::to_string(getpid()))
    {
        m_db.addEnvironment({m_env, 60s, 10min});
    }

    std::vector<double> releaseHandover(int rounds)
    {
        std::vector<double> ms;
        for (int i = 0; i < rounds; ++i) {
            json holder = acquire("holder", 60s);
            pid_t w = waiter();
            awaitQueued();
            m_db.release(*relctl::parseHandle(holder["handle"].get<std::string>()));
            if (reap(w) != 0)
                fail("a waiter did not get the lease");
            const long long token = holder["token"].get<long long>();
            ms.push_back((eventTime("acquire", token + 1) - eventTime("release", token)) * 1000.0);
            cleanUp();
        }
        return ms;
    }

    std::vector<double> expiryHandover(int rounds)
    {
        std::vector<double> ms;
        for (int i = 0; i < rounds; ++i) {
            json holder = acquire("holder", 400ms);
            pid_t w = waiter();
            awaitQueued();
            if (reap(w) != 0)
                fail("a waiter did not get the expired lease");
            const long long token = holder["token"].get<long long>();
            ms.push_back((eventTime("acquire", token + 1) - epochSeconds(holder["expires_at"])) * 1000.0);
            cleanUp();
        }
        return ms;
    }

    std::vector<double> runTrue(int rounds)
    {
        std::vector<double> ms;
        for (int i = 0; i < rounds; ++i) {
            const auto start = Clock::now();
            pid_t p = spawn({RELCTL_BIN, "run", "--env", m_env, "--job", "run", "--release", next(),
                             "--generation", std::to_string(m_generation), "--", "true"});
            if (reap(p) != 0)
                fail("relctl run -- true failed");
            ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        }
        return ms;
    }

private:
    std::string next() { return "r" + std::to_string(++m_generation); }

    json acquire(const std::string& job, std::chrono::milliseconds ttl)
    {
        relctl::AcquireRequest r;
        r.env = m_env;
        r.job = job;
        r.release = next();
        r.generation = m_generation;
        r.ttl = ttl;
        relctl::Outcome o = m_db.acquire(r);
        if (!o.accepted())
            fail("acquire refused: " + o.body.dump());
        return o.body;
    }

    pid_t waiter()
    {
        const std::string release = next();
        return spawn({RELCTL_BIN, "lease", "acquire", "--env", m_env, "--job", "waiter", "--release", release,
                      "--generation", std::to_string(m_generation), "--ttl", "60s", "--wait", "30s"});
    }

    void awaitQueued()
    {
        const auto until = Clock::now() + 20s;
        while (m_db.showEnvironment(m_env).queue.empty()) {
            if (Clock::now() > until)
                fail("a waiter never queued");
            std::this_thread::sleep_for(1ms);
        }
    }

    double eventTime(const std::string& operation, long long token)
    {
        relctl::AuditQuery q;
        q.env = m_env;
        q.operation = operation;
        q.limit = 5;
        for (const relctl::Event& e : m_db.audit(q).events)
            if (e.token == token)
                return epochSeconds(e.at);
        fail("no " + operation + " event for token " + std::to_string(token));
    }

    // The waiter's lease is someone else's: end it the operator's way.
    void cleanUp() { m_db.revoke(m_env, "relctl-bench", "end of a measurement round"); }

    relctl::Database m_db;
    std::string m_env;
    long long m_generation = 0;
};

} // namespace

int main(int argc, char** argv)
{
    const char* dsnVariable = std::getenv("RELCTL_DSN");
    std::string dsn = dsnVariable != nullptr ? dsnVariable : "";
    int rounds = 50;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--dsn" && i + 1 < argc)
            dsn = argv[++i];
        else if (arg == "--rounds" && i + 1 < argc)
            rounds = std::max(2, std::atoi(argv[++i]));
        else
            fail("usage: relctl-bench [--dsn CONNINFO] [--rounds N]");
    }
    setenv("RELCTL_DSN", dsn.c_str(), 1); // for the relctl processes it starts
    try {
        Bench bench(dsn);
        report("handover after release", bench.releaseHandover(rounds));
        report("handover after expiry", bench.expiryHandover(std::max(2, rounds / 2)));
        report("relctl run -- true (whole process)", bench.runTrue(rounds));
    } catch (const relctl::Error& e) {
        fail(e.what());
    }
    return 0;
}
