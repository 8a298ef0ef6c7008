// Promotion paths, approval gates bound to a release, and rollback that keeps
// the freshness bar: every job and every operator a separate relctl process
// against a real PostgreSQL, the waiters really blocked in `--wait`.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QtTest>
#include <algorithm>
#include <sstream>
#include <thread>

using nlohmann::json;

namespace {

std::string gen(int generation)
{
    return std::to_string(generation);
}

// `relctl run` of release R at generation N on env, publishing {"release": R}.
RunResult deploy(const TestDatabase& db, const std::string& env, const std::string& job,
                 const std::string& release, int generation, const Args& extra = {})
{
    Args args{"--json", "run",          "--env",        env, "--job", job, "--release",
              release,  "--generation", gen(generation)};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "true"});
    return relctl(db, args);
}

// What `relctl env list` says env has current: "RELEASE (generation N)".
std::string listedCurrent(const TestDatabase& db, const std::string& env)
{
    const RunResult r = relctl(db, {"env", "list", "--match", env});
    if (r.exitCode != 0)
        qFatal("env list failed: %s", r.describe().c_str());
    // NAME  GROUP  RELEASE (generation N)...: the third word to the ')'.
    std::istringstream line(r.out);
    std::string name, group, rest;
    line >> name >> group >> std::ws;
    std::getline(line, rest);
    return rest.substr(0, rest.find(')') + 1);
}

RunResult acquire(const TestDatabase& db, const std::string& env, const std::string& job,
                  const std::string& release, int generation, const Args& extra = {})
{
    Args args{"--json",    "lease", "acquire",      "--env",        env, "--job", job,
              "--release", release, "--generation", gen(generation)};
    args.insert(args.end(), extra.begin(), extra.end());
    return relctl(db, args);
}

std::string reasonOf(const RunResult& r)
{
    const json j = json::parse(r.out, nullptr, false);
    return j.is_object() && j.contains("error") ? j["error"].get<std::string>() : std::string("(none)");
}

void setUp(const TestDatabase& db, const std::vector<std::string>& envs)
{
    for (const std::string& e : envs)
        QCOMPARE(relctl(db, {"env", "add", e}).exitCode, 0);
}

// Polls `promote list` until (env, release, generation) has an open request; its id.
long long awaitRequest(const TestDatabase& db, const std::string& env, const std::string& release)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 20000) {
        const json list = relctl(db, {"--json", "promote", "list", "--env", env}).json();
        for (const json& p : list["promotions"])
            if (p["release"] == release)
                return p["id"].get<long long>();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    qFatal("no promotion request for %s on %s", release.c_str(), env.c_str());
}

// Milliseconds between two events on the server's clock.
long long msBetween(const TestDatabase& db, const std::string& firstWhere, const std::string& laterWhere)
{
    return db.count("SELECT floor(extract(epoch FROM (SELECT at FROM relctl.events WHERE " + laterWhere +
                    " ORDER BY id LIMIT 1) - (SELECT at FROM relctl.events WHERE " + firstWhere +
                    " ORDER BY id DESC LIMIT 1)) * 1000)");
}

} // namespace

class TestPromotions final : public QObject
{
    Q_OBJECT

private slots:
    // A release that skipped staging is refused on prod (exit 11,
    // NOT_PROMOTED, recorded with what staging has); once staging accepted it
    // it is still refused until the soak has passed, then accepted.
    void aReleaseThatSkippedStagingIsRefusedUntilItSoaked()
    {
        TestDatabase db;
        setUp(db, {"staging", "prod"});
        QCOMPARE(relctl(db, {"env", "set", "prod", "--promote-from", "staging", "--soak", "1500ms"}).exitCode,
                 0);

        RunResult skipped = deploy(db, "prod", "prod-5", "v5", 5);
        QCOMPARE(skipped.exitCode, 11);
        QCOMPARE(reasonOf(skipped), std::string("NOT_PROMOTED"));
        QVERIFY2(skipped.err.find("was not accepted on staging") != std::string::npos, skipped.err.c_str());
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.events WHERE reason = 'NOT_PROMOTED' AND job = 'prod-5' "
                     "AND detail #>> '{upstream,env}' = 'staging'"),
            1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE env = 'prod'"), 0LL);

