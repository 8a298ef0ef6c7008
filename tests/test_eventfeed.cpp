// The console's event feed (relctl::EventListener::follow over
// relctl.events_after, functions/audit.sql): every committed event's
// environment is reported exactly once, whatever order the sessions that took
// the event ids commit in. Sessions race for real against the test cluster:
// one holds a renewal's transaction open while another commits a later event.

#define RELCTL_TEST_NO_SHORT_NAME
#include "relctl/listener.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QtTest>
#include <atomic>
#include <map>
#include <pqxx/pqxx>
#include <random>
#include <thread>

using nlohmann::json;
using Names = std::vector<std::string>;

namespace {

struct Lease
{
    long long token = 0;
    std::string id;
};

// A lease taken through the protocol by the job login, committed.
Lease acquire(const TestDatabase& db, const std::string& env, const std::string& job)
{
    pqxx::connection c(db.jobDsn());
    pqxx::nontransaction tx(c);
    const json reply = json::parse(tx.exec1("SELECT relctl.acquire(" + sqlLiteral(env) + ", " +
                                            sqlLiteral(job) + ", 'r1', 1, 600000, NULL, NULL, false)")[0]
                                       .c_str());
    if (reply.value("status", "") != "ok")
        qFatal("acquire %s failed: %s", env.c_str(), reply.dump().c_str());
    return {reply.at("token").get<long long>(), reply.at("lease_id").get<std::string>()};
}

// The renewal of `lease`: it records a renew event, never announced.
std::string renewal(const std::string& env, const Lease& lease)
{
    return "SELECT relctl.renew(" + sqlLiteral(env) + ", " + std::to_string(lease.token) + ", " +
           sqlLiteral(lease.id) + "::uuid, NULL, NULL)";
}

// Calls follow() until nothing is pending and a call reports nothing, at
// most for `ms`; returns every name reported, in order.
Names drain(relctl::EventListener& listener, int ms = 10000)
{
    Names all;
    QElapsedTimer timer;
    timer.start();
    for (;;) {
        const Names some = listener.follow();
        all.insert(all.end(), some.begin(), some.end());
        if (some.empty() && listener.pendingIds() == 0)
            return all;
        if (timer.elapsed() > ms)
            return all;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

constexpr std::chrono::milliseconds kSettle{100};

} // namespace

class TestEventFeed final : public QObject
{
    Q_OBJECT

private slots:
    // Transaction 1 takes an event id and stays open; transaction 2 takes a
    // later one and commits. The feed reports 2's environment, then 1's when
    // it commits: the lower id is not passed for good.
    void anEventCommittedOutOfOrderIsReported()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "add", "stage"}).exitCode, 0);
        const Lease lease = acquire(db, "prod", "job-1");
        relctl::EventListener listener(db.reviewerDsn(), kSettle);
        QCOMPARE(listener.follow(), Names{}); // notes where the trail ends

        pqxx::connection one(db.jobDsn());
        pqxx::work held(one);
        held.exec(renewal("prod", lease));
        acquire(db, "stage", "job-2");
        QCOMPARE(listener.follow(), Names{"stage"});
        QCOMPARE(listener.pendingIds(), std::size_t{1});
        // Well past the settling time: the renewal's transaction is still
        // open, so its id is still asked about.
        for (int i = 0; i < 10; ++i) {
            std::this_thread::sleep_for(kSettle / 2);
            QCOMPARE(listener.follow(), Names{});
        }
        QCOMPARE(listener.pendingIds(), std::size_t{1});
        held.commit();
        QCOMPARE(listener.follow(), Names{"prod"});
        QCOMPARE(listener.pendingIds(), std::size_t{0});
        QCOMPARE(listener.follow(), Names{});
    }

    // An id taken before the feed starts and committed after it: the first
    // call notes it as missing, and its event is reported when it commits.
    void anEventInProgressWhenFollowingStartsIsReported()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "add", "stage"}).exitCode, 0);
        const Lease lease = acquire(db, "prod", "job-1");
        pqxx::connection one(db.jobDsn());
        pqxx::work held(one);
        held.exec(renewal("prod", lease));
        acquire(db, "stage", "job-2");
        relctl::EventListener listener(db.reviewerDsn(), kSettle);
        QCOMPARE(listener.follow(), Names{});
        QCOMPARE(listener.pendingIds(), std::size_t{1});
        std::this_thread::sleep_for(kSettle * 3);
        QCOMPARE(listener.follow(), Names{});
        held.commit();
        QCOMPARE(listener.follow(), Names{"prod"});
        QCOMPARE(listener.pendingIds(), std::size_t{0});
    }

    // An id whose transaction rolled back never appears: it is asked about
    // until every transaction that could hold it has ended, then dropped. An
    // unrelated transaction left open keeps it until that one ends too.
    void aRolledBackIdIsDroppedOnceSettled()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "add", "stage"}).exitCode, 0);
        const Lease lease = acquire(db, "prod", "job-1");
        relctl::EventListener listener(db.reviewerDsn(), kSettle);
        QCOMPARE(listener.follow(), Names{});

        pqxx::connection other(db.jobDsn());
        pqxx::work open(other);
        open.exec(renewal("prod", lease)); // holds a transaction id (and a later id)
        {
            pqxx::connection one(db.jobDsn());
            pqxx::work doomed(one);
            doomed.exec("SELECT relctl.acquire('stage', 'job-0', 'r1', 1, 600000, NULL, NULL, false)");
            doomed.abort();
        }
        acquire(db, "stage", "job-2");
        QCOMPARE(listener.follow(), Names{"stage"});
        QCOMPARE(listener.pendingIds(), std::size_t{2}); // the rolled-back id and the open renewal's
        for (int i = 0; i < 10; ++i) {
            std::this_thread::sleep_for(kSettle / 2);
            QCOMPARE(listener.follow(), Names{});
        }
        QCOMPARE(listener.pendingIds(), std::size_t{2});
        open.abort();
        QCOMPARE(drain(listener), Names{});
        QCOMPARE(listener.pendingIds(), std::size_t{0});

        // Many rolled-back ids do not pile up: each is dropped once settled.
        QCOMPARE(runRelctl(db, {"env", "add", "qa"}).exitCode, 0);
        QCOMPARE(drain(listener), Names{"qa"});
        const long long first = db.count("SELECT max(id) FROM relctl.events");
        pqxx::connection one(db.jobDsn());
        for (int i = 0; i < 50; ++i) {
            pqxx::work doomed(one);
            doomed.exec(renewal("prod", lease));
            doomed.abort();
        }
        acquire(db, "qa", "job-3");
        QCOMPARE(db.count("SELECT max(id) FROM relctl.events"), first + 51);
        QCOMPARE(listener.follow(), Names{"qa"});
        QCOMPARE(listener.pendingIds(), std::size_t{50});
        QCOMPARE(drain(listener), Names{});
        QCOMPARE(listener.pendingIds(), std::size_t{0});
    }

    // 10,000 events committed by four sessions at once, each on an
    // environment of its own name, some transactions rolled back, commits
    // interleaving: every committed event is reported exactly once.
    void aBurstIsReportedExactlyOnce()
    {
        TestDatabase db;
        relctl::EventListener listener(db.reviewerDsn(), kSettle);
        QCOMPARE(listener.follow(), Names{});
        constexpr int kSessions = 4;
        constexpr int kEach = 2500;
        std::atomic<int> running{kSessions};
        std::vector<std::thread> sessions;
        sessions.reserve(kSessions);
        for (int s = 0; s < kSessions; ++s)
            sessions.emplace_back([&, s] {
                pqxx::connection c(db.adminDsn());
                std::mt19937 random(static_cast<unsigned>(s));
                for (int i = 0; i < kEach; ++i) {
                    pqxx::work tx(c);
                    tx.exec("INSERT INTO relctl.events (env, operation, outcome) VALUES ('burst-" +
                            std::to_string(s) + "-" + std::to_string(i) + "', 'renew', 'accepted')");
                    if (random() % 8 == 0) {
                        // An id taken and given up inside a transaction that commits.
                        pqxx::subtransaction doomed(tx, "doomed");
                        doomed.exec("INSERT INTO relctl.events (env, operation, outcome) VALUES "
                                    "('rolled-back', 'renew', 'accepted')");
                        doomed.abort();
                    }
                    if (random() % 16 == 0)
                        std::this_thread::sleep_for(std::chrono::microseconds(random() % 2000));
                    tx.commit();
                    if (random() % 10 == 0) {
                        pqxx::work rolledBack(c);
                        rolledBack.exec("INSERT INTO relctl.events (env, operation, outcome) VALUES "
                                        "('rolled-back', 'renew', 'accepted')");
                        rolledBack.abort();
                    }
                }
                --running;
            });
        std::map<std::string, int> reported;
        std::size_t mostPending = 0;
        while (running.load() > 0) {
            for (const std::string& env : listener.follow())
                ++reported[env];
            mostPending = std::max(mostPending, listener.pendingIds());
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        for (std::thread& t : sessions)
            t.join();
        for (const std::string& env : drain(listener, 20000))
            ++reported[env];
        QCOMPARE(listener.pendingIds(), std::size_t{0});
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE env LIKE 'burst-%'"),
                 static_cast<long long>(kSessions * kEach));
        QVERIFY(!reported.count("rolled-back"));
        QVERIFY(!reported.count(""));
        QCOMPARE(reported.size(), static_cast<std::size_t>(kSessions * kEach));
        for (const auto& [env, times] : reported)
            QVERIFY2(times == 1, (env + " reported " + std::to_string(times) + " times").c_str());
        qInfo("at most %zu ids pending during the burst", mostPending);

        // More than one call reads (10,000 events): the first says that
        // anything may have changed and still names what it read; the next
        // goes on from there.
        db.exec("INSERT INTO relctl.events (env, operation, outcome) "
                "SELECT 'bulk-' || g, 'renew', 'accepted' FROM generate_series(1, 10050) g");
        const Names first = listener.follow();
        QCOMPARE(first.size(), std::size_t{10001});
        QCOMPARE(first.front(), std::string());
        QCOMPARE(first[1], std::string("bulk-1"));
        const Names rest = listener.follow();
        QCOMPARE(rest.size(), std::size_t{50});
        QCOMPARE(rest.front(), std::string("bulk-10001"));
        QCOMPARE(listener.follow(), Names{});
    }

    // A follower's start (no position, no gaps: EventListener's first call)
    // is read from the primary key alone; it says what the general reading
    // says of a start (asked with an empty list of gaps): where the trail
    // ends, the ids missing below it, and whether a run was too long to list.
    void aFollowersStartIsTheGeneralAnswer()
    {
        TestDatabase db;
        const auto insert = [&db](int n) {
            db.exec("INSERT INTO relctl.events (env, operation, outcome) SELECT 'prod', 'renew', 'accepted' "
                    "FROM generate_series(1, " +
                    std::to_string(n) + ")");
        };
        pqxx::connection c(db.reviewerDsn());
        const auto start = [&](const std::string& gaps) {
            pqxx::read_transaction tx(c);
            json reply = json::parse(tx.exec1("SELECT relctl.events_after(NULL, 50" + gaps + ")")[0].c_str());
            reply.erase("snapshot");
            return reply;
        };
        QCOMPARE(start(""), start(", '{}'")); // an empty trail, perhaps the schema's own events
        insert(20);
        {
            // Three ids taken and never committed.
            pqxx::connection admin(db.adminDsn());
            pqxx::work tx(admin);
            tx.exec("INSERT INTO relctl.events (env, operation, outcome) SELECT 'prod', 'renew', 'accepted' "
                    "FROM generate_series(1, 3)");
            tx.abort();
        }
        insert(5);
        const json holes = start("");
        QCOMPARE(holes, start(", '{}'"));
        QCOMPARE(holes["missing"].size(), std::size_t(3));
        QCOMPARE(holes["complete"].get<bool>(), true);
        QCOMPARE(holes["last"].get<long long>(), db.count("SELECT max(id) FROM relctl.events"));
        // A run longer than can be listed: not complete, the same either way.
        db.exec("SELECT setval(pg_get_serial_sequence('relctl.events', 'id'), "
                "(SELECT max(id) FROM relctl.events) + 1500)");
        insert(1);
        // The window of 50 ids now starts inside the run: widen it to see both.
        const auto wide = [&](const std::string& gaps) {
            pqxx::read_transaction tx(c);
            json reply =
                json::parse(tx.exec1("SELECT relctl.events_after(NULL, 2000" + gaps + ")")[0].c_str());
            reply.erase("snapshot");
            return reply;
        };
        const json run = wide("");
        QCOMPARE(run, wide(", '{}'"));
        QCOMPARE(run["complete"].get<bool>(), false);
        QCOMPARE(run["missing"].size(), std::size_t(3));
        QCOMPARE(start(""), start(", '{}'"));
    }

    // relctl.events_after is any reviewer's to call with anything: bad input
    // is refused with nothing written, the rest answered, bounded.
    void eventsAfterIsSafeForAnyCaller()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        acquire(db, "prod", "job-1");
        const auto before = db.footprint();
        const std::string reviewer = db.reviewerDsn();
        QCOMPARE(sqlState(reviewer, "SELECT relctl.events_after(NULL, NULL)"), std::string("RC002"));
        QCOMPARE(sqlState(reviewer, "SELECT relctl.events_after(0, -1)"), std::string("RC002"));
        QCOMPARE(sqlState(reviewer, "SELECT relctl.events_after(0, 100001)"), std::string("RC002"));
        QCOMPARE(sqlState(reviewer, "SELECT relctl.events_after(0, 10, NULL, 'not a snapshot')"),
                 std::string("RC002"));
        QCOMPARE(sqlState(reviewer, "SELECT relctl.events_after(0, 10, NULL, '9:1:')"), std::string("RC002"));
        QCOMPARE(
            sqlState(reviewer, "SELECT relctl.events_after(0, 10, array_fill(1::bigint, ARRAY[100001]))"),
            std::string("RC002"));
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.events_after(0, 10, '{1}', NULL)"),
                 std::string("42501"));

        pqxx::connection c(reviewer);
        const auto ask = [&](const std::string& args) {
            pqxx::read_transaction tx(c);
            return json::parse(tx.exec1("SELECT relctl.events_after(" + args + ")")[0].c_str());
        };
        const long long last = db.count("SELECT max(id) FROM relctl.events");
        const json start = ask("NULL");
        QCOMPARE(start["last"].get<long long>(), last);
        QCOMPARE(start["missing"], json::array());
        QVERIFY(start["snapshot"].is_string());
        QVERIFY(start["settled"].is_null());
        // Every id up to the end, asked as gaps (with NULLs, negatives and
        // repeats), is found once; none is listed as missing.
        std::string gaps = "ARRAY[NULL, -1, -9223372036854775808, 9223372036854775807";
        for (long long id = 1; id <= last; ++id)
            gaps += ", " + std::to_string(id) + ", " + std::to_string(id);
        gaps += "]::bigint[]";
        const json all = ask(std::to_string(last) + ", 10, " + gaps + ", " +
                             sqlLiteral(start["snapshot"].get<std::string>()));
        QCOMPARE(all["found"].size(), static_cast<std::size_t>(last));
        QCOMPARE(all["envs"], db.json("SELECT jsonb_agg(DISTINCT coalesce(env, '')) FROM relctl.events"));
        QCOMPARE(all["settled"].get<bool>(), true);
        QCOMPARE(all["last"].get<long long>(), last);
        // Far below the trail: a run too long to list is said to be so.
        const json far = ask("-9223372036854775808, 1");
        QCOMPARE(far["complete"].get<bool>(), false);
        QCOMPARE(far["missing"], json::array());
        QCOMPARE(far["more"].get<bool>(), true);
        const json beyond = ask("9223372036854775807, 100000, array_fill(-5::bigint, ARRAY[100000]), '1:2:'");
        QCOMPARE(beyond["envs"], json::array());
        QCOMPARE(beyond["last"].get<long long>(), 9223372036854775807LL);
        QCOMPARE(beyond["complete"].get<bool>(), true);
        QCOMPARE(beyond["settled"].get<bool>(), true);
        // A reference naming a transaction that has not started yet never settles.
        QCOMPARE(ask("0, 1, NULL, '1:9223372036854775807:9223372036854775806'")["settled"].get<bool>(),
                 false);
        QCOMPARE(db.footprint(), before);
    }
};

QTEST_GUILESS_MAIN(TestEventFeed)
#include "test_eventfeed.moc"
