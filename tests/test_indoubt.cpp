// In-doubt writes settled by the client: the reply to a write is lost on the
// network (after the server committed it, or because the request never
// arrived), and relctl, a separate OS process talking to the real PostgreSQL
// through a fault-injecting proxy, connects again, sends the write once more
// under the same op id and reports the real outcome: confirmed from the
// record, or applied for the first time. Only a database that stays
// unreachable leaves exit 9, with the op id and the command that settles it.
// Nothing is applied twice, by the settling or by a later retry.

#include "faultproxy.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QTemporaryDir>
#include <QtTest>

using nlohmann::json;

namespace {

bool says(const RunResult& r, const std::string& text)
{
    return r.err.find(text) != std::string::npos;
}

// Settling is quick here: the proxy lets the new connection through at once.
const Env kQuick{{"RELCTL_RECONNECT_TIMEOUT", "5s"}};

std::string acquireDirect(const TestDatabase& db, const std::string& job, int generation)
{
    const RunResult r = relctl(db, {"lease", "acquire", "--env", "prod", "--job", job, "--release",
                                    "v" + std::to_string(generation), "--generation",
                                    std::to_string(generation), "--ttl", "60s"});
    if (r.exitCode != 0)
        qFatal("acquire failed (%d): %s", r.exitCode, r.err.c_str());
    return r.line();
}

} // namespace

