// The waiting queue and its policies, supersession approvals, revoke, dispatch
// freeze and serialization rollout: every job a separate relctl process, the
// waiters really blocked in `lease acquire --wait` while the test acts.

#include "relctlargs.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QtTest>
#include <csignal>
#include <pqxx/pqxx>
#include <thread>

using nlohmann::json;

namespace {

// A candidate waiting in `relctl --json lease acquire --wait`.
struct Waiter
{
    std::string job;
    std::unique_ptr<QProcess> process;
};

// What every waiter here sends: `lease acquire --wait` under the op id <job>-acquire.
Args waitArgs(const std::string& env, const std::string& job, int generation,
              const std::string& patience = "60s")
{
    Args args = leaseAcquireArgs(env, job, generation);
    args.insert(args.end(), {"--wait", patience, "--op-id", job + "-acquire"});
    return args;
}

Waiter wait(const TestDatabase& db, const std::string& env, const std::string& job, int generation,
            const std::string& patience = "60s")
{
    return {job, startRelctl(db, waitArgs(env, job, generation, patience))};
}

// Polls until the environment shows `count` live queued candidates.
void awaitQueueLength(const TestDatabase& db, const std::string& env, std::size_t count)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 20000) {
        json shown = relctl(db, {"--json", "env", "show", env}).json();
        if (shown["queue"].size() == count)
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    qFatal("the queue of %s never reached %zu candidates", env.c_str(), count);
}

// A waiter of the CI jobs' login, queued behind the holder and then stopped
// (SIGSTOP): it cannot ask anything until resumed, so whatever happens to
// its candidate meanwhile is done by other sessions.
Waiter stoppedJobWaiter(const TestDatabase& db, const std::string& env, const std::string& job,
                        int generation, std::size_t queueLength)
{
    Waiter w{job, startRelctlWithDsn(db.jobDsn(), waitArgs(env, job, generation))};
    awaitQueueLength(db, env, queueLength);
    if (::kill(static_cast<pid_t>(w.process->processId()), SIGSTOP) != 0)
        qFatal("cannot stop the waiter %s", job.c_str());
    return w;
}

void resume(Waiter& w)
{
    if (::kill(static_cast<pid_t>(w.process->processId()), SIGCONT) != 0)
        qFatal("cannot resume the waiter %s", w.job.c_str());
}

bool finishedWithin(QProcess& p, int ms)
{
    return p.state() == QProcess::NotRunning || p.waitForFinished(ms);
}

std::string holder(const TestDatabase& db, const std::string& env)
{
    json lease = relctl(db, {"--json", "lease", "show", "--env", env}).json()["lease"];
    return lease.is_null() ? std::string("-") : lease["job"].get<std::string>();
}

// ttl: the lease's, when not the environment's default.
std::string acquire(const TestDatabase& db, const std::string& env, const std::string& job, int generation,
                    const std::string& ttl = {})
{
    Args args{"lease",        "acquire",
              "--env",        env,
              "--job",        job,
              "--release",    "r" + std::to_string(generation),
              "--generation", std::to_string(generation)};
    if (!ttl.empty())
        args.insert(args.end(), {"--ttl", ttl});
    RunResult r = relctl(db, args);
    if (r.exitCode != 0)
        qFatal("acquire %s failed (%d): %s", job.c_str(), r.exitCode, r.err.c_str());
    return r.line();
}

// The handle a granted waiter printed.
std::string granted(Waiter& w)
{
    RunResult r = finish(*w.process, 30000);
    if (r.exitCode != 0)
        qFatal("waiter %s exited %d: %s", w.job.c_str(), r.exitCode, r.err.c_str());
    return r.json()["handle"].get<std::string>();
}

} // namespace

class TestQueue final : public QObject
{
    Q_OBJECT

private slots:
    void orderedServesTheLowestGenerationFirst()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h = acquire(db, "prod", "holder", 1);
        std::vector<Waiter> waiters;
        for (int g : {4, 2, 3}) {
            waiters.push_back(wait(db, "prod", "job-" + std::to_string(g), g));
            awaitQueueLength(db, "prod", waiters.size());
        }
        // A job that does not wait cannot jump the queue.
        RunResult direct = relctl(db, {"lease", "acquire", "--env", "prod", "--job", "direct", "--release",
                                       "r9", "--generation", "9"});
        QCOMPARE(direct.exitCode, 3);

