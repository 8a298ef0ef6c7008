// relctl run end to end: the wrapper, its command and every competing job are
// separate OS processes against a real PostgreSQL. What is asserted comes from
// the database (leases, manifests, events, operations) and from the processes
// themselves (exit codes, pids that must be gone, files the command writes).

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QFile>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>
#include <cerrno>
#include <csignal>
#include <pqxx/pqxx>
#include <thread>

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// relctl run on "prod" for job-<release>, generation and extra options, then the command.
Args runArgs(const std::string& release, const std::string& generation, const Args& options,
             const Args& command)
{
    Args args{"run",       "--env", "prod",         "--job",   "job-" + release,
              "--release", release, "--generation", generation};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return args;
}

std::string readFile(const std::string& path)
{
    QFile f(qstr(path));
    return f.open(QIODevice::ReadOnly) ? f.readAll().trimmed().toStdString() : std::string();
}

// The pid the command wrote to a file once it runs (0 after the timeout).
pid_t waitForPid(const std::string& path, int timeoutMs = 20000)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        const std::string text = readFile(path);
        if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos)
            return static_cast<pid_t>(std::stol(text));
        std::this_thread::sleep_for(10ms);
    }
    return 0;
}

// Whether the process is gone (dead and reaped) within the timeout.
bool waitGone(pid_t pid, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    do {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return true;
        std::this_thread::sleep_for(2ms);
    } while (t.elapsed() < timeoutMs);
    return false;
}

// The last line of stdout (with --json, the wrapper's reply after the command's output).
json lastJson(const RunResult& r)
{
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    const auto j = json::parse(out.substr(out.rfind('\n') + 1), nullptr, false);
    return j.is_object() ? j : json();
}

// A command that records its pid, then sleeps in the same process (exec), so
// that the pid is the one the wrapper started.
Args sleeper(const std::string& pidFile, int seconds = 60)
{
    return {"sh", "-c", "echo $$ > '" + pidFile + "'; exec sleep " + std::to_string(seconds)};
}

} // namespace

