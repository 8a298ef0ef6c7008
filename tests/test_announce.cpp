// Which events are announced (NOTIFY relctl) and whom they wake
// (functions/audit.sql, core/src/queue.cpp): nothing on an environment nobody
// watches but the decisions of operators and release managers; never a
// renewal; a handover names the candidate served next, and only that waiter
// asks again. Waiters are separate relctl processes.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QtTest>
#include <pqxx/pqxx>
#include <thread>

using nlohmann::json;

namespace {

// A session that LISTENs on the protocol's channel and keeps every payload.
class Announcements final : public pqxx::notification_receiver
{
public:
    explicit Announcements(pqxx::connection_base& conn) : pqxx::notification_receiver(conn, "relctl") {}

    void operator()(const std::string& payload, int) override { received.push_back(json::parse(payload)); }

    std::vector<json> received;
};

struct Listening
{
    pqxx::connection conn;
    Announcements announcements{conn};

    explicit Listening(const std::string& dsn) : conn(dsn) {}

    // Everything announced by the commits made so far. The committing backend
    // only signals the listening one, which forwards the notifications when
    // it next runs, possibly after the relctl that committed has exited: one
    // round trip on the listening connection makes it run first (it sends
    // pending notifications before it reads the next command).
    std::vector<std::string> operations()
    {
        pqxx::nontransaction(conn).exec("SELECT 1");
        conn.get_notifs();
        std::vector<std::string> ops;
        for (const json& j : announcements.received)
            ops.push_back(j.value("operation", std::string("?")));
        announcements.received.clear();
        return ops;
    }

    // The payloads that arrive within ms.
    std::vector<json> within(int ms)
    {
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < ms)
            conn.await_notification(0, 50'000);
        std::vector<json> all;
        all.swap(announcements.received);
        return all;
    }
};

std::string acquire(const TestDatabase& db, const std::string& env, const std::string& job, int generation)
{
    RunResult r = relctl(db, {"lease", "acquire", "--env", env, "--job", job, "--release",
                              "r" + std::to_string(generation), "--generation", std::to_string(generation)});
    if (r.exitCode != 0)
        qFatal("acquire %s failed (%d): %s", job.c_str(), r.exitCode, r.err.c_str());
    return r.line();
}

std::unique_ptr<QProcess> waiter(const TestDatabase& db, const std::string& env, int generation)
{
    const std::string job = "job-" + std::to_string(generation);
    return startRelctlWithDsn(db.dsn(),
                              {"--json", "lease", "acquire", "--env", env, "--job", job, "--release",
                               "r" + std::to_string(generation), "--generation", std::to_string(generation),
                               "--wait", "60s", "--op-id", job + "-acquire"},
                              {{"RELCTL_LOG", "debug"}});
}

void awaitQueueLength(const TestDatabase& db, const std::string& env, long long count)
{
    QElapsedTimer timer;
    timer.start();
    while (db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting' AND env = '" + env +
                    "'") != count) {
        if (timer.elapsed() > 20000)
            qFatal("the queue of %s never reached %lld candidates", env.c_str(), count);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

long long evaluations(const std::string& stderrText)
{
    long long n = 0;
    for (std::size_t at = stderrText.find("relctl.acquire_candidate"); at != std::string::npos;
         at = stderrText.find("relctl.acquire_candidate", at + 1))
        ++n;
    return n;
}

} // namespace

class TestAnnounce final : public QObject
{
    Q_OBJECT

private slots:
    void nothingIsAnnouncedWhereNobodyWaitsButOperatorDecisions()
    {
        TestDatabase db;
        Listening listening(db.dsn());
        relctl(db, {"env", "add", "prod"});
        QCOMPARE(listening.operations(), std::vector<std::string>{"env-add"});

        const std::string handle = acquire(db, "prod", "job-1", 1);
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", handle}).exitCode, 0);
        QCOMPARE(relctl(db, {"publish", "--lease", handle}, "{\"artifact\": \"a\"}").exitCode, 0);
        // A refused renewal (wrong lease id) is not announced either.
        QVERIFY(
            relctl(db, {"lease", "renew", "--lease", "prod:1:00000000000000000000000000000000"}).exitCode !=
            0);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", handle}).exitCode, 0);
        QCOMPARE(listening.operations(), std::vector<std::string>{});
        // Recorded all the same.
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE env = 'prod'"), 6LL);

        // The decisions of people are announced: consoles show them at once.
        QCOMPARE(relctl(db, {"freeze", "--env", "prod", "--by", "rm", "--reason", "window"}).exitCode, 0);
        QCOMPARE(relctl(db, {"unfreeze", "--env", "prod", "--by", "rm"}).exitCode, 0);
        QCOMPARE(listening.operations(), (std::vector<std::string>{"freeze", "unfreeze"}));
    }