        QCOMPARE(deploy(db, "staging", "staging-5", "v5", 5).exitCode, 0);
        RunResult early = deploy(db, "prod", "prod-5", "v5", 5);
        QCOMPARE(early.exitCode, 11);
        QVERIFY2(early.err.find("needs a soak of") != std::string::npos, early.err.c_str());
        // Another generation of the same release is not what staging accepted.
        QCOMPARE(reasonOf(deploy(db, "prod", "prod-6", "v5", 6)), std::string("NOT_PROMOTED"));

        std::this_thread::sleep_for(std::chrono::milliseconds(1600));
        RunResult soaked = deploy(db, "prod", "prod-5", "v5", 5);
        QVERIFY2(soaked.exitCode == 0, soaked.err.c_str());
        QCOMPARE(db.scalar("SELECT m.release FROM relctl.environments e JOIN relctl.manifests m "
                           "ON m.id = e.current_manifest_id WHERE e.name = 'prod'"),
                 std::string("v5"));
    }

    // A release rolled back on staging is withdrawn there: prod refuses it.
    void aReleaseRolledBackUpstreamIsNotPromoted()
    {
        TestDatabase db;
        setUp(db, {"staging", "prod"});
        QCOMPARE(relctl(db, {"env", "set", "prod", "--promote-from", "staging"}).exitCode, 0);
        QCOMPARE(deploy(db, "staging", "s1", "v1", 1).exitCode, 0);
        QCOMPARE(deploy(db, "staging", "s2", "v2", 2).exitCode, 0);
        QCOMPARE(relctl(db, {"rollback", "--env", "staging", "--to-release", "v1", "--by", "alice",
                             "--reason", "v2 breaks checkout"})
                     .exitCode,
                 0);
        QCOMPARE(reasonOf(deploy(db, "prod", "p2", "v2", 2)), std::string("NOT_PROMOTED"));
        QCOMPARE(deploy(db, "prod", "p1", "v1", 1).exitCode, 0);
    }

    // Promotion paths may not form a cycle, and invalid settings, rollbacks
    // and decisions are refused with exit 2 and one line, writing nothing.
    // One database for all the cases: each writes nothing, which is checked.
    void promotionPathsRefuseCyclesAndBadInput()
    {
        TestDatabase db;
        setUp(db, {"test", "staging", "prod"});
        QCOMPARE(relctl(db, {"env", "set", "staging", "--promote-from", "test"}).exitCode, 0);
        QCOMPARE(relctl(db, {"env", "set", "prod", "--promote-from", "staging"}).exitCode, 0);
        QCOMPARE(deploy(db, "test", "t1", "v1", 1).exitCode, 0); // manifest 1, on test
        const std::vector<std::pair<std::string, Args>> cases{
            {"cycle", {"env", "set", "test", "--promote-from", "prod"}},
            {"self", {"env", "set", "prod", "--promote-from", "prod"}},
            {"unknown upstream", {"env", "set", "prod", "--promote-from", "nowhere"}},
            {"too many approvals", {"env", "set", "prod", "--approvals", "11"}},
            {"negative approvals", {"env", "set", "prod", "--approvals", "-1"}},
            {"bad soak", {"env", "set", "prod", "--soak", "soon"}},
            {"rollback, two targets",
             {"rollback", "--env", "prod", "--to-release", "v1", "--to-generation", "1", "--by", "a",
              "--reason", "r"}},
            {"rollback, no target", {"rollback", "--env", "prod", "--by", "a", "--reason", "r"}},
            {"rollback, never accepted",
             {"rollback", "--env", "prod", "--to-release", "v9", "--by", "a", "--reason", "r"}},
            {"rollback, another environment's manifest",
             {"rollback", "--env", "prod", "--to-manifest", "1", "--by", "a", "--reason", "r"}},
            {"rollback, no reason", {"rollback", "--env", "prod", "--to-release", "v1", "--by", "a"}},
            {"deny without reason", {"promote", "deny", "1", "--by", "a"}},
            {"decide an unknown request", {"promote", "approve", "99", "--by", "a"}},
            {"request without approvals",
             {"promote", "request", "--env", "test", "--release", "v1", "--generation", "1", "--by", "a"}},
        };
        for (const auto& [name, args] : cases) {
            const auto before = db.footprint();
            RunResult r = relctl(db, args);
            QVERIFY2(r.exitCode == 2, (name + ": exit " + std::to_string(r.exitCode) + " " + r.err).c_str());
            QVERIFY2(std::count(r.err.begin(), r.err.end(), '\n') == 1, (name + ": " + r.err).c_str());
            QVERIFY2(db.footprint() == before, name.c_str());
        }
    }

    // K = 2: the requester cannot approve, one person counts once, and two
    // distinct approvals (two logins) let a waiting `relctl run --wait`
    // proceed within 250 ms of the second (on the server's clock).
    void twoDistinctApprovalsReleaseAWaiter()
    {
        TestDatabase db;
        setUp(db, {"prod"});
        const std::string alice = db.loginDsn("alice"), bob = db.loginDsn("bob");
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approvals", "2"}).exitCode, 0);
        auto waiter = startRelctl(db, {"--json", "run", "--env", "prod", "--job", "pipeline-7", "--release",
                                       "v7", "--generation", "7", "--wait", "60s", "--op-id",
                                       "pipeline-7-run", "--", "true"});
        const long long id = awaitRequest(db, "prod", "v7");
        const std::string idText = std::to_string(id);

        RunResult self = relctl(db, {"--json", "promote", "approve", idText, "--by", "pipeline-7"});
        QCOMPARE(self.exitCode, 11);
        QCOMPARE(reasonOf(self), std::string("SELF_APPROVAL"));
        QCOMPARE(
            db.count(
                "SELECT count(*) FROM relctl.events WHERE reason = 'SELF_APPROVAL' AND actor = 'pipeline-7'"),
            1LL);

        QCOMPARE(relctlWithDsn(
                     alice, {"promote", "approve", idText, "--by", "alice", "--reason", "checked the canary"})
                     .exitCode,
                 0);
        RunResult twice = relctlWithDsn(alice, {"--json", "promote", "approve", idText, "--by", "alice"});
        QCOMPARE(twice.exitCode, 0);
        QCOMPARE(twice.json()["changed"], json(false));
        QCOMPARE(twice.json()["approvals"].size(), std::size_t(1));
        // Still waiting: one person is one approval.
        QVERIFY(!waiter->waitForFinished(700));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE env = 'prod'"), 0LL);

        QCOMPARE(relctlWithDsn(bob, {"promote", "approve", idText, "--by", "bob"}).exitCode, 0);
        RunResult done = finish(*waiter, 30000);
        QVERIFY2(done.exitCode == 0, done.err.c_str());
        const long long latency =
            msBetween(db, "operation = 'promotion-approve' AND actor = 'bob'",
                      "operation = 'acquire' AND outcome = 'accepted' AND job = 'pipeline-7'");
        QVERIFY2(latency >= 0 && latency < 250, std::to_string(latency).c_str());
        // Who decided is in the audit trail, with why.
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'promotion-approve' "
                          "AND outcome = 'accepted' AND detail ->> 'promotion' = '" +
                          idText + "'"),
                 2LL);
        QCOMPARE(
            db.scalar("SELECT detail ->> 'reason' FROM relctl.events WHERE operation = 'promotion-approve' "
                      "AND actor = 'alice'"),
            std::string("checked the canary"));
        const json shown =
            relctl(db, {"--json", "audit", "--env", "prod", "--operation", "promotion-approve"}).json();
        QCOMPARE(shown["events"].size(), std::size_t(3)); // the refused self-approval too
        // `relctl audit` shows who decided and why, plain and --json.
        std::vector<std::string> deciders;
        for (const json& e : shown["events"])
            deciders.push_back(e["actor"].get<std::string>());
        QVERIFY(std::find(deciders.begin(), deciders.end(), "alice") != deciders.end());
        QVERIFY(std::find(deciders.begin(), deciders.end(), "bob") != deciders.end());
        const std::string plain =
            relctl(db, {"audit", "--env", "prod", "--operation", "promotion-approve"}).out;
        QVERIFY2(plain.find(" by=alice") != std::string::npos, plain.c_str());
        QVERIFY2(plain.find("checked the canary") != std::string::npos, plain.c_str());
    }

    // An approval belongs to (environment, release, generation): a retry of
    // the same job (same op id) keeps it, a newer generation needs its own.
    void anApprovalIsBoundToTheReleaseAndGeneration()
    {
        TestDatabase db;
        setUp(db, {"prod"});
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approvals", "1"}).exitCode, 0);
        RunResult first = acquire(db, "prod", "job-7", "v7", 7, {"--op-id", "job-7-acquire"});
        QCOMPARE(first.exitCode, 11);
        QCOMPARE(reasonOf(first), std::string("APPROVAL_REQUIRED"));
        const long long id = awaitRequest(db, "prod", "v7");
        QCOMPARE(
            relctlWithDsn(db.loginDsn("alice"), {"promote", "approve", std::to_string(id), "--by", "alice"})
                .exitCode,
            0);

        RunResult retried = acquire(db, "prod", "job-7", "v7", 7, {"--op-id", "job-7-acquire"});
        QVERIFY2(retried.exitCode == 0, retried.err.c_str());
        QCOMPARE(relctl(db, {"lease", "release"}, {},
                        {{"RELCTL_LEASE", retried.json()["handle"].get<std::string>()}})
                     .exitCode,
                 0);

        RunResult newer = acquire(db, "prod", "job-8", "v8", 8);
        QCOMPARE(newer.exitCode, 11);
        QCOMPARE(reasonOf(newer), std::string("APPROVAL_REQUIRED"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.promotions WHERE env = 'prod'"), 2LL);
    }

    // A denial is final: it ends a waiter at once (exit 11, APPROVAL_DENIED),
    // refuses every retry, and cannot be overturned by an approval.
    void aDenialEndsTheWaiterAndIsFinal()
    {
        TestDatabase db;
        setUp(db, {"prod"});
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approvals", "1"}).exitCode, 0);
        auto waiter =
            startRelctl(db, {"--json", "lease", "acquire", "--env", "prod", "--job", "job-9", "--release",
                             "v9", "--generation", "9", "--wait", "60s", "--op-id", "job-9-acquire"});
        const std::string id = std::to_string(awaitRequest(db, "prod", "v9"));
        QCOMPARE(
            relctl(db, {"promote", "deny", id, "--by", "carol", "--reason", "no change window"}).exitCode, 0);
        RunResult ended = finish(*waiter, 10000);
        QCOMPARE(ended.exitCode, 11);
        QCOMPARE(reasonOf(ended), std::string("APPROVAL_DENIED"));
        QVERIFY2(ended.err.find("carol") != std::string::npos, ended.err.c_str());

        QCOMPARE(reasonOf(acquire(db, "prod", "job-9", "v9", 9, {"--op-id", "job-9-acquire"})),
                 std::string("APPROVAL_DENIED"));
        QCOMPARE(reasonOf(acquire(db, "prod", "job-9b", "v9", 9)), std::string("APPROVAL_DENIED"));
        QCOMPARE(relctl(db, {"promote", "approve", id, "--by", "dave"}).exitCode, 2);
        QCOMPARE(
            db.count(
                "SELECT count(*) FROM relctl.events WHERE operation = 'promotion-deny' AND actor = 'carol' "
                "AND detail ->> 'reason' = 'no change window'"),
            1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 0LL);
    }

    // Frozen environments refuse promotions like any dispatch.
    void aFrozenEnvironmentRefusesPromotionRequests()
    {
        TestDatabase db;
        setUp(db, {"prod"});
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approvals", "1"}).exitCode, 0);
        QCOMPARE(relctl(db, {"freeze", "--env", "prod", "--by", "ops", "--reason", "incident"}).exitCode, 0);
        RunResult r = relctl(db, {"--json", "promote", "request", "--env", "prod", "--release", "v3",
                                  "--generation", "3", "--by", "erin"});
        QCOMPARE(r.exitCode, 6);
        QCOMPARE(reasonOf(r), std::string("DISPATCH_FROZEN"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.promotions"), 0LL);
    }

    // v1.9 misbehaves: prod goes back to v1.8's manifest. The old jobs of
    // v1.8 and v1.9 retrying are refused stale; pipeline 10 adopts.
    void aRollbackKeepsTheFreshnessBar()
    {
        TestDatabase db;
        setUp(db, {"prod"});
        QCOMPARE(deploy(db, "prod", "pipeline-8", "v1.8", 8).exitCode, 0);
        QCOMPARE(deploy(db, "prod", "pipeline-9", "v1.9", 9).exitCode, 0);

        RunResult rolled =
            relctl(db, {"--json", "rollback", "--env", "prod", "--to-release", "v1.8", "--by", "alice",
                        "--reason", "v1.9 fails checkout", "--op-id", "incident-42-rollback"});
        QVERIFY2(rolled.exitCode == 0, rolled.err.c_str());
        const json r = rolled.json();
        QCOMPARE(r["restored"]["release"], json("v1.8"));
        QCOMPARE(r["replaced"]["release"], json("v1.9"));
        QCOMPARE(r["high_water_generation"], json(9));
        const json shown = relctl(db, {"--json", "manifest", "show", "--env", "prod"}).json();
        QCOMPARE(shown["release"], json("v1.8"));
        QCOMPARE(shown["high_water_generation"], json(9));
        // env list reads the environment's copy of its current release
        // (migration 0019): the rollback changed it with the manifest.
        QCOMPARE(listedCurrent(db, "prod"), std::string("v1.8 (generation 8)"));
        // Whoever writes the row, even a superuser by hand, the copy is the manifest's.
        db.exec("UPDATE relctl.environments SET current_release = 'forged', current_generation = 99 "
                "WHERE name = 'prod'");
        QCOMPARE(listedCurrent(db, "prod"), std::string("v1.8 (generation 8)"));

        // A retry of the rollback is answered, not repeated.
        RunResult again =
            relctl(db, {"--json", "rollback", "--env", "prod", "--to-release", "v1.8", "--by", "alice",
                        "--reason", "v1.9 fails checkout", "--op-id", "incident-42-rollback"});
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(again.json()["replayed"], json(true));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.rollbacks"), 1LL);

        for (const auto& [job, release, generation] :
             {std::tuple{"pipeline-8", "v1.8", 8}, std::tuple{"pipeline-9", "v1.9", 9}}) {
            RunResult stale = deploy(db, "prod", job, release, generation);
            QCOMPARE(stale.exitCode, 4);
            QCOMPARE(reasonOf(stale), std::string("STALE_GENERATION"));
        }
        QVERIFY(relctl(db, {"lease", "acquire", "--env", "prod", "--job", "pipeline-9", "--release", "v1.9",
                            "--generation", "9"})
                    .err.find("the highest accepted on prod") != std::string::npos);
        QCOMPARE(deploy(db, "prod", "pipeline-10", "v1.10", 10).exitCode, 0);
        QCOMPARE(listedCurrent(db, "prod"), std::string("v1.10 (generation 10)"));
        QCOMPARE(
            db.count(
                "SELECT count(*) FROM relctl.environments e "
                "LEFT JOIN relctl.manifests m ON m.id = e.current_manifest_id "
                "WHERE (e.current_release, e.current_generation) IS DISTINCT FROM (m.release, m.generation)"),
            0LL);

        // The history, in order, with the rollback and the bar.
        const json history = relctl(db, {"--json", "manifest", "show", "--env", "prod", "--history"}).json();
        QCOMPARE(history["high_water_generation"], json(10));
        std::vector<std::string> kinds;
        for (const json& entry : history["history"])
            kinds.push_back(entry["kind"].get<std::string>() + ":" + entry["release"].get<std::string>());
        QCOMPARE(kinds, (std::vector<std::string>{"publish:v1.8", "publish:v1.9", "rollback:v1.8",
                                                  "publish:v1.10"}));
        QCOMPARE(history["history"][2]["rollback"]["replaced"]["release"], json("v1.9"));
        QCOMPARE(history["history"][2]["rollback"]["by"], json("alice"));
        // The audit trail names the rollback, who and why.
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.events WHERE operation = 'rollback' AND actor = 'alice' "
                     "AND detail ->> 'replaced_release' = 'v1.9' AND release = 'v1.8'"),
            1LL);
        const json audited =
            relctl(db, {"--json", "audit", "--env", "prod", "--operation", "rollback"}).json();
        QCOMPARE(audited["events"].size(), std::size_t(1));
        QCOMPARE(audited["events"][0]["actor"], json("alice"));
        QCOMPARE(audited["events"][0]["detail"]["replaced_release"], json("v1.9"));
        // The bar stays where v1.9 put it.
        QCOMPARE(audited["events"][0]["high_water_generation"], json(9));
        QVERIFY(relctl(db, {"audit", "--env", "prod", "--operation", "rollback"}).out.find(" by=alice") !=
                std::string::npos);
    }

    // A rollback takes the lease like any job: busy while a job holds it,
    // waits with --wait, and is allowed while frozen, where acquisitions stay
    // refused.
    void aRollbackWaitsForTheHolderAndWorksWhileFrozen()
    {
        TestDatabase db;
        setUp(db, {"prod"});
        QCOMPARE(deploy(db, "prod", "p1", "v1", 1).exitCode, 0);
        QCOMPARE(deploy(db, "prod", "p2", "v2", 2).exitCode, 0);
        const std::string handle = acquire(db, "prod", "p3", "v3", 3).json()["handle"].get<std::string>();
        const Args back{"rollback", "--env", "prod",     "--to-generation", "1",
                        "--by",     "bob",   "--reason", "v2 leaks"};
        QCOMPARE(relctl(db, back).exitCode, 3);
        Args waiting = back;
        waiting.insert(waiting.end(), {"--wait", "20s"});
        auto rollback = startRelctl(db, waiting);
        QVERIFY(!rollback->waitForFinished(500));
        QCOMPARE(relctl(db, {"lease", "release"}, {}, {{"RELCTL_LEASE", handle}}).exitCode, 0);
        RunResult done = finish(*rollback, 10000);
        QVERIFY2(done.exitCode == 0, done.err.c_str());
        QVERIFY2(msBetween(db, "operation = 'release' AND job = 'p3'", "operation = 'rollback'") < 250,
                 "the rollback was not woken by the release");
        // The rollback took the next fencing token.
        QCOMPARE(db.count("SELECT token FROM relctl.rollbacks"),
                 db.count("SELECT max(token) FROM relctl.leases "
                          "WHERE job = 'p3'") +
                     1);

        QCOMPARE(relctl(db, {"freeze", "--env", "prod", "--by", "ops", "--reason", "incident"}).exitCode, 0);
        QCOMPARE(
            relctl(db, {"rollback", "--env", "prod", "--to-release", "v2", "--by", "bob", "--reason", "undo"})
                .exitCode,
            0);
        QCOMPARE(acquire(db, "prod", "p4", "v4", 4).exitCode, 6);
        QCOMPARE(db.scalar("SELECT m.release FROM relctl.environments e JOIN relctl.manifests m "
                           "ON m.id = e.current_manifest_id WHERE e.name = 'prod'"),
                 std::string("v2"));
    }

    // Only a manager rolls back or decides a promotion; a job may ask.
    void onlyManagersRollBackOrDecide()
    {
        TestDatabase db;
        setUp(db, {"prod"});
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approvals", "1"}).exitCode, 0);
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"promote", "request", "--env", "prod", "--release", "v1",
                                             "--generation", "1", "--by", "ci"})
                     .exitCode,
                 0);
        const auto before = db.footprint();
        for (const std::string& dsn : {db.jobDsn(), db.reviewerDsn()}) {
            QCOMPARE(sqlState(dsn, "SELECT relctl.rollback('prod', 'v1', NULL, NULL, 'x', 'y', NULL, '{}')"),
                     std::string("42501"));
            QCOMPARE(sqlState(dsn, "SELECT relctl.decide_promotion(1, true, 'x', NULL, '{}')"),
                     std::string("42501"));
        }
        QCOMPARE(db.footprint(), before);
    }

    // Rollbacks and publishes racing on one environment serialise: every
    // accepted publish is above the bar as it stood, the bar never goes
    // down, and the current manifest is always one the environment accepted.
    void concurrentRollbacksAndPublishesSerialise()
    {
        TestDatabase db;
        setUp(db, {"prod"});
        QCOMPARE(deploy(db, "prod", "seed-1", "v1", 1).exitCode, 0);
        QCOMPARE(deploy(db, "prod", "seed-2", "v2", 2).exitCode, 0);
        std::vector<std::unique_ptr<QProcess>> racers;
        for (int g = 3; g <= 14; ++g) {
            racers.push_back(
                startRelctl(db, {"run", "--env", "prod", "--job", "job-" + gen(g), "--release", "v" + gen(g),
                                 "--generation", gen(g), "--wait", "60s", "--", "true"}));
            if (g % 3 == 0)
                racers.push_back(
                    startRelctl(db, {"rollback", "--env", "prod", "--to-generation", gen(g % 2 + 1), "--by",
                                     "ops-" + gen(g), "--reason", "race", "--wait", "60s"}));
        }
        int published = 0;
        for (auto& p : racers) {
            RunResult r = finish(*p, 120000);
            // A session the protocol ended says who ended it and why.
            QVERIFY2(
                r.exitCode == 0 || r.exitCode == 4,
                (r.err + db.scalar("SELECT coalesce(string_agg(detail::text, '; '), '') FROM relctl.events "
                                   "WHERE operation = 'session-ended'"))
                    .c_str());
            published += r.exitCode == 0 ? 1 : 0;
        }
        QVERIFY(published >= 5);
        // Publishes in commit order have strictly increasing generations.
        QCOMPARE(
            db.count("SELECT count(*) FROM (SELECT generation, lag(generation) OVER (ORDER BY id) AS before "
                     "FROM relctl.manifests WHERE env = 'prod') m WHERE m.generation <= m.before"),
            0LL);
        QCOMPARE(db.count("SELECT high_water_generation FROM relctl.environments WHERE name = 'prod'"),
                 db.count("SELECT max(generation) FROM relctl.manifests WHERE env = 'prod'"));
        // Every event's snapshot of the bar is monotonic.
        QCOMPARE(
            db.count("SELECT count(*) FROM (SELECT high_water_generation AS hw, lag(high_water_generation) "
                     "OVER (ORDER BY id) AS before FROM relctl.events WHERE env = 'prod') v WHERE v.hw < "
                     "v.before"),
            0LL);
        // Tokens of rollbacks and leases are unique and ordered with time.
        QCOMPARE(
            db.count(
                "SELECT count(*) FROM (SELECT token, lag(token) OVER (ORDER BY acquired_at, token) AS before "
                "FROM relctl.leases WHERE env = 'prod') l WHERE l.token <= l.before"),
            0LL);
        RunResult verified = relctl(db, {"verify"});
        QVERIFY2(verified.exitCode == 0, verified.out.c_str());
    }
};

QTEST_GUILESS_MAIN(TestPromotions)
#include "test_promotions.moc"