class TestRun final : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    std::string file(const std::string& name) const { return m_dir.filePath(qstr(name)).toStdString(); }

    // The lease row of a job: token, handle, end_reason.
    static std::vector<std::string> leaseOf(const TestDatabase& db, const std::string& job)
    {
        auto rows =
            db.rows("SELECT token::text, env || ':' || token || ':' || replace(lease_id::text, '-', ''), "
                    "coalesce(end_reason, '<live>') FROM relctl.leases WHERE job = '" +
                    job + "'");
        return rows.size() == 1 ? rows.front() : std::vector<std::string>{};
    }

    static long long published(const TestDatabase& db, const std::string& job)
    {
        return db.count("SELECT count(*) FROM relctl.manifests WHERE job = '" + job + "'") +
               db.count("SELECT count(*) FROM relctl.events WHERE operation = 'publish' AND job = '" + job +
                        "'");
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // The lease reaches the command, its stdout passes through untouched, the
    // release is published with the manifest and the lease released.
    void successPublishesAndReleases()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string manifest = file("manifest.json");
        QFile f(qstr(manifest));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"image": "registry.example/app:r1"})");
        f.close();

        const RunResult r = relctl(
            db,
            runArgs(
                "r1", "1", {"--manifest", manifest, "--op-id", "op-r1"},
                {"sh", "-c",
                 R"(echo "$RELCTL_FENCING_TOKEN $RELCTL_LEASE $RELCTL_ENV $RELCTL_RELEASE $RELCTL_GENERATION")"}));
        QVERIFY2(r.exitCode == 0, failure(r));
        const auto lease = leaseOf(db, "job-r1");
        QCOMPARE(lease.size(), std::size_t(3));
        QCOMPARE(qstr(r.out),
                 qstr(lease[0] + " " + lease[1] + " prod r1 1\n")); // only the command wrote to stdout
        QCOMPARE(qstr(lease[2]), QStringLiteral("released"));
        json current = relctl(db, {"--json", "manifest", "show", "--env", "prod"}).json();
        QCOMPARE(qstr(current["release"].get<std::string>()), QStringLiteral("r1"));
        QCOMPARE(qstr(current["manifest"]["image"].get<std::string>()),
                 QStringLiteral("registry.example/app:r1"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.operations WHERE op_id IN ('op-r1', 'op-r1.publish')"),
                 2LL);

        // --json: the command's output, then the wrapper's reply as the last line.
        const RunResult j = relctl(db, {"--json", "run", "--env", "prod", "--job", "job-r2", "--release",
                                        "r2", "--generation", "2", "--", "echo", "from the command"});
        QVERIFY2(j.exitCode == 0, failure(j));
        QVERIFY(j.out.rfind("from the command\n", 0) == 0);
        const json reply = lastJson(j);
        QCOMPARE(qstr(reply.value("release", "")), QStringLiteral("r2"));
        // The lease by env and token: its id (the secret) stays out of the log.
        QVERIFY(!reply.contains("handle"));
        QCOMPARE(qstr(reply.value("env", "")), QStringLiteral("prod"));
        QCOMPARE(qstr(std::to_string(reply.value("token", 0))), qstr(leaseOf(db, "job-r2").at(0)));
        QVERIFY(j.out.find(leaseOf(db, "job-r2").at(1).substr(7)) == std::string::npos);
        QCOMPARE(qstr(reply.value("lease_state", "")), QStringLiteral("released"));
    }

    // Everything after "--" is the command's, even words that are relctl's
    // own options: they reach it in order and change nothing in relctl (no
    // other database, no JSON, no help).
    void commandArgumentsPassUntouched()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const RunResult r = relctl(db, runArgs("r1", "1", {},
                                               {"sh", "-c", R"(printf '%s|' "$@")", "sh", "--dsn",
                                                "host=/nowhere", "--json", "--help", "--", "--env=x", ""}));
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(qstr(r.out), QStringLiteral("--dsn|host=/nowhere|--json|--help|--|--env=x||"));
        QCOMPARE(qstr(leaseOf(db, "job-r1").at(2)), QStringLiteral("released"));
    }

    void commandFailureIsNotPublished_data()
    {
        QTest::addColumn<QStringList>("command");
        QTest::addColumn<int>("exitCode");
        QTest::addRow("exit 7") << QStringList{QStringLiteral("sh"), QStringLiteral("-c"),
                                               QStringLiteral("exit 7")}
                                << 7;
        QTest::addRow("killed by SIGKILL")
            << QStringList{QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("kill -KILL $$")}
            << 137;
        QTest::addRow("exec failure") << QStringList{QStringLiteral("/nonexistent/deploy")} << 127;
    }

    void commandFailureIsNotPublished()
    {
        QFETCH(QStringList, command);
        QFETCH(int, exitCode);
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        Args cmd;
        for (const QString& w : command)
            cmd.push_back(w.toStdString());
        const RunResult r = relctl(db, runArgs("r1", "1", {"--op-id", "op-r1"}, cmd));
        QVERIFY2(r.exitCode == exitCode, failure(r));
        QCOMPARE(published(db, "job-r1"), 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.operations WHERE op_id = 'op-r1.publish'"), 0LL);
        QCOMPARE(qstr(leaseOf(db, "job-r1").at(2)), QStringLiteral("released"));
    }

    // The wrapper is frozen (SIGSTOP) past its TTL while a newer job takes the
    // environment and publishes. Resumed, it must stop its command at once and
    // publish nothing, whatever the server would still accept.
    void stoppedWrapperStopsCommandAndNeverPublishes()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod", "--default-ttl", "1s", "--max-ttl", "1m"});
        const std::string pidFile = file("stopped.pid");
        auto wrapper = startRelctl(
            db,
            concat({"--json"}, runArgs("r8", "8", {"--ttl", "1s", "--op-id", "op-r8"}, sleeper(pidFile))));
        const pid_t wrapperPid = static_cast<pid_t>(wrapper->processId());
        const pid_t child = waitForPid(pidFile);
        auto cleanup = qScopeGuard([&] {
            kill(wrapperPid, SIGCONT);
            if (child > 0 && QTest::currentTestFailed())
                kill(child, SIGKILL);
        });
        QVERIFY(child > 0);
        std::this_thread::sleep_for(500ms); // a renewal or two
        QCOMPARE(kill(wrapperPid, SIGSTOP), 0);
        QElapsedTimer stopped;
        stopped.start();

        // The lease runs out on the server; the successor gets it and publishes.
        RunResult next;
        do {
            std::this_thread::sleep_for(100ms);
            next = relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-r9", "--release", "r9",
                               "--generation", "9", "--ttl", "30s"});
        } while (next.exitCode == 3 && stopped.elapsed() < 20000);
        QVERIFY2(next.exitCode == 0, failure(next));
        QCOMPARE(relctl(db, {"publish", "--lease", next.line()}).exitCode, 0);
        while (stopped.elapsed() < 1500) // well past the wrapper's own deadline too
            std::this_thread::sleep_for(10ms);
        QVERIFY(!waitGone(child, 0)); // the command ran on while the wrapper was frozen

        QElapsedTimer resumed;
        resumed.start();
        QCOMPARE(kill(wrapperPid, SIGCONT), 0);
        QVERIFY2(waitGone(child, 1000), "the command survived the resumed wrapper by more than a second");
        const qint64 killedAfter = resumed.elapsed();
        const RunResult r = finish(*wrapper);
        qInfo("SIGCONT -> command gone: %lld ms, -> wrapper exited: %lld ms",
              static_cast<long long>(killedAfter), static_cast<long long>(resumed.elapsed()));
        QVERIFY2(r.exitCode == 5, failure(r));
        const std::string reason = lastJson(r).value("error", "");
        QVERIFY2(reason == "LEASE_EXPIRED" || reason == "LEASE_SUPERSEDED", failure(r));

        QCOMPARE(db.scalar("SELECT string_agg(job, ',' ORDER BY id) FROM relctl.manifests"),
                 std::string("job-r9"));
        QCOMPARE(published(db, "job-r8"), 0LL); // not even a refused publish: none was sent
        QCOMPARE(db.count("SELECT count(*) FROM relctl.operations WHERE op_id = 'op-r8.publish'"), 0LL);
    }

    // The command finishes (exit 0) while the wrapper is frozen past its TTL:
    // the wrapper must look at its deadline before publishing.
    void commandFinishingDuringFreezeIsNotPublished()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod", "--default-ttl", "1s", "--max-ttl", "1m"});
        const std::string pidFile = file("finishing.pid");
        auto wrapper = startRelctl(
            db, runArgs("r8", "8", {"--ttl", "1s"}, {"sh", "-c", "echo $$ > '" + pidFile + "'; sleep 1"}));
        const pid_t wrapperPid = static_cast<pid_t>(wrapper->processId());
        auto cleanup = qScopeGuard([&] { kill(wrapperPid, SIGCONT); });
        QVERIFY(waitForPid(pidFile) > 0);
        QCOMPARE(kill(wrapperPid, SIGSTOP), 0);
        std::this_thread::sleep_for(2500ms);
        QCOMPARE(kill(wrapperPid, SIGCONT), 0);
        const RunResult r = finish(*wrapper);
        QVERIFY2(r.exitCode == 5, failure(r));
        QCOMPARE(published(db, "job-r8"), 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 0LL);
    }

    // The command succeeded, and the publish finds the environment's row
    // locked past lock_timeout (a busy server): nothing was applied, so the
    // wrapper sends it again while its lease lasts instead of exiting 9 with
    // a deploy that is done but not current.
    void publishMeetingALockedEnvironmentIsSentAgain()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string pidFile = file("locked.pid");
        const std::string go = file("locked.go");
        auto wrapper = startRelctlWithDsn(
            db.dsn(),
            runArgs("r3", "3", {"--ttl", "30s"},
                    {"sh", "-c",
                     "echo $$ > '" + pidFile + "'; while [ ! -e '" + go + "' ]; do sleep 0.05; done"}),
            {{"PGOPTIONS", "-c lock_timeout=300"}});
        QVERIFY(waitForPid(pidFile) > 0);
        pqxx::connection blocker(db.adminDsn());
        {
            pqxx::work tx(blocker);
            tx.exec("SELECT 1 FROM relctl.environments WHERE name = 'prod' FOR UPDATE");
            QVERIFY(QFile(qstr(go)).open(QIODevice::WriteOnly)); // the command ends
            std::this_thread::sleep_for(1500ms);                 // and its publish waits
            QCOMPARE(published(db, "job-r3"), 0LL);
            tx.commit();
        }
        const RunResult r = finish(*wrapper);
        QVERIFY2(r.exitCode == 0, failure(r));
        QVERIFY2(r.err.find("asking again") != std::string::npos, failure(r)); // it did meet the lock
        QCOMPARE(db.scalar("SELECT job || ':' || generation FROM relctl.manifests"), std::string("job-r3:3"));
        QCOMPARE(
            db.count(
                "SELECT count(*) FROM relctl.events WHERE operation = 'publish' AND outcome = 'accepted'"),
            1LL);
    }

    // The command failed and the wrapper's release waits for the environment's
    // row (another session holds it): a SIGTERM or SIGINT then ends the
    // wrapper at once. (Its release statement may still finish on the server;
    // else the lease's expiry stands in for it.)
    void aSignalWhileTheReleaseWaitsEndsTheWrapperAtOnce_data()
    {
        cancellationStopsCommandAndReleases_data();
    }

    void aSignalWhileTheReleaseWaitsEndsTheWrapperAtOnce()
    {
        QFETCH(int, sig);
        const std::string name = QTest::currentDataTag(); // "SIGTERM", "SIGINT"
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string pidFile = file("release-wait.pid");
        const std::string go = file("release-wait.go");
        QFile::remove(qstr(pidFile));
        QFile::remove(qstr(go));
        auto wrapper = startRelctl(db, runArgs("r1", "1", {"--ttl", "60s"},
                                               {"sh", "-c",
                                                "echo $$ > '" + pidFile + "'; while [ ! -e '" + go +
                                                    "' ]; do sleep 0.05; done; exit 1"}));
        QVERIFY(waitForPid(pidFile) > 0);
        pqxx::connection blocker(db.adminDsn());
        pqxx::work tx(blocker);
        tx.exec("SELECT 1 FROM relctl.environments WHERE name = 'prod' FOR UPDATE");
        QVERIFY(QFile(qstr(go)).open(QIODevice::WriteOnly)); // the command fails
        // Its release waits for the row: no release event before the commit.
        std::this_thread::sleep_for(700ms);
        if (wrapper->state() != QProcess::Running)
            QFAIL(failure(finish(*wrapper)));
        const auto sent = std::chrono::steady_clock::now();
        QCOMPARE(kill(static_cast<pid_t>(wrapper->processId()), sig), 0);
        const RunResult r = finish(*wrapper, 5000);
        const auto took = std::chrono::steady_clock::now() - sent;
        tx.commit();
        QVERIFY2(r.exitCode == 128 + sig, failure(r));
        QVERIFY2(took < 1500ms, failure(r)); // not after lock_timeout (10 s)
        QVERIFY2(
            r.err.find("received " + name +
                       " while releasing; could not release the lease, the lease runs out at its expiry") !=
                std::string::npos,
            failure(r));
    }

    // The CI job is cancelled: the signal reaches the command's whole process
    // group, the wrapper releases its lease and exits 128 + signal.
    void cancellationStopsCommandAndReleases_data()
    {
        QTest::addColumn<int>("sig");
        QTest::addColumn<QString>("name");
        QTest::addRow("SIGTERM") << int(SIGTERM) << QStringLiteral("TERM");
        // A background job of sh ignores SIGINT: it is left to the final SIGKILL of the group.
        QTest::addRow("SIGINT") << int(SIGINT) << QStringLiteral("INT");
    }

    void cancellationStopsCommandAndReleases()
    {
        QFETCH(int, sig);
        QFETCH(QString, name);
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string pidFile = file("cancel.pid"), sleepFile = file("cancel-sleep.pid"),
                          gotFile = file("cancel.got");
        QFile::remove(qstr(pidFile));
        QFile::remove(qstr(sleepFile));
        QFile::remove(qstr(gotFile));
        const std::string script =
            "trap 'echo TERM > \"" + gotFile + "\"; exit 3' TERM; trap 'echo INT > \"" + gotFile +
            "\"; exit 3' INT; echo $$ > '" + pidFile + "'; sleep 60 & echo $! > '" + sleepFile + "'; wait";
        auto wrapper = startRelctl(db, runArgs("r1", "1", {"--grace", "5s"}, {"sh", "-c", script}));
        const pid_t shell = waitForPid(pidFile), sleep = waitForPid(sleepFile);
        auto cleanup = qScopeGuard([&] {
            for (pid_t p : {shell, sleep})
                if (p > 0 && QTest::currentTestFailed())
                    kill(p, SIGKILL);
        });
        QVERIFY(shell > 0 && sleep > 0);
        std::this_thread::sleep_for(100ms); // let sh reach `wait`
        QCOMPARE(kill(static_cast<pid_t>(wrapper->processId()), sig), 0);
        const RunResult r = finish(*wrapper);
        QVERIFY2(r.exitCode == 128 + sig, failure(r));
        QCOMPARE(qstr(readFile(gotFile)), name); // the command got the signal itself
        QVERIFY(waitGone(shell, 2000));
        QVERIFY(waitGone(sleep, 2000)); // and nothing of its group survived
        QCOMPARE(qstr(leaseOf(db, "job-r1").at(2)), QStringLiteral("released"));
        QCOMPARE(published(db, "job-r1"), 0LL);
        QVERIFY2(r.err.find("is not known to have stopped") != std::string::npos, failure(r));

        // The release recorded what was stopped, and the job's state says
        // cancelled, with the caveat, before anyone retries.
        const json status = relctl(db, {"--json", "status", "--job", "job-r1"}).json();
        QCOMPARE(status["state"], json("cancelled"));
        const json stopped = status["evidence"]["stopped"];
        QCOMPARE(stopped["cause"], json("cancelled"));
        QCOMPARE(qstr(stopped["signal"].get<std::string>()), QStringLiteral("SIG") + name);
        QCOMPARE(stopped["process_group"], json(shell)); // the shell leads the command's group
        QCOMPARE(stopped["exit_code"], json(3));         // its trap's exit
        QCOMPARE(stopped["command_started"], json(true));
        QVERIFY(status["evidence"]["caveat"].get<std::string>().find("is not known to have stopped") !=
                std::string::npos);
        QVERIFY(status["next"].get<std::string>().find("check the deploy target") != std::string::npos);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'release' AND job = 'job-r1' "
                          "AND detail -> 'stopped' ->> 'cause' = 'cancelled'"),
                 1LL);
    }

    // The lease was revoked and a successor holds the environment before the
    // cancelled wrapper notices: its release records the stop against its
    // own (revoked) lease and leaves the successor's lease untouched.
    void cancelledRunLeavesSuccessorsLease()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string pidFile = file("successor.pid");
        auto wrapper = startRelctl(db, runArgs("r1", "1", {"--ttl", "60s"}, sleeper(pidFile)));
        const pid_t child = waitForPid(pidFile);
        auto cleanup = qScopeGuard([&] {
            if (child > 0 && QTest::currentTestFailed())
                kill(child, SIGKILL);
        });
        QVERIFY(child > 0);
        QCOMPARE(
            relctl(db, {"lease", "revoke", "--env", "prod", "--by", "alice", "--reason", "stuck"}).exitCode,
            0);
        const RunResult successor = relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-next",
                                                "--release", "r2", "--generation", "2", "--ttl", "60s"});
        QVERIFY2(successor.exitCode == 0, failure(successor));
        QCOMPARE(kill(static_cast<pid_t>(wrapper->processId()), SIGTERM), 0);
        const RunResult r = finish(*wrapper);
        // The heartbeat renews every 20 s: the wrapper still believes it holds the lease.
        QVERIFY2(r.exitCode == 128 + SIGTERM, failure(r));
        QVERIFY(waitGone(child, 2000));

        // The successor still holds its live lease; the revoked one stays revoked.
        QCOMPARE(qstr(leaseOf(db, "job-next").at(2)), QStringLiteral("<live>"));
        QCOMPARE(qstr(leaseOf(db, "job-r1").at(2)), QStringLiteral("revoked"));
        const json shown = relctl(db, {"--json", "lease", "show", "--env", "prod"}).json();
        QCOMPARE(shown["lease"]["job"], json("job-next"));
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.events WHERE operation = 'release' AND job = 'job-next'"),
            0LL);
        // What the wrapper stopped is on record against its own token.
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'release' AND job = 'job-r1' "
                          "AND token = 1 AND detail ? 'stopped'"),
                 1LL);
        const json status = relctl(db, {"--json", "status", "--job", "job-r1"}).json();
        QCOMPARE(status["state"], json("cancelled"));
        QCOMPARE(status["evidence"]["stopped"]["process_group"], json(child));
    }

    // The wrapper is frozen past its lease's expiry and a successor takes the
    // environment: on waking it stops the command as lease-lost, records that
    // against its own expired lease, and the successor's lease is untouched.
    void lostLeaseRecordsWhatWasStopped()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod", "--default-ttl", "2s", "--max-ttl", "1m"});
        const std::string pidFile = file("lost.pid");
        auto wrapper = startRelctl(db, runArgs("r1", "1", {"--ttl", "2s"}, sleeper(pidFile)));
        const pid_t child = waitForPid(pidFile);
        auto cleanup = qScopeGuard([&] {
            if (child > 0 && QTest::currentTestFailed())
                kill(child, SIGKILL);
        });
        QVERIFY(child > 0);
        const pid_t wrapperPid = static_cast<pid_t>(wrapper->processId());
        QCOMPARE(kill(wrapperPid, SIGSTOP), 0);
        std::this_thread::sleep_for(2500ms);
        const RunResult successor = relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-next",
                                                "--release", "r2", "--generation", "2", "--ttl", "60s"});
        QVERIFY2(successor.exitCode == 0, failure(successor));
        QCOMPARE(kill(wrapperPid, SIGCONT), 0);
        const RunResult r = finish(*wrapper);
        QVERIFY2(r.exitCode == 5, failure(r));
        QVERIFY(waitGone(child, 2000));
        QCOMPARE(qstr(leaseOf(db, "job-next").at(2)), QStringLiteral("<live>"));
        const json status = relctl(db, {"--json", "status", "--job", "job-r1"}).json();
        QCOMPARE(status["state"], json("ended-unpublished"));
        QCOMPARE(status["evidence"]["stopped"]["cause"], json("lease-lost"));
        QCOMPARE(status["evidence"]["stopped"]["process_group"], json(child));
        QCOMPARE(status["evidence"]["stopped"]["killed_by"], json("SIGTERM"));
        QVERIFY(status["summary"].get<std::string>().find("relctl run stopped the command (process group " +
                                                          std::to_string(child)) != std::string::npos);
    }

    // TTL 1s, a command of 3 s: the heartbeat keeps the lease through it.
    void renewalKeepsLongCommandAlive()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod", "--default-ttl", "1s", "--max-ttl", "1m"});
        const RunResult r = relctl(db, runArgs("r1", "1", {"--ttl", "1s"}, {"sleep", "3"}));
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests WHERE job = 'job-r1'"), 1LL);
        const long long renewals = db.count("SELECT count(*) FROM relctl.events WHERE operation = 'renew' "
                                            "AND outcome = 'accepted' AND job = 'job-r1'");
        QVERIFY2(renewals >= 3, qPrintable(QString::number(renewals)));
    }

    // The server takes the lease away while the command runs: the next
    // renewal is refused and the command stopped. (A newer token is issued by
    // moving the environment's counter in one statement, so that the refusal
    // is deterministically LEASE_SUPERSEDED.)
    void refusedRenewalStopsCommand()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod", "--default-ttl", "2s", "--max-ttl", "1m"});
        const std::string pidFile = file("refused.pid");
        auto wrapper =
            startRelctl(db, concat({"--json"}, runArgs("r8", "8", {"--ttl", "2s"}, sleeper(pidFile))));
        const pid_t child = waitForPid(pidFile);
        auto cleanup = qScopeGuard([&] {
            if (child > 0 && QTest::currentTestFailed())
                kill(child, SIGKILL);
        });
        QVERIFY(child > 0);
        db.exec("UPDATE relctl.environments SET last_token = last_token + 1 WHERE name = 'prod'");
        QVERIFY(waitGone(child, 5000));
        const RunResult r = finish(*wrapper);
        QVERIFY2(r.exitCode == 5, failure(r));
        QCOMPARE(qstr(lastJson(r).value("error", "")), QStringLiteral("LEASE_SUPERSEDED"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'renew' AND job = 'job-r8' "
                          "AND reason = 'LEASE_SUPERSEDED'"),
                 1LL);
        QCOMPARE(published(db, "job-r8"), 0LL);
    }

    void badInputRunsNothing_data()
    {
        QTest::addColumn<QStringList>("args");
        const auto row = [](const char* name, const Args& args) {
            QStringList list;
            for (const std::string& a : args)
                list << qstr(a);
            QTest::newRow(name) << list;
        };
        const Args base{"run", "--env", "prod", "--job", "job-r1", "--release", "r1"};
        row("missing --", concat(base, {"--generation", "1", "touch", "MARKER"}));
        row("missing command", concat(base, {"--generation", "1", "--"}));
        row("missing generation", concat(base, {"--", "touch", "MARKER"}));
        row("generation 0", concat(base, {"--generation", "0", "--", "touch", "MARKER"}));
        row("generation text", concat(base, {"--generation", "eight", "--", "touch", "MARKER"}));
        row("bad ttl", concat(base, {"--generation", "1", "--ttl", "1 s", "--", "touch", "MARKER"}));
        row("bad grace", concat(base, {"--generation", "1", "--grace", "-1s", "--", "touch", "MARKER"}));
        row("unreadable manifest", concat(base, {"--generation", "1", "--manifest", "/nonexistent/m.json",
                                                 "--", "touch", "MARKER"}));
        row("unknown option", concat(base, {"--generation", "1", "--force", "--", "touch", "MARKER"}));
        row("op id too long",
            concat(base, {"--generation", "1", "--op-id", std::string(193, 'x'), "--", "touch", "MARKER"}));
        row("ttl above the maximum",
            concat(base, {"--generation", "1", "--ttl", "2h", "--", "touch", "MARKER"}));
        row("unknown environment", {"run", "--env", "nosuch", "--job", "j", "--release", "r1", "--generation",
                                    "1", "--", "touch", "MARKER"});
    }

    void badInputRunsNothing()
    {
        QFETCH(QStringList, args);
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string marker = file("bad-input.marker");
        QFile::remove(qstr(marker));
        Args words;
        for (const QString& w : args)
            words.push_back(w == QStringLiteral("MARKER") ? marker : w.toStdString());
        const auto before = db.footprint();
        const RunResult r = relctl(db, words);
        QVERIFY2(r.exitCode == 2, failure(r));
        QVERIFY2(r.err.rfind("relctl: ", 0) == 0, failure(r));
        QVERIFY(r.out.empty());
        QVERIFY(db.footprint() == before);
        QVERIFY(!QFile::exists(qstr(marker)));
    }

    void busyRunsNothing()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        QCOMPARE(relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-other", "--release", "r0",
                             "--generation", "1", "--ttl", "1m"})
                     .exitCode,
                 0);
        const std::string marker = file("busy.marker");
        QFile::remove(qstr(marker));
        const RunResult r = relctl(db, concat({"--json"}, runArgs("r1", "1", {}, {"touch", marker})));
        QVERIFY2(r.exitCode == 3, failure(r));
        QCOMPARE(qstr(r.json().value("error", "")), QStringLiteral("busy"));
        QVERIFY(!QFile::exists(qstr(marker)));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE job = 'job-r1'"), 0LL);
    }

    // --wait queues behind the holder; the lease granted after the wait is
    // confirmed by a renewal before the command starts (the acquire's send
    // time says nothing about when a queued grant happened).
    void waitQueuesThenRuns()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod", "--default-ttl", "1s", "--max-ttl", "1m"});
        QCOMPARE(relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-r0", "--release", "r0",
                             "--generation", "1", "--ttl", "1500ms"})
                     .exitCode,
                 0);
        const RunResult r = relctl(db, runArgs("r1", "2", {"--ttl", "1s", "--wait", "30s"}, {"true"}));
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests WHERE job = 'job-r1'"), 1LL);
        QVERIFY(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'renew' AND job = 'job-r1'") >=
                1);
    }

    // Cancelled while queued: the wrapper leaves at once, holding nothing.
    void cancelWhileQueued()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        QCOMPARE(relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-r0", "--release", "r0",
                             "--generation", "1", "--ttl", "1m"})
                     .exitCode,
                 0);
        const std::string marker = file("queued.marker");
        QFile::remove(qstr(marker));
        auto wrapper = startRelctl(db, runArgs("r1", "2", {"--wait", "5m"}, {"touch", marker}));
        std::this_thread::sleep_for(1s);
        QElapsedTimer t;
        t.start();
        QCOMPARE(kill(static_cast<pid_t>(wrapper->processId()), SIGTERM), 0);
        const RunResult r = finish(*wrapper, 10000);
        QVERIFY2(r.exitCode == 143, failure(r));
        QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed())));
        QVERIFY(!QFile::exists(qstr(marker)));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE job = 'job-r1'"), 0LL);
    }

    // A retried run with the same --op-id replays both acquire and publish:
    // the release is published once and the command does not run again.
    void retriedRunReplays()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string marker = file("replay.marker");
        QFile::remove(qstr(marker));
        const Args args =
            runArgs("r1", "1", {"--op-id", "op-r1"}, {"sh", "-c", "echo run >> '" + marker + "'"});
        QCOMPARE(relctl(db, args).exitCode, 0);
        const RunResult again = relctl(db, concat({"--json"}, args));
        QVERIFY2(again.exitCode == 0, failure(again));
        QCOMPARE(lastJson(again).value("replayed", false), true);
        QCOMPARE(qstr(readFile(marker)), QStringLiteral("run")); // once
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 1LL);
    }

private:
    static Args concat(Args head, const Args& tail)
    {
        head.insert(head.end(), tail.begin(), tail.end());
        return head;
    }
};

QTEST_GUILESS_MAIN(TestRun)
#include "test_run.moc"