    void aWatchedEnvironmentAnnouncesEverythingButRenewals()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        relctl(db, {"env", "add", "test"});
        Listening listening(db.dsn());
        pqxx::connection watcher(db.jobDsn());
        {
            pqxx::nontransaction tx(watcher);
            QCOMPARE(tx.exec1("SELECT relctl.watch('prod')")[0].as<bool>(), true);
        }
        const std::string handle = acquire(db, "prod", "job-1", 1);
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", handle}).exitCode, 0);
        QCOMPARE(listening.operations(), std::vector<std::string>{"acquire"});
        // A renewal that brings the expiry forward is announced: the next
        // waiter's timer is set to the expiry it knew.
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", handle, "--ttl", "2s"}).exitCode, 0);
        QCOMPARE(listening.operations(), std::vector<std::string>{"renew"});
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", handle, "--ttl", "30s"}).exitCode, 0);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", handle}).exitCode, 0);
        // The unwatched environment next to it stays quiet.
        const std::string other = acquire(db, "test", "job-2", 1);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", other}).exitCode, 0);
        QCOMPARE(listening.operations(), std::vector<std::string>{"release"});

        {
            pqxx::nontransaction tx(watcher);
            QCOMPARE(tx.exec1("SELECT relctl.unwatch('prod')")[0].as<bool>(), true);
            QCOMPARE(tx.exec1("SELECT relctl.unwatch('prod')")[0].as<bool>(), false); // nothing left to drop
        }
        const std::string again = acquire(db, "prod", "job-3", 2);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", again}).exitCode, 0);
        QCOMPARE(listening.operations(), std::vector<std::string>{});
    }

    void aHandoverNamesTheCandidateServedNext()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string handle = acquire(db, "prod", "holder", 1);
        std::vector<std::unique_ptr<QProcess>> waiters;
        for (int g : {4, 2, 3}) {
            waiters.push_back(waiter(db, "prod", g));
            awaitQueueLength(db, "prod", static_cast<long long>(waiters.size()));
        }
        const long long head = db.count("SELECT id FROM relctl.candidates WHERE job = 'job-2'");
        const long long second = db.count("SELECT id FROM relctl.candidates WHERE job = 'job-3'");
        Listening listening(db.dsn());
        QCOMPARE(relctl(db, {"lease", "release", "--lease", handle}).exitCode, 0);
        QCOMPARE(finish(*waiters[1], 30000).exitCode, 0);
        const std::vector<json> seen = listening.within(300);
        std::map<std::string, json> byOperation;
        for (const json& j : seen)
            byOperation.emplace(j.value("operation", std::string()), j);
        QVERIFY(byOperation.count("release") == 1 && byOperation.count("acquire") == 1);
        QCOMPARE(byOperation["release"]["next"].get<long long>(), head);
        // Once job-2 holds the lease, job-3 is next.
        QCOMPARE(byOperation["acquire"]["next"].get<long long>(), second);
        for (auto& w : waiters) {
            w->kill();
            w->waitForFinished(5000);
        }
    }

    // Four waiters; the holder renews and releases. Only the next candidate
    // asks again, then the one after it (named next once the lease is
    // taken); the two behind them never do. Their own safety net polls at
    // 4 s at the earliest, and the test is done long before.
    void aReleaseWakesOnlyTheNextWaiter()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string handle = acquire(db, "prod", "holder", 1);
        std::vector<std::unique_ptr<QProcess>> waiters;
        QElapsedTimer sinceFirst;
        sinceFirst.start();
        QElapsedTimer firstQueued;
        for (int g = 2; g <= 5; ++g) {
            waiters.push_back(waiter(db, "prod", g));
            awaitQueueLength(db, "prod", g - 1);
            if (g == 2)
                firstQueued.start();
        }
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", handle}).exitCode, 0);
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", handle}).exitCode, 0);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", handle}).exitCode, 0);
        // The next candidate's safety net asks once a second while the lease
        // is held: a machine slow to queue the others and renew gives it that
        // many evaluations before the release.
        const long long heldPolls = firstQueued.elapsed() / 1000;
        if (heldPolls > 0)
            qWarning(
                "slow machine: the next waiter's safety net may have polled %lld time(s) before the release",
                heldPolls);
        const RunResult first = finish(*waiters[0], 30000);
        QCOMPARE(first.exitCode, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(300)); // let the others react, if they would
        std::vector<std::string> errs;
        for (std::size_t i = 1; i < waiters.size(); ++i) {
            waiters[i]->kill();
            waiters[i]->waitForFinished(5000);
            errs.push_back(waiters[i]->readAllStandardError().toStdString());
        }
        // Granted on the release's announcement: one evaluation after it.
        QVERIFY2(evaluations(first.err) >= 1 && evaluations(first.err) <= 1 + heldPolls, first.err.c_str());
        // Named next when job-2 took the lease (and, on a machine slow enough
        // to reach it, once more on its safety net).
        const long long polls = sinceFirst.elapsed() < 3800 ? 0 : 1;
        if (polls > 0)
            qWarning("slow machine: the safety net may have polled once");
        QVERIFY(evaluations(errs[0]) >= 1 && evaluations(errs[0]) <= 1 + polls);
        QVERIFY(evaluations(errs[1]) <= polls);
        QVERIFY(evaluations(errs[2]) <= polls);
    }

    // The watch functions are anyone's to call: bad input is refused and
    // nothing is written; a login cannot drop a registration it does not hold.
    void watchingIsSafeForAnyCaller()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const auto before = db.footprint();
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.watch(NULL)"), std::string("RC002"));
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.unwatch(NULL)"), std::string("RC002"));
        QCOMPARE(sqlState(db.reviewerDsn(), "SELECT relctl.events_after(0, 0)"), std::string("RC002"));
        QCOMPARE(sqlState(db.reviewerDsn(), "SELECT relctl.events_after(0, NULL)"), std::string("RC002"));
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.events_after(0)"), std::string("42501"));
        QCOMPARE(sqlState(db.reviewerDsn(), "SELECT relctl.watch('prod')"), std::string("42501"));
        {
            pqxx::connection c(db.jobDsn());
            pqxx::nontransaction tx(c);
            QCOMPARE(tx.exec1("SELECT relctl.unwatch('prod')")[0].as<bool>(), false);
            QCOMPARE(tx.exec1("SELECT relctl.watch('no such environment')")[0].as<bool>(), true);
        }
        QCOMPARE(db.footprint(), before);

        // Someone holding the key exclusively by hand cannot make a waiter
        // hang or keep it from registering: after the registration's lock
        // timeout the holder is ended (recorded), and the registration holds.
        pqxx::connection squatter(db.jobDsn());
        pqxx::nontransaction(squatter).exec(
            "SELECT pg_advisory_lock(1380273239, hashtext('prod'))"); // relctl.watch_lock_class()
        pqxx::connection victim(db.jobDsn());
        pqxx::nontransaction tx(victim);
        QElapsedTimer timer;
        timer.start();
        QCOMPARE(tx.exec1("SELECT relctl.watch('prod')")[0].as<bool>(), true);
        QVERIFY2(timer.elapsed() < 4000, std::to_string(timer.elapsed()).c_str());
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'session-ended'"), 1LL);
    }

    void followingTheTrailFindsWhatWasNotAnnounced()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string handle = acquire(db, "prod", "job-1", 1);
        pqxx::connection reviewer(db.reviewerDsn());
        const auto after = [&](const std::string& id) {
            pqxx::read_transaction tx(reviewer);
            return json::parse(tx.exec1("SELECT relctl.events_after(" + id + ")")[0].c_str());
        };
        const json start = after("NULL");
        const long long last = start["last"].get<long long>();
        QCOMPARE(last, db.count("SELECT max(id) FROM relctl.events"));
        QCOMPARE(after(std::to_string(last))["envs"], json::array());
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", handle}).exitCode, 0);
        const json next = after(std::to_string(last));
        QCOMPARE(next["envs"], json::array({"prod"}));
        QCOMPARE(next["last"].get<long long>(), last + 1);
        QCOMPARE(next["more"].get<bool>(), false);
        pqxx::read_transaction tx(reviewer);
        const json capped = json::parse(tx.exec1("SELECT relctl.events_after(0, 1)")[0].c_str());
        QCOMPARE(capped["more"].get<bool>(), true);
    }
};

QTEST_GUILESS_MAIN(TestAnnounce)
#include "test_announce.moc"
