// The seed scenarios, each job a separate OS process running relctl:
// (a) r8 slow and r9 fast racing with varied timing, (b) an expired holder
// locked out by its successor, (c) the sequential model with op ids.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QRandomGenerator>
#include <QtTest>
#include <thread>

using nlohmann::json;

namespace {

// A release job's key=value report (see scripts/release-job.sh).
std::string value(const RunResult& r, const std::string& key)
{
    const std::string prefix = key + "=";
    std::size_t at = r.out.rfind(prefix);
    if (at == std::string::npos)
        return {};
    std::size_t end = r.out.find('\n', at);
    return r.out.substr(at + prefix.size(),
                        end == std::string::npos ? std::string::npos : end - at - prefix.size());
}

std::string seconds(double s)
{
    return QString::number(s, 'f', 3).toStdString();
}

} // namespace

class TestRace final : public QObject
{
    Q_OBJECT

private slots:
    void olderReleaseNeverOverwritesNewer_data()
    {
        QTest::addColumn<double>("r8Start");
        QTest::addColumn<double>("r8Deploy");
        QTest::addColumn<QString>("r8Ttl");
        QTest::addColumn<double>("r9Start");
        QTest::addColumn<double>("r9Deploy");
        QTest::addColumn<int>("r8Exit"); // -1: either outcome is legitimate for this timing
        QTest::addRow("r8 first and slow") << 0.0 << 1.0 << QStringLiteral("30s") << 0.6 << 0.1 << 0;
        QTest::addRow("r9 first and fast") << 0.3 << 1.0 << QStringLiteral("30s") << 0.0 << 0.1 << 4;
        QTest::addRow("simultaneous start") << 0.0 << 0.6 << QStringLiteral("30s") << 0.0 << 0.1 << -1;
        // r8 deploys past its lease: r9 takes over after the expiry and
        // publishes; r8's late publish must be refused.
        QTest::addRow("r8 outlives its lease") << 0.0 << 2.5 << QStringLiteral("1s") << 0.3 << 0.1 << 4;
        QRandomGenerator random(20261130);
        for (int i = 0; i < 4; ++i)
            QTest::addRow("random timing %d", i)
                << random.bounded(0.5) << 0.2 + random.bounded(1.0) << QStringLiteral("30s")
                << random.bounded(0.5) << random.bounded(0.3) << -1;
    }

    void olderReleaseNeverOverwritesNewer()
    {
        QFETCH(double, r8Start);
        QFETCH(double, r8Deploy);
        QFETCH(QString, r8Ttl);
        QFETCH(double, r9Start);
        QFETCH(double, r9Deploy);
        QFETCH(int, r8Exit);
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);

        auto r8 = startScript(
            db, "release-job.sh",
            {"prod", "job-r8", "r8", "8", seconds(r8Start), seconds(r8Deploy), r8Ttl.toStdString(), "op-r8"});
        auto r9 =
            startScript(db, "release-job.sh",
                        {"prod", "job-r9", "r9", "9", seconds(r9Start), seconds(r9Deploy), "30s", "op-r9"});
        RunResult out8 = finish(*r8);
        RunResult out9 = finish(*r9);

        // Exactly one current manifest: r9.
        json current = relctl(db, {"--json", "manifest", "show", "--env", "prod"}).json();
        QCOMPARE(current["release"].get<std::string>(), std::string("r9"));
        QCOMPARE(current["generation"].get<long long>(), 9LL);
        QCOMPARE(out9.exitCode, 0);
        QCOMPARE(value(out9, "publish"), std::string("0"));

