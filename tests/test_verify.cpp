// `relctl verify` on real histories: one made by the relctl binary through
// the protocol (acquires, a replayed publish, a stale publish after expiry, a
// queue, a revoke, a freeze) verifies clean, for a reviewer login too; bad
// input exits 2; relctl.history() is the reviewer's and not a job's; and a
// superuser who writes around the protocol (a manifest under a superseded
// token, the append-only guard disabled to lower a generation, a lease
// granted while another was live, a promotion gate switched off to publish
// what the upstream rolled back, a publish recorded under another login than
// its lease's acquirer) is caught with exit 10, naming the check.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QtTest>
#include <pqxx/pqxx>
#include <thread>

using nlohmann::json;

namespace {

RunResult ok(const TestDatabase& db, const Args& args, const std::string& input = {}, const Env& env = {})
{
    RunResult r = relctl(db, args, input, env);
    if (r.exitCode != 0)
        qFatal("relctl failed: %s", failure(r));
    return r;
}

std::string acquire(const TestDatabase& db, const std::string& env, const std::string& job, int generation,
                    const std::string& ttl = "60s")
{
    return ok(db,
              {"lease", "acquire", "--env", env, "--job", job, "--release", "r" + std::to_string(generation),
               "--generation", std::to_string(generation), "--ttl", ttl, "--op-id", job + "-acquire"})
        .line();
}

Env lease(const std::string& handle)
{
    return {{"RELCTL_LEASE", handle}};
}

void awaitQueueLength(const TestDatabase& db, const std::string& env, std::size_t count)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 20000) {
        if (ok(db, {"--json", "env", "show", env}).json()["queue"].size() == count)
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    qFatal("the queue of %s never reached %zu candidates", env.c_str(), count);
}

// Every kind of row the checks judge, made through the protocol.
void makeHistory(const TestDatabase& db)
{
    ok(db, {"env", "add", "prod", "--default-ttl", "1s", "--max-ttl", "1m"});
    ok(db, {"env", "add", "staging"});

    // A publish, retried with its op id: answered from the record.
    const std::string j1 = acquire(db, "prod", "j1", 1);
    ok(db, {"publish", "--op-id", "j1-publish"}, {}, lease(j1));
    QVERIFY(
        ok(db, {"--json", "publish", "--op-id", "j1-publish"}, {}, lease(j1)).json()["replayed"].get<bool>());
    ok(db, {"lease", "release"}, {}, lease(j1));

    // j2's lease expires; j3 takes the next token and publishes a newer
    // generation; j2's late publish is refused as stale.
    const std::string j2 = acquire(db, "prod", "j2", 3, "1s");
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    const std::string j3 = acquire(db, "prod", "j3", 4);
    ok(db, {"publish", "--op-id", "j3-publish"}, {}, lease(j3));
    ok(db, {"lease", "release"}, {}, lease(j3));
    const RunResult stale = relctl(db, {"publish", "--op-id", "j2-publish"}, {}, lease(j2));
    QVERIFY2(stale.exitCode == 4 && stale.err.find("STALE_GENERATION") != std::string::npos, failure(stale));
    // A renewal of the expired, superseded lease is refused too.
    QCOMPARE(relctl(db, {"lease", "renew"}, {}, lease(j2)).exitCode, 5);

    // A queue: j5 waits while j4 holds the lease, and is granted on release.
    const std::string j4 = acquire(db, "prod", "j4", 5);
    auto waiter =
        startRelctl(db, {"--json", "lease", "acquire", "--env", "prod", "--job", "j5", "--release", "r6",
                         "--generation", "6", "--ttl", "60s", "--wait", "30s", "--op-id", "j5-acquire"});
    awaitQueueLength(db, "prod", 1);
    ok(db, {"lease", "release"}, {}, lease(j4));
    const RunResult granted = finish(*waiter, 30000);
    QVERIFY2(granted.exitCode == 0, failure(granted));
    const std::string j5 = granted.json()["handle"].get<std::string>();
    ok(db, {"publish", "--op-id", "j5-publish"}, {}, lease(j5));

    // A revoke ends j5's lease; its renewal is refused LEASE_REVOKED.
    ok(db, {"lease", "revoke", "--env", "prod", "--by", "alice", "--reason", "stuck deploy"});
    QCOMPARE(relctl(db, {"lease", "renew"}, {}, lease(j5)).exitCode, 5);

    // A freeze refuses an acquisition.
    ok(db, {"freeze", "--env", "prod", "--by", "alice", "--reason", "incident"});
    QCOMPARE(relctl(db, {"lease", "acquire", "--env", "prod", "--job", "j6", "--release", "r7",
                         "--generation", "7", "--op-id", "j6-acquire"})
                 .exitCode,
             6);
    ok(db, {"unfreeze", "--env", "prod", "--by", "alice"});

    const std::string s1 = acquire(db, "staging", "s1", 1);
    ok(db, {"publish", "--op-id", "s1-publish"}, {}, lease(s1));
    ok(db, {"lease", "release"}, {}, lease(s1));
}

