// The client side of the trust boundary: nothing waits without a bound (a
// server that stays silent before or after the connection's startup, a row
// lock held by another session, the final release of `relctl run`), hostile
// input is refused before connecting (a manifest nested 30,000 levels deep)
// or cannot inject lines into a CI log (control characters), and the lease
// secret stays out of argv and out of `run`'s output. relctl runs as separate
// OS processes against the real PostgreSQL; the stalls come from a proxy in
// this process that forwards to the test cluster until told to go silent.

#include "faultproxy.h"
#include "relctl/database.h"
#include "relctl/error.h"
#define RELCTL_TEST_NO_SHORT_NAME
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QFile>
#include <QLocalServer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QtTest>
#include <arpa/inet.h>
#include <atomic>
#include <csignal>
#include <fcntl.h>
#include <future>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <pqxx/pqxx>
#include <regex>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

bool hasRawControl(const std::string& s, bool allowNewlines)
{
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c < 0x20 && !(allowNewlines && c == '\n')) || c == 0x7f)
            return true;
    }
    return false;
}

QProcessEnvironment relctlEnvironment(const std::string& dsn, const Env& extra)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"RELCTL_LEASE", "PGHOST", "PGDATABASE", "PGSERVICE", "PGUSER", "PGPORT",
                             "PGCONNECT_TIMEOUT", "PGOPTIONS"})
        env.remove(QLatin1String(name));
    env.insert(QStringLiteral("RELCTL_DSN"), qstr(dsn));
    for (const auto& [key, value] : extra)
        env.insert(qstr(key), qstr(value));
    return env;
}

std::unique_ptr<QProcess> startRelctlWith(const std::string& dsn, const Args& args, const Env& extra)
{
    auto p = std::make_unique<QProcess>();
    QStringList list;
    for (const std::string& a : args)
        list << qstr(a);
    p->setProcessEnvironment(relctlEnvironment(dsn, extra));
    p->start(qstr(relctlBinary()), list);
    if (!p->waitForStarted())
        qFatal("cannot start relctl");
    p->closeWriteChannel();
    return p;
}

