// The lease protocol through relctl, one OS process per command, against a
// real PostgreSQL: acquire/renew/release/publish, fencing tokens, credentials,
// idempotent op ids, the append-only audit trail and what it records.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QtTest>
#include <thread>

using nlohmann::json;

namespace {

std::string acquireHandle(const TestDatabase& db, const std::string& env, const std::string& job,
                          const std::string& generation, const std::string& ttl = "30s")
{
    RunResult r = relctl(db, {"lease", "acquire", "--env", env, "--job", job, "--release", "r" + generation,
                              "--generation", generation, "--ttl", ttl});
    if (r.exitCode != 0)
        qFatal("acquire failed (%d): %s", r.exitCode, r.err.c_str());
    return r.line();
}

// libfaketime shifts the clock of the processes it is preloaded into (the
// client only: the server keeps the real time).
Env skewedClock(const std::string& offset)
{
    QStringList found;
    for (const QString& dir : QDir(QStringLiteral("/usr/lib")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString lib = QStringLiteral("/usr/lib/%1/faketime/libfaketime.so.1").arg(dir);
        if (QFile::exists(lib))
            found << lib;
    }
    if (found.isEmpty())
        qFatal("libfaketime is not installed (Debian package faketime; scripts/test.sh installs it)");
    return {{"LD_PRELOAD", found.first().toStdString()}, {"FAKETIME", offset}};
}

} // namespace

class TestProtocol final : public QObject
{
    Q_OBJECT

private slots:
    void environmentsHaveDefaultsAndAddIsIdempotent()
    {
        TestDatabase db;
        RunResult added = relctl(db, {"--json", "env", "add", "staging"});
        QCOMPARE(added.exitCode, 0);
        QCOMPARE(added.json()["default_ttl_ms"].get<long long>(), 60000LL);
        QCOMPARE(added.json()["max_ttl_ms"].get<long long>(), 600000LL);
        QCOMPARE(added.json()["created"].get<bool>(), true);
        RunResult again = relctl(db, {"--json", "env", "add", "staging"});
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(again.json()["created"].get<bool>(), false);
        QCOMPARE(relctl(db, {"env", "add", "staging", "--default-ttl", "5s"}).exitCode, 2); // other settings
        QCOMPARE(relctl(db, {"env", "add", "prod", "--default-ttl", "5s", "--max-ttl", "1m"}).exitCode, 0);
        json list = relctl(db, {"--json", "env", "list"}).json();
        QCOMPARE(list["environments"].size(), std::size_t(2));
        QCOMPARE(list["environments"][0]["name"].get<std::string>(), std::string("prod"));
        QCOMPARE(list["environments"][0]["default_ttl_ms"].get<long long>(), 5000LL);
        QCOMPARE(list["environments"][0]["max_ttl_ms"].get<long long>(), 60000LL);
        json shown = relctl(db, {"--json", "env", "show", "prod"}).json();
        QVERIFY(shown["current"].is_null());
        QVERIFY(shown["lease"].is_null());
    }

    void acquireGrantsLeaseWithTokenAndServerExpiry()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        RunResult r = relctl(db, {"--json", "lease", "acquire", "--env", "prod", "--job", "deploy-17",
                                  "--release", "v1.9.0", "--generation", "9", "--ttl", "45s"});
        QCOMPARE(r.exitCode, 0);
        json j = r.json();
        for (const char* key : {"env", "token", "lease_id", "handle", "job", "release", "generation",
                                "acquired_at", "expires_at", "replayed"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["token"].get<long long>(), 1LL);
        QCOMPARE(j["lease_id"].get<std::string>().size(), std::size_t(32));
        QCOMPARE(j["handle"].get<std::string>(), "prod:1:" + j["lease_id"].get<std::string>());
        QCOMPARE(j["replayed"].get<bool>(), false);
        // The expiry is computed by the server: exactly acquired_at + ttl.
        QCOMPARE(db.count("SELECT extract(epoch FROM expires_at - acquired_at) * 1000 FROM relctl.leases"),
                 45000LL);
        // Lease ids are unguessable: two grants never share one, and they are version-4 UUIDs (122 random
        // bits).
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.leases WHERE lease_id::text LIKE '________-____-4___-%'"),
            1LL);

        json shown = relctl(db, {"--json", "lease", "show", "--env", "prod"}).json();
        QCOMPARE(shown["lease"]["job"].get<std::string>(), std::string("deploy-17"));
        QVERIFY(shown["lease"]["remaining_ms"].get<long long>() > 40000);
        QVERIFY(shown["lease"]["remaining_ms"].get<long long>() <= 45000);
    }