// job acquires (release r<generation>), publishes and releases.
void publishThrough(const TestDatabase& db, const std::string& env, const std::string& job, int generation)
{
    const std::string handle = acquire(db, env, job, generation);
    ok(db, {"publish", "--op-id", job + "-publish"}, {}, lease(handle));
    ok(db, {"lease", "release"}, {}, lease(handle));
}

// The verdicts of `relctl --json verify`, by name.
std::map<std::string, json> checksOf(const json& report)
{
    std::map<std::string, json> out;
    for (const json& c : report.at("checks"))
        out[c.at("name").get<std::string>()] = c;
    return out;
}

// Empty when `relctl --json verify ARGS` failed with exit 10 on `name` and
// on no other check (its violations are then in `violations`); else why not.
std::string failedOnlyOn(const TestDatabase& db, const std::string& name, const Args& args, json& violations)
{
    Args all{"--json", "verify"};
    all.insert(all.end(), args.begin(), args.end());
    const RunResult r = relctl(db, all);
    if (r.exitCode != 10)
        return "verify did not fail: " + r.describe();
    const auto checks = checksOf(r.json());
    for (const auto& [other, c] : checks)
        if (c["passed"].get<bool>() == (other == name))
            return other + (other == name ? " passed: " : " failed too: ") + r.out;
    violations = checks.at(name)["violations"];
    return {};
}

// Every word of `words` in `text`.
void mentions(const std::string& text, const std::vector<std::string>& words)
{
    for (const std::string& word : words)
        QVERIFY2(text.find(word) != std::string::npos, ("\"" + word + "\" not in: " + text).c_str());
}

} // namespace