bool waitForFile(const QString& path, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (!QFile::exists(path)) {
        if (t.elapsed() > timeoutMs)
            return false;
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

Args acquireArgs(const std::string& env, const std::string& job, const std::string& generation)
{
    return {"lease",     "acquire",        "--env",        env,       "--job", job,
            "--release", "r" + generation, "--generation", generation};
}

} // namespace

class TestHardening final : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    std::string file(const std::string& name) const { return m_dir.filePath(qstr(name)).toStdString(); }

    std::string writeFile(const std::string& name, const QByteArray& content) const
    {
        QFile f(qstr(file(name)));
        if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
            qFatal("cannot write %s", name.c_str());
        return file(name);
    }

    // A waiting `lease acquire` ends with the job's lease, having said once
    // on stderr why it kept trying.
    static void expectLeaseAfterWaiting(QProcess& waiter, const TestDatabase& db, const std::string& job,
                                        const std::string& said)
    {
        const RunResult waited = finish(waiter, 30000);
        QVERIFY2(waited.exitCode == 0, failure(waited));
        QVERIFY2(waited.err.find(said) != std::string::npos, failure(waited));
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.leases WHERE job = '" + job + "' AND ended_at IS NULL"),
            1LL);
    }

    static std::string liveLeaseId(const TestDatabase& db, const std::string& job)
    {
        return db.scalar("SELECT replace(lease_id::text, '-', '') FROM relctl.leases WHERE job = '" + job +
                         "'");
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // A server that accepts TCP and never answers: the connection attempt is
    // bounded by connect_timeout, for relctl and for core's API callers alike
    // (neither needs PGCONNECT_TIMEOUT in the environment any more).
    void silentServerBeforeStartup()
    {
        QTcpServer silent; // the kernel completes the handshake; nothing ever answers
        QVERIFY(silent.listen(QHostAddress::LocalHost));
        const std::string dsn =
            "host=127.0.0.1 port=" + std::to_string(silent.serverPort()) + " dbname=x user=x";

        QElapsedTimer t;
        t.start();
        auto p = startRelctlWith(dsn, {"lease", "show", "--env", "e"}, {});
        const RunResult r = finish(*p, 30000);
        QVERIFY2(r.exitCode == 9, failure(r));
        QVERIFY2(t.elapsed() < 9000, failure(r));

        // Core directly, with no PGCONNECT_TIMEOUT set by anyone: the old
        // core waited here forever.
        qunsetenv("PGCONNECT_TIMEOUT");
        auto outcome = std::make_shared<std::promise<int>>();
        std::future<int> done = outcome->get_future();
        std::thread([dsn, outcome] {
            try {
                relctl::Database db(dsn);
                outcome->set_value(0);
            } catch (const relctl::Error& e) {
                outcome->set_value(static_cast<int>(e.code()));
            } catch (...) {
                outcome->set_value(-1);
            }
        }).detach(); // a hung connection attempt must not hang the test too
        QVERIFY2(done.wait_for(10s) == std::future_status::ready, "core's connection attempt is unbounded");
        QCOMPARE(done.get(), 9);
    }

    // The server completed the startup, then goes silent: each call gives up
    // after the call bound, reads as unavailable, writes as outcome unknown.
    void stallAfterStartup()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        FaultProxy proxy(TestDatabase::clusterDsn());
        const std::string dsn = proxy.dsn(db.name());
        const Env bound{{"RELCTL_CALL_TIMEOUT", "2s"}};
        // The control: through the proxy, relctl works.
        const RunResult ok = relctlWithDsn(dsn, {"lease", "show", "--env", "prod"}, bound);
        QVERIFY2(ok.exitCode == 0, failure(ok));

        proxy.stall();
        const RunResult read = relctlWithDsn(dsn, {"lease", "show", "--env", "prod"}, bound);
        QVERIFY2(read.exitCode == 9, failure(read));
        QVERIFY2(read.elapsedMs >= 1500 && read.elapsedMs < 6000, failure(read));
        QVERIFY2(read.err.find("no reply from the database within 2s") != std::string::npos, failure(read));

        const RunResult write =
            relctlWithDsn(dsn, concat({"--json"}, acquireArgs("prod", "job-1", "1")), bound);
        QVERIFY2(write.exitCode == 9, failure(write));
        QVERIFY2(write.elapsedMs < 6000, failure(write));
        QVERIFY2(write.err.find("the outcome is unknown") != std::string::npos, failure(write));
        QCOMPARE(qstr(write.json().value("error", "")), QStringLiteral("unavailable"));
    }

    // The command fails; the final release meets a silent server. The wrapper
    // still exits, in bounded time, with the command's code and a word that
    // the lease was not released (it runs out at its expiry).
    void runReleaseStalled()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        FaultProxy proxy(TestDatabase::clusterDsn());
        const QString started = qstr(file("release-started"));
        QElapsedTimer t;
        t.start();
        auto p = startRelctlWith(proxy.dsn(db.name()),
                                 {"run", "--env", "prod", "--job", "job-r", "--release", "r1", "--generation",
                                  "1", "--ttl", "60s", "--", "sh", "-c",
                                  "touch '" + started.toStdString() + "'; sleep 1; exit 3"},
                                 {{"RELCTL_CALL_TIMEOUT", "2s"}});
        QVERIFY(waitForFile(started, 20000));
        proxy.stall();
        const RunResult r = finish(*p, 60000);
        QVERIFY2(r.exitCode == 3, failure(r));
        QVERIFY2(t.elapsed() < 15000, failure(r));
        QVERIFY2(r.err.find("could not release the lease") != std::string::npos, failure(r));
        QVERIFY2(r.err.find("runs out at its expiry") != std::string::npos, failure(r));
        QCOMPARE(
            qstr(db.scalar("SELECT coalesce(end_reason, 'live') FROM relctl.leases WHERE job = 'job-r'")),
            QStringLiteral("live"));
    }

    // A cancelled run whose release stalls: a second SIGTERM ends the wrapper
    // at once instead of waiting out the call bound.
    void runSecondSigtermDuringRelease()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        FaultProxy proxy(TestDatabase::clusterDsn());
        const QString started = qstr(file("cancel-started"));
        auto p = startRelctlWith(proxy.dsn(db.name()),
                                 {"run", "--env", "prod", "--job", "job-c", "--release", "r1", "--generation",
                                  "1", "--ttl", "60s", "--", "sh", "-c",
                                  "touch '" + started.toStdString() + "'; exec sleep 60"},
                                 {{"RELCTL_CALL_TIMEOUT", "60s"}});
        QVERIFY(waitForFile(started, 20000));
        proxy.stall();
        const pid_t pid = static_cast<pid_t>(p->processId());
        QCOMPARE(kill(pid, SIGTERM), 0);
        std::this_thread::sleep_for(1500ms); // the command is stopped; the release is stuck
        QVERIFY(p->state() != QProcess::NotRunning);
        QElapsedTimer t;
        t.start();
        QCOMPARE(kill(pid, SIGTERM), 0);
        const RunResult r = finish(*p, 30000);
        QVERIFY2(t.elapsed() < 3000, failure(r));
        QVERIFY2(r.exitCode == 128 + SIGTERM, failure(r));
        QVERIFY2(r.err.find("could not release the lease") != std::string::npos, failure(r));
    }

    // Another session holds the environment's row lock in an open
    // transaction: a call on that environment gives up after lock_timeout
    // (the user's own -c lock_timeout=1s wins over relctl's 10s, which relctl
    // sets after connecting), says the environment is locked, and writes
    // nothing.
    void lockedEnvironment()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        pqxx::connection holder(db.dsn());
        pqxx::work tx(holder);
        tx.exec("SELECT relctl.renew('prod', 999, gen_random_uuid(), NULL, '{}')");
        const auto before = db.footprint();
        const RunResult r =
            relctlWithDsn(db.dsn() + " options='-c lock_timeout=1s'", acquireArgs("prod", "job-l", "1"));
        QVERIFY2(r.exitCode == 9, failure(r));
        QVERIFY2(r.elapsedMs < 5000, failure(r));
        QVERIFY2(r.err.find("locked by another session") != std::string::npos, failure(r));
        // The user's setting wins however the server would read it: as
        // --name=value, and from PGOPTIONS, the name in any case.
        const RunResult longForm =
            relctlWithDsn(db.dsn() + " options='--lock-timeout=1s'", acquireArgs("prod", "job-l", "1"));
        QVERIFY2(longForm.exitCode == 9 && longForm.elapsedMs < 5000, failure(longForm));
        const RunResult fromEnvironment =
            relctlWithDsn(db.dsn(), acquireArgs("prod", "job-l", "1"), {{"PGOPTIONS", "-c Lock_Timeout=1s"}});
        QVERIFY2(fromEnvironment.exitCode == 9 && fromEnvironment.elapsedMs < 5000, failure(fromEnvironment));
        QVERIFY(db.footprint() == before);
        tx.abort();
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 0LL);
        // Unlocked, the same call goes through: nothing of the refusal stuck.
        const RunResult after =
            relctlWithDsn(db.dsn() + " options='-c lock_timeout=1s'", acquireArgs("prod", "job-l", "1"));
        QVERIFY2(after.exitCode == 0, failure(after));
    }

    // A job that may wait (--wait) does not give up when lock_timeout runs
    // out: nothing was applied, so it asks again until its wait runs out,
    // and gets the lease once the lock is gone. A wait shorter than the lock
    // still ends with exit 9, the lock named, and nothing written.
    void lockedEnvironmentWhileWaiting()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string dsn = db.dsn() + " options='-c lock_timeout=1s'";
        pqxx::connection holder(db.dsn());
        auto tx = std::make_unique<pqxx::work>(holder);
        tx->exec("SELECT relctl.renew('prod', 999, gen_random_uuid(), NULL, '{}')");
        const auto before = db.footprint();

        const RunResult shortWait =
            relctlWithDsn(dsn, concat(acquireArgs("prod", "job-s", "1"), {"--wait", "2s"}));
        QVERIFY2(shortWait.exitCode == 9, failure(shortWait));
        QVERIFY2(shortWait.elapsedMs >= 1900, failure(shortWait));
        QVERIFY2(shortWait.err.find("locked by another session") != std::string::npos, failure(shortWait));
        QVERIFY2(shortWait.err.find("asking again until --wait runs out") != std::string::npos,
                 failure(shortWait));
        QVERIFY(db.footprint() == before);

        // A fresh hold: a session idle in a transaction that holds an
        // environment is ended by the next caller after 5 s (relctl's
        // idle-hold bound, test_security), so the waiter's asking again is
        // watched within it.
        tx->abort();
        tx = std::make_unique<pqxx::work>(holder);
        tx->exec("SELECT relctl.renew('prod', 999, gen_random_uuid(), NULL, '{}')");
        auto waiter = startRelctlWith(dsn, concat(acquireArgs("prod", "job-w", "1"), {"--wait", "60s"}), {});
        std::this_thread::sleep_for(2500ms); // two lock timeouts at least, within the idle-hold bound
        QVERIFY(waiter->state() != QProcess::NotRunning);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 0LL);
        tx->abort();
        expectLeaseAfterWaiting(*waiter, db, "job-w", "asking again until --wait runs out");
    }

    // A job that may wait connects again when the server does not answer
    // its connection within connect_timeout (a postmaster busy starting
    // hundreds of sessions at once): nothing was sent yet. Without --wait the
    // job ends at once, exit 9, nothing written. The server's socket is first
    // a listener that never answers, then a link to the test cluster's.
    void slowConnectionWhileWaiting()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        std::smatch host, port;
        const std::string cluster = TestDatabase::clusterDsn();
        if (!std::regex_search(cluster, host, std::regex(R"(host=(/\S+))")))
            QSKIP("the test cluster is not on a unix socket");
        const std::string socketName =
            ".s.PGSQL." +
            (std::regex_search(cluster, port, std::regex(R"(port=(\d+))")) ? port[1].str() : "5432");
        const QString socket = qstr(file(socketName));
        QLocalServer silent; // the kernel accepts; nothing ever answers
        QVERIFY(silent.listen(socket));
        std::string dsn =
            std::regex_replace(cluster, std::regex(R"(host=\S+)"), "host=" + m_dir.path().toStdString());
        dsn = std::regex_replace(dsn, std::regex(R"(dbname=\S+)"), "") + " dbname=" + db.name();
        const Env patience{{"PGCONNECT_TIMEOUT", "2"}};

        const RunResult once = relctlWithDsn(dsn, acquireArgs("prod", "job-c", "1"), patience);
        QVERIFY2(once.exitCode == 9, failure(once));
        QVERIFY2(once.err.find("timeout expired") != std::string::npos, failure(once));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 0LL);

        auto waiter =
            startRelctlWith(dsn, concat(acquireArgs("prod", "job-w", "1"), {"--wait", "60s"}), patience);
        std::this_thread::sleep_for(4500ms); // two attempts have timed out
        QVERIFY(waiter->state() != QProcess::NotRunning);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 0LL);
        // The listener stays (the attempt it holds times out, as the others
        // did); new attempts find the cluster under its name.
        QVERIFY(QFile::remove(socket));
        QVERIFY(QFile::link(qstr(host[1].str() + "/" + socketName), socket));
        expectLeaseAfterWaiting(*waiter, db, "job-w", "connecting again until --wait runs out");
    }

    // 60 KB nested 30,000 levels deep: refused with exit 2 and one line
    // before connecting (the old relctl sent it and died on the server's
    // stack depth limit, exit 1); 64 levels are still a manifest.
    void deepManifest()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        const RunResult acquired = runRelctl(db, acquireArgs("prod", "job-d", "1"));
        QVERIFY2(acquired.exitCode == 0, failure(acquired));
        const Env lease{{"RELCTL_LEASE", acquired.line()}};
        const QByteArray deep = "{\"a\":" + QByteArray(29999, '[') + QByteArray(29999, ']') + "}";
        QVERIFY(deep.size() > 60000 && deep.size() <= 65536);
        const std::string deepFile = writeFile("deep.json", deep);
        const QByteArray tooDeep = QByteArray(65, '{').replace("{", "{\"a\":") + QByteArray(65, '}');
        const std::string tooDeepFile = writeFile("65.json", tooDeep);

        const auto before = db.footprint();
        const Args rejected[] = {{"publish", "--manifest", deepFile},
                                 {"publish", "--manifest", tooDeepFile},
                                 {"run", "--env", "prod", "--job", "job-e", "--release", "r2", "--generation",
                                  "2", "--manifest", deepFile, "--", "true"}};
        for (const Args& args : rejected) {
            const RunResult r = runRelctl(db, args, {}, lease);
            QVERIFY2(r.exitCode == 2, failure(r));
            QVERIFY2(std::count(r.err.begin(), r.err.end(), '\n') == 1 &&
                         r.err.find("nested deeper than 64 levels") != std::string::npos,
                     failure(r));
            QVERIFY2(r.out.empty(), failure(r));
        }
        QVERIFY(db.footprint() == before);

        QByteArray deepest = QByteArray(63, '{').replace("{", "{\"a\":") + "{}" + QByteArray(63, '}');
        const RunResult ok =
            runRelctl(db, {"publish", "--manifest", writeFile("64.json", deepest)}, {}, lease);
        QVERIFY2(ok.exitCode == 0, failure(ok));
    }

    // Input and database values are echoed with their control characters
    // escaped: no line of a CI log can be forged through a name or an id.
    void controlCharacters()
    {
        TestDatabase db;
        const RunResult badName = runRelctl(db, {"env", "show", "bad\nname"});
        QCOMPARE(badName.exitCode, 2);
        QVERIFY2(badName.err.find("bad\\nname") != std::string::npos, failure(badName));
        QVERIFY2(!hasRawControl(badName.err, true) &&
                     std::count(badName.err.begin(), badName.err.end(), '\n') == 1,
                 failure(badName));

        const RunResult op = runRelctl(db, {"op", "show", "op\x1b[31mred\rx"});
        QVERIFY2(op.exitCode == 0, failure(op));
        QVERIFY2(op.out.find("op\\x1b[31mred\\rx") != std::string::npos, failure(op));
        // The record's line and the state's three (state, summary, next), the id escaped in each.
        QVERIFY2(!hasRawControl(op.out, true) && std::count(op.out.begin(), op.out.end(), '\n') == 4,
                 failure(op));

        // An error message of the server quoting the input.
        const RunResult since = runRelctl(db, {"audit", "--since", "yesterday\nrelctl: forged\x1b"});
        QVERIFY2(since.exitCode == 2, failure(since));
        QVERIFY2(since.err.find("\\nrelctl: forged\\x1b") != std::string::npos, failure(since));
        QVERIFY2(!hasRawControl(since.err, true) && std::count(since.err.begin(), since.err.end(), '\n') == 1,
                 failure(since));

        // JSON stays JSON (it escapes by itself), and the message is the same text.
        const RunResult j = runRelctl(db, {"--json", "env", "show", "bad\x1bname"});
        QCOMPARE(j.exitCode, 2);
        QVERIFY(j.json().at("message").get<std::string>().find("bad\x1bname") != std::string::npos);
        QVERIFY2(!hasRawControl(j.err, true), failure(j));
    }

    // --lease-file keeps the secret out of argv; --lease warns; one source only.
    void leaseSources()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        const RunResult acquired = runRelctl(db, acquireArgs("prod", "job-s", "1"));
        QVERIFY2(acquired.exitCode == 0, failure(acquired));
        const std::string handle = acquired.line();
        const std::string leaseFile = writeFile("lease", qstr("  " + handle + "\n").toUtf8());

        const RunResult renew = runRelctl(db, {"lease", "renew", "--lease-file", leaseFile});
        QVERIFY2(renew.exitCode == 0 && renew.err.empty(), failure(renew));
        const RunResult publish = runRelctl(db, {"publish", "--lease-file", leaseFile});
        QVERIFY2(publish.exitCode == 0 && publish.err.empty(), failure(publish));

        const RunResult argv = runRelctl(db, {"lease", "renew", "--lease", handle});
        QVERIFY2(argv.exitCode == 0, failure(argv));
        QCOMPARE(qstr(argv.err),
                 QStringLiteral("relctl: warning: --lease puts the lease secret in the process "
                                "list; use RELCTL_LEASE or --lease-file\n"));

        const auto before = db.footprint();
        const RunResult both =
            runRelctl(db, {"lease", "release", "--lease", handle, "--lease-file", leaseFile});
        QCOMPARE(both.exitCode, 2);
        QVERIFY2(both.err.find("not both") != std::string::npos, failure(both));
        const RunResult missing = runRelctl(db, {"lease", "release", "--lease-file", file("no-such-file")});
        QCOMPARE(missing.exitCode, 2);
        const RunResult malformed = runRelctl(
            db, {"lease", "release", "--lease-file", writeFile("bad", "prod:1:" + QByteArray(31, 'a'))});
        QCOMPARE(malformed.exitCode, 2);
        QVERIFY2(malformed.err.find(std::string(31, 'a')) == std::string::npos, failure(malformed));
        QVERIFY(db.footprint() == before);

        const RunResult release = runRelctl(db, {"lease", "release", "--lease-file", leaseFile});
        QVERIFY2(release.exitCode == 0 && release.err.empty(), failure(release));
        QCOMPARE(qstr(db.scalar("SELECT end_reason FROM relctl.leases WHERE job = 'job-s'")),
                 QStringLiteral("released"));

        const RunResult help = runRelctl(db, {"--help"});
        QVERIFY(help.out.find("--lease-file FILE") != std::string::npos);
    }

    // `run --json` names the lease by env and token, never by its secret id.
    void runJsonWithoutLeaseId()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        const RunResult ok = runRelctl(db, {"--json", "run", "--env", "prod", "--job", "job-j1", "--release",
                                            "r1", "--generation", "1", "--", "true"});
        QVERIFY2(ok.exitCode == 0, failure(ok));
        const std::string id1 = liveLeaseId(db, "job-j1");
        QCOMPARE(id1.size(), std::size_t(32));
        QVERIFY2(ok.out.find(id1) == std::string::npos && ok.err.find(id1) == std::string::npos, failure(ok));
        QCOMPARE(qstr(ok.json().value("env", "")), QStringLiteral("prod"));
        QCOMPARE(ok.json().value("token", 0), 1);
        QVERIFY(!ok.json().contains("handle"));

        const RunResult failed =
            runRelctl(db, {"--json", "run", "--env", "prod", "--job", "job-j2", "--release", "r2",
                           "--generation", "2", "--", "sh", "-c", "exit 4"});
        QVERIFY2(failed.exitCode == 4, failure(failed));
        const std::string id2 = liveLeaseId(db, "job-j2");
        QVERIFY2(failed.out.find(id2) == std::string::npos && failed.err.find(id2) == std::string::npos,
                 failure(failed));
        QCOMPARE(failed.json().value("token", 0), 2);
    }

private:
    static Args concat(Args head, const Args& tail)
    {
        head.insert(head.end(), tail.begin(), tail.end());
        return head;
    }
};

QTEST_GUILESS_MAIN(TestHardening)
#include "test_hardening.moc"
