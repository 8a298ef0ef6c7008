// The trust boundary, second pass: attacks that combine functions. Each
// function holds on its own (test_security); these are what a login with a
// CI job's role (or no relctl role at all) can do with the queue, op ids,
// advisory locks and its own transaction. Every attack runs in sessions or
// processes of its own against a real PostgreSQL, as the attacker would.

#define RELCTL_TEST_NO_SHORT_NAME
#include "relctlargs.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QtTest>
#include <atomic>
#include <csignal>
#include <pqxx/pqxx>
#include <thread>

using nlohmann::json;

namespace {

const std::string kAttackerSecret = "attacker-secret-0123456789";

AcquiredLease acquire(const std::string& dsn, const std::string& env, const std::string& job, int generation,
                      const std::string& ttl = "60s", const std::string& opId = {})
{
    Args args = leaseAcquireArgs(env, job, generation);
    args.push_back("--ttl");
    args.push_back(ttl);
    if (!opId.empty()) {
        args.push_back("--op-id");
        args.push_back(opId);
    }
    return acquireLease(dsn, args);
}

json call(pqxx::connection& c, const std::string& sql)
{
    pqxx::nontransaction tx(c);
    return json::parse(tx.exec1(sql)[0].c_str());
}

// The SQLSTATE and message a statement fails with inside a transaction of
// the given isolation level, begun (and its snapshot taken) by the caller.
std::pair<std::string, std::string> failure(pqxx::nontransaction& tx, const std::string& sql)
{
    try {
        tx.exec("SAVEPOINT attempt");
        tx.exec(sql);
        tx.exec("RELEASE SAVEPOINT attempt");
        return {"", ""};
    } catch (const pqxx::sql_error& e) {
        tx.exec("ROLLBACK TO SAVEPOINT attempt");
        return {e.sqlstate(), e.what()};
    }
}

bool connectionEnded(pqxx::nontransaction& tx)
{
    try {
        tx.exec("SELECT 1");
        return false;
    } catch (const std::exception&) {
        return true;
    }
}

} // namespace

