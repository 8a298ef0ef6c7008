// Approvals from distinct people are approvals from distinct database logins:
// every person here is a login of their own, every decision a separate
// relctl process (or a direct call of the SQL function, as an attacker with
// that login would make it). The name given with --by is only a label: one
// login counts once whatever names it types, the requester's login cannot
// approve, an environment's approver role admits only its members, and every
// refusal is in the audit trail with the login that attempted it.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QtTest>
#include <pqxx/pqxx>

using nlohmann::json;

namespace {

std::string reasonOf(const RunResult& r)
{
    const json j = json::parse(r.out, nullptr, false);
    return j.is_object() && j.contains("error") ? j["error"].get<std::string>() : std::string("(none)");
}

// The job's acquire opens the promotion request (APPROVAL_REQUIRED); its id.
std::string openByJob(const TestDatabase& db, const std::string& jobDsn, const std::string& release,
                      int generation)
{
    RunResult r =
        relctlWithDsn(jobDsn, {"--json", "lease", "acquire", "--env", "prod", "--job", "job-" + release,
                               "--release", release, "--generation", std::to_string(generation)});
    if (r.exitCode != 11 || reasonOf(r) != "APPROVAL_REQUIRED")
        qFatal("expected APPROVAL_REQUIRED, got exit %d: %s %s", r.exitCode, r.out.c_str(), r.err.c_str());
    return db.scalar("SELECT id FROM relctl.promotions WHERE env = 'prod' AND release = " +
                     sqlLiteral(release));
}

RunResult approve(const std::string& dsn, const std::string& id, const std::string& by)
{
    return relctlWithDsn(dsn, {"--json", "promote", "approve", id, "--by", by});
}

long long refusals(const TestDatabase& db, const std::string& reason, const std::string& login,
                   const std::string& actor)
{
    return db.count("SELECT count(*) FROM relctl.events WHERE reason = " + sqlLiteral(reason) +
                    " AND outcome = 'rejected' AND db_user = " + sqlLiteral("relctl_test_" + login) +
                    " AND actor = " + sqlLiteral(actor));
}

} // namespace

class TestApprovers final : public QObject
{
    Q_OBJECT

private slots:
    // One login typing two names is one approval: the second name is refused
    // DUPLICATE_APPROVAL (exit 11, recorded with the login), through relctl
    // and through the SQL function alike; a name another login already
    // decided under is refused too; the same decision again is a retry.
    void oneLoginCountsOnce()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approvals", "2"}).exitCode, 0);
        const std::string alice = db.loginDsn("alice"), bob = db.loginDsn("bob");
        const std::string id = openByJob(db, db.jobDsn(), "v7", 7);

        QCOMPARE(approve(alice, id, "alice").exitCode, 0);
        RunResult second = approve(alice, id, "bob");
        QCOMPARE(second.exitCode, 11);
        QCOMPARE(reasonOf(second), std::string("DUPLICATE_APPROVAL"));
        QVERIFY2(second.err.find("login relctl_test_alice already approved") != std::string::npos,
                 second.err.c_str());
        QCOMPARE(refusals(db, "DUPLICATE_APPROVAL", "alice", "bob"), 1LL);
        // The attack straight through the function: refused and recorded the same way.
        const json direct = [&] {
            pqxx::connection c(alice);
            return json::parse(
                pqxx::nontransaction(c)
                    .exec1("SELECT relctl.decide_promotion(" + id + ", true, 'mallory', NULL, '{}')")[0]
                    .c_str());
        }();
        QCOMPARE(direct["status"], json("refused"));
        QCOMPARE(direct["reason"], json("DUPLICATE_APPROVAL"));
        QCOMPARE(refusals(db, "DUPLICATE_APPROVAL", "alice", "mallory"), 1LL);
        // A denial after its approval is a second decision too.
        QCOMPARE(reasonOf(relctlWithDsn(
                     alice, {"--json", "promote", "deny", id, "--by", "alice", "--reason", "no"})),
                 std::string("DUPLICATE_APPROVAL"));
        // The same decision again is a retry: no change, nothing refused.
        RunResult retry = approve(alice, id, "alice");
        QCOMPARE(retry.exitCode, 0);
        QCOMPARE(retry.json()["changed"], json(false));
        // Still one approval of two: the job is still refused.
        QCOMPARE(db.scalar("SELECT state FROM relctl.promotions WHERE id = " + id), std::string("open"));
        QCOMPARE(relctl(db, {"--json", "promote", "list", "--env", "prod"})
                     .json()["promotions"][0]["approvals_given"],
                 json(1));
        RunResult still = relctlWithDsn(db.jobDsn(), {"--json", "lease", "acquire", "--env", "prod", "--job",
                                                      "job-v7", "--release", "v7", "--generation", "7"});
        QCOMPARE(reasonOf(still), std::string("APPROVAL_REQUIRED"));