        for (int expected : {2, 3, 4}) {
            QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
            Waiter& w = waiters[expected == 4 ? 0 : expected == 2 ? 1 : 2];
            h = granted(w);
            QCOMPARE(holder(db, "prod"), "job-" + std::to_string(expected));
        }
        QCOMPARE(db.scalar("SELECT string_agg(job, ',' ORDER BY token) FROM relctl.leases"),
                 std::string("holder,job-2,job-3,job-4"));
    }

    void newestWithAutoSupersedesLowerWaiters()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "web"});
        QCOMPARE(relctl(db, {"env", "set", "web", "--policy", "newest", "--supersede", "auto"}).exitCode, 0);
        std::string h = acquire(db, "web", "holder", 1);
        Waiter w2 = wait(db, "web", "job-2", 2);
        awaitQueueLength(db, "web", 1);
        Waiter w4 = wait(db, "web", "job-4", 4);
        // job-2 is skipped at once, while the holder still runs.
        QVERIFY(finishedWithin(*w2.process, 10000));
        RunResult r2 = finish(*w2.process);
        QCOMPARE(r2.exitCode, 4);
        QCOMPARE(r2.json()["error"].get<std::string>(), std::string("SUPERSEDED"));
        QCOMPARE(r2.json()["superseded_by"]["job"].get<std::string>(), std::string("job-4"));
        Waiter w3 = wait(db, "web", "job-3", 3);
        RunResult r3 = finish(*w3.process, 10000);
        QCOMPARE(r3.exitCode, 4);

        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        granted(w4);
        QCOMPARE(holder(db, "web"), std::string("job-4"));
        QCOMPARE(
            db.count(
                "SELECT count(*) FROM relctl.events WHERE reason = 'SUPERSEDED' AND operation = 'acquire' "
                "AND job IN ('job-2', 'job-3')"),
            2LL);
    }

    void newestWithApprovalWaitsForTheReleaseManager()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "web"});
        relctl(db, {"env", "set", "web", "--policy", "newest", "--supersede", "approval"});
        std::string h = acquire(db, "web", "holder", 1);
        Waiter w2 = wait(db, "web", "job-2", 2);
        awaitQueueLength(db, "web", 1);
        Waiter w3 = wait(db, "web", "job-3", 3);
        awaitQueueLength(db, "web", 2);
        Waiter w4 = wait(db, "web", "job-4", 4);
        awaitQueueLength(db, "web", 3);

        json pending = relctl(db, {"--json", "approvals", "list", "--env", "web"}).json()["approvals"];
        QCOMPARE(pending.size(), std::size_t(1));
        QCOMPARE(pending[0]["winner"]["job"].get<std::string>(), std::string("job-4"));
        QCOMPARE(pending[0]["skipped"].size(), std::size_t(2));

        // Unapproved, the environment keeps serving in ordered order.
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        h = granted(w2);
        QCOMPARE(holder(db, "web"), std::string("job-2"));

        // job-2 left the queue: the request is renewed naming only job-3.
        pending = relctl(db, {"--json", "approvals", "list", "--env", "web"}).json()["approvals"];
        QCOMPARE(pending.size(), std::size_t(1));
        QCOMPARE(pending[0]["skipped"].size(), std::size_t(1));
        QCOMPARE(pending[0]["skipped"][0]["job"].get<std::string>(), std::string("job-3"));
        const std::string id = std::to_string(pending[0]["id"].get<long long>());

        RunResult approved =
            // A manager's own login: the one that queued the winner may not approve it.
            relctlWithDsn(db.loginDsn("alice"),
                          {"--json", "approve", id, "--by", "alice", "--reason", "hotfix first"});
        QCOMPARE(approved.exitCode, 0);
        QCOMPARE(approved.json()["state"].get<std::string>(), std::string("approved"));
        RunResult r3 = finish(*w3.process, 10000);
        QCOMPARE(r3.exitCode, 4);
        QCOMPARE(r3.json()["error"].get<std::string>(), std::string("SUPERSEDED"));
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        granted(w4);
        QCOMPARE(holder(db, "web"), std::string("job-4"));

        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.events WHERE operation = 'approve' AND actor = 'alice' "
                     "AND detail->>'reason' = 'hotfix first' AND job = 'job-4'"),
            1LL);
        QCOMPARE(relctl(db, {"approve", id, "--by", "alice"}).exitCode, 2); // no longer pending

        // job-3's trace names the candidate that won and the approval that
        // let it, not job-2, which merely held the lease at that moment.
        const json cause = relctl(db, {"--json", "trace", "--job", "job-3"}).json()["refusals"][0]["cause"];
        QCOMPARE(cause["kind"], json("superseded"));
        QCOMPARE(cause["job"], json("job-4"));
        QCOMPARE(cause["generation"], json(4));
        QCOMPARE(std::to_string(cause["approval"].get<long long>()), id);
        QCOMPARE(cause["by"], json("alice"));
        QCOMPARE(cause["reason"], json("hotfix first"));
        const std::string plain = relctl(db, {"trace", "--job", "job-3"}).out;
        QVERIFY2(plain.find("skipped for job-4 (r4, generation 4), which approval #" + id +
                            " by alice let go first: hotfix first") != std::string::npos,
                 plain.c_str());
    }

    void denialKeepsTheQueueInOrder()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "web"});
        relctl(db, {"env", "set", "web", "--policy", "newest", "--supersede", "approval"});
        std::string h = acquire(db, "web", "holder", 1);
        std::vector<Waiter> waiters;
        for (int g : {2, 3, 4}) {
            waiters.push_back(wait(db, "web", "job-" + std::to_string(g), g));
            awaitQueueLength(db, "web", waiters.size());
        }
        json pending = relctl(db, {"--json", "approvals", "list"}).json()["approvals"];
        QCOMPARE(pending.size(), std::size_t(1));
        const std::string id = std::to_string(pending[0]["id"].get<long long>());
        QCOMPARE(relctl(db, {"deny", id, "--by", "bob"}).exitCode, 2); // a denial needs a reason
        QCOMPARE(relctl(db, {"deny", id, "--by", "bob", "--reason", "every migration must run"}).exitCode, 0);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
            h = granted(waiters[static_cast<std::size_t>(i)]);
            QCOMPARE(holder(db, "web"), "job-" + std::to_string(i + 2));
            // Denied means denied: no new request for the same winner.
            QCOMPARE(relctl(db, {"--json", "approvals", "list"}).json()["approvals"].size(), std::size_t(0));
        }
        json all = relctl(db, {"--json", "approvals", "list", "--all"}).json()["approvals"];
        auto denied = std::find_if(all.begin(), all.end(), [&](const json& a) {
            return std::to_string(a["id"].get<long long>()) == id;
        });
        QVERIFY(denied != all.end());
        QCOMPARE((*denied)["state"].get<std::string>(), std::string("denied"));
        QCOMPARE((*denied)["decided_by"].get<std::string>(), std::string("bob"));
        QCOMPARE((*denied)["reason"].get<std::string>(), std::string("every migration must run"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'deny' AND actor = 'bob'"),
                 1LL);
    }

    void waitRunsOutAndTheCandidateLeaves()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        acquire(db, "prod", "holder", 1);
        QElapsedTimer timer;
        timer.start();
        RunResult r = relctl(db, {"--json", "lease", "acquire", "--env", "prod", "--job", "impatient",
                                  "--release", "r2", "--generation", "2", "--wait", "1s"});
        QCOMPARE(r.exitCode, 3);
        QCOMPARE(r.json()["error"].get<std::string>(), std::string("busy"));
        QVERIFY(timer.elapsed() >= 1000);
        QCOMPARE(db.scalar("SELECT state FROM relctl.candidates WHERE job = 'impatient'"),
                 std::string("timeout"));
        QCOMPARE(relctl(db, {"--json", "env", "show", "prod"}).json()["queue"].size(), std::size_t(0));
    }

    void aWaiterWhoseProcessDiesLeavesTheQueue()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h = acquire(db, "prod", "holder", 1);
        Waiter doomed = wait(db, "prod", "doomed", 2);
        awaitQueueLength(db, "prod", 1);
        Waiter next = wait(db, "prod", "next", 3);
        awaitQueueLength(db, "prod", 2);
        doomed.process->kill(); // SIGKILL: no chance to clean up; its session ends
        doomed.process->waitForFinished();
        awaitQueueLength(db, "prod", 1);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        granted(next);
        QCOMPARE(holder(db, "prod"), std::string("next"));
        QCOMPARE(db.scalar("SELECT state FROM relctl.candidates WHERE job = 'doomed'"), std::string("left"));
    }

    void aWaiterThatBecameStaleIsRefused()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h = acquire(db, "prod", "holder", 5);
        Waiter old = wait(db, "prod", "old", 3);
        awaitQueueLength(db, "prod", 1);
        QCOMPARE(relctl(db, {"publish", "--lease", h}).exitCode, 0); // generation 5 is now current
        RunResult r = finish(*old.process, 10000);
        QCOMPARE(r.exitCode, 4);
        QCOMPARE(r.json()["error"].get<std::string>(), std::string("STALE_GENERATION"));
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.events WHERE job = 'old' AND reason = 'STALE_GENERATION'"),
            1LL);
        // Its op id remembers the outcome: a retry is answered, not queued again.
        RunResult retry =
            relctl(db, {"--json", "lease", "acquire", "--env", "prod", "--job", "old", "--release", "r3",
                        "--generation", "3", "--wait", "60s", "--op-id", "old-acquire"});
        QCOMPARE(retry.exitCode, 4);
        QCOMPARE(retry.json()["replayed"].get<bool>(), true);
    }

    // A release hands the lease to the next candidate in its own
    // transaction. The waiter's process is stopped, so it cannot ask: its
    // lease is live the moment the release returns, recorded under its job,
    // its op id and its own login (not the releaser's). Resumed, the waiter
    // reads the lease it was given and can use it.
    void aReleaseHandsTheLeaseToTheNextWaiter()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string first = acquire(db, "prod", "first", 1);
        Waiter next = stoppedJobWaiter(db, "prod", "next", 2, 1);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", first}).exitCode, 0);

        QCOMPARE(holder(db, "prod"), std::string("next"));
        QCOMPARE(db.scalar("SELECT state FROM relctl.candidates WHERE job = 'next'"), std::string("granted"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases n JOIN relctl.leases p ON p.env = n.env "
                          "WHERE n.job = 'next' AND p.job = 'first' AND n.acquired_at >= p.ended_at "
                          "AND n.token = p.token + 1"),
                 1LL);
        const auto grant = db.rows("SELECT db_user, op_id, detail->>'handed_over_by', host IS NOT NULL "
                                   "FROM relctl.events WHERE operation = 'acquire' AND job = 'next'");
        QCOMPARE(grant.size(), std::size_t{1});
        QCOMPARE(grant[0], (std::vector<std::string>{"relctl_test_job", "next-acquire", "release", "t"}));
        QVERIFY(
            db.scalar("SELECT db_user FROM relctl.events WHERE operation = 'release' AND job = 'first'") !=
            "relctl_test_job");

        resume(next);
        RunResult r = finish(*next.process, 30000);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.json()["job"].get<std::string>(), std::string("next"));
        QCOMPARE(r.json()["token"].get<long long>(),
                 db.count("SELECT token FROM relctl.leases WHERE job = 'next'"));
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", r.json()["handle"].get<std::string>()}).exitCode,
                 0);
    }

    // The release brings the queue up to date before it hands over: a waiter
    // that became stale is refused in the releaser's transaction, and the
    // refusal still names the waiter's own login, not the releaser's.
    void aRefusalDecidedAtAReleaseNamesTheWaitersLogin()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string h = acquire(db, "prod", "holder", 5);
        Waiter old = stoppedJobWaiter(db, "prod", "old", 3, 1);
        QCOMPARE(relctl(db, {"publish", "--lease", h}).exitCode, 0); // generation 5 is now current
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        QCOMPARE(
            db.scalar("SELECT db_user FROM relctl.events WHERE job = 'old' AND reason = 'STALE_GENERATION'"),
            std::string("relctl_test_job"));
        QCOMPARE(holder(db, "prod"), std::string("-"));
        resume(old);
        RunResult r = finish(*old.process, 30000);
        QCOMPARE(r.exitCode, 4);
        QCOMPARE(r.json()["error"].get<std::string>(), std::string("STALE_GENERATION"));
    }

    // A waiter whose --wait runs out just after a release handed it the lease
    // leaves with that lease: leave_queue answers with the acquisition, so
    // the lease is neither lost to its job nor left to expire unused.
    void aWaiterLeavingAfterTheHandoverTakesItsLease()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string first = acquire(db, "prod", "first", 1);
        pqxx::connection waiter(db.jobDsn());
        const std::string secret = "late-request-secret-0123";
        const auto call = [&](const std::string& sql) {
            pqxx::work tx(waiter);
            json j = json::parse(tx.exec1(sql)[0].c_str());
            tx.commit();
            return j;
        };
        const json queued = call("SELECT relctl.acquire('prod', 'late', 'r2', 2, 60000, 'late-acquire', "
                                 "'{\"host\": \"ci-7\"}', true, '" +
                                 secret + "')");
        QCOMPARE(queued["status"].get<std::string>(), std::string("queued"));
        QCOMPARE(relctl(db, {"lease", "release", "--lease", first}).exitCode, 0);

        const json left = call("SELECT relctl.leave_queue(" +
                               std::to_string(queued["candidate"].get<long long>()) + ", '" + secret + "')");
        QCOMPARE(left["status"].get<std::string>(), std::string("ok"));
        QCOMPARE(left["job"].get<std::string>(), std::string("late"));
        QCOMPARE(left["token"].get<long long>(),
                 db.count("SELECT token FROM relctl.leases WHERE job = 'late'"));
        QVERIFY(left.contains("lease_id"));
        QCOMPARE(holder(db, "prod"), std::string("late"));
        // Its queue lock went with the lease: the session holds nothing more.
        // (Only this session's locks: other tests share the cluster.)
        QCOMPARE(db.count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = "
                          "relctl.candidate_lock_class()::oid AND pid = " +
                          std::to_string(waiter.backendpid())),
                 0LL);
        // Asking again, or leaving again, gives the same lease and no warning
        // about a queue lock the session no longer holds.
        struct Notices final : pqxx::errorhandler
        {
            using pqxx::errorhandler::errorhandler;
            std::vector<std::string> seen;
            bool operator()(const char msg[]) noexcept override
            {
                seen.emplace_back(msg);
                return false;
            }
        } notices(waiter);
        const std::string candidate = std::to_string(queued["candidate"].get<long long>());
        for (const std::string& again :
             {"SELECT relctl.acquire_candidate(" + candidate + ", '{}', '" + secret + "')",
              "SELECT relctl.leave_queue(" + candidate + ", '" + secret + "')"}) {
            const json j = call(again);
            QCOMPARE(j["status"].get<std::string>(), std::string("ok"));
            QCOMPARE(j["token"], left["token"]);
            QCOMPARE(j["lease_id"], left["lease_id"]);
        }
        QVERIFY2(notices.seen.empty(), notices.seen.empty() ? "" : notices.seen.front().c_str());
    }

    // The waiter's own grant fails after the queue decided it (here a row
    // lock held past the waiter's lock_timeout, as a busy server can make any
    // statement wait): its transaction rolls back, and the candidate must
    // still be this waiter's, in its place. A session-level queue lock
    // dropped inside that transaction does not come back with the rollback:
    // the waiter's retry was refused as someone else's (exit 2) and the
    // candidate behind it served first.
    void aGrantThatFailsKeepsTheWaitersPlace()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        acquire(db, "prod", "holder", 1, "2s");
        Waiter first{"first", startRelctlWithDsn(db.dsn(), waitArgs("prod", "first", 2),
                                                 {{"PGOPTIONS", "-c lock_timeout=300"}})};
        awaitQueueLength(db, "prod", 1);
        Waiter second = wait(db, "prod", "second", 3);
        awaitQueueLength(db, "prod", 2);

        // Only the grant writes the first candidate's row: everything before
        // it (bringing the queue up to date, deciding) reads it.
        pqxx::connection blocker(db.adminDsn());
        {
            pqxx::work tx(blocker);
            tx.exec("SELECT 1 FROM relctl.candidates WHERE job = 'first' FOR UPDATE");
            // The lease expires after 2 s; its waiter then fails to be granted
            // every 0.3 s until the row is let go.
            std::this_thread::sleep_for(std::chrono::milliseconds(4000));
            QCOMPARE(first.process->state(), QProcess::Running);
            QCOMPARE(db.scalar("SELECT string_agg(state, ',' ORDER BY id) FROM relctl.candidates"),
                     std::string("waiting,waiting"));
            tx.commit();
        }
        RunResult r = finish(*first.process, 30000);
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        QVERIFY2(r.err.find("asking again") != std::string::npos, r.err.c_str()); // it did fail meanwhile
        QCOMPARE(holder(db, "prod"), std::string("first"));
        QCOMPARE(db.scalar("SELECT string_agg(job || ':' || state, ',' ORDER BY id) FROM relctl.candidates"),
                 std::string("first:granted,second:waiting"));

        QCOMPARE(relctl(db, {"lease", "release", "--lease", r.json()["handle"].get<std::string>()}).exitCode,
                 0);
        granted(second);
        QCOMPARE(holder(db, "prod"), std::string("second"));
    }

    // Granted by its own re-evaluation, the waiter's session keeps the queue
    // lock until that grant is committed, and drops it with stop_waiting
    // (the client sends it with its next call): no lock is left behind in a
    // session that goes on, and asking twice warns of nothing.
    void aWaiterGrantedByItsOwnAskDropsItsLockAfterwards()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        acquire(db, "prod", "holder", 1, "1s");
        pqxx::connection waiter(db.jobDsn());
        const std::string secret = "own-ask-request-secret-0123";
        const auto call = [&](const std::string& sql) {
            pqxx::nontransaction tx(waiter);
            return json::parse(tx.exec1(sql)[0].c_str());
        };
        const auto locksHeld = [&] {
            return db.count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = "
                            "relctl.candidate_lock_class()::oid AND pid = " +
                            std::to_string(waiter.backendpid()));
        };
        const json queued =
            call("SELECT relctl.acquire('prod', 'own', 'r2', 2, 60000, 'own-acquire', '{}', true, '" +
                 secret + "')");
        QCOMPARE(queued["status"].get<std::string>(), std::string("queued"));
        const std::string candidate = std::to_string(queued["candidate"].get<long long>());
        QCOMPARE(call("SELECT to_jsonb(relctl.stop_waiting(" + candidate + ", '" + secret + "'))"),
                 json(false));
        QCOMPARE(locksHeld(), 1LL); // still waiting: stop_waiting is not leaving

        std::this_thread::sleep_for(std::chrono::milliseconds(1200)); // the holder's lease expires
        const json granted =
            call("SELECT relctl.acquire_candidate(" + candidate + ", '{}', '" + secret + "')");
        QCOMPARE(granted["status"].get<std::string>(), std::string("ok"));
        QCOMPARE(holder(db, "prod"), std::string("own"));
        QCOMPARE(locksHeld(), 1LL);
        QCOMPARE(call("SELECT to_jsonb(relctl.stop_waiting(" + candidate + ", '" + secret + "'))"),
                 json(true));
        QCOMPARE(locksHeld(), 0LL);
        QCOMPARE(call("SELECT to_jsonb(relctl.stop_waiting(" + candidate + ", '" + secret + "'))"),
                 json(false));
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.stop_waiting(NULL, NULL)"), std::string("RC002"));
        // Another session's or a guessed secret leaves nothing and is recorded.
        const auto refusalsBefore =
            db.count("SELECT count(*) FROM relctl.events WHERE reason = 'NOT_OWN_CANDIDATE'");
        for (const std::string& bad :
             {"SELECT to_jsonb(relctl.stop_waiting(" + candidate + ", NULL))",
              "SELECT to_jsonb(relctl.stop_waiting(" + candidate + ", 'a-guess-of-sixteen-or-more'))"}) {
            pqxx::connection other(db.jobDsn());
            pqxx::nontransaction otx(other);
            QCOMPARE(json::parse(otx.exec1(bad)[0].c_str()), json(false));
        }
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'NOT_OWN_CANDIDATE'"),
                 refusalsBefore + 2);
    }

    // A waiter that comes back (the same op id and secret: a retry, or its
    // own settling after its connection was cut) while its old session still
    // holds the candidate waits for that session to go and takes the
    // candidate over, in its place: before, it queued again at the back.
    void aWaiterBackWhileItsOldSessionLivesKeepsItsPlace()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        const std::string h = acquire(db, "prod", "holder", 1);
        Waiter old = stoppedJobWaiter(db, "prod", "first", 2, 1);
        Waiter second = wait(db, "prod", "second", 3);
        awaitQueueLength(db, "prod", 2);

        Waiter back{"first", startRelctlWithDsn(db.jobDsn(), waitArgs("prod", "first", 2))};
        // It asks, and is told to wait for the old session, for a while.
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.candidates"), 2LL);
        old.process->kill(); // its session ends with it
        QVERIFY(old.process->waitForFinished(10000));
        QTRY_COMPARE_WITH_TIMEOUT(
            db.count("SELECT count(*) FROM relctl.candidates c WHERE job = 'first' AND state = 'waiting' AND "
                     "relctl.candidate_alive(c)"),
            1LL, 10000);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        RunResult r = finish(*back.process, 30000);
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        QVERIFY2(r.err.find("still waited for by another session") != std::string::npos, r.err.c_str());
        QCOMPARE(holder(db, "prod"), std::string("first"));
        QCOMPARE(db.scalar("SELECT string_agg(job || ':' || state, ',' ORDER BY id) FROM relctl.candidates"),
                 std::string("first:granted,second:waiting"));
        second.process->kill();
    }

    void revokeEndsTheLeaseAndHandsOver()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h = acquire(db, "prod", "runaway", 1);
        Waiter next = wait(db, "prod", "next", 2);
        awaitQueueLength(db, "prod", 1);
        QCOMPARE(relctl(db, {"lease", "revoke", "--env", "prod", "--by", "carol"}).exitCode,
                 2); // reason required
        RunResult revoked = relctl(
            db, {"--json", "lease", "revoke", "--env", "prod", "--by", "carol", "--reason", "stuck deploy"});
        QCOMPARE(revoked.exitCode, 0);
        QCOMPARE(revoked.json()["revoked"].get<bool>(), true);
        QCOMPARE(revoked.json()["lease"]["job"].get<std::string>(), std::string("runaway"));
        granted(next);
        for (const Args& args :
             {Args{"--json", "lease", "renew", "--lease", h}, Args{"--json", "publish", "--lease", h}}) {
            RunResult r = relctl(db, args);
            QCOMPARE(r.exitCode, 5);
            QCOMPARE(r.json()["error"].get<std::string>(), std::string("LEASE_REVOKED"));
        }
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'revoke' AND actor = 'carol' "
                          "AND job = 'runaway' AND detail->>'reason' = 'stuck deploy'"),
                 1LL);
        QCOMPARE(db.scalar("SELECT ended_by || ':' || end_note FROM relctl.leases WHERE job = 'runaway'"),
                 std::string("carol:stuck deploy"));
    }

    void freezeStopsDispatchUntilUnfrozen()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "prod"});
        std::string h = acquire(db, "prod", "holder", 1);
        Waiter w3 = wait(db, "prod", "job-3", 3);
        awaitQueueLength(db, "prod", 1);
        Waiter w2 = wait(db, "prod", "job-2", 2);
        awaitQueueLength(db, "prod", 2);
        QCOMPARE(relctl(db, {"freeze", "--env", "prod", "--by", "dave", "--reason", "incident 42"}).exitCode,
                 0);

        RunResult refused = relctl(db, {"--json", "lease", "acquire", "--env", "prod", "--job", "late",
                                        "--release", "r9", "--generation", "9"});
        QCOMPARE(refused.exitCode, 6);
        QCOMPARE(refused.json()["error"].get<std::string>(), std::string("DISPATCH_FROZEN"));
        RunResult publish = relctl(db, {"--json", "publish", "--lease", h});
        QCOMPARE(publish.exitCode, 6);
        // Renew and release still work; the queue stays queued.
        QCOMPARE(relctl(db, {"lease", "renew", "--lease", h}).exitCode, 0);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        QCOMPARE(holder(db, "prod"), std::string("-"));
        QVERIFY(w2.process->state() != QProcess::NotRunning);

        QCOMPARE(relctl(db, {"unfreeze", "--env", "prod", "--by", "dave"}).exitCode, 0);
        h = granted(w2); // policy order: the lower generation first
        QCOMPARE(holder(db, "prod"), std::string("job-2"));
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h}).exitCode, 0);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", granted(w3)}).exitCode, 0);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'DISPATCH_FROZEN'"), 2LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation IN ('freeze', 'unfreeze') "
                          "AND actor = 'dave'"),
                 2LL);
        // A frozen refusal is not remembered: once unfrozen the same request goes through.
        QCOMPARE(relctl(db, {"lease", "acquire", "--env", "prod", "--job", "late", "--release", "r9",
                             "--generation", "9", "--wait", "30s"})
                     .exitCode,
                 0);
    }

    // Who acted and why is in `relctl audit`, plain and --json, for every
    // operator action: the person named, the database login that called (the
    // server's, not the caller's word) and the reason kept in the detail.
    void auditShowsWhoActedAndWhy()
    {
        TestDatabase db;
        for (const char* env : {"web", "api"}) {
            relctl(db, {"env", "add", env});
            relctl(db, {"env", "set", env, "--policy", "newest", "--supersede", "approval"});
        }
        std::vector<std::string> handles;
        std::vector<Waiter> waiters;
        std::vector<std::string> requests;
        for (const std::string env : {"web", "api"}) {
            handles.push_back(acquire(db, env, env + "-holder", 1));
            for (int g : {2, 3}) {
                waiters.push_back(wait(db, env, env + "-job-" + std::to_string(g), g));
                awaitQueueLength(db, env, static_cast<std::size_t>(g - 1));
            }
            json pending = relctl(db, {"--json", "approvals", "list", "--env", env}).json()["approvals"];
            QCOMPARE(pending.size(), std::size_t(1));
            requests.push_back(std::to_string(pending[0]["id"].get<long long>()));
        }
        QCOMPARE(relctlWithDsn(db.loginDsn("alice"),
                               {"approve", requests[0], "--by", "alice", "--reason", "hotfix first"})
                     .exitCode,
                 0);
        QCOMPARE(relctl(db, {"deny", requests[1], "--by", "bob", "--reason", "run every migration"}).exitCode,
                 0);
        QCOMPARE(relctl(db, {"freeze", "--env", "web", "--by", "dave", "--reason", "incident 42"}).exitCode,
                 0);
        QCOMPARE(relctl(db, {"unfreeze", "--env", "web", "--by", "erin", "--reason", "incident 42 closed"})
                     .exitCode,
                 0);
        QCOMPARE(relctl(db, {"lease", "revoke", "--env", "web", "--by", "carol", "--reason", "stuck deploy"})
                     .exitCode,
                 0);

        const json events = relctl(db, {"--json", "audit", "--limit", "1000"}).json()["events"];
        struct Expected
        {
            const char* operation;
            const char* actor;
            const char* reason;
        };
        for (const Expected& x :
             {Expected{"approve", "alice", "hotfix first"}, Expected{"deny", "bob", "run every migration"},
              Expected{"freeze", "dave", "incident 42"}, Expected{"unfreeze", "erin", "incident 42 closed"},
              Expected{"revoke", "carol", "stuck deploy"}}) {
            auto e = std::find_if(events.begin(), events.end(),
                                  [&](const json& v) { return v["operation"] == x.operation; });
            QVERIFY2(e != events.end(), x.operation);
            QCOMPARE((*e)["actor"], json(x.actor));
            QCOMPARE((*e)["detail"]["reason"], json(x.reason));
            QVERIFY2((*e)["db_user"].is_string() && !(*e)["db_user"].get<std::string>().empty(), x.operation);
            QVERIFY2(e->contains("client_addr"), x.operation);
            QVERIFY2(e->contains("high_water_generation"), x.operation);
        }
        // The unfreeze keeps what it lifted beside its own reason.
        auto unfreeze = std::find_if(events.begin(), events.end(),
                                     [](const json& v) { return v["operation"] == "unfreeze"; });
        QCOMPARE((*unfreeze)["detail"]["frozen_by"], json("dave"));
        QCOMPARE((*unfreeze)["detail"]["frozen_reason"], json("incident 42"));
        // A job's own event names no person.
        auto acquired = std::find_if(events.begin(), events.end(),
                                     [](const json& v) { return v["operation"] == "acquire"; });
        QVERIFY((*acquired)["actor"].is_null());

        const std::string plain = relctl(db, {"audit", "--env", "web"}).out;
        for (const char* needle :
             {" by=alice", " by=dave", " by=erin", " by=carol", "\"reason\":\"stuck deploy\"", " login="})
            QVERIFY2(plain.find(needle) != std::string::npos, needle);

        for (Waiter& w : waiters) {
            w.process->kill();
            w.process->waitForFinished();
        }
    }

    void serializationRollout()
    {
        TestDatabase db;
        relctl(db, {"env", "add", "test"});
        const Args leaseless{"--json", "publish",   "--env", "test",         "--job",
                             "legacy", "--release", "r5",    "--generation", "5"};
        RunResult enforced = relctl(db, leaseless);
        QCOMPARE(enforced.exitCode, 5);
        QCOMPARE(enforced.json()["error"].get<std::string>(), std::string("NO_LEASE"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 0LL);

        QCOMPARE(relctl(db, {"env", "set", "test", "--serialization", "off"}).exitCode, 0);
        RunResult off = relctl(db, leaseless);
        QCOMPARE(off.exitCode, 0);
        QCOMPARE(off.json()["serialized"].get<bool>(), false);
        RunResult stale = relctl(db, {"--json", "publish", "--env", "test", "--job", "legacy", "--release",
                                      "r4", "--generation", "4"});
        QCOMPARE(stale.exitCode, 4);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests WHERE NOT serialized AND token IS NULL"),
                 1LL);
        QCOMPARE(
            db.count(
                "SELECT count(*) FROM relctl.events WHERE operation = 'publish' AND outcome = 'accepted' "
                "AND detail->>'unserialized' = 'true'"),
            1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'NO_LEASE' AND job = 'legacy'"),
                 1LL);

        QCOMPARE(relctl(db, {"env", "set", "test", "--serialization", "enforced"}).exitCode, 0);
        QCOMPARE(relctl(db, {"publish", "--env", "test", "--job", "legacy", "--release", "r6", "--generation",
                             "6"})
                     .exitCode,
                 5);
        QCOMPARE(relctl(db, {"env", "set", "test", "--serialization", "sometimes"}).exitCode, 2);
        QCOMPARE(relctl(db, {"--json", "env", "show", "test"}).json()["serialization"].get<std::string>(),
                 std::string("enforced"));
    }
};

QTEST_GUILESS_MAIN(TestQueue)
#include "test_queue.moc"