    void clientClockDecidesNothing()
    {
        // The skew really reaches the client process (else this test proves nothing).
        QProcess date;
        QProcessEnvironment skewed = QProcessEnvironment::systemEnvironment();
        for (const auto& [key, value] : skewedClock("-2h"))
            skewed.insert(QString::fromStdString(key), QString::fromStdString(value));
        date.setProcessEnvironment(skewed);
        date.start(QStringLiteral("date"), {QStringLiteral("+%s")});
        QVERIFY(date.waitForFinished());
        const long long skew =
            QDateTime::currentSecsSinceEpoch() - date.readAllStandardOutput().trimmed().toLongLong();
        QVERIFY2(skew > 7000 && skew < 7400, "libfaketime did not shift the client's clock");

        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        // A client two hours behind gets a lease that runs for its TTL on the server's clock...
        RunResult behind = relctl(db,
                                  {"lease", "acquire", "--env", "prod", "--job", "slow-clock", "--release",
                                   "r1", "--generation", "1", "--ttl", "1s"},
                                  {}, skewedClock("-2h"));
        QCOMPARE(behind.exitCode, 0);
        QVERIFY(db.count("SELECT count(*) FROM relctl.leases WHERE expires_at > clock_timestamp() "
                         "AND expires_at <= clock_timestamp() + interval '1 second'") == 1);
        // ...and cannot publish after it expired there, however early its own clock says it is.
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        RunResult late = relctl(db, {"--json", "publish", "--lease", behind.line()}, {}, skewedClock("-2h"));
        QCOMPARE(late.exitCode, 5);
        QCOMPARE(late.json()["error"].get<std::string>(), std::string("LEASE_EXPIRED"));
        // A client two hours ahead neither expires a live lease early nor stretches its own.
        std::string h = acquireHandle(db, "prod", "fast-clock", "2", "30s");
        RunResult ahead = relctl(db,
                                 {"--json", "lease", "acquire", "--env", "prod", "--job", "other",
                                  "--release", "r3", "--generation", "3"},
                                 {}, skewedClock("+2h"));
        QCOMPARE(ahead.exitCode, 3);
        QCOMPARE(
            relctl(db, {"lease", "renew", "--lease", h, "--ttl", "20s"}, {}, skewedClock("+2h")).exitCode, 0);
        QVERIFY(
            db.count(
                "SELECT count(*) FROM relctl.leases WHERE token = 2 AND expires_at BETWEEN "
                "clock_timestamp() + interval '15 seconds' AND clock_timestamp() + interval '20 seconds'") ==
            1);
    }