        // r8 either published before r9 did, or lost with STALE_GENERATION,
        // recorded against its own job.
        QVERIFY2(out8.exitCode == 0 || out8.exitCode == 4, out8.out.c_str());
        if (r8Exit >= 0)
            QCOMPARE(out8.exitCode, r8Exit);
        const long long r8Refusals = db.count("SELECT count(*) FROM relctl.events WHERE job = 'job-r8' "
                                              "AND outcome = 'rejected'");
        const long long r8Stale = db.count("SELECT count(*) FROM relctl.events WHERE job = 'job-r8' "
                                           "AND reason = 'STALE_GENERATION' AND current_release = 'r9'");
        if (out8.exitCode == 4) {
            QCOMPARE(r8Refusals, 1LL);
            QCOMPARE(r8Stale, 1LL);
            QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests WHERE release = 'r8'"), 0LL);
        } else {
            QCOMPARE(r8Refusals, 0LL);
            QCOMPARE(db.scalar("SELECT string_agg(release, ',' ORDER BY id) FROM relctl.manifests"),
                     std::string("r8,r9"));
        }
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE job = 'job-r9' AND outcome = 'rejected'"),
                 0LL);
    }

    void expiredHolderIsLockedOut_data()
    {
        QTest::addColumn<bool>("successor");
        QTest::addColumn<QString>("reason");
        QTest::addRow("successor acquired") << true << QStringLiteral("LEASE_SUPERSEDED");
        QTest::addRow("no successor yet") << false << QStringLiteral("LEASE_EXPIRED");
    }

    void expiredHolderIsLockedOut()
    {
        QFETCH(bool, successor);
        QFETCH(QString, reason);
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        RunResult old = relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-old", "--release",
                                    "r8", "--generation", "8", "--ttl", "1s"});
        QCOMPARE(old.exitCode, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(1300));
        if (successor) {
            RunResult next = relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-new", "--release",
                                         "r9", "--generation", "9", "--ttl", "30s"});
            QCOMPARE(next.exitCode, 0);
            QVERIFY(next.line().rfind("prod:2:", 0) == 0);
        }
        const std::string h = old.line();
        RunResult renew = relctl(db, {"--json", "lease", "renew", "--lease", h});
        QCOMPARE(renew.exitCode, 5);
        QCOMPARE(QString::fromStdString(renew.json()["error"].get<std::string>()), reason);
        RunResult publish = relctl(db, {"--json", "publish", "--lease", h});
        QCOMPARE(publish.exitCode, 5);
        QCOMPARE(QString::fromStdString(publish.json()["error"].get<std::string>()), reason);
        RunResult release = relctl(db, {"--json", "lease", "release", "--lease", h});
        QCOMPARE(release.exitCode, 0);
        QCOMPARE(release.json()["released"].get<bool>(), false);

        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 0LL);
        if (successor) {
            // The late release left the successor's lease alone.
            json shown = relctl(db, {"--json", "lease", "show", "--env", "prod"}).json();
            QCOMPARE(shown["lease"]["job"].get<std::string>(), std::string("job-new"));
            QCOMPARE(shown["lease"]["token"].get<long long>(), 2LL);
        }
        // Each refusal is recorded against the old job, with the token it presented.
        for (const char* op : {"renew", "publish"}) {
            const std::string where =
                std::string("operation = '") + op + "' AND outcome = 'rejected' AND reason = '" +
                reason.toStdString() +
                "' AND job = 'job-old' AND token = 1 AND current_token = " + (successor ? "2" : "1");
            QVERIFY2(db.count("SELECT count(*) FROM relctl.events WHERE " + where) == 1, op);
        }
    }

    void sequentialModelWithOperationIds()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        auto job = [&](const std::string& name, const std::string& generation, const std::string& op) {
            auto p = startScript(db, "release-job.sh",
                                 {"prod", name, "r" + generation, generation, "0", "0", "30s", op});
            return finish(*p);
        };
        QCOMPARE(job("job-9", "9", "setup-9").exitCode, 0); // generation 9 is current

        RunResult a = job("job-8", "8", "request-a");
        QCOMPARE(a.exitCode, 4);
        QCOMPARE(value(a, "acquire"), std::string("4"));

        RunResult b = job("job-10", "10", "request-b");
        QCOMPARE(b.exitCode, 0);
        QCOMPARE(value(b, "replayed"), std::string("false"));
        const auto after = db.footprint();

        // The same request again: every step answers from the record, nothing is applied twice.
        RunResult again = job("job-10", "10", "request-b");
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(value(again, "handle"), value(b, "handle"));
        QCOMPARE(value(again, "replayed"), std::string("true"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests WHERE generation = 10"), 1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE generation = 10"), 1LL);
        const auto replayed = db.footprint();
        QCOMPARE(replayed[0], after[0]); // environments
        QCOMPARE(replayed[1], after[1]); // leases
        QCOMPARE(replayed[2], after[2]); // manifests
        QCOMPARE(replayed[4], after[4]); // operations

        json current = relctl(db, {"--json", "manifest", "show", "--env", "prod"}).json();
        QCOMPARE(current["generation"].get<long long>(), 10LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE op_id = 'request-a' "
                          "AND reason = 'STALE_GENERATION' AND job = 'job-8'"),
                 1LL);
    }
};

QTEST_GUILESS_MAIN(TestRace)
#include "test_race.moc"