        // Another login cannot borrow alice's name either.
        RunResult borrowed = approve(bob, id, "alice");
        QCOMPARE(reasonOf(borrowed), std::string("DUPLICATE_APPROVAL"));
        QCOMPARE(refusals(db, "DUPLICATE_APPROVAL", "bob", "alice"), 1LL);

        // A second login under a name of its own is the second approval.
        RunResult counted = approve(bob, id, "bob");
        QVERIFY2(counted.exitCode == 0, counted.err.c_str());
        QCOMPARE(counted.json()["state"], json("approved"));
        QCOMPARE(counted.json()["approvals_given"], json(2));
        // Each approval shows its login beside its name.
        std::vector<std::string> logins;
        const json decided = counted.json();
        for (const json& a : decided["approvals"])
            logins.push_back(a["login"].get<std::string>());
        QVERIFY2(logins == (std::vector<std::string>{"relctl_test_alice", "relctl_test_bob"}),
                 decided["approvals"].dump().c_str());
        const std::string listed = relctl(db, {"promote", "list", "--env", "prod", "--all"}).out;
        QVERIFY2(listed.find("alice (login relctl_test_alice)") != std::string::npos, listed.c_str());
        QVERIFY2(listed.find("requested by job-v7 (login relctl_test_job)") != std::string::npos,
                 listed.c_str());
        RunResult granted =
            relctlWithDsn(db.jobDsn(), {"--json", "lease", "acquire", "--env", "prod", "--job", "job-v7",
                                        "--release", "v7", "--generation", "7"});
        QVERIFY2(granted.exitCode == 0, granted.err.c_str());
    }

    // Sessions of one login racing to approve under different names (each a
    // separate relctl process): exactly one approval counts.
    void racingSessionsOfOneLoginCountOnce()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approvals", "2"}).exitCode, 0);
        const std::string carol = db.loginDsn("carol");
        const std::string id = openByJob(db, db.jobDsn(), "v3", 3);
        constexpr int kRacers = 8;
        std::vector<std::unique_ptr<QProcess>> racers;
        racers.reserve(kRacers);
        for (int i = 0; i < kRacers; ++i)
            racers.push_back(startRelctlWithDsn(
                carol, {"--json", "promote", "approve", id, "--by", "name-" + std::to_string(i)}));
        int accepted = 0, duplicate = 0;
        for (auto& p : racers) {
            RunResult r = finish(*p, 60000);
            accepted += r.exitCode == 0 ? 1 : 0;
            duplicate += r.exitCode == 11 && reasonOf(r) == "DUPLICATE_APPROVAL" ? 1 : 0;
        }
        QCOMPARE(accepted, 1);
        QCOMPARE(duplicate, 7);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.promotion_decisions WHERE promotion = " + id), 1LL);
        QCOMPARE(db.scalar("SELECT state FROM relctl.promotions WHERE id = " + id), std::string("open"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'DUPLICATE_APPROVAL' "
                          "AND db_user = 'relctl_test_carol'"),
                 7LL);
    }

    // The login that opened a request cannot approve it, whatever name it
    // gives: a login that is both a job and a manager, and a manager's own
    // `promote request`. The refusal is SELF_APPROVAL, recorded with both.
    void theRequestersLoginCannotApprove()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approvals", "1"}).exitCode, 0);
        const std::string both = db.loginDsn("deployer", {"relctl_job", "relctl_manager"});
        const std::string id = openByJob(db, both, "v5", 5);
        QCOMPARE(db.scalar("SELECT requested_login FROM relctl.promotions WHERE id = " + id),
                 std::string("relctl_test_deployer"));
        RunResult self = approve(both, id, "someone-else");
        QCOMPARE(self.exitCode, 11);
        QCOMPARE(reasonOf(self), std::string("SELF_APPROVAL"));
        QVERIFY2(self.err.find("login relctl_test_deployer requested promotion") != std::string::npos,
                 self.err.c_str());
        QCOMPARE(refusals(db, "SELF_APPROVAL", "deployer", "someone-else"), 1LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'SELF_APPROVAL' "
                          "AND detail ->> 'requested_login' = 'relctl_test_deployer'"),
                 1LL);

        const std::string erin = db.loginDsn("erin");
        QCOMPARE(relctlWithDsn(erin, {"promote", "request", "--env", "prod", "--release", "v6",
                                      "--generation", "6", "--by", "erin"})
                     .exitCode,
                 0);
        const std::string asked =
            db.scalar("SELECT id FROM relctl.promotions WHERE env = 'prod' AND release = 'v6'");
        QCOMPARE(reasonOf(approve(erin, asked, "frank")), std::string("SELF_APPROVAL"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.promotion_decisions"), 0LL);
        // The requester may still withdraw it: a denial is not an approval.
        QCOMPARE(relctlWithDsn(erin, {"promote", "deny", asked, "--by", "erin", "--reason", "wrong build"})
                     .exitCode,
                 0);
        // Any other login approves the job's request.
        QCOMPARE(approve(db.loginDsn("alice"), id, "alice").exitCode, 0);
    }

    // With an approver role, only its members decide the environment's
    // promotions and supersessions: a release manager outside it is refused
    // NOT_APPROVER (exit 11, recorded, nothing decided). A role that does not
    // exist is refused when set; one dropped later admits nobody.
    void onlyMembersOfTheApproverRoleDecide()
    {
        TestDatabase db;
        const std::string role = "approvers_" + db.name();
        db.exec("CREATE ROLE " + role + " NOLOGIN");
        const std::string alice = db.loginDsn("alice"),
                          grace = db.loginDsn("grace", {"relctl_manager", role});
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approvals", "1"}).exitCode, 0);

        const auto before = db.footprint();
        RunResult unknown = relctl(db, {"env", "set", "prod", "--approver-role", "no_such_role"});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY2(unknown.err.find("unknown role \"no_such_role\"") != std::string::npos, unknown.err.c_str());
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approver-role", std::string(64, 'r')}).exitCode, 2);
        QCOMPARE(db.footprint(), before);

        RunResult set = relctl(db, {"--json", "env", "set", "prod", "--approver-role", role});
        QCOMPARE(set.exitCode, 0);
        QCOMPARE(set.json()["approver_role"], json(role));
        QCOMPARE(set.json()["changed"]["approver_role"], json(role));
        QVERIFY(relctl(db, {"env", "show", "prod"}).out.find("approvers: members of " + role + " only") !=
                std::string::npos);

        const std::string id = openByJob(db, db.jobDsn(), "v4", 4);
        RunResult outsider = approve(alice, id, "alice");
        QCOMPARE(outsider.exitCode, 11);
        QCOMPARE(reasonOf(outsider), std::string("NOT_APPROVER"));
        QVERIFY2(outsider.err.find("not a member of " + role) != std::string::npos, outsider.err.c_str());
        RunResult denied =
            relctlWithDsn(alice, {"--json", "promote", "deny", id, "--by", "alice", "--reason", "x"});
        QCOMPARE(reasonOf(denied), std::string("NOT_APPROVER"));
        QCOMPARE(refusals(db, "NOT_APPROVER", "alice", "alice"), 2LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.promotion_decisions"), 0LL);

        // Supersession requests of the environment follow the same rule.
        QCOMPARE(relctl(db, {"env", "set", "prod", "--policy", "newest", "--supersede", "approval"}).exitCode,
                 0);
        // A pending request, written through the tests' own window (how the
        // queue opens one is test_queue's subject).
        db.exec(
            "INSERT INTO relctl.candidates (env, job, release, generation, ttl_ms, op_id, state, ended_at) "
            "VALUES ('prod', 'w9', 'v9', 9, 60000, 'w9-op', 'left', clock_timestamp()), "
            "('prod', 'w8', 'v8', 8, 60000, 'w8-op', 'left', clock_timestamp())");
        db.exec(
            "INSERT INTO relctl.supersessions (env, winner, skipped) SELECT 'prod', "
            "(SELECT id FROM relctl.candidates WHERE job = 'w9'), ARRAY[(SELECT id FROM relctl.candidates "
            "WHERE job = 'w8')]");
        const std::string request = db.scalar("SELECT id FROM relctl.supersessions WHERE env = 'prod'");
        RunResult supersession = relctlWithDsn(alice, {"--json", "approve", request, "--by", "alice"});
        QCOMPARE(supersession.exitCode, 11);
        QCOMPARE(reasonOf(supersession), std::string("NOT_APPROVER"));
        QCOMPARE(db.scalar("SELECT state FROM relctl.supersessions WHERE id = " + request),
                 std::string("pending"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'approve' AND reason = "
                          "'NOT_APPROVER' AND db_user = 'relctl_test_alice'"),
                 1LL);
        RunResult member = relctlWithDsn(grace, {"--json", "approve", request, "--by", "grace"});
        QVERIFY2(member.exitCode == 0, member.err.c_str());
        QCOMPARE(member.json()["decided_login"], json("relctl_test_grace"));

        // A member decides the promotion.
        QCOMPARE(approve(grace, id, "grace").exitCode, 0);

        // Dropped, the role admits nobody: the setting fails closed.
        const std::string next = openByJob(db, db.jobDsn(), "v10", 10);
        db.exec("DROP ROLE " + role);
        QCOMPARE(reasonOf(approve(grace, next, "grace")), std::string("NOT_APPROVER"));
        // Cleared, any release manager decides again.
        QCOMPARE(relctl(db, {"env", "set", "prod", "--approver-role", ""}).exitCode, 0);
        QCOMPARE(approve(alice, next, "alice").exitCode, 0);
    }
};

QTEST_GUILESS_MAIN(TestApprovers)
#include "test_approvers.moc"