    void busyNamesTheHolderAndIsNotARefusal()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        acquireHandle(db, "prod", "job-a", "8");
        RunResult busy = relctl(db, {"--json", "lease", "acquire", "--env", "prod", "--job", "job-b",
                                     "--release", "r9", "--generation", "9"});
        QCOMPARE(busy.exitCode, 3);
        json j = busy.json();
        QCOMPARE(j["error"].get<std::string>(), std::string("busy"));
        QCOMPARE(j["holder"]["job"].get<std::string>(), std::string("job-a"));
        QCOMPARE(j["holder"]["release"].get<std::string>(), std::string("r8"));
        QCOMPARE(j["holder"]["token"].get<long long>(), 1LL);
        QVERIFY(j["holder"].contains("expires_at"));
        QVERIFY(busy.err.find("job-a") != std::string::npos);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE outcome = 'rejected'"), 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 1LL);
    }

    void fencingTokensStrictlyIncreaseAndAreNeverReused()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        relctl(db, {"env", "add", "test"});
        for (int i = 1; i <= 5; ++i) {
            std::string h = acquireHandle(db, "prod", "job", std::to_string(i));
            QCOMPARE(QString::fromStdString(h).section(QLatin1Char(':'), 1, 1).toInt(), i);
            QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        }
        // Tokens are per environment.
        QVERIFY(acquireHandle(db, "test", "job", "1").rfind("test:1:", 0) == 0);
        QCOMPARE(db.count("SELECT last_token FROM relctl.environments WHERE name = 'prod'"), 5LL);
    }

    void renewExtendsFromServerNowAndOnlyForTheLiveHolder()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h = acquireHandle(db, "prod", "job", "1", "2s");
        const std::string before = db.scalar("SELECT expires_at FROM relctl.leases");
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        RunResult renewed = relctl(db, {"--json", "lease", "renew", "--lease", h, "--ttl", "10s"});
        QCOMPARE(renewed.exitCode, 0);
        QVERIFY(db.count("SELECT count(*) FROM relctl.leases WHERE expires_at > " + sqlLiteral(before) +
                         "::timestamptz + interval '8 seconds'") == 1);
        // $RELCTL_LEASE is the default handle.
        QCOMPARE(relctl(db, {"lease", "renew"}, {}, {{"RELCTL_LEASE", h}}).exitCode, 0);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        RunResult late = relctl(db, {"--json", "lease", "renew", "--lease", h});
        QCOMPARE(late.exitCode, 5);
        QCOMPARE(late.json()["error"].get<std::string>(), std::string("LEASE_RELEASED"));
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.events WHERE operation = 'renew' AND outcome = 'accepted'"),
            2LL);
        QCOMPARE(
            db.count(
                "SELECT count(*) FROM relctl.events WHERE operation = 'renew' AND reason = 'LEASE_RELEASED'"),
            1LL);
    }

    void wrongCredentialsAreRefusedAndRecorded()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h = acquireHandle(db, "prod", "job", "1");
        std::string forged = h.substr(0, h.size() - 32) + std::string(32, 'a');
        RunResult bad = relctl(db, {"--json", "publish", "--lease", forged});
        QCOMPARE(bad.exitCode, 7);
        QCOMPARE(bad.json()["error"].get<std::string>(), std::string("BAD_LEASE_ID"));
        RunResult unknown =
            relctl(db, {"--json", "lease", "renew", "--lease", "prod:99:" + std::string(32, 'b')});
        QCOMPARE(unknown.exitCode, 7);
        QCOMPARE(unknown.json()["error"].get<std::string>(), std::string("UNKNOWN_LEASE"));
        QCOMPARE(relctl(db, {"lease", "release", "--lease", forged}).exitCode, 7);
        // None of them touched the real lease; all three were recorded.
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE ended_at IS NULL"), 1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 0LL);
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.events WHERE reason IN ('BAD_LEASE_ID', 'UNKNOWN_LEASE')"),
            3LL);
    }

    void publishMovesCurrentAndKeepsHistory()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        json none = relctl(db, {"--json", "manifest", "show", "--env", "prod"}).json();
        QVERIFY(none["release"].is_null() && none["generation"].is_null() && none["published_at"].is_null());
        for (const char* gen : {"3", "5"}) {
            std::string h = acquireHandle(db, "prod", std::string("job-") + gen, gen);
            RunResult p = relctl(db, {"--json", "publish", "--lease", h, "--manifest", "-"},
                                 std::string("{\"image\": \"app:") + gen + "\"}");
            QCOMPARE(p.exitCode, 0);
            for (const char* key : {"env", "release", "generation", "token", "published_at", "replayed"})
                QVERIFY2(p.json().contains(key), key);
            // A lease publishes once: its generation is then no longer newer than the current one.
            RunResult twice = relctl(db, {"--json", "publish", "--lease", h});
            QCOMPARE(twice.exitCode, 4);
            QCOMPARE(twice.json()["error"].get<std::string>(), std::string("STALE_GENERATION"));
            relctl(db, {"lease", "release", "--lease", h});
        }
        json current = relctl(db, {"--json", "manifest", "show", "--env", "prod"}).json();
        QCOMPARE(current["release"].get<std::string>(), std::string("r5"));
        QCOMPARE(current["job"].get<std::string>(), std::string("job-5"));
        QCOMPARE(current["manifest"]["image"].get<std::string>(), std::string("app:5"));
        // The limit is 64 KiB of what the client sends: a compact object of exactly 65536 bytes passes.
        std::string big = "{\"kk\":[";
        for (int i = 0; i < 32763; ++i)
            big += "0,";
        big += "0]}";
        QCOMPARE(big.size(), std::size_t(65536));
        std::string h7 = acquireHandle(db, "prod", "job-7", "7");
        QCOMPARE(relctl(db, {"publish", "--lease", h7, "--manifest", "-"}, big).exitCode, 0);
        relctl(db, {"lease", "release", "--lease", h7});

        json history = relctl(db, {"--json", "manifest", "show", "--env", "prod", "--history"}).json();
        QCOMPARE(history["history"].size(), std::size_t(3));
        QCOMPARE(history["history"][0]["generation"].get<long long>(), 3LL); // oldest first
        QCOMPARE(history["history"][1]["generation"].get<long long>(), 5LL);
    }

    void releaseIsIdempotentAndNeverEndsAnotherHoldersLease()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string first = acquireHandle(db, "prod", "job-1", "1");
        QCOMPARE(relctl(db, {"lease", "release", "--lease", first}).exitCode, 0);
        RunResult again = relctl(db, {"--json", "lease", "release", "--lease", first});
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(again.json()["state"].get<std::string>(), std::string("already-released"));
        std::string second = acquireHandle(db, "prod", "job-2", "2");
        QCOMPARE(relctl(db, {"lease", "release", "--lease", first}).exitCode, 0);
        json shown = relctl(db, {"--json", "lease", "show", "--env", "prod"}).json();
        QCOMPARE(shown["lease"]["job"].get<std::string>(), std::string("job-2"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE token = 2 AND ended_at IS NULL"), 1LL);
        (void)second;
    }

    void opIdsMakeRetriesIdempotent()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const Args acquire{"--json",    "lease", "acquire",      "--env", "prod",    "--job",         "job-1",
                           "--release", "r1",    "--generation", "1",     "--op-id", "ci-123-acquire"};
        json first = relctl(db, acquire).json();
        // The reply is lost: the job asks what became of its op id, then retries it.
        json shown = relctl(db, {"--json", "op", "show", "ci-123-acquire"}).json();
        QCOMPARE(shown["status"].get<std::string>(), std::string("recorded"));
        QCOMPARE(shown["outcome"]["token"], first["token"]);
        // An op id is no credential: what it shows never holds the lease's id.
        QVERIFY(!shown["outcome"].contains("handle"));
        QVERIFY(shown.dump().find(first["lease_id"].get<std::string>()) == std::string::npos);
        // The retry (from where the first attempt ran: it has its request secret) gets it.
        RunResult retry = relctl(db, acquire);
        QCOMPARE(retry.exitCode, 0);
        QCOMPARE(retry.json()["handle"], first["handle"]);
        QCOMPARE(retry.json()["replayed"].get<bool>(), true);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 1LL);

        // The same op id for another request is a conflict, and changes nothing.
        Args other = acquire;
        other[10] = "2";
        QCOMPARE(relctl(db, other).exitCode, 8);

        const std::string h = first["handle"].get<std::string>();
        const Args publish{"--json", "publish", "--lease", h, "--op-id", "ci-123-publish"};
        QCOMPARE(relctl(db, publish).exitCode, 0);
        RunResult replayed = relctl(db, publish);
        QCOMPARE(replayed.exitCode, 0);
        QCOMPARE(replayed.json()["replayed"].get<bool>(), true);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'publish'"), 1LL);
        QCOMPARE(relctl(db, {"publish", "--lease", h, "--op-id", "ci-123-acquire"}).exitCode, 8);

        json unknown = relctl(db, {"--json", "op", "show", "never-sent"}).json();
        QCOMPARE(unknown["status"].get<std::string>(), std::string("not-found"));
        // Without --op-id one is generated and recorded.
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        std::string h2 = acquireHandle(db, "prod", "job-2", "2");
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h2}).exitCode, 0);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE token = 2 AND length(op_id) = 32"), 1LL);
    }

    void refusalsAreReplayedWithTheSameExitCode()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h = acquireHandle(db, "prod", "job-9", "9");
        relctl(db, {"publish", "--lease", h});
        relctl(db, {"lease", "release", "--lease", h});
        const Args stale{"--json",    "lease", "acquire",      "--env", "prod",    "--job", "job-8",
                         "--release", "r8",    "--generation", "8",     "--op-id", "late-8"};
        QCOMPARE(relctl(db, stale).exitCode, 4);
        RunResult again = relctl(db, stale);
        QCOMPARE(again.exitCode, 4);
        QCOMPARE(again.json()["replayed"].get<bool>(), true);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'STALE_GENERATION'"), 1LL);
    }

    void auditTrailIsAppendOnly_data()
    {
        QTest::addColumn<QString>("statement");
        QTest::addRow("update events") << QStringLiteral("UPDATE relctl.events SET job = 'x'");
        QTest::addRow("delete events") << QStringLiteral("DELETE FROM relctl.events");
        QTest::addRow("truncate events") << QStringLiteral("TRUNCATE relctl.events");
        QTest::addRow("update manifests") << QStringLiteral("UPDATE relctl.manifests SET release = 'x'");
        QTest::addRow("delete manifests") << QStringLiteral("DELETE FROM relctl.manifests");
        QTest::addRow("truncate manifests") << QStringLiteral("TRUNCATE relctl.manifests CASCADE");
        QTest::addRow("update operations") << QStringLiteral("UPDATE relctl.operations SET outcome = '{}'");
        QTest::addRow("delete operations") << QStringLiteral("DELETE FROM relctl.operations");
    }

    void auditTrailIsAppendOnly()
    {
        QFETCH(QString, statement);
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h = acquireHandle(db, "prod", "job", "1");
        QCOMPARE(relctl(db, {"publish", "--lease", h, "--op-id", "p"}).exitCode, 0);
        const auto before = db.footprint();
        bool refused = false;
        try {
            db.exec(statement.toStdString()); // as the superuser: the triggers bind it too
        } catch (const std::exception& e) {
            refused = std::string(e.what()).find("append-only") != std::string::npos;
        }
        QVERIFY(refused);
        QCOMPARE(db.footprint(), before);
    }

    void refusalRecordExplainsItself()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h9 = acquireHandle(db, "prod", "job-9", "9");
        relctl(db, {"publish", "--lease", h9});
        relctl(db, {"lease", "release", "--lease", h9});
        RunResult r =
            relctl(db, {"--job-url", "https://ci.example/jobs/8", "lease", "acquire", "--env", "prod",
                        "--job", "job-8", "--release", "r8", "--generation", "8", "--op-id", "op-8"});
        QCOMPARE(r.exitCode, 4);
        json events = relctl(db, {"--json", "audit", "--reason", "STALE_GENERATION"}).json()["events"];
        QCOMPARE(events.size(), std::size_t(1));
        json e = events[0];
        for (const char* key :
             {"id", "at", "env", "operation", "outcome", "reason", "job", "release", "generation", "token",
              "current_token", "current_generation", "current_release", "op_id", "host", "pid", "job_url"})
            QVERIFY2(e.contains(key), key);
        QCOMPARE(e["env"].get<std::string>(), std::string("prod"));
        QCOMPARE(e["operation"].get<std::string>(), std::string("acquire"));
        QCOMPARE(e["outcome"].get<std::string>(), std::string("rejected"));
        QCOMPARE(e["job"].get<std::string>(), std::string("job-8"));
        QCOMPARE(e["release"].get<std::string>(), std::string("r8"));
        QCOMPARE(e["generation"].get<long long>(), 8LL);
        QCOMPARE(e["current_token"].get<long long>(), 1LL);
        QCOMPARE(e["current_generation"].get<long long>(), 9LL);
        QCOMPARE(e["current_release"].get<std::string>(), std::string("r9"));
        QCOMPARE(e["op_id"].get<std::string>(), std::string("op-8"));
        QCOMPARE(e["job_url"].get<std::string>(), std::string("https://ci.example/jobs/8"));
        QVERIFY(!e["host"].get<std::string>().empty());
        QVERIFY(e["pid"].get<long long>() > 0);

        // Filters narrow; accepted events carry no reason.
        QCOMPARE(relctl(db, {"--json", "audit", "--job", "job-9"}).json()["events"].size(), std::size_t(3));
        QCOMPARE(relctl(db, {"--json", "audit", "--operation", "publish"}).json()["events"].size(),
                 std::size_t(1));
        QCOMPARE(relctl(db, {"--json", "audit", "--env", "prod", "--limit", "2"}).json()["events"].size(),
                 std::size_t(2));
        QCOMPARE(relctl(db, {"--json", "audit", "--since", "1h"}).json()["events"].size(), std::size_t(5));
        QCOMPARE(relctl(db, {"--json", "audit", "--since", "2999-01-01T00:00:00Z"}).json()["events"].size(),
                 std::size_t(0));
        json accepted = relctl(db, {"--json", "audit", "--operation", "publish"}).json()["events"][0];
        QCOMPARE(accepted["outcome"].get<std::string>(), std::string("accepted"));
        QVERIFY(accepted["reason"].is_null());
    }

    void traceFollowsARefusalToWhatBeatIt()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h8 = acquireHandle(db, "prod", "job-8", "8", "1s");
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        std::string h9 = acquireHandle(db, "prod", "job-9", "9");
        QCOMPARE(relctl(db, {"publish", "--lease", h9}).exitCode, 0);
        QCOMPARE(relctl(db, {"publish", "--lease", h8}).exitCode, 4);

        json trace = relctl(db, {"--json", "trace", "--job", "job-8"}).json();
        QCOMPARE(trace["refusals"].size(), std::size_t(1));
        json t = trace["refusals"][0];
        QCOMPARE(t["event"]["reason"].get<std::string>(), std::string("STALE_GENERATION"));
        QCOMPARE(t["lease"]["token"].get<long long>(), 1LL);
        QCOMPARE(t["superseded_by"]["job"].get<std::string>(), std::string("job-9"));
        QCOMPARE(t["superseded_by"]["token"].get<long long>(), 2LL);
        QCOMPARE(t["current_manifest"]["release"].get<std::string>(), std::string("r9"));
        QCOMPARE(t["current_manifest"]["job"].get<std::string>(), std::string("job-9"));
        QVERIFY(t["current_manifest"]["published_before_ms"].get<long long>() >= 0);
        RunResult plain = relctl(db, {"trace", "--job", "job-8"});
        QCOMPARE(plain.exitCode, 0);
        QVERIFY(plain.out.find("job-9") != std::string::npos);
        QCOMPARE(relctl(db, {"--json", "trace", "--job", "job-9"}).json()["refusals"].size(), std::size_t(0));
    }

    // Each refusal reason is traced to the row that decided it: the newer
    // holder, the publish that set the bar, the operator and their reason.
    void traceNamesWhatCausedEachRefusal()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string h8 = acquireHandle(db, "prod", "job-8", "8", "1s");
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        const std::string h9 = acquireHandle(db, "prod", "job-9", "9");
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", h8}).exitCode, 5); // LEASE_SUPERSEDED
        QCOMPARE(relctl(db, {"publish", "--lease", h9}).exitCode, 0);
        QCOMPARE(relctl(db, {"publish", "--lease", h8}).exitCode, 4); // STALE_GENERATION
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h9}).exitCode, 0);
        const std::string h10 = acquireHandle(db, "prod", "job-10", "10");
        QCOMPARE(relctl(db, {"lease", "revoke", "--env", "prod", "--by", "carol", "--reason", "stuck deploy"})
                     .exitCode,
                 0);
        QCOMPARE(relctl(db, {"publish", "--lease", h10}).exitCode, 5); // LEASE_REVOKED
        QCOMPARE(relctl(db, {"freeze", "--env", "prod", "--by", "dave", "--reason", "incident 42"}).exitCode,
                 0);
        QCOMPARE(relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-11", "--release", "r11",
                             "--generation", "11"})
                     .exitCode,
                 6); // DISPATCH_FROZEN

        const json eight = relctl(db, {"--json", "trace", "--job", "job-8"}).json()["refusals"];
        QCOMPARE(eight.size(), std::size_t(2));
        const json& superseded = eight[0]["cause"];
        QCOMPARE(eight[0]["event"]["reason"], json("LEASE_SUPERSEDED"));
        QCOMPARE(superseded["kind"], json("lease_superseded"));
        QCOMPARE(superseded["job"], json("job-9"));
        QCOMPARE(superseded["token"], json(2));
        const json& stale = eight[1]["cause"];
        QCOMPARE(eight[1]["event"]["reason"], json("STALE_GENERATION"));
        QCOMPARE(stale["kind"], json("stale"));
        QCOMPARE(stale["job"], json("job-9"));
        QCOMPARE(stale["generation"], json(9));
        QVERIFY(stale["at"].is_string());

        const json revoked =
            relctl(db, {"--json", "trace", "--job", "job-10"}).json()["refusals"][0]["cause"];
        QCOMPARE(revoked["kind"], json("revoked"));
        QCOMPARE(revoked["by"], json("carol"));
        QCOMPARE(revoked["reason"], json("stuck deploy"));
        const json frozen = relctl(db, {"--json", "trace", "--job", "job-11"}).json()["refusals"][0]["cause"];
        QCOMPARE(frozen["kind"], json("frozen"));
        QCOMPARE(frozen["by"], json("dave"));
        QCOMPARE(frozen["reason"], json("incident 42"));

        // The plain trace says it in a sentence.
        const std::string plain = relctl(db, {"trace", "--job", "job-10"}).out;
        QVERIFY2(plain.find("cause:            its lease (token 3) was revoked by carol: stuck deploy") !=
                     std::string::npos,
                 plain.c_str());
        const std::string frozenPlain = relctl(db, {"trace", "--job", "job-11"}).out;
        QVERIFY2(frozenPlain.find("prod was frozen by dave: incident 42") != std::string::npos,
                 frozenPlain.c_str());
    }
};

QTEST_GUILESS_MAIN(TestProtocol)
#include "test_protocol.moc"