class TestVerify final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        m_db = std::make_unique<TestDatabase>();
        makeHistory(*m_db);
        QVERIFY(!QTest::currentTestFailed());
    }

    void cleanupTestCase() { m_db.reset(); }

    void aProtocolHistoryVerifiesClean()
    {
        const RunResult r = relctl(*m_db, {"--json", "verify"});
        QVERIFY2(r.exitCode == 0, failure(r));
        const json report = r.json();
        QCOMPARE(report["passed"], json(true));
        QVERIFY(report["env"].is_null() && report["since"].is_null());
        const auto checks = checksOf(report);
        QCOMPARE(checks.size(), std::size_t{9});
        for (const auto& [name, c] : checks) {
            QVERIFY2(c["passed"].get<bool>(), c.dump().c_str());
            QVERIFY(c["violations"].empty());
        }
        // Not vacuous: the history's rows were judged.
        const std::string leases = checks.at("fencing-tokens-increase")["detail"];
        QVERIFY2(leases.rfind("6 leases", 0) == 0, leases.c_str());
        const std::string manifests = checks.at("publish-under-live-lease")["detail"];
        QVERIFY2(manifests.rfind("4 serialized manifests", 0) == 0, manifests.c_str());
        const std::string refusals = checks.at("refusals-explained")["detail"];
        QVERIFY2(refusals.rfind("4 rejected events", 0) == 0, refusals.c_str());
        QVERIFY2(refusals.find("1 refused operations") != std::string::npos, refusals.c_str());
        const std::string overlap = checks.at("leases-never-overlap")["detail"];
        QVERIFY2(overlap.rfind("6 leases", 0) == 0, overlap.c_str());
        // j5's lease was handed over by j4's release: its grant names j5's login.
        const std::string logins = checks.at("publish-by-acquiring-login")["detail"];
        QVERIFY2(logins.rfind("4 accepted publishes", 0) == 0, logins.c_str());

        // Plain output: one PASS line per check.
        const RunResult plain = relctl(*m_db, {"verify"});
        QCOMPARE(plain.exitCode, 0);
        QCOMPARE(static_cast<int>(std::count(plain.out.begin(), plain.out.end(), '\n')), 9);
        QVERIFY2(plain.out.rfind("PASS fencing-tokens-increase: ", 0) == 0, plain.out.c_str());
    }

    void oneEnvironmentAndAWindowVerifyToo()
    {
        RunResult r = relctl(*m_db, {"--json", "verify", "--env", "prod", "--since", "1h"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(r.json()["env"], json("prod"));
        QVERIFY(r.json()["since"].is_number_integer());
        const std::string since =
            m_db->scalar("SELECT min(at)::text FROM relctl.events WHERE operation = 'freeze'");
        r = relctl(*m_db, {"--json", "verify", "--env", "prod", "--since", since});
        QVERIFY2(r.exitCode == 0, failure(r));
        // Only the window is judged: the lease after the freeze (none) and the
        // rejected acquire of the freeze.
        const std::string refusals = checksOf(r.json()).at("refusals-explained")["detail"];
        QVERIFY2(refusals.rfind("1 rejected events", 0) == 0, refusals.c_str());
    }

    void badInputExitsTwoWithOneMessage()
    {
        for (const Args& args : {Args{"verify", "--env", "nosuch"}, Args{"verify", "--since", "not a time"},
                                 Args{"verify", "--env", "Not-A-Name"}}) {
            const RunResult r = relctl(*m_db, args);
            QVERIFY2(r.exitCode == 2, failure(r));
            QVERIFY(r.out.empty());
            QCOMPARE(static_cast<int>(std::count(r.err.begin(), r.err.end(), '\n')), 1);
        }
        QVERIFY(relctl(*m_db, {"verify", "--env", "nosuch"}).err.find("unknown environment \"nosuch\"") !=
                std::string::npos);
    }

    void aReviewerMayVerifyAndAJobMayNot()
    {
        const RunResult reviewer = relctlWithDsn(m_db->reviewerDsn(), {"verify"});
        QVERIFY2(reviewer.exitCode == 0, failure(reviewer));
        QCOMPARE(sqlState(m_db->reviewerDsn(), "SELECT relctl.history(NULL, NULL)"), std::string());
        QCOMPARE(sqlState(m_db->reviewerDsn(), "SELECT relctl.history('prod', now())"), std::string());
        QCOMPARE(sqlState(m_db->reviewerDsn(), "SELECT relctl.history('nosuch', NULL)"),
                 std::string("RC002"));
        QCOMPARE(sqlState(m_db->jobDsn(), "SELECT relctl.history(NULL, NULL)"), std::string("42501"));
        QCOMPARE(relctlWithDsn(m_db->jobDsn(), {"verify"}).exitCode, 1);
        // What it returns holds no credential.
        const std::string all = m_db->json("SELECT relctl.history(NULL, NULL)").dump();
        QVERIFY(all.find("lease_id") == std::string::npos && all.find("secret") == std::string::npos);
    }

    // A rollback through the protocol, with stale retries after it and a
    // newer publish: the current manifest is an older one for a while, the
    // rollback's lease has no acquire event, and the refusals are explained by
    // the high-water mark (the checker once compared them with the current
    // generation and failed here).
    void aRollbackWithStaleRetriesVerifiesClean()
    {
        ok(*m_db, {"env", "add", "canary"});
        const auto publish = [&](const std::string& job, int generation) {
            std::string handle = acquire(*m_db, "canary", job, generation);
            ok(*m_db, {"publish", "--op-id", job + "-publish"}, {}, lease(handle));
            ok(*m_db, {"lease", "release"}, {}, lease(handle));
            return handle;
        };
        const std::string c8 = publish("c8", 8);
        const std::string c9 = publish("c9", 9);
        const RunResult back =
            relctlWithDsn(m_db->adminDsn(), {"--json", "rollback", "--env", "canary", "--to-release", "r8",
                                             "--by", "alice", "--reason", "r9 is broken"});
        QVERIFY2(back.exitCode == 0, failure(back));
        QCOMPARE(back.json()["rolled_back"], json(true));
        const auto stale = [&](const RunResult& r) {
            QVERIFY2(r.exitCode == 4 && r.err.find("STALE_GENERATION") != std::string::npos, failure(r));
        };
        stale(relctl(*m_db, {"lease", "acquire", "--env", "canary", "--job", "c9", "--release", "r9",
                             "--generation", "9", "--op-id", "c9-acquire-again"}));
        stale(relctl(*m_db, {"publish", "--op-id", "c9-publish-again"}, {}, lease(c9)));
        stale(relctl(*m_db, {"publish", "--op-id", "c8-publish-again"}, {}, lease(c8)));

        // Rolled back: r8 is current, 9 is the bar.
        RunResult r = relctl(*m_db, {"--json", "verify", "--env", "canary"});
        QVERIFY2(r.exitCode == 0, failure(r));
        auto checks = checksOf(r.json());
        QCOMPARE(checks.size(), std::size_t{9});
        const std::string advance = checks.at("generations-advance")["detail"];
        QVERIFY2(advance.rfind("2 manifests", 0) == 0 && advance.find("1 rollbacks") != std::string::npos,
                 advance.c_str());
        const std::string leases = checks.at("fencing-tokens-increase")["detail"];
        QVERIFY2(leases.rfind("3 leases", 0) == 0 && leases.find("1 by rollbacks") != std::string::npos,
                 leases.c_str());
        const std::string refusals = checks.at("refusals-explained")["detail"];
        QVERIFY2(refusals.rfind("3 rejected events", 0) == 0, refusals.c_str());
        const std::string bar = checks.at("freshness-bar-kept")["detail"];
        QVERIFY2(bar.rfind("4 accepted acquires and publishes", 0) == 0, bar.c_str());

        // A newer release adopts; a window that starts after the rollback
        // takes the bar from its context.
        publish("c10", 10);
        const std::string since = m_db->scalar(
            "SELECT min(at)::text FROM relctl.events WHERE operation = 'rollback' AND env = 'canary'");
        for (const Args& args :
             {Args{"--json", "verify"}, Args{"--json", "verify", "--env", "canary", "--since", since}}) {
            r = relctl(*m_db, args);
            QVERIFY2(r.exitCode == 0, failure(r));
        }
        checks = checksOf(r.json());
        const std::string window = checks.at("freshness-bar-kept")["detail"];
        QVERIFY2(window.rfind("2 accepted acquires and publishes", 0) == 0, window.c_str());
        QVERIFY2(checks.at("refusals-explained")["detail"].get<std::string>().rfind("3 rejected events", 0) ==
                     0,
                 checks.at("refusals-explained").dump().c_str());
    }

    // A lease granted around the protocol while j1's was live: a lease row
    // with the next token, its acquire event and the environment's last
    // token, all consistent with each other, so only the overlap shows.
    void aLeaseGrantedWhileAnotherWasLiveIsCaught()
    {
        TestDatabase db;
        ok(db, {"env", "add", "prod"});
        acquire(db, "prod", "j1", 1);
        QCOMPARE(relctl(db, {"verify"}).exitCode, 0);

        db.exec("INSERT INTO relctl.leases (env, token, job, release, generation, ttl_ms, acquired_at, "
                "expires_at) "
                "VALUES ('prod', 2, 'intruder', 'r2', 2, 60000, clock_timestamp(), "
                "clock_timestamp() + interval '60 seconds')");
        db.exec("INSERT INTO relctl.events (env, operation, outcome, job, release, generation, token, "
                "current_token) VALUES ('prod', 'acquire', 'accepted', 'intruder', 'r2', 2, 2, 2)");
        db.exec("UPDATE relctl.environments SET last_token = 2 WHERE name = 'prod'");
        const std::string grant = db.scalar("SELECT max(id) FROM relctl.events WHERE job = 'intruder'");
        const std::string first = db.scalar("SELECT min(id) FROM relctl.events WHERE job = 'j1'");
        for (const Args& args : {Args{}, Args{"--env", "prod"}}) {
            json violations;
            const std::string why = failedOnlyOn(db, "leases-never-overlap", args, violations);
            QVERIFY2(why.empty(), why.c_str());
            QCOMPARE(violations.size(), std::size_t{1});
            mentions(violations[0], {"lease prod:2 (job intruder) (granted by event #" + grant,
                                     "lease prod:1 (job j1) (granted by event #" + first, " to login ",
                                     "ms before it expired, and it never ended"});
        }
    }

    // prod takes only what staging accepted and did not roll back. A
    // superuser switches the gate off (prod's promote_from, set back after,
    // with no env-set), and prod publishes r2, which staging rolled back.
    void aPublishOfAReleaseRolledBackUpstreamIsCaught()
    {
        TestDatabase db;
        ok(db, {"env", "add", "staging"});
        ok(db, {"env", "add", "prod"});
        ok(db, {"env", "set", "prod", "--promote-from", "staging"});
        publishThrough(db, "staging", "s1", 1);
        publishThrough(db, "staging", "s2", 2);
        publishThrough(db, "prod", "p1", 1);
        RunResult r = relctlWithDsn(db.adminDsn(), {"rollback", "--env", "staging", "--to-release", "r1",
                                                    "--by", "alice", "--reason", "r2 is broken"});
        QVERIFY2(r.exitCode == 0, failure(r));
        r = relctl(db, {"lease", "acquire", "--env", "prod", "--job", "p2", "--release", "r2", "--generation",
                        "2", "--op-id", "p2-refused"});
        QVERIFY2(r.exitCode != 0 && r.err.find("NOT_PROMOTED") != std::string::npos, failure(r));
        r = relctl(db, {"--json", "verify"});
        QVERIFY2(r.exitCode == 0, failure(r));
        const std::string kept = checksOf(r.json()).at("promotion-path-kept")["detail"];
        QVERIFY2(kept.rfind("1 publishes on promoted environments", 0) == 0, kept.c_str());

        db.exec("UPDATE relctl.environments SET promote_from = NULL WHERE name = 'prod'");
        publishThrough(db, "prod", "p2", 2);
        db.exec("UPDATE relctl.environments SET promote_from = 'staging' WHERE name = 'prod'");

        const std::string publish =
            db.scalar("SELECT id FROM relctl.events WHERE operation = 'publish' AND job = 'p2'");
        const std::string rollback = db.scalar("SELECT id FROM relctl.rollbacks");
        const std::string withdrawn =
            db.scalar("SELECT id FROM relctl.manifests WHERE env = 'staging' AND release = 'r2'");
        const std::string since = db.scalar(
            "SELECT published_at::text FROM relctl.manifests WHERE env = 'prod' AND release = 'r2'");
        // Judged with prod alone, and in a window after the rollback: the
        // upstream's rows come along as context.
        for (const Args& args : {Args{}, Args{"--env", "prod"}, Args{"--env", "prod", "--since", since}}) {
            json violations;
            const std::string why = failedOnlyOn(db, "promotion-path-kept", args, violations);
            QVERIFY2(why.empty(), why.c_str());
            QCOMPARE(violations.size(), std::size_t{1});
            mentions(violations[0], {"event #" + publish + " (publish on prod, accepted) by job p2, login ",
                                     "r2 generation 2 on prod, which is promoted from staging",
                                     "ms after rollback #" + rollback + " on staging",
                                     "it replaced manifest #" + withdrawn + " on staging"});
        }
        QCOMPARE(relctl(db, {"verify", "--env", "staging"}).exitCode, 0);
    }

    // A lease handed over on a queued candidate's behalf is its waiter's:
    // the grant names the waiter's login, not the releasing session's. A
    // publish recorded under another login than the acquirer's is caught.
    void aPublishByAnotherLoginThanTheAcquirersIsCaught()
    {
        TestDatabase db;
        ok(db, {"env", "add", "prod"});
        const std::string holder = acquire(db, "prod", "j1", 1);
        auto waiter = startRelctlWithDsn(db.jobDsn(), {"--json", "lease", "acquire", "--env", "prod", "--job",
                                                       "j2", "--release", "r2", "--generation", "2", "--ttl",
                                                       "60s", "--wait", "30s", "--op-id", "j2-acquire"});
        awaitQueueLength(db, "prod", 1);
        ok(db, {"lease", "release"}, {}, lease(holder));
        const RunResult granted = finish(*waiter, 30000);
        QVERIFY2(granted.exitCode == 0, failure(granted));
        const RunResult published = relctlWithDsn(db.jobDsn(), {"publish", "--op-id", "j2-publish"},
                                                  lease(granted.json()["handle"].get<std::string>()));
        QVERIFY2(published.exitCode == 0, failure(published));
        QCOMPARE(db.scalar("SELECT db_user FROM relctl.events WHERE operation = 'acquire' AND job = 'j2'"),
                 std::string("relctl_test_job"));
        QVERIFY(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'acquire' AND job = 'j2' "
                         "AND detail ? 'handed_over_by'") == 1);
        RunResult r = relctl(db, {"--json", "verify"});
        QVERIFY2(r.exitCode == 0, failure(r));
        const std::string logins = checksOf(r.json()).at("publish-by-acquiring-login")["detail"];
        QVERIFY2(logins.rfind("1 accepted publishes", 0) == 0, logins.c_str());

        // A candidate queued before its login was kept (migration 0011) and
        // handed over by another session: that grant recorded the releasing
        // session's login, which says nothing about the requester.
        const std::string releaser =
            db.scalar("SELECT db_user FROM relctl.events WHERE operation = 'release' AND job = 'j1'");
        QVERIFY(releaser != "relctl_test_job");
        db.exec("ALTER TABLE relctl.events DISABLE TRIGGER USER");
        db.exec("UPDATE relctl.candidates SET db_user = NULL WHERE job = 'j2'");
        db.exec("UPDATE relctl.events SET db_user = " + sqlLiteral(releaser) +
                " WHERE operation = 'acquire' AND job = 'j2'");
        r = relctl(db, {"--json", "verify"});
        QVERIFY2(r.exitCode == 0, failure(r));
        const std::string unknown = checksOf(r.json()).at("publish-by-acquiring-login")["detail"];
        QVERIFY2(unknown.rfind("0 accepted publishes", 0) == 0 &&
                     unknown.find("1 with an acquirer's login not kept") != std::string::npos,
                 unknown.c_str());
        db.exec("UPDATE relctl.candidates SET db_user = 'relctl_test_job' WHERE job = 'j2'");
        db.exec("UPDATE relctl.events SET db_user = 'relctl_test_job' WHERE operation = 'acquire' AND job = "
                "'j2'");

        db.exec("UPDATE relctl.events SET db_user = 'mallory' WHERE operation = 'publish' AND job = 'j2'");
        db.exec("ALTER TABLE relctl.events ENABLE TRIGGER USER");
        const std::string publish = db.scalar("SELECT id FROM relctl.events WHERE operation = 'publish'");
        const std::string grant =
            db.scalar("SELECT id FROM relctl.events WHERE operation = 'acquire' AND job = 'j2'");
        // In a window that starts at the publish, the acquire is context.
        const std::string since = db.scalar("SELECT at::text FROM relctl.events WHERE operation = 'publish'");
        for (const Args& args : {Args{}, Args{"--env", "prod", "--since", since}}) {
            json violations;
            const std::string why = failedOnlyOn(db, "publish-by-acquiring-login", args, violations);
            QVERIFY2(why.empty(), why.c_str());
            QCOMPARE(violations.size(), std::size_t{1});
            mentions(violations[0], {"event #" + publish + " (publish on prod, accepted) by login mallory",
                                     "under lease prod:2 (job j2)", "event #" + grant,
                                     "granted to login relctl_test_job", "publish op id j2-publish"});
        }
    }

    // The checker judges whole milliseconds: a window that starts inside
    // one starts at its beginning, on the server too, or a manifest of that
    // millisecond before the start is context to the server and in the
    // window to the checker (whose bar then missed it). j1's publish, its
    // event and its op record are moved inside the millisecond of the start.
    void aWindowThatStartsInsideAMillisecondVerifiesClean()
    {
        TestDatabase db;
        ok(db, {"env", "add", "prod"});
        publishThrough(db, "prod", "j1", 1);
        acquire(db, "prod", "j2", 2);
        const std::string ms = "(SELECT date_trunc('milliseconds', published_at) FROM relctl.manifests)";
        for (const char* table : {"manifests", "events", "operations"})
            db.exec(std::string("ALTER TABLE relctl.") + table + " DISABLE TRIGGER USER");
        db.exec("UPDATE relctl.events SET at = " + ms +
                " + interval '995 microseconds' "
                "WHERE operation = 'publish'");
        db.exec("UPDATE relctl.operations SET recorded_at = " + ms +
                " + interval '996 microseconds' "
                "WHERE op_id = 'j1-publish'");
        db.exec(
            "UPDATE relctl.manifests SET published_at = "
            "least(published_at, date_trunc('milliseconds', published_at) + interval '990 microseconds')");
        for (const char* table : {"manifests", "events", "operations"})
            db.exec(std::string("ALTER TABLE relctl.") + table + " ENABLE TRIGGER USER");
        const std::string since = db.scalar("SELECT (" + ms + " + interval '999 microseconds')::text");
        QVERIFY(db.count("SELECT count(*) FROM relctl.events WHERE at >= '" + since + "'") >= 2);

        const RunResult r = relctl(db, {"--json", "verify", "--since", since});
        QVERIFY2(r.exitCode == 0, failure(r));
        const auto checks = checksOf(r.json());
        const std::string bar = checks.at("freshness-bar-kept")["detail"];
        QVERIFY2(bar.find("3 recorded high-water marks") != std::string::npos, bar.c_str());
        const std::string manifests = checks.at("publish-under-live-lease")["detail"];
        QVERIFY2(manifests.rfind("1 serialized manifests", 0) == 0, manifests.c_str());
    }

    // Last: it writes around the protocol.
    void aTamperingSuperuserIsCaught()
    {
        // A manifest under j2's token, superseded by j3's, inserted directly
        // (and made current) as a newer generation.
        m_db->exec("INSERT INTO relctl.manifests (env, release, generation, job, token, published_at, op_id) "
                   "SELECT 'prod', 'r9', 9, 'j2', 2, clock_timestamp(), NULL");
        m_db->exec("UPDATE relctl.environments SET current_manifest_id = "
                   "(SELECT max(id) FROM relctl.manifests WHERE env = 'prod') WHERE name = 'prod'");
        RunResult r = relctl(*m_db, {"--json", "verify"});
        QVERIFY2(r.exitCode == 10, failure(r));
        json report = r.json();
        QCOMPARE(report["passed"], json(false));
        auto checks = checksOf(report);
        QCOMPARE(checks.at("publish-under-live-lease")["passed"], json(false));
        const std::string first = checks.at("publish-under-live-lease")["violations"][0];
        QVERIFY2(first.find("prod:") != std::string::npos, first.c_str());
        for (const char* other : {"fencing-tokens-increase", "generations-advance", "freshness-bar-kept",
                                  "refusals-explained", "operations-applied-once", "leases-never-overlap",
                                  "promotion-path-kept", "publish-by-acquiring-login"})
            QVERIFY2(checks.at(other)["passed"].get<bool>(), checks.at(other).dump().c_str());

        // The append-only guard disabled to move the newest generation back.
        m_db->exec("ALTER TABLE relctl.manifests DISABLE TRIGGER USER");
        m_db->exec("UPDATE relctl.manifests SET generation = 2 WHERE generation = 9 AND env = 'prod'");
        m_db->exec("ALTER TABLE relctl.manifests ENABLE TRIGGER USER");
        r = relctl(*m_db, {"verify"});
        QVERIFY2(r.exitCode == 10, failure(r));
        QVERIFY2(r.out.find("FAIL generations-advance: manifest #") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("FAIL publish-under-live-lease: ") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("PASS fencing-tokens-increase: ") != std::string::npos, r.out.c_str());
        // The other environment is still clean on its own.
        QCOMPARE(relctl(*m_db, {"verify", "--env", "staging"}).exitCode, 0);
    }

private:
    std::unique_ptr<TestDatabase> m_db;
};

QTEST_GUILESS_MAIN(TestVerify)
#include "test_verify.moc"