class TestInDoubt final : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // The server commits the publish; its reply never arrives. relctl says
    // the publish completed, confirmed from the record, and exits 0; the
    // manifest exists once, and a retry with the same op id is a replay.
    void publishReplyLostAfterCommit()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string handle = acquireDirect(db, "job-1", 1);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.loseReplyTo("relctl.publish(");

        const RunResult r = relctlWithDsn(
            proxy.dsn(db.name()), {"--json", "publish", "--lease", handle, "--op-id", "pub-1"}, kQuick);
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(proxy.struck(), 1);
        QVERIFY2(says(r, "completed; the reply was lost and has been confirmed from the record (op id pub-1"),
                 failure(r));
        const json reply = r.json();
        QCOMPARE(reply["reply_lost"]["confirmed_from_record"], json(true));
        QCOMPARE(reply["release"], json("v1"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);

        // The record tells the same, and a retry applies nothing again.
        const RunResult shown = relctl(db, {"--json", "op", "show", "pub-1"});
        QCOMPARE(shown.json()["state"], json("completed"));
        const long long events = db.count("SELECT count(*) FROM relctl.events");
        const RunResult retry = relctl(db, {"--json", "publish", "--lease", handle, "--op-id", "pub-1"});
        QVERIFY2(retry.exitCode == 0, failure(retry));
        QCOMPARE(retry.json()["replayed"], json(true));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events"), events);
    }

    // The request is lost before the server sees it: the database has no
    // record, so relctl sends it again, says so, and the publish is applied once.
    void publishRequestLost()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string handle = acquireDirect(db, "job-1", 1);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.loseRequest("relctl.publish(");

        const RunResult r = relctlWithDsn(
            proxy.dsn(db.name()), {"--json", "publish", "--lease", handle, "--op-id", "pub-2"}, kQuick);
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(proxy.struck(), 1);
        QVERIFY2(
            says(r, "the database had no record of op id pub-2: the first attempt never took effect, and it "
                    "was sent again"),
            failure(r));
        QCOMPARE(r.json()["reply_lost"]["confirmed_from_record"], json(false));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.operations WHERE op_id = 'pub-2'"), 1LL);
    }

    // An acquire's reply is lost after the grant: the settled reply carries
    // the lease's handle (the retry presents the request's secret), the one
    // lease granted is usable, and no second lease or token was taken.
    void acquireReplyLostAfterGrant()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.loseReplyTo("relctl.acquire(");
        Env env = kQuick;
        env["RELCTL_STATE_DIR"] = m_dir.filePath(QStringLiteral("state-acquire")).toStdString();

        const RunResult r = relctlWithDsn(proxy.dsn(db.name()),
                                          {"lease", "acquire", "--env", "prod", "--job", "job-a", "--release",
                                           "v1", "--generation", "1", "--op-id", "acq-1"},
                                          env);
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(proxy.struck(), 1);
        QVERIFY2(says(r, "completed; the reply was lost and has been confirmed from the record (op id acq-1"),
                 failure(r));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 1LL);
        QCOMPARE(qstr(db.scalar("SELECT 'prod:' || token || ':' || replace(lease_id::text, '-', '') "
                                "FROM relctl.leases")),
                 qstr(r.line()));
        const RunResult published = relctl(db, {"publish", "--lease", r.line(), "--op-id", "acq-1-publish"});
        QVERIFY2(published.exitCode == 0, failure(published));
    }

    // A queued acquire: the reply to the evaluation that grants the lease is
    // lost. The waiter settles it under its op id and gets the granted lease,
    // not a second place in the queue.
    void queuedGrantReplyLost()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string holder = acquireDirect(db, "job-holder", 1);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.loseReplyTo("relctl.acquire_candidate(");
        Env env = kQuick;
        env["RELCTL_STATE_DIR"] = m_dir.filePath(QStringLiteral("state-queue")).toStdString();
        auto waiter = startRelctlWithDsn(proxy.dsn(db.name()),
                                         {"lease", "acquire", "--env", "prod", "--job", "job-w", "--release",
                                          "v2", "--generation", "2", "--wait", "30s", "--op-id", "wait-1"},
                                         env);
        QTRY_COMPARE_WITH_TIMEOUT(db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"),
                                  1LL, 10000);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", holder}).exitCode, 0);
        const RunResult r = finish(*waiter, 30000);
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(proxy.struck(), 1);
        QVERIFY2(says(r, "the reply was lost and has been confirmed from the record (op id wait-1"),
                 failure(r));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE job = 'job-w'"), 1LL);
        QCOMPARE(qstr(db.scalar("SELECT 'prod:' || token || ':' || replace(lease_id::text, '-', '') "
                                "FROM relctl.leases WHERE job = 'job-w'")),
                 qstr(r.line()));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"), 0LL);
    }

    // A refusal whose reply is lost: the refusal's own exit code, confirmed
    // from the record, and the refusal recorded once.
    void refusalReplyLost()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string handle = acquireDirect(db, "job-new", 2);
        QCOMPARE(relctl(db, {"publish", "--lease", handle}).exitCode, 0);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", handle}).exitCode, 0);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.loseReplyTo("relctl.acquire(");
        Env env = kQuick;
        env["RELCTL_STATE_DIR"] = m_dir.filePath(QStringLiteral("state-refusal")).toStdString();

        const RunResult r = relctlWithDsn(proxy.dsn(db.name()),
                                          {"lease", "acquire", "--env", "prod", "--job", "job-old",
                                           "--release", "v1", "--generation", "1", "--op-id", "stale-1"},
                                          env);
        QVERIFY2(r.exitCode == 4, failure(r));
        QCOMPARE(proxy.struck(), 1);
        QVERIFY2(
            says(r, "rejected (STALE_GENERATION); the reply was lost and has been confirmed from the record"),
            failure(r));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'STALE_GENERATION'"), 1LL);
    }

    // The database stays unreachable after the reply was lost: exit 9 within
    // the reconnect window, naming the op id and the command that settles it;
    // that command then tells the truth (the publish did commit).
    void unreachableAfterTheLoss()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string handle = acquireDirect(db, "job-1", 1);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.loseReplyTo("relctl.publish(", true);

        const RunResult r =
            relctlWithDsn(proxy.dsn(db.name()), {"publish", "--lease", handle, "--op-id", "pub-3"},
                          {{"RELCTL_RECONNECT_TIMEOUT", "1s"}});
        QVERIFY2(r.exitCode == 9, failure(r));
        QVERIFY2(r.elapsedMs >= 900 && r.elapsedMs < 6000, failure(r));
        QVERIFY2(says(r, "the database stayed unreachable for 1s"), failure(r));
        QVERIFY2(says(r, "the outcome is unknown; `relctl op show pub-3` says what became of it"),
                 failure(r));
        QVERIFY2(proxy.connections() >= 3, failure(r)); // it did try to connect again
        const RunResult shown = relctl(db, {"--json", "op", "show", "pub-3"});
        QCOMPARE(shown.json()["state"], json("completed"));
    }

    // RELCTL_RECONNECT_TIMEOUT=0 turns the settling off (exit 9 at once, as
    // before); an invalid value is refused before anything is sent.
    void reconnectWindowSetting()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string handle = acquireDirect(db, "job-1", 1);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.loseReplyTo("relctl.publish(");
        const RunResult off =
            relctlWithDsn(proxy.dsn(db.name()), {"publish", "--lease", handle, "--op-id", "pub-4"},
                          {{"RELCTL_RECONNECT_TIMEOUT", "0"}});
        QVERIFY2(off.exitCode == 9, failure(off));
        QVERIFY2(says(off, "`relctl op show pub-4` says what became of it"), failure(off));
        QCOMPARE(proxy.connections(), 1);

        const auto before = db.footprint();
        const RunResult bad = relctlWithDsn(db.dsn(), {"publish", "--lease", handle, "--op-id", "pub-5"},
                                            {{"RELCTL_RECONNECT_TIMEOUT", "soon"}});
        QVERIFY2(bad.exitCode == 2, failure(bad));
        QVERIFY2(says(bad, "invalid RELCTL_RECONNECT_TIMEOUT"), failure(bad));
        QVERIFY(db.footprint() == before);
    }

    // relctl run: the reply to its publish is lost. The wrapper settles it,
    // releases the lease and exits 0; a second run with the same op id finds
    // the publish recorded and neither runs the command nor publishes again.
    void runPublishReplyLost()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        FaultProxy proxy(TestDatabase::clusterDsn());
        proxy.loseReplyTo("relctl.publish(");
        const std::string ran = m_dir.filePath(QStringLiteral("ran")).toStdString();
        Env env = kQuick;
        env["RELCTL_STATE_DIR"] = m_dir.filePath(QStringLiteral("state-run")).toStdString();
        const Args run{"run",       "--env", "prod",         "--job", "job-r",
                       "--release", "v1",    "--generation", "1",     "--op-id",
                       "run-1",     "--",    "sh",           "-c",    "echo ran >> '" + ran + "'"};

        const RunResult r = relctlWithDsn(proxy.dsn(db.name()), run, env);
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(proxy.struck(), 1);
        QVERIFY2(
            says(r,
                 "completed; the reply was lost and has been confirmed from the record (op id run-1.publish"),
            failure(r));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
        QCOMPARE(qstr(db.scalar("SELECT end_reason FROM relctl.leases")), QStringLiteral("released"));

        const RunResult again = relctlWithDsn(db.dsn(), run, env);
        QVERIFY2(again.exitCode == 0, failure(again));
        QVERIFY2(says(again, "already reached its publish"), failure(again));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
        QFile file(qstr(ran));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll().count('\n'), 1);
    }
};

QTEST_GUILESS_MAIN(TestInDoubt)
#include "test_indoubt.moc"