class TestAttacks final : public QObject
{
    Q_OBJECT

private slots:
    // Attack 1. Op ids are predictable ($CI_JOB_ID-acquire). The attacker
    // queues a candidate under the victim's op id with a secret of its own,
    // leaves the queue, and after the victim acquired under that op id asks
    // for its candidate's outcome: the op id's outcome was the victim's
    // grant, and came back with the victim's live lease id.
    void aCandidateNeverReceivesAnotherRequestsLease()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const AcquiredLease holder = acquire(db.jobDsn(), "prod", "holder", 1);
        pqxx::connection attacker(db.jobDsn());
        const json queued = call(
            attacker, "SELECT relctl.acquire('prod', 'victim', 'r2', 2, NULL, 'ci-42-acquire', '{}', true, " +
                          sqlLiteral(kAttackerSecret) + ")");
        QCOMPARE(queued["status"].get<std::string>(), std::string("queued"));
        const std::string candidate = std::to_string(queued["candidate"].get<long long>());
        call(attacker, "SELECT relctl.leave_queue(" + candidate + ", " + sqlLiteral(kAttackerSecret) + ")");
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "release"}, {{"RELCTL_LEASE", holder.handle}}).exitCode,
                 0);

        const AcquiredLease victim = acquire(db.jobDsn(), "prod", "victim", 2, "60s", "ci-42-acquire");
        const json stolen = call(attacker, "SELECT relctl.acquire_candidate(" + candidate + ", '{}', " +
                                               sqlLiteral(kAttackerSecret) + ")");
        QVERIFY2(stolen.dump().find(victim.id) == std::string::npos, stolen.dump().c_str());
        QVERIFY(stolen.value("status", std::string()) != "ok");
        // The victim's lease is the victim's: its publish goes through.
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"publish"}, {{"RELCTL_LEASE", victim.handle}}).exitCode, 0);
        QCOMPARE(db.scalar("SELECT job FROM relctl.manifests"), std::string("victim"));
    }

    // Attack 2. From a snapshot older than the decision's facts, the
    // functions read leases, candidates and rollbacks as they were: every
    // write function refuses any isolation level but READ COMMITTED before it
    // reads or writes anything.
    void everyWriteFunctionRefusesAnOlderSnapshot_data()
    {
        QTest::addColumn<QString>("level");
        QTest::newRow("repeatable read") << QStringLiteral("REPEATABLE READ");
        QTest::newRow("serializable") << QStringLiteral("SERIALIZABLE");
    }
    void everyWriteFunctionRefusesAnOlderSnapshot()
    {
        QFETCH(QString, level);
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const AcquiredLease l = acquire(db.jobDsn(), "prod", "job-1", 1);
        // Reads may run at any level (an export wants one snapshot); the
        // watch registration reads no table; everything else writes.
        const auto calls = db.rows(
            "SELECT p.proname, format('SELECT relctl.%I(%s)', p.proname, "
            "  coalesce((SELECT string_agg('NULL::' || format_type(t, NULL), ', ' ORDER BY o) "
            "            FROM unnest(p.proargtypes) WITH ORDINALITY a(t, o)), '')) "
            "FROM pg_proc p WHERE p.pronamespace = 'relctl'::regnamespace AND p.prosecdef "
            "AND p.provolatile = 'v' AND p.proname NOT IN ('watch', 'unwatch', 'console_audit_export_view') "
            "AND has_function_privilege('relctl_manager', p.oid, 'EXECUTE') ORDER BY 1");
        QVERIFY2(calls.size() >= 17, std::to_string(calls.size()).c_str());
        const auto before = db.footprint();
        pqxx::connection c(db.dsn());
        pqxx::nontransaction tx(c);
        for (const auto& row : calls) {
            tx.exec("BEGIN ISOLATION LEVEL " + level.toStdString());
            tx.exec("SELECT 1"); // the snapshot
            const auto [state, message] = failure(tx, row[1]);
            tx.exec("COMMIT");
            QVERIFY2(state == "RC002" && message.find("READ COMMITTED") != std::string::npos,
                     (row[0] + ": " + state + " " + message).c_str());
        }
        // And the specific attack: a publish under a lease revoked after the
        // snapshot was taken.
        tx.exec("BEGIN ISOLATION LEVEL " + level.toStdString());
        tx.exec("SELECT 1");
        QCOMPARE(
            relctlWithDsn(db.dsn(), {"lease", "revoke", "--env", "prod", "--by", "ops", "--reason", "bad"})
                .exitCode,
            0);
        const auto [state, message] = failure(tx, "SELECT relctl.publish('prod', " + l.token + ", '" + l.id +
                                                      "', '{\"image\":\"late\"}', NULL, '{}')");
        tx.exec("COMMIT");
        QCOMPARE(state, std::string("RC002"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 0LL);
        QCOMPARE(db.footprint().size(), before.size());
    }

    // Attack 2c: a live, renewing holder's lease seized from a snapshot taken
    // before its renewal, once the expiry that snapshot shows had passed.
    void aRenewedLeaseCannotBeSeizedFromAnOlderSnapshot()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const AcquiredLease holder = acquire(db.jobDsn(), "prod", "holder", 1, "1500ms");
        pqxx::connection c(db.jobDsn());
        pqxx::nontransaction tx(c);
        tx.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
        tx.exec("SELECT 1");
        QCOMPARE(
            relctlWithDsn(db.jobDsn(), {"lease", "renew", "--ttl", "60s"}, {{"RELCTL_LEASE", holder.handle}})
                .exitCode,
            0);
        QTest::qWait(1800);
        const auto [state, message] =
            failure(tx, "SELECT relctl.acquire('prod', 'thief', 'r2', 2, NULL, NULL, '{}', false, NULL)");
        tx.exec("COMMIT");
        QCOMPARE(state, std::string("RC002"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 1LL);
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "renew"}, {{"RELCTL_LEASE", holder.handle}}).exitCode,
                 0);
    }

    // Attack 3. A session that sets its own bounds to zero, locks the
    // environment with a protocol call and then sits in its transaction: the
    // next caller that needs the environment ends it once it has idled past
    // the protocol's bound (5 s), and the trail says who it was.
    void aSessionIdlingOnAnEnvironmentIsEnded()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        pqxx::connection wedge(db.jobDsn());
        pqxx::nontransaction w(wedge);
        w.exec(
            "SET idle_in_transaction_session_timeout = 0; SET lock_timeout = 0; SET statement_timeout = 0");
        w.exec("BEGIN");
        w.exec("SELECT relctl.renew('prod', 999, gen_random_uuid(), NULL, '{}')");
        QElapsedTimer timer;
        timer.start();
        RunResult after = relctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "prod", "--job", "j",
                                                      "--release", "r", "--generation", "1"});
        QVERIFY2(after.exitCode == 0, (std::to_string(after.exitCode) + " " + after.err).c_str());
        QVERIFY2(timer.elapsed() < 9000, std::to_string(timer.elapsed()).c_str());
        QVERIFY(connectionEnded(w));
        QCOMPARE(db.scalar("SELECT detail ->> 'login' FROM relctl.events WHERE operation = 'session-ended'"),
                 std::string("relctl_test_job"));
        QCOMPARE(db.scalar("SELECT detail ->> 'held' FROM relctl.events WHERE operation = 'session-ended'"),
                 std::string("environment prod"));
    }

    // Attack 3's cure must not end a session that holds the environment
    // legitimately. A caller's transaction that read pg_stat_activity before
    // it waits (as the queue's liveness check does) keeps that read as a
    // snapshot: the session that took the row since was still 'idle' in it,
    // and was ended at once although it held the row for a moment. A holder
    // is judged by its state as it is now.
    void aSessionThatJustTookTheEnvironmentIsNotEnded()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        pqxx::connection holder(db.jobDsn());
        pqxx::nontransaction h(holder);
        pqxx::connection caller(db.jobDsn());
        pqxx::nontransaction c(caller);
        c.exec("BEGIN");
        QVERIFY(c.exec1("SELECT count(*) FROM pg_stat_activity WHERE state = 'idle'")[0].as<long long>() >=
                1);
        h.exec("BEGIN");
        h.exec("SELECT relctl.renew('prod', 999, gen_random_uuid(), NULL, '{}')");
        std::string status;
        std::thread waiter([&] {
            status =
                json::parse(c.exec1("SELECT relctl.acquire('prod', 'j', 'r1', 1, NULL, NULL, '{}', false, "
                                    "NULL)")[0]
                                .c_str())
                    .value("status", std::string());
            c.exec("COMMIT");
        });
        QTest::qWait(1500);
        const bool holderAlive = !connectionEnded(h);
        if (holderAlive)
            h.exec("COMMIT");
        waiter.join();
        QVERIFY(holderAlive);
        QCOMPARE(status, std::string("ok"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'session-ended'"), 0LL);
    }

    // Attack 3, running: the same lock held by a statement that never ends
    // is ended once its transaction is older than the bound (15 s), and a
    // caller waits at most its own 10 s meanwhile (then: try again).
    void aSessionRunningOnAnEnvironmentIsEnded()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        std::atomic<bool> ended = false;
        std::thread wedge([&] {
            try {
                pqxx::connection c(db.jobDsn());
                pqxx::nontransaction(c).exec(
                    "SET lock_timeout = 0; SET statement_timeout = 0; "
                    "SELECT relctl.renew('prod', 999, gen_random_uuid(), NULL, '{}'), pg_sleep(3600)");
            } catch (const std::exception&) {
                ended = true;
            }
        });
        QTRY_VERIFY_WITH_TIMEOUT(db.count("SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                                          "'%pg_sleep(3600)%' AND wait_event = 'PgSleep'") == 1,
                                 5000);
        QElapsedTimer timer;
        timer.start();
        RunResult after;
        while (timer.elapsed() < 40000) {
            after = relctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "prod", "--job", "j",
                                                "--release", "r", "--generation", "1"});
            if (after.exitCode != 9)
                break;
        }
        QVERIFY2(after.exitCode == 0, (std::to_string(after.exitCode) + " " + after.err).c_str());
        QVERIFY2(timer.elapsed() < 25000, std::to_string(timer.elapsed()).c_str());
        wedge.join();
        QVERIFY(ended);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'session-ended' "
                          "AND (detail ->> 'held_ms')::bigint >= 15000"),
                 1LL);
    }

    // Attack 4. A job queues and sits on its connection as the queue's head
    // (or its waiter is stopped): after the lease expired nobody released,
    // the head was the only one that could be granted, and a waiter behind
    // it gave up. The head is now granted on its behalf by the next caller,
    // and its lease runs out like any other.
    void aHeadThatNeverClaimsDoesNotWedgeTheQueue()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        acquire(db.jobDsn(), "prod", "holder", 1, "1s");
        pqxx::connection sitter(db.jobDsn());
        const json queued =
            call(sitter, "SELECT relctl.acquire('prod', 'sitter', 'r2', 2, 1000, 'sitter-acquire', "
                         "'{}', true, " +
                             sqlLiteral(kAttackerSecret) + ")");
        QCOMPARE(queued["status"].get<std::string>(), std::string("queued"));
        RunResult waiter = relctlWithDsn(
            db.jobDsn(), {"--json", "lease", "acquire", "--env", "prod", "--job", "waiter", "--release", "r3",
                          "--generation", "3", "--ttl", "60s", "--wait", "25s", "--op-id", "waiter-acquire"});
        QVERIFY2(waiter.exitCode == 0, (std::to_string(waiter.exitCode) + " " + waiter.err).c_str());
        QVERIFY2(waiter.elapsedMs < 10000, std::to_string(waiter.elapsedMs).c_str());
        QCOMPARE(waiter.json()["job"].get<std::string>(), std::string("waiter"));
        QCOMPARE(db.scalar("SELECT state FROM relctl.candidates WHERE job = 'sitter'"),
                 std::string("granted"));
    }

    // Attack 4, liveness: a waiter's queue lock key is visible in pg_locks;
    // after the waiter died, a login with no relctl role took it over, and
    // the dead candidate looked alive. Liveness is the queuing session's
    // pid and start time, which nobody can take over.
    void aDeadWaitersLockTakenOverDoesNotKeepItAlive()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const AcquiredLease holder = acquire(db.jobDsn(), "prod", "holder", 1);
        auto waiter =
            startRelctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "prod", "--job", "dead",
                                             "--release", "r2", "--generation", "2", "--wait", "60s"});
        QTRY_COMPARE_WITH_TIMEOUT(db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"),
                                  1LL, 10000);
        const std::string key = db.scalar("SELECT lock_key FROM relctl.candidates");
        ::kill(static_cast<pid_t>(waiter->processId()), SIGKILL);
        finish(*waiter, 10000);
        pqxx::connection squatter(db.loginDsn("squatter", {}));
        QTRY_VERIFY_WITH_TIMEOUT(pqxx::nontransaction(squatter)
                                     .exec1("SELECT pg_try_advisory_lock(1380273219, " + key + ")")[0]
                                     .as<bool>(),
                                 10000);
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "release"}, {{"RELCTL_LEASE", holder.handle}}).exitCode,
                 0);
        const json shown = relctlWithDsn(db.jobDsn(), {"--json", "env", "show", "prod"}).json();
        QVERIFY2(shown["queue"].empty(), shown.dump().c_str());
        RunResult next = relctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "prod", "--job", "next",
                                                     "--release", "r3", "--generation", "3"});
        QVERIFY2(next.exitCode == 0, next.err.c_str());
    }

    // Attack 4, the manager's way out: a candidate taken out of the queue
    // with a reason, recorded; its waiter is told so.
    void aManagerDropsAQueuedCandidate()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        acquire(db.jobDsn(), "prod", "holder", 1);
        auto waiter = startRelctlWithDsn(db.jobDsn(),
                                         {"--json", "lease", "acquire", "--env", "prod", "--job", "unwanted",
                                          "--release", "r2", "--generation", "2", "--wait", "60s"});
        QTRY_COMPARE_WITH_TIMEOUT(db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"),
                                  1LL, 10000);
        const std::string id = db.scalar("SELECT id FROM relctl.candidates");
        RunResult drop =
            relctlWithDsn(db.dsn(), {"queue", "drop", id, "--by", "ops", "--reason", "wrong artifact"});
        QVERIFY2(drop.exitCode == 0, drop.err.c_str());
        QVERIFY2(drop.out.find("dropped candidate " + id + " (job unwanted") != std::string::npos,
                 drop.out.c_str());
        QCOMPARE(relctlWithDsn(db.dsn(), {"queue", "drop", id, "--by", "ops", "--reason", "again"}).exitCode,
                 2);
        RunResult dropped = finish(*waiter, 30000);
        QCOMPARE(dropped.exitCode, 4);
        QVERIFY2(dropped.out.find("CANDIDATE_DROPPED") != std::string::npos, dropped.out.c_str());
        QCOMPARE(db.scalar("SELECT actor || ': ' || (detail ->> 'reason') FROM relctl.events "
                           "WHERE operation = 'queue-drop'"),
                 std::string("ops: wrong artifact"));
        // A job may not drop anyone.
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.queue_drop(" + id + ", 'x', 'y', '{}')"),
                 std::string("42501"));
    }

    // Attack 5. Any login may take the advisory lock of a predictable op id's
    // key and hold it outside any transaction: the job's acquire then failed
    // after 10 s. The squatter is ended and recorded; the acquire goes on.
    void aSquattedOperationIdLockIsEnded()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        pqxx::connection squatter(db.loginDsn("squatter", {}));
        pqxx::nontransaction s(squatter);
        s.exec("SELECT pg_advisory_lock(hashtextextended('relctl.op:ci-7-acquire', 0))");
        RunResult r =
            relctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "prod", "--job", "ci-7", "--release",
                                        "r1", "--generation", "1", "--op-id", "ci-7-acquire"});
        QVERIFY2(r.exitCode == 0, (std::to_string(r.exitCode) + " " + r.err).c_str());
        QVERIFY2(r.elapsedMs < 5000, std::to_string(r.elapsedMs).c_str());
        QVERIFY(connectionEnded(s));
        QCOMPARE(db.scalar("SELECT detail ->> 'login' FROM relctl.events WHERE operation = 'session-ended'"),
                 std::string("relctl_test_squatter"));
    }

    // Notifications: any login may NOTIFY a queued candidate's channel, and
    // each notification made the waiter ask again, taking the environment's
    // row (3,000 made 52 extra calls). Asks that follow notifications are
    // budgeted (3 at once, then 4 a second); the waiter's timers are not.
    void notificationsFromAnyLoginAreBudgeted()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        // Counts the calls of every PL/pgSQL function in sessions that start from now.
        db.exec("ALTER DATABASE \"" + db.name() + "\" SET track_functions = 'pl'");
        const AcquiredLease holder = acquire(db.jobDsn(), "prod", "holder", 1);
        auto waiter =
            startRelctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "prod", "--job", "waiter",
                                             "--release", "r2", "--generation", "2", "--wait", "6s"});
        QTRY_COMPARE_WITH_TIMEOUT(db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"),
                                  1LL, 10000);
        const std::string channel = "relctl_c" + db.scalar("SELECT id FROM relctl.candidates");
        pqxx::connection spammer(db.loginDsn("spammer", {}));
        QElapsedTimer timer;
        timer.start();
        for (int batch = 0; batch < 60; ++batch) {
            pqxx::nontransaction s(spammer);
            for (int n = 0; n < 50; ++n)
                s.exec("NOTIFY " + channel);
            QTest::qWait(60);
        }
        const qint64 spammedMs = timer.elapsed();
        const RunResult r = finish(*waiter, 20000);
        QCOMPARE(r.exitCode, 3); // still busy when --wait ran out
        long long calls = 0;
        QTRY_VERIFY_WITH_TIMEOUT(
            (calls = db.count("SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions "
                              "WHERE schemaname = 'relctl' AND funcname = 'acquire_candidate'")) > 0,
            5000);
        // 3 at once, then 4 a second, and the safety net's one a second, over the 6 s wait.
        const long long bound = 3 + 6 * 4 + 7;
        qInfo("%lld asks after %lld ms of notifications (bound %lld)", calls, spammedMs, bound);
        QVERIFY2(calls <= bound, (std::to_string(calls) + " calls, bound " + std::to_string(bound) +
                                  " over " + std::to_string(spammedMs) + " ms of notifications")
                                     .c_str());
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "release"}, {{"RELCTL_LEASE", holder.handle}}).exitCode,
                 0);
    }

    // The watch key: a waiter registers with a shared advisory lock, so that
    // writers announce what it waits for. Any login could take the key
    // exclusively by hand and keep every waiter from registering. Such a
    // holder is ended like an op id's squatter, recorded, and the waiter
    // registers (one lock_timeout, 2 s, later).
    void aSquattedWatchKeyIsEnded()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const AcquiredLease holder = acquire(db.jobDsn(), "prod", "holder", 1);
        pqxx::connection squatter(db.loginDsn("squatter", {}));
        pqxx::nontransaction s(squatter);
        s.exec("SELECT pg_advisory_lock(1380273239, hashtext('prod'))");
        auto waiter =
            startRelctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "prod", "--job", "waiter",
                                             "--release", "r2", "--generation", "2", "--wait", "30s"});
        QTRY_COMPARE_WITH_TIMEOUT(
            db.count("SELECT count(*) FROM relctl.events WHERE operation = 'session-ended'"), 1LL, 10000);
        QVERIFY(connectionEnded(s));
        QCOMPARE(db.scalar("SELECT (detail ->> 'login') || ': ' || (detail ->> 'held') FROM relctl.events "
                           "WHERE operation = 'session-ended'"),
                 std::string("relctl_test_squatter: the watch key of prod"));
        QTRY_COMPARE_WITH_TIMEOUT(db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"),
                                  1LL, 10000);
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "release"}, {{"RELCTL_LEASE", holder.handle}}).exitCode,
                 0);
        const RunResult r = finish(*waiter, 20000);
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        QVERIFY2(r.err.find("cannot watch") == std::string::npos, r.err.c_str());
    }

    // A reused op id is refused and recorded, and the refusal does not show
    // what the op id's first request was (another job's release, say).
    void anOpIdConflictIsRecordedWithoutTheStoredRequest()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        relctlWithDsn(db.dsn(), {"env", "add", "test"});
        acquire(db.jobDsn(), "prod", "first-job", 1, "60s", "shared-op");
        RunResult again =
            relctlWithDsn(db.jobDsn(), {"--json", "lease", "acquire", "--env", "test", "--job", "other",
                                        "--release", "x9", "--generation", "9", "--op-id", "shared-op"});
        QCOMPARE(again.exitCode, 8);
        QVERIFY2(again.out.find("first-job") == std::string::npos &&
                     again.err.find("first-job") == std::string::npos,
                 (again.out + again.err).c_str());
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.events WHERE reason = 'OP_ID_CONFLICT' AND env = 'test' "
                     "AND db_user = 'relctl_test_job'"),
            1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE env = 'test'"), 0LL);
    }

    // The login that queued a supersession's winner may not approve skipping
    // the others for it, as with promotions.
    void theWinnersLoginMayNotApproveItsSupersession()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        relctlWithDsn(db.dsn(), {"env", "set", "prod", "--policy", "newest", "--supersede", "approval"});
        acquire(db.dsn(), "prod", "holder", 1);
        auto older = startRelctlWithDsn(db.dsn(), {"lease", "acquire", "--env", "prod", "--job", "older",
                                                   "--release", "r2", "--generation", "2", "--wait", "60s"});
        QTRY_COMPARE_WITH_TIMEOUT(db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"),
                                  1LL, 10000);
        auto newer = startRelctlWithDsn(db.dsn(), {"lease", "acquire", "--env", "prod", "--job", "newer",
                                                   "--release", "r3", "--generation", "3", "--wait", "60s"});
        QTRY_COMPARE_WITH_TIMEOUT(
            db.count("SELECT count(*) FROM relctl.supersessions WHERE state = 'pending'"), 1LL, 10000);
        const std::string request = db.scalar("SELECT id FROM relctl.supersessions");
        pqxx::connection winnerLogin(db.dsn());
        const json refused =
            call(winnerLogin, "SELECT relctl.decide(" + request + ", true, 'me', NULL, '{}')");
        QCOMPARE(refused["reason"].get<std::string>(), std::string("SELF_APPROVAL"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'SELF_APPROVAL' "
                          "AND db_user = 'relctl_test_manager'"),
                 1LL);
        pqxx::connection other(db.loginDsn("approver"));
        QCOMPARE(
            call(other, "SELECT relctl.decide(" + request + ", true, 'someone else', NULL, '{}')")["status"]
                .get<std::string>(),
            std::string("ok"));
        older->kill();
        newer->kill();
        finish(*older, 5000);
        finish(*newer, 5000);
    }

    // Floods: one job session queued thousands of candidates and every read
    // of the queue slowed down quadratically. A cap refuses the next one,
    // recorded.
    void theQueueIsCapped()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        acquire(db.jobDsn(), "prod", "holder", 1);
        pqxx::connection flood(db.jobDsn());
        pqxx::nontransaction f(flood);
        f.exec("SELECT relctl.acquire('prod', 'f' || g, 'r', g + 1, NULL, 'flood-' || g, '{}', true, "
               "'flood-secret-0123456789-' || g) FROM generate_series(1, 1000) g");
        QCOMPARE(db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"), 1000LL);
        const json full =
            json::parse(f.exec1("SELECT relctl.acquire('prod', 'f', 'r', 5000, NULL, 'flood-x', '{}', "
                                "true, 'flood-secret-0123456789-x')")[0]
                            .c_str());
        QCOMPARE(full["reason"].get<std::string>(), std::string("QUEUE_FULL"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'QUEUE_FULL'"), 1LL);
        RunResult shown = relctlWithDsn(db.jobDsn(), {"--json", "env", "show", "prod"});
        QCOMPARE(shown.exitCode, 0);
        QCOMPARE(shown.json()["queue"].size(), std::size_t(1000));
        QVERIFY2(shown.elapsedMs < 3000, std::to_string(shown.elapsedMs).c_str());
    }

    // Floods: a job login's refused calls all went into the append-only
    // trail, at 10,700 refused renews a second. A login's own refusals are
    // recorded up to a budget (100 per environment, 1,000 in all, over 10 s);
    // beyond it each call is answered the same, and counted, and the count
    // is recorded as one 'refusals-unrecorded' event (by environment and
    // reason) with the login's next recorded refusal. Refusals of other
    // logins are not affected.
    void aLoginsRefusalsCannotFloodTheTrail()
    {
        TestDatabase db;
        for (const char* env : {"prod", "test"})
            relctlWithDsn(db.dsn(), {"env", "add", env});
        const AcquiredLease holder = acquire(db.jobDsn(), "prod", "holder", 1);
        pqxx::connection flood(db.jobDsn());
        pqxx::nontransaction f(flood);
        QElapsedTimer timer;
        timer.start();
        const long long refused = f.exec1("SELECT count(*) FILTER (WHERE r ->> 'status' = 'refused') FROM "
                                          "(SELECT relctl.renew('prod', " +
                                          holder.token +
                                          ", gen_random_uuid(), NULL, '{}') AS r "
                                          "FROM generate_series(1, 5000)) x")[0]
                                      .as<long long>();
        qInfo("5,000 refused renews in %lld ms", timer.elapsed());
        QCOMPARE(refused, 5000LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'BAD_LEASE_ID'"), 100LL);
        QCOMPARE(
            db.count("SELECT refusals FROM relctl.unrecorded_refusals WHERE db_user = 'relctl_test_job'"),
            4900LL);
        // Another login's refusal on the same environment is recorded as always.
        QCOMPARE(
            relctlWithDsn(db.dsn(), {"lease", "renew"},
                          {{"RELCTL_LEASE", "prod:" + holder.token + ":3f1c2a6e9b7d4c1e8a2b5d6e7f809a1b"}})
                .exitCode,
            7);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'BAD_LEASE_ID'"), 101LL);
        // The job login's next refusal that has room (another environment)
        // records the count first.
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.renew('test', 1, gen_random_uuid(), NULL, '{}')"),
                 std::string());
        QCOMPARE(
            db.scalar(
                "SELECT (detail ->> 'refusals') || ' ' || (detail #>> '{counts,prod,BAD_LEASE_ID}') || ' ' "
                "|| db_user FROM relctl.events WHERE operation = 'refusals-unrecorded'"),
            std::string("4900 4900 relctl_test_job"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.unrecorded_refusals"), 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'renew' AND env = 'test'"),
                 1LL);
        // The holder's own lease is untouched.
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "renew"}, {{"RELCTL_LEASE", holder.handle}}).exitCode,
                 0);
    }

    // Floods: a job login opened 2,001 promotion requests in 1.7 s. Open
    // requests are capped per environment (100) and per login (1,000); the
    // next is refused PROMOTIONS_FULL (busy, exit 3) and recorded, whether it
    // comes from `promote request` or from an acquire on a gated
    // environment; a request the environment's bar has passed stops counting.
    void openPromotionRequestsAreCapped()
    {
        TestDatabase db;
        for (int e = 0; e <= 10; ++e) {
            const std::string env = "e" + std::to_string(e);
            relctlWithDsn(db.dsn(), {"env", "add", env});
            QCOMPARE(relctlWithDsn(db.dsn(), {"env", "set", env, "--approvals", "1"}).exitCode, 0);
        }
        pqxx::connection flood(db.jobDsn());
        pqxx::nontransaction f(flood);
        f.exec("SELECT relctl.promote_request('e0', 'r' || g, g, 'ci', NULL, '{}') FROM generate_series(1, "
               "100) g");
        QCOMPARE(db.count("SELECT count(*) FROM relctl.promotions WHERE state = 'open'"), 100LL);
        const json full = json::parse(
            f.exec1("SELECT relctl.promote_request('e0', 'r', 500, 'ci', NULL, '{}')")[0].c_str());
        QCOMPARE(full["reason"].get<std::string>(), std::string("PROMOTIONS_FULL"));
        QVERIFY2(full["message"].get<std::string>().find("100 promotion requests are open on e0") !=
                     std::string::npos,
                 full.dump().c_str());
        // An acquire of a new release asks for a request too: refused the same way, as busy.
        RunResult acquired = relctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "e0", "--job", "j",
                                                         "--release", "r501", "--generation", "501"});
        QCOMPARE(acquired.exitCode, 3);
        QVERIFY2(acquired.err.find("PROMOTIONS_FULL") != std::string::npos, acquired.err.c_str());
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'PROMOTIONS_FULL'"), 2LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.promotions"), 100LL);

        // Per login: nine more environments take it to 1,000; the eleventh is refused.
        f.exec("SELECT relctl.promote_request('e' || e, 'r' || g, g, 'ci', NULL, '{}') "
               "FROM generate_series(1, 9) e, generate_series(1, 100) g");
        QCOMPARE(db.count("SELECT count(*) FROM relctl.promotions WHERE state = 'open'"), 1000LL);
        const json login =
            json::parse(f.exec1("SELECT relctl.promote_request('e10', 'r', 1, 'ci', NULL, '{}')")[0].c_str());
        QCOMPARE(login["reason"].get<std::string>(), std::string("PROMOTIONS_FULL"));
        QVERIFY2(login["message"].get<std::string>().find("has 1000 promotion requests open") !=
                     std::string::npos,
                 login.dump().c_str());
        // Another login still may.
        QCOMPARE(relctlWithDsn(db.dsn(), {"promote", "request", "--env", "e10", "--release", "r",
                                          "--generation", "1", "--by", "ops"})
                     .exitCode,
                 0);

        // Once e0's bar passes its requests, they no longer count.
        QCOMPARE(relctlWithDsn(db.dsn(), {"env", "set", "e0", "--approvals", "0"}).exitCode, 0);
        RunResult high = relctlWithDsn(db.jobDsn(), {"run", "--env", "e0", "--job", "m", "--release", "r1000",
                                                     "--generation", "1000", "--", "true"});
        QVERIFY2(high.exitCode == 0, high.err.c_str());
        QCOMPARE(relctlWithDsn(db.dsn(), {"env", "set", "e0", "--approvals", "1"}).exitCode, 0);
        RunResult again = relctlWithDsn(db.jobDsn(), {"promote", "request", "--env", "e0", "--release",
                                                      "r1001", "--generation", "1001", "--by", "ci"});
        QVERIFY2(again.exitCode == 0, again.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestAttacks)
#include "test_attacks.moc"
