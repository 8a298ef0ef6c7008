// Failover, kept as a test: a primary and a streaming standby of the test's
// own on this machine, four workers (separate processes, each relctl call a
// process of its own) acquiring, publishing and releasing through a
// multi-host connection string (host=A,B target_session_attrs=read-write);
// mid-run the primary is killed (SIGKILL, as a crashed machine stops) and the
// standby promoted. The workers retry what found no primary with the same op
// id; relctl settles writes whose reply was lost on the new primary.
//
// With synchronous replication (synchronous_commit = on, the standby named in
// synchronous_standby_names), every publish acknowledged before the kill is on
// the new primary, no operation is applied twice, every fencing token handed
// out afterwards is above every acknowledged one, and `relctl verify` finds the
// history sound. With asynchronous replication acknowledged work may be lost:
// the test reports how much, and checks what still holds (nothing applied
// twice, tokens above the new timeline's floor, a sound history).

#include "relctlprocess.h"
#include "scratchcluster.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

using namespace std::chrono_literals;

namespace {

constexpr int kWorkers = 4;
constexpr int kRounds = 8;
// The floor of a promoted server's fencing tokens (relctl.next_token, timeline 2).
constexpr long long kTimelineTwoFloor = 1099511627776LL + 1;

struct Ack
{
    std::string kind; // acquired, published, refused
    std::map<std::string, std::string> fields;
};

std::vector<Ack> parse(const std::string& out)
{
    std::vector<Ack> acks;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        Ack a;
        words >> a.kind;
        std::string word;
        while (words >> word) {
            const auto eq = word.find('=');
            if (eq != std::string::npos)
                a.fields[word.substr(0, eq)] = word.substr(eq + 1);
        }
        acks.push_back(std::move(a));
    }
    return acks;
}

long long number(const std::string& text)
{
    return text.empty() ? 0 : std::stoll(text);
}

} // namespace

class TestFailover final : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void failover_data()
    {
        QTest::addColumn<bool>("synchronous");
        QTest::addRow("synchronous") << true;
        QTest::addRow("asynchronous") << false;
    }

    void failover()
    {
        QFETCH(bool, synchronous);
        ScratchCluster primary;
        std::unique_ptr<ScratchCluster> standby(ScratchCluster::standbyOf(primary, "standby1"));
        if (synchronous) {
            primary.query("ALTER SYSTEM SET synchronous_standby_names = 'standby1'");
            primary.query("SELECT pg_reload_conf()");
        }
        QTRY_COMPARE_WITH_TIMEOUT(
            primary.query("SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'"),
            std::string(synchronous ? "sync" : "async"), 20000);

        QCOMPARE(relctlWithDsn(primary.dsn(), {"migrate"}).exitCode, 0);
        QCOMPARE(relctlWithDsn(primary.dsn(), {"env", "add", "prod"}).exitCode, 0);
        const std::string dsn = "host=" + primary.socketDir() + "," + standby->socketDir() +
                                " port=" + std::to_string(primary.port()) + "," +
                                std::to_string(standby->port()) + " user=" + primary.user() +
                                " dbname=postgres target_session_attrs=read-write";
        const Env env{{"RELCTL_STATE_DIR", m_dir.filePath(QStringLiteral("state")).toStdString() +
                                               (synchronous ? "-sync" : "-async")}};

        std::vector<std::unique_ptr<QProcess>> workers;
        workers.reserve(kWorkers);
        for (int w = 0; w < kWorkers; ++w)
            workers.push_back(startScriptWithDsn(dsn, "failover-worker.sh",
                                                 {std::to_string(w), std::to_string(kRounds), "prod"}, env));
        // Kill the primary once the run is well under way.
        QTRY_VERIFY_WITH_TIMEOUT(number(primary.query("SELECT count(*) FROM relctl.manifests")) >= 4, 60000);
        const long long tokenBeforeKill = number(primary.query("SELECT max(token) FROM relctl.leases"));
        primary.kill();
        std::this_thread::sleep_for(500ms);
        standby->promote();
        const std::string promotedAt = standby->query("SELECT clock_timestamp()::text");

        std::vector<Ack> acks;
        for (auto& w : workers) {
            const RunResult r = finish(*w, 240000);
            QVERIFY2(r.exitCode == 0, r.err.c_str());
            QVERIFY2(r.err.empty(), r.err.c_str()); // no exit code the protocol does not allow
            for (Ack& a : parse(r.out))
                acks.push_back(std::move(a));
        }
        ScratchCluster& now = *standby;
        QCOMPARE(now.query("SELECT pg_is_in_recovery()::text"), std::string("false"));

        // Nothing applied twice: one lease per acquire op id, one manifest per publish op id.
        QCOMPARE(now.query("SELECT count(*) FROM (SELECT op_id FROM relctl.leases WHERE op_id IS NOT NULL "
                           "GROUP BY op_id HAVING count(*) > 1) x"),
                 std::string("0"));
        QCOMPARE(now.query("SELECT count(*) FROM (SELECT op_id FROM relctl.manifests WHERE op_id IS NOT NULL "
                           "GROUP BY op_id HAVING count(*) > 1) x"),
                 std::string("0"));

        int published = 0;
        int lost = 0;
        long long maxAcknowledgedToken = 0;
        for (const Ack& a : acks) {
            if (a.kind == "acquired" || a.kind == "published")
                maxAcknowledgedToken = std::max(maxAcknowledgedToken, number(a.fields.at("token")));
            if (a.kind != "published")
                continue;
            ++published;
            const std::string op = a.fields.at("op");
            if (now.query("SELECT count(*) FROM relctl.manifests WHERE op_id = '" + op + "'") != "1")
                ++lost;
        }
        qInfo("%s: %d publishes acknowledged, %d of them not on the new primary; last token before the kill "
              "%lld",
              synchronous ? "synchronous" : "asynchronous", published, lost, tokenBeforeKill);
        QVERIFY(published >= 4);
        if (synchronous)
            QCOMPARE(lost, 0);

        // Tokens handed out on the new primary are above its timeline's floor,
        // so above every token the old primary handed out, acknowledged or not.
        const RunResult next =
            relctlWithDsn(dsn, {"--json", "lease", "acquire", "--env", "prod", "--job", "after", "--release",
                                "r-after", "--generation", "100000", "--wait", "30s"});
        QVERIFY2(next.exitCode == 0, next.err.c_str());
        const long long token = next.json()["token"].get<long long>();
        QVERIFY(token >= kTimelineTwoFloor);
        QVERIFY(token > maxAcknowledgedToken);
        QCOMPARE(now.query("SELECT count(*) FROM relctl.leases WHERE acquired_at > '" + promotedAt +
                           "' AND token < " + std::to_string(kTimelineTwoFloor)),
                 std::string("0"));

        const RunResult verified = relctlWithDsn(now.dsn(), {"verify"});
        QVERIFY2(verified.exitCode == 0, (verified.out + verified.err).c_str());
    }
};

QTEST_GUILESS_MAIN(TestFailover)
#include "test_failover.moc"
