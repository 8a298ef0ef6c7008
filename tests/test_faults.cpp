// Faults a deployment meets, kept as tests: PostgreSQL restarted (fast and
// immediate) under a running `relctl run` and under queued waiters, and relctl
// processes SIGKILLed at random moments and retried with the same op id.
// Everything is a separate OS process against a real PostgreSQL: a cluster of
// the test's own where the server is restarted, the shared one otherwise. The
// random moments come from a fixed seed (printed), so a failure replays.
// What must hold after every fault: a client either goes on or fails safe
// with its documented exit code, nothing acknowledged is lost, nothing is
// applied twice, fencing tokens only grow, and `relctl verify` finds the
// recorded history sound.

#include "faultproxy.h"
#include "relctlprocess.h"
#include "scratchcluster.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <random>
#include <thread>

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

bool waitForFile(const std::string& path, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (!QFile::exists(qstr(path))) {
        if (t.elapsed() > timeoutMs)
            return false;
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

// The history checker's verdict on a database (exit 0: every invariant held).
void verifyHistory(const std::string& dsn)
{
    const RunResult v = relctlWithDsn(dsn, {"verify"});
    QVERIFY2(v.exitCode == 0, failure(v));
}

} // namespace

class TestFaults final : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    std::string file(const std::string& name) const { return m_dir.filePath(qstr(name)).toStdString(); }

    // A cluster of this test's own, migrated, with environment prod.
    static void prepare(const ScratchCluster& pg, const Args& envOptions = {})
    {
        const RunResult migrated = relctlWithDsn(pg.dsn(), {"migrate"});
        if (migrated.exitCode != 0)
            qFatal("migrate failed: %s", migrated.err.c_str());
        Args add{"env", "add", "prod"};
        add.insert(add.end(), envOptions.begin(), envOptions.end());
        if (relctlWithDsn(pg.dsn(), add).exitCode != 0)
            qFatal("env add failed");
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // The server restarts while `relctl run` holds the lease and its command
    // runs. The wrapper either keeps the lease (its heartbeat reconnects) and
    // publishes once, or stops the command at its own deadline and publishes
    // nothing (exit 5): never a publish it cannot prove it held the lease for.
    void restartUnderRun_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addRow("fast") << QStringLiteral("fast");
        QTest::addRow("immediate") << QStringLiteral("immediate");
    }

    void restartUnderRun()
    {
        QFETCH(QString, mode);
        ScratchCluster pg;
        prepare(pg);
        const std::string started = file("started-" + mode.toStdString());
        QFile::remove(qstr(started));
        auto run = startRelctlWithDsn(
            pg.dsn(),
            {"run", "--env", "prod", "--job", "job-1", "--release", "v1", "--generation", "1", "--ttl", "6s",
             "--op-id", "run-" + mode.toStdString(), "--", "sh", "-c", "touch '" + started + "'; sleep 3"},
            {{"RELCTL_STATE_DIR", file("state")}});
        QVERIFY(waitForFile(started, 20000));
        pg.restart(mode.toStdString());
        const RunResult r = finish(*run, 60000);
        const long long manifests = std::stoll(pg.query("SELECT count(*) FROM relctl.manifests"));
        if (r.exitCode == 0) {
            QCOMPARE(manifests, 1LL);
        } else {
            QVERIFY2(r.exitCode == 5, failure(r));
            QCOMPARE(manifests, 0LL);
        }
        QVERIFY2(r.elapsedMs < 30000, failure(r));
        verifyHistory(pg.dsn());
        // Nothing is left locked: the next job gets the environment.
        const RunResult next =
            relctlWithDsn(pg.dsn(), {"lease", "acquire", "--env", "prod", "--job", "job-2", "--release", "v2",
                                     "--generation", "2", "--wait", "10s"});
        QVERIFY2(next.exitCode == 0, failure(next));
    }

    // The server restarts (immediate: a crash) while three waiters queue
    // behind a holder. Every waiter connects again within its reconnect
    // window and gets its place back (relctl.acquire revives its candidate),
    // so the queue resumes in its order; the environment is free afterwards.
    // The holder's command outlasts the restart (its heartbeat renews through
    // it): a waiter that is back first must not find the lease free before the
    // others had time to come back. 12 s: on a loaded 2-core machine (a build
    // beside the tests) crash recovery and a waiter's reconnect took 5.1 s,
    // and with the holder's 6 s the queue had moved past that waiter.
    void restartWhileWaitersQueue()
    {
        ScratchCluster pg;
        prepare(pg);
        const std::string started = file("holder-started");
        QFile::remove(qstr(started));
        const Env env{{"RELCTL_STATE_DIR", file("state")}};
        auto holder = startRelctlWithDsn(pg.dsn(),
                                         {"run", "--env", "prod", "--job", "job-1", "--release", "v1",
                                          "--generation", "1", "--ttl", "6s", "--op-id", "queue-1", "--",
                                          "sh", "-c", "touch '" + started + "'; sleep 12"},
                                         env);
        QVERIFY(waitForFile(started, 20000));
        std::vector<std::unique_ptr<QProcess>> waiters;
        for (int g = 2; g <= 4; ++g) {
            waiters.push_back(
                startRelctlWithDsn(pg.dsn(),
                                   {"run", "--env", "prod", "--job", "job-" + std::to_string(g), "--release",
                                    "v" + std::to_string(g), "--generation", std::to_string(g), "--ttl", "6s",
                                    "--wait", "60s", "--op-id", "queue-" + std::to_string(g), "--", "true"},
                                   env));
            // One at a time, so their queue order is their generation order.
            QTRY_COMPARE_WITH_TIMEOUT(
                std::stoll(pg.query("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'")),
                static_cast<long long>(g - 1), 10000);
        }
        pg.restart("immediate");
        const RunResult h = finish(*holder, 60000);
        QVERIFY2(h.exitCode == 0 || h.exitCode == 5, failure(h));
        // Each waiter connected again, was given back its place, and ran.
        for (auto& w : waiters) {
            const RunResult r = finish(*w, 90000);
            QVERIFY2(r.exitCode == 0, failure(r));
        }
        // In queue order: the same three candidates (kept, not queued anew),
        // granted and published in generation order.
        QCOMPARE(pg.query("SELECT count(*) FROM relctl.candidates"), std::string("3"));
        QCOMPARE(
            pg.query("SELECT string_agg(job, ',' ORDER BY token) FROM relctl.leases WHERE job <> 'job-1'"),
            std::string("job-2,job-3,job-4"));
        QCOMPARE(
            pg.query("SELECT string_agg(job, ',' ORDER BY id) FROM relctl.manifests WHERE job <> 'job-1'"),
            std::string("job-2,job-3,job-4"));
        // Published in increasing generation order, each once.
        QCOMPARE(
            pg.query("SELECT count(*) FROM (SELECT generation, lag(generation) OVER (ORDER BY id) AS before "
                     "FROM relctl.manifests) m WHERE m.before >= m.generation"),
            std::string("0"));
        QCOMPARE(pg.query("SELECT count(*) - count(DISTINCT generation) FROM relctl.manifests"),
                 std::string("0"));
        verifyHistory(pg.dsn());
        const RunResult next =
            relctlWithDsn(pg.dsn(), {"lease", "acquire", "--env", "prod", "--job", "job-9", "--release", "v9",
                                     "--generation", "9", "--wait", "10s"});
        QVERIFY2(next.exitCode == 0, failure(next));
        // Candidates whose waiters the crash took are gone from the queue by then.
        QCOMPARE(pg.query("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"),
                 std::string("0"));
    }

    // Every queued waiter holds a connection (docs/operations.md): when the
    // server has none left, a job is refused at connect, exits 9 saying so,
    // and writes nothing; the waiters that got in queue as usual.
    void connectionsExhausted()
    {
        ScratchCluster pg({"max_connections=6", "superuser_reserved_connections=0"});
        prepare(pg);
        const RunResult held =
            relctlWithDsn(pg.dsn(), {"lease", "acquire", "--env", "prod", "--job", "holder", "--release",
                                     "v1", "--generation", "1", "--ttl", "60s"});
        QVERIFY2(held.exitCode == 0, failure(held));
        std::vector<std::unique_ptr<QProcess>> waiters;
        for (int g = 2; g <= 10; ++g)
            waiters.push_back(startRelctlWithDsn(pg.dsn(), {"lease", "acquire", "--env", "prod", "--job",
                                                            "job-" + std::to_string(g), "--release",
                                                            "v" + std::to_string(g), "--generation",
                                                            std::to_string(g), "--wait", "4s"}));
        int refused = 0;
        int timedOut = 0;
        for (auto& w : waiters) {
            const RunResult r = finish(*w, 60000);
            if (r.exitCode == 9) {
                ++refused;
                QVERIFY2(r.err.find("too many clients") != std::string::npos, failure(r));
            } else {
                QVERIFY2(r.exitCode == 3, failure(r)); // queued until --wait ran out
                ++timedOut;
            }
        }
        QVERIFY2(refused >= 1 && timedOut >= 1,
                 qPrintable(QStringLiteral("%1 refused, %2 queued").arg(refused).arg(timedOut)));
        // A refused job left no trace; each one that queued left one candidate.
        QCOMPARE(pg.query("SELECT count(*) FROM relctl.candidates"), std::to_string(timedOut));
        QCOMPARE(pg.query("SELECT count(*) FROM relctl.candidates WHERE state = 'timeout'"),
                 std::to_string(timedOut));
    }

    // A slow network is not a fault: every byte 150 ms late in both
    // directions, and `relctl run` still acquires, runs, publishes once and
    // releases.
    void slowNetwork()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.delay(150ms);
        const RunResult r = relctlWithDsn(proxy.dsn(db.name()),
                                          {"run", "--env", "prod", "--job", "job-slow", "--release", "v1",
                                           "--generation", "1", "--op-id", "slow-1", "--", "true"},
                                          {{"RELCTL_STATE_DIR", file("state-slow")}});
        QVERIFY2(r.exitCode == 0, failure(r));
        QVERIFY2(r.elapsedMs >= 600, failure(r)); // the delay was there
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
        QCOMPARE(qstr(db.scalar("SELECT end_reason FROM relctl.leases")), QStringLiteral("released"));
    }

    // Replies later than the call bound: the client cuts the call, cannot
    // settle it over the same slow path within its window, and exits 9 in
    // bounded time; `op show` (straight to the server) then tells the truth,
    // and the database agrees with it.
    void delayPastTheCallBound()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const RunResult acquired = relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-1",
                                               "--release", "v1", "--generation", "1", "--ttl", "60s"});
        QCOMPARE(acquired.exitCode, 0);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.delay(3000ms);
        const RunResult r =
            relctlWithDsn(proxy.dsn(db.name()), {"publish", "--lease", acquired.line(), "--op-id", "late-1"},
                          {{"RELCTL_CALL_TIMEOUT", "1s"}, {"RELCTL_RECONNECT_TIMEOUT", "2s"}});
        QVERIFY2(r.exitCode == 9, failure(r));
        QVERIFY2(r.elapsedMs < 12000, failure(r));
        QVERIFY2(r.err.find("relctl op show late-1") != std::string::npos, failure(r));
        std::this_thread::sleep_for(3500ms); // anything still held by the proxy has arrived by now
        const std::string state = relctl(db, {"--json", "op", "show", "late-1"}).json()["state"];
        QVERIFY2(state == "completed" || state == "unknown", state.c_str());
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), state == "completed" ? 1LL : 0LL);
        // The lease is not left locked or in doubt: its holder can act on it.
        const RunResult retry = relctl(db, {"publish", "--lease", acquired.line(), "--op-id", "late-1"});
        QVERIFY2(retry.exitCode == 0, failure(retry));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
    }

    // Every connection dropped twice while `relctl run`'s command runs (its
    // heartbeat's and its own): the wrapper reconnects and publishes once, or
    // stops the command and publishes nothing; it always exits, and the
    // environment is free afterwards.
    void runThroughDroppedConnections()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        FaultProxy proxy(TestDatabase::clusterDsn());
        const std::string started = file("dropped-started");
        QFile::remove(qstr(started));
        auto run = startRelctlWithDsn(proxy.dsn(db.name()),
                                      {"run", "--env", "prod", "--job", "job-d", "--release", "v1",
                                       "--generation", "1", "--ttl", "3s", "--op-id", "dropped-1", "--", "sh",
                                       "-c", "touch '" + started + "'; sleep 2.5"},
                                      {{"RELCTL_STATE_DIR", file("state-dropped")}});
        QVERIFY(waitForFile(started, 20000));
        proxy.dropAll();
        std::this_thread::sleep_for(1200ms);
        proxy.dropAll();
        const RunResult r = finish(*run, 60000);
        const long long manifests = db.count("SELECT count(*) FROM relctl.manifests");
        if (r.exitCode == 0)
            QCOMPARE(manifests, 1LL);
        else
            QVERIFY2(r.exitCode == 5 && manifests == 0, failure(r));
        QVERIFY2(r.elapsedMs < 30000, failure(r));
        const RunResult next = relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-n", "--release",
                                           "v2", "--generation", "2", "--wait", "10s"});
        QVERIFY2(next.exitCode == 0, failure(next));
        verifyHistory(db.dsn());
    }

    // acquire, publish and release of twelve jobs in a row, each call
    // SIGKILLed at a random moment (0-40 ms after it started) and then retried
    // with the same op id until it answers. Every operation took effect
    // exactly once: one lease per acquire op id, one manifest per publish op
    // id, and `op show` tells each as completed.
    void killedCallsRetriedWithTheSameOpId()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const unsigned seed = 20261201;
        qInfo("seed %u", seed);
        std::mt19937 random(seed);
        std::uniform_int_distribution<int> delay(0, 40);
        const Env env{{"RELCTL_STATE_DIR", file("state-killed")}};
        int killed = 0;
        // Runs a call, killing the first attempts at random moments, until one answers.
        const auto untilAnswered = [&](const Args& args) {
            for (int attempt = 0;; ++attempt) {
                auto p = startRelctlWithDsn(db.dsn(), args, env);
                if (attempt < 2) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(delay(random)));
                    if (p->state() != QProcess::NotRunning) {
                        ::kill(static_cast<pid_t>(p->processId()), SIGKILL);
                        ++killed;
                    }
                }
                RunResult r = finish(*p, 30000);
                if (r.exitCode == 0)
                    return r;
                if (r.exitCode != -1 && r.exitCode != 128 + SIGKILL)
                    qFatal("unexpected answer: %s", failure(r));
            }
        };
        const int jobs = 12;
        for (int k = 1; k <= jobs; ++k) {
            const std::string n = std::to_string(k);
            const RunResult acquired =
                untilAnswered({"lease", "acquire", "--env", "prod", "--job", "job-" + n, "--release", "v" + n,
                               "--generation", n, "--op-id", "a-" + n});
            const std::string handle = acquired.line();
            untilAnswered({"publish", "--lease", handle, "--op-id", "p-" + n});
            untilAnswered({"lease", "release", "--lease", handle});
        }
        qInfo("%d calls killed", killed);
        QVERIFY(killed > 0);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), static_cast<long long>(jobs));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), static_cast<long long>(jobs));
        QCOMPARE(db.count("SELECT count(DISTINCT op_id) FROM relctl.leases"), static_cast<long long>(jobs));
        QCOMPARE(db.count("SELECT count(DISTINCT op_id) FROM relctl.manifests"),
                 static_cast<long long>(jobs));
        QCOMPARE(db.count("SELECT max(token) FROM relctl.leases"), static_cast<long long>(jobs));
        for (int k = 1; k <= jobs; ++k) {
            const std::string n = std::to_string(k);
            QCOMPARE(relctl(db, {"--json", "op", "show", "p-" + n}).json()["state"], json("completed"));
            QCOMPARE(relctl(db, {"--json", "op", "show", "a-" + n}).json()["state"], json("completed"));
        }
        verifyHistory(db.dsn());
    }
};

QTEST_GUILESS_MAIN(TestFaults)
#include "test_faults.moc"
