// The trust boundary, tried as an attacker with an ordinary CI login would:
// every function is an API that any login can call directly, with any
// arguments, NULLs included, and the protocol's guarantees must hold for that
// caller too. Each attack runs against a real PostgreSQL, through the
// database logins the roles give (relctl_job, relctl_reviewer,
// relctl_manager), never as a superuser.

#define RELCTL_TEST_NO_SHORT_NAME
#include "relctl/catalogue.h"
#include "relctlargs.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QTemporaryDir>
#include <QtTest>
#include <optional>
#include <pqxx/pqxx>
#include <regex>

using nlohmann::json;

namespace {

std::string value(const std::string& dsn, const std::string& sql)
{
    pqxx::connection c(dsn);
    pqxx::nontransaction tx(c);
    const pqxx::row row = tx.exec1(sql);
    return row[0].is_null() ? std::string("<null>") : std::string(row[0].c_str());
}

AcquiredLease acquire(const TestDatabase& db, const std::string& env, const std::string& job, int generation,
                      const Env& extra = {}, const std::string& opId = {})
{
    Args args = leaseAcquireArgs(env, job, generation);
    args.push_back("--ttl");
    args.push_back("60s");
    if (!opId.empty()) {
        args.push_back("--op-id");
        args.push_back(opId);
    }
    return acquireLease(db.jobDsn(), args, extra);
}

} // namespace

class TestSecurity final : public QObject
{
    Q_OBJECT

private slots:
    // Attack 1: a NULL lease id made every comparison with the real one
    // unknown, and the credential check fell through: anyone could publish
    // under another job's live lease, extend it or end it.
    void nullLeaseIdIsRefusedAsInvalidInput_data()
    {
        QTest::addColumn<QString>("call");
        QTest::addRow("publish") << QStringLiteral(
            "relctl.publish('victim', %1, NULL::uuid, '{\"image\":\"nulled\"}', NULL, '{}')");
        QTest::addRow("publish, NULL token") << QStringLiteral(
            "relctl.publish('victim', NULL, gen_random_uuid(), '{\"image\":\"nulled\"}', NULL, '{}')");
        QTest::addRow("renew") << QStringLiteral("relctl.renew('victim', %1, NULL::uuid, 3600000, '{}')");
        QTest::addRow("renew, NULL token")
            << QStringLiteral("relctl.renew('victim', NULL, gen_random_uuid(), NULL, '{}')");
        QTest::addRow("release") << QStringLiteral("relctl.release('victim', %1, NULL::uuid, '{}', NULL)");
        QTest::addRow("release, NULL token")
            << QStringLiteral("relctl.release('victim', NULL, NULL, '{}', NULL)");
    }
    void nullLeaseIdIsRefusedAsInvalidInput()
    {
        QFETCH(QString, call);
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "victim", "--max-ttl", "2h"});
        const AcquiredLease victim = acquire(db, "victim", "job-77", 1);
        const auto before = db.footprint();
        const std::string sql = "SELECT " + call.arg(QString::fromStdString(victim.token)).toStdString();
        QCOMPARE(sqlState(db.jobDsn(), sql), std::string("RC002"));
        QCOMPARE(db.footprint(), before);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE ended_at IS NULL"), 1LL);
        // The victim's lease is untouched and still works.
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "renew"}, {{"RELCTL_LEASE", victim.handle}}).exitCode,
                 0);
    }

    // A wrong lease id is still refused (and recorded) as before.
    void wrongLeaseIdIsRefusedAndRecorded()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "victim"});
        const AcquiredLease victim = acquire(db, "victim", "job-77", 1);
        const json reply =
            json::parse(value(db.jobDsn(), "SELECT relctl.publish('victim', " + victim.token +
                                               ", gen_random_uuid(), '{\"image\":\"guess\"}', NULL, '{}')"));
        QCOMPARE(reply["reason"].get<std::string>(), std::string("BAD_LEASE_ID"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'BAD_LEASE_ID' "
                          "AND db_user = 'relctl_test_job'"),
                 1LL);
    }

    // Attack 2: with table privileges, a CI login could read every live lease
    // id, forge or backdate audit events, extend a lease to 2099, repoint the
    // current manifest, mint a generation with no event, plant an outcome for
    // a future op id, or disable the append-only triggers. No login but the
    // NOLOGIN owner has a privilege on any table.
    void noLoginCanTouchTheTables_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addRow("read lease ids") << QStringLiteral("SELECT lease_id FROM relctl.leases");
        QTest::addRow("forge an event") << QStringLiteral(
            "INSERT INTO relctl.events (at, env, operation, outcome, db_user, client_addr) "
            "VALUES ('2001-01-01', 'prod', 'publish', 'accepted', 'someone-else', '10.0.0.1')");
        QTest::addRow("extend a lease")
            << QStringLiteral("UPDATE relctl.leases SET expires_at = '2099-01-01'");
        QTest::addRow("repoint the current manifest")
            << QStringLiteral("UPDATE relctl.environments SET current_manifest_id = NULL");
        QTest::addRow("mint a generation") << QStringLiteral(
            "INSERT INTO relctl.manifests (env, release, generation, job, token, published_at) "
            "VALUES ('prod', 'evil', 999, 'x', 1, now())");
        QTest::addRow("plant an outcome")
            << QStringLiteral("INSERT INTO relctl.operations (op_id, operation, request, outcome) "
                              "VALUES ('gitlab-78-acquire', 'acquire', '{}', '{\"status\":\"ok\"}')");
        QTest::addRow("read the queue") << QStringLiteral("SELECT * FROM relctl.candidates");
        QTest::addRow("approve a promotion directly") << QStringLiteral(
            "INSERT INTO relctl.promotion_decisions (promotion, decided_by, approve) VALUES (1, 'x', true)");
        QTest::addRow("mark a promotion approved")
            << QStringLiteral("UPDATE relctl.promotions SET state = 'approved'");
        QTest::addRow("lower the freshness bar")
            << QStringLiteral("UPDATE relctl.environments SET high_water_generation = 0");
        QTest::addRow("open a gate") << QStringLiteral(
            "UPDATE relctl.environments SET promote_from = NULL, approvals_required = 0");
        QTest::addRow("erase a rollback") << QStringLiteral("DELETE FROM relctl.rollbacks");
        QTest::addRow("disable the append-only triggers")
            << QStringLiteral("ALTER TABLE relctl.events DISABLE TRIGGER ALL");
        QTest::addRow("call a helper")
            << QStringLiteral("SELECT relctl.record('prod', 'publish', NULL, 'x', 'x', 9, 1, NULL, "
                              "'{}', NULL)");
        QTest::addRow("grant a lease directly")
            << QStringLiteral("SELECT relctl.grant_lease(e, 'x', 'x', 9, 1000, NULL, '{}', now(), NULL) "
                              "FROM relctl.environments e");
        QTest::addRow("create a function in the schema") << QStringLiteral(
            "CREATE FUNCTION relctl.lease_refusal(a int) RETURNS text LANGUAGE sql AS 'SELECT NULL'");
    }
    void noLoginCanTouchTheTables()
    {
        QFETCH(QString, sql);
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        acquire(db, "prod", "job-1", 1);
        const auto before = db.footprint();
        for (const std::string& dsn : {db.jobDsn(), db.reviewerDsn(), db.dsn()})
            QCOMPARE(sqlState(dsn, sql.toStdString()), std::string("42501")); // insufficient_privilege
        QCOMPARE(db.footprint(), before);
    }

    void theOwnerIsNoLoginAndHasNoMembers()
    {
        TestDatabase db;
        QCOMPARE(db.scalar("SELECT rolcanlogin FROM pg_roles WHERE rolname = 'relctl_owner'"),
                 std::string("f"));
        QCOMPARE(db.count("SELECT count(*) FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid "
                          "WHERE r.rolname = 'relctl_owner'"),
                 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM pg_class WHERE relnamespace = 'relctl'::regnamespace "
                          "AND relkind IN ('r', 'S', 'i') AND pg_get_userbyid(relowner) <> 'relctl_owner'"),
                 0LL);
        QCOMPARE(db.scalar("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'relctl'"),
                 std::string("relctl_owner"));
    }

    // Every function a login may call runs as the owner with a fixed
    // search_path (so no object of the caller's can stand in for one of
    // pg_catalog's), nothing is executable by PUBLIC, and helpers are
    // executable by nobody but the owner.
    void callableFunctionsAreSecurityDefinerWithAFixedSearchPath()
    {
        TestDatabase db;
        const auto callable =
            db.rows("SELECT p.proname, p.prosecdef, coalesce(array_to_string(p.proconfig, ','), '') "
                    "FROM pg_proc p WHERE p.pronamespace = 'relctl'::regnamespace "
                    "AND (has_function_privilege('relctl_job', p.oid, 'EXECUTE') "
                    "  OR has_function_privilege('relctl_reviewer', p.oid, 'EXECUTE') "
                    "  OR has_function_privilege('relctl_manager', p.oid, 'EXECUTE')) ORDER BY 1");
        QVERIFY(callable.size() >= 25);
        for (const auto& row : callable) {
            QVERIFY2(row[1] == "t", row[0].c_str());
            QVERIFY2(row[2].find("search_path=pg_catalog, pg_temp") != std::string::npos, row[0].c_str());
        }
        QCOMPARE(
            db.count(
                "SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'relctl'::regnamespace "
                "AND EXISTS (SELECT 1 FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a "
                "WHERE a.grantee = 0)"),
            0LL);
        // What each group role may call, by name.
        const auto canCall = [&](const std::string& role, const std::string& fn) {
            return db.count("SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'relctl'::regnamespace "
                            "AND p.proname = " +
                            sqlLiteral(fn) + " AND has_function_privilege(" + sqlLiteral(role) +
                            ", p.oid, 'EXECUTE')") > 0;
        };
        for (const char* fn : {"acquire", "acquire_candidate", "leave_queue", "stop_waiting", "renew",
                               "release", "publish", "publish_unserialized", "op_show", "op_state",
                               "job_state", "environment_json", "lease_show", "manifest_show"})
            QVERIFY2(canCall("relctl_job", fn), fn);
        for (const char* fn : {"env_add",
                               "env_set",
                               "revoke",
                               "freeze",
                               "unfreeze",
                               "decide",
                               "audit",
                               "trace",
                               "console_audit",
                               "console_audit_export",
                               "console_audit_export_view",
                               "record",
                               "grant_lease",
                               "history",
                               "rollback",
                               "decide_promotion",
                               "promotion_refusal",
                               "open_promotion",
                               "may_decide",
                               "decision_refused"})
            QVERIFY2(!canCall("relctl_job", fn), fn);
        // The approver rules' helpers are the owner's alone: a manager reaches
        // them only through the decisions that apply them.
        for (const char* fn : {"may_decide", "decision_refused", "approvals_given"})
            QVERIFY2(!canCall("relctl_manager", fn), fn);
        QVERIFY(canCall("relctl_job", "promote_request"));
        QVERIFY(canCall("relctl_reviewer", "promotions_list"));
        for (const char* fn : {"rollback", "decide_promotion", "promote_request"})
            QVERIFY2(!canCall("relctl_reviewer", fn), fn);
        for (const char* fn : {"rollback", "decide_promotion", "promote_request", "promotions_list"})
            QVERIFY2(canCall("relctl_manager", fn), fn);
        for (const char* fn :
             {"audit", "trace", "op_show", "op_state", "job_state", "approvals", "console_audit",
              "console_audit_export", "console_audit_export_view", "console_trace", "console_environments",
              "console_timeline", "environment_json", "history"})
            QVERIFY2(canCall("relctl_reviewer", fn), fn);
        for (const char* fn :
             {"acquire", "renew", "release", "publish", "revoke", "freeze", "decide", "env_add"})
            QVERIFY2(!canCall("relctl_reviewer", fn), fn);
        for (const char* fn :
             {"env_add", "env_set", "revoke", "freeze", "unfreeze", "decide", "acquire", "audit"})
            QVERIFY2(canCall("relctl_manager", fn), fn);
    }

    // Every callable function, called with every argument NULL by a login
    // that may call everything: invalid input (RC002) or a harmless answer,
    // never an internal error, and nothing written.
    void everyCallableFunctionSurvivesNullArguments()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        acquire(db, "prod", "job-1", 1);
        const auto calls =
            db.rows("SELECT p.proname, format('SELECT relctl.%I(%s)', p.proname, "
                    "  coalesce((SELECT string_agg('NULL::' || format_type(t, NULL), ', ' ORDER BY o) "
                    "            FROM unnest(p.proargtypes) WITH ORDINALITY a(t, o)), '')) "
                    "FROM pg_proc p WHERE p.pronamespace = 'relctl'::regnamespace "
                    "AND has_function_privilege('relctl_manager', p.oid, 'EXECUTE') ORDER BY 1");
        QVERIFY(calls.size() >= 25);
        const auto before = db.footprint();
        for (const auto& call : calls) {
            const std::string state = sqlState(db.dsn(), call[1]);
            QVERIFY2(state.empty() || state == "RC002", (call[1] + " failed with " + state).c_str());
        }
        QCOMPARE(db.footprint(), before);
    }

    // What the audit trail says about who and when is the server's: the real
    // login, its clock. SECURITY DEFINER functions run as the owner, but the
    // session user is the caller.
    void theRecordedUserIsTheSessionsLogin()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        acquire(db, "prod", "job-1", 1);
        QCOMPARE(db.scalar("SELECT db_user FROM relctl.events WHERE operation = 'env-add'"),
                 std::string("relctl_test_manager"));
        QCOMPARE(db.scalar("SELECT db_user FROM relctl.events WHERE operation = 'acquire'"),
                 std::string("relctl_test_job"));
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.events WHERE abs(extract(epoch FROM at - now())) > 60"),
            0LL);
    }

    // A reviewer reads everything a reviewer needs and never a lease id.
    void reviewersNeverSeeALeaseId()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const AcquiredLease live = acquire(db, "prod", "job-1", 1, {}, "gitlab-77-acquire");
        const std::string consoleAudit =
            "SELECT relctl.console_audit(NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
            "'time', true, NULL, NULL, NULL, 500)::text";
        std::vector<std::string> answers;
        for (const std::string& sql :
             {std::string("SELECT relctl.env_list()"), std::string("SELECT relctl.environment_json('prod')"),
              std::string("SELECT relctl.lease_show('prod')"),
              std::string("SELECT relctl.audit(NULL, NULL, NULL, NULL, NULL, NULL)"),
              std::string("SELECT relctl.trace('job-1')"),
              std::string("SELECT relctl.op_show('gitlab-77-acquire')"),
              std::string("SELECT relctl.op_state('gitlab-77-acquire')"),
              std::string("SELECT relctl.job_state('job-1')"),
              std::string("SELECT relctl.approvals(NULL, true)"),
              std::string("SELECT relctl.console_environments()::text"), consoleAudit,
              std::string("SELECT relctl.console_timeline(0, 9999999999999)::text"),
              std::string("SELECT relctl.history(NULL, NULL)")})
            answers.push_back(value(db.reviewerDsn(), sql));
        for (const std::string& a : answers) {
            QVERIFY2(a.find(live.id) == std::string::npos, a.c_str());
            QVERIFY2(a.find(live.handle) == std::string::npos, a.c_str());
        }
        QVERIFY(answers[2].find("job-1") != std::string::npos); // the reads are not empty
        QVERIFY(answers[6].find("accepted-running") != std::string::npos);
        QVERIFY(answers[7].find("accepted-running") != std::string::npos);
        // And a reviewer cannot act.
        QCOMPARE(sqlState(db.reviewerDsn(), "SELECT relctl.renew('prod', 1, '" + live.id + "', NULL, '{}')"),
                 std::string("42501"));
        QCOMPARE(relctlWithDsn(db.reviewerDsn(), {"env", "add", "staging"}).exitCode, 1);
    }

    // Attack 3: `op show` printed the live lease id and handle, and replaying
    // the acquire with the same op id and request (every field of which is in
    // the audit trail) returned the handle. Replay job 77's acquire, publish
    // evil.json: accepted; job 77's own publish then refused.
    void anOpIdIsNotACredential()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        QTemporaryDir jobMachine, attackerMachine;
        const AcquiredLease job =
            acquire(db, "prod", "gitlab-77", 1, {{"RELCTL_STATE_DIR", jobMachine.path().toStdString()}},
                    "gitlab-77-acquire");

        RunResult shown = relctlWithDsn(db.jobDsn(), {"--json", "op", "show", "gitlab-77-acquire"});
        QCOMPARE(shown.exitCode, 0);
        QVERIFY(shown.out.find(job.id) == std::string::npos);
        QCOMPARE(shown.json()["outcome"]["token"].get<long long>(), std::stoll(job.token));

        const Args replay{"--json", "lease",     "acquire",   "--env",   "prod",
                          "--job",  "gitlab-77", "--release", "r1",      "--generation",
                          "1",      "--ttl",     "60s",       "--op-id", "gitlab-77-acquire"};
        RunResult attack =
            relctlWithDsn(db.jobDsn(), replay, {{"RELCTL_STATE_DIR", attackerMachine.path().toStdString()}});
        QCOMPARE(attack.exitCode, 7);
        QVERIFY2(attack.out.find(job.id) == std::string::npos, attack.out.c_str());
        QVERIFY2(attack.err.find(job.id) == std::string::npos, attack.err.c_str());
        QCOMPARE(attack.json()["error"].get<std::string>(), std::string("REQUEST_SECRET_MISMATCH"));
        // The attempt is in the audit trail, with who tried.
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'REQUEST_SECRET_MISMATCH' "
                          "AND op_id = 'gitlab-77-acquire' AND db_user = 'relctl_test_job'"),
                 1LL);
        // The job's own retry still works, and its publish is accepted.
        RunResult retry =
            relctlWithDsn(db.jobDsn(), replay, {{"RELCTL_STATE_DIR", jobMachine.path().toStdString()}});
        QCOMPARE(retry.exitCode, 0);
        QCOMPARE(retry.json()["handle"].get<std::string>(), job.handle);
        QCOMPARE(retry.json()["replayed"].get<bool>(), true);
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"publish", "--op-id", "gitlab-77-publish"},
                               {{"RELCTL_LEASE", job.handle}})
                     .exitCode,
                 0);
        // The publish's stored request keeps a digest, not the lease id.
        shown = relctlWithDsn(db.jobDsn(), {"--json", "op", "show", "gitlab-77-publish"});
        QCOMPARE(shown.exitCode, 0);
        QVERIFY2(shown.out.find(job.id) == std::string::npos, shown.out.c_str());
        QCOMPARE(db.count("SELECT count(*) FROM relctl.operations WHERE request::text LIKE '%" + job.id +
                          "%' OR outcome::text LIKE '%" + job.id + "%'"),
                 0LL);
    }

    // A CI re-run on another runner proves itself with a shared key.
    void aSharedOpKeyLetsAReRunElsewhereRetry()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        QTemporaryDir first, second;
        const std::string key = "ci-secret-variable-0123456789";
        const AcquiredLease job = acquire(
            db, "prod", "gh-9", 1, {{"RELCTL_STATE_DIR", first.path().toStdString()}, {"RELCTL_OP_KEY", key}},
            "gh-9-acquire");
        const Args again{"--json", "lease", "acquire",   "--env",   "prod",
                         "--job",  "gh-9",  "--release", "r1",      "--generation",
                         "1",      "--ttl", "60s",       "--op-id", "gh-9-acquire"};
        RunResult rerun = relctlWithDsn(
            db.jobDsn(), again, {{"RELCTL_STATE_DIR", second.path().toStdString()}, {"RELCTL_OP_KEY", key}});
        QCOMPARE(rerun.exitCode, 0);
        QCOMPARE(rerun.json()["handle"].get<std::string>(), job.handle);
        RunResult wrongKey = relctlWithDsn(db.jobDsn(), again,
                                           {{"RELCTL_STATE_DIR", second.path().toStdString()},
                                            {"RELCTL_OP_KEY", "another-key-of-enough-length"}});
        QCOMPARE(wrongKey.exitCode, 7);
    }

    // A waiting candidate's id is visible to every reader of the queue;
    // re-evaluating someone else's candidate would hand out its lease, and
    // removing it would drop a job from the queue. Each try is refused
    // NOT_OWN_CANDIDATE (stop_waiting: false) and recorded with the login
    // that made it.
    void aCandidateIsActedOnOnlyByItsOwnWaiter()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const AcquiredLease holder = acquire(db, "prod", "holder", 1);
        auto waiter =
            startRelctl(db, {"--json", "lease", "acquire", "--env", "prod", "--job", "waiter", "--release",
                             "r2", "--generation", "2", "--wait", "60s", "--op-id", "waiter-acquire"});
        QTRY_COMPARE_WITH_TIMEOUT(db.count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting'"),
                                  1LL, 10000);
        const std::string id = db.scalar("SELECT id FROM relctl.candidates");
        for (const std::string& call :
             {"SELECT relctl.acquire_candidate(" + id + ", '{}', NULL)",
              "SELECT relctl.acquire_candidate(" + id + ", '{}', 'a-guess-of-sixteen-or-more')",
              "SELECT relctl.leave_queue(" + id + ", NULL)",
              "SELECT relctl.leave_queue(" + id + ", 'a-guess-of-sixteen-or-more')",
              "SELECT relctl.stop_waiting(" + id + ", NULL)",
              "SELECT relctl.stop_waiting(" + id + ", 'a-guess-of-sixteen-or-more')"}) {
            const std::string answer = value(db.jobDsn(), call);
            QVERIFY2(answer == "f" || answer.find("NOT_OWN_CANDIDATE") != std::string::npos, answer.c_str());
        }
        QCOMPARE(db.scalar("SELECT state FROM relctl.candidates"), std::string("waiting"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'NOT_OWN_CANDIDATE' "
                          "AND db_user = 'relctl_test_job' AND (detail ->> 'candidate')::bigint = " +
                          id),
                 6LL);
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.acquire_candidate(NULL, '{}', NULL)"),
                 std::string("RC002"));
        // Release: the real waiter gets the lease.
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "release"}, {{"RELCTL_LEASE", holder.handle}}).exitCode,
                 0);
        RunResult granted = finish(*waiter, 30000);
        QCOMPARE(granted.exitCode, 0);
        QCOMPARE(granted.json()["job"].get<std::string>(), std::string("waiter"));
    }

    // Advisory locks are open to every login: a squatter holding the lock keys
    // of future candidates must not block the queue.
    void squattedQueueLocksDoNotBlockWaiters()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        acquire(db, "prod", "holder", 1);
        pqxx::connection squatter(db.jobDsn());
        pqxx::nontransaction(squatter).exec(
            "SELECT pg_advisory_lock(1380273219, k) FROM generate_series(1, 2000) k");
        RunResult queued =
            relctlWithDsn(db.jobDsn(), {"--json", "lease", "acquire", "--env", "prod", "--job", "w",
                                        "--release", "r2", "--generation", "2", "--wait", "1s"});
        QCOMPARE(queued.exitCode, 3); // waited its second in the queue, then gave up: not stuck
        QVERIFY2(queued.elapsedMs < 8000, std::to_string(queued.elapsedMs).c_str());
        QCOMPARE(db.scalar("SELECT state FROM relctl.candidates"), std::string("timeout"));
    }

    // The database's own bounds, for every login, psql included: a session
    // that sets them to zero is bounded by the protocol instead
    // (test_attacks: aSessionIdlingOnAnEnvironmentIsEnded and
    // aSessionRunningOnAnEnvironmentIsEnded).
    void theDatabaseBoundsEverySession()
    {
        TestDatabase db;
        QCOMPARE(value(db.jobDsn(), "SHOW idle_in_transaction_session_timeout"), std::string("15s"));
        QCOMPARE(value(db.jobDsn(), "SHOW lock_timeout"), std::string("10s"));
        // The owner may end an overdue holder, and read when its transaction began.
        QCOMPARE(db.scalar("SELECT pg_has_role('relctl_owner', 'pg_signal_backend', 'MEMBER') "
                           "AND pg_has_role('relctl_owner', 'pg_read_all_stats', 'MEMBER')"),
                 std::string("t"));
    }

    // Attack 5 (the server's side): deep nesting is invalid input, not an
    // internal error, however the manifest reaches the server.
    void deeplyNestedManifestsAreInvalidInput()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const AcquiredLease l = acquire(db, "prod", "job-1", 1);
        const auto publish = [&](int depth) {
            const std::string manifest = "{\"a\":" + std::string(static_cast<std::size_t>(depth - 1), '[') +
                                         std::string(static_cast<std::size_t>(depth - 1), ']') + "}";
            return sqlState(db.jobDsn(), "SELECT relctl.publish('prod', " + l.token + ", '" + l.id + "', '" +
                                             manifest + "', NULL, '{}')");
        };
        const auto before = db.footprint();
        QCOMPARE(publish(30000), std::string("RC002"));
        QCOMPARE(publish(65), std::string("RC002"));
        QCOMPARE(db.footprint(), before);
        QCOMPARE(publish(64), std::string(""));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
    }

    // Bounded client fields: no caller bloats the audit trail or breaks it
    // with a pid that is not a number.
    void clientFieldsAreBounded()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const auto before = db.footprint();
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.acquire('prod', 'j', 'r', 1, NULL, NULL, "
                                       "jsonb_build_object('host', repeat('h', 100000)), false, NULL)"),
                 std::string("RC002"));
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.acquire('prod', 'j', 'r', 1, NULL, NULL, "
                                       "'{\"pid\": \"12x\"}', false, NULL)"),
                 std::string("RC002"));
        QCOMPARE(db.footprint(), before);
    }

    // The vocabulary is defined once on each side, and both sides agree:
    // every reason and operation the catalogue names is one the database
    // records, and no other; every sort key is one console_audit accepts.
    void theCatalogueMatchesTheDatabase()
    {
        TestDatabase db;
        std::string reasons, operations;
        for (const auto& r : relctl::catalogue::kReasons)
            reasons += (reasons.empty() ? "" : ",") + std::string(r.code);
        for (const auto& o : relctl::catalogue::kOperations)
            operations += (operations.empty() ? "" : ",") + std::string(o);
        QCOMPARE(db.scalar("SELECT array_to_string(relctl.refusal_reasons(), ',')"), reasons);
        QCOMPARE(db.scalar("SELECT array_to_string(relctl.audited_operations(), ',')"), operations);
        for (const auto& key : relctl::catalogue::kAuditSortKeys)
            QCOMPARE(
                sqlState(db.reviewerDsn(), "SELECT relctl.console_audit(NULL, NULL, NULL, NULL, NULL, NULL, "
                                           "NULL, '" +
                                               std::string(key) + "', true, NULL, NULL, NULL, 10)"),
                std::string());
        QCOMPARE(sqlState(db.reviewerDsn(),
                          "SELECT relctl.console_audit(NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                          "'lease_id', true, NULL, NULL, NULL, 10)"),
                 std::string("RC002"));
        // What the database does not know, it does not record.
        QVERIFY(!db.count("SELECT count(*) FROM pg_proc WHERE proname = 'record'") == 0);
        bool refused = false;
        try {
            db.exec(
                "SELECT relctl.record('x', 'publish', 'MADE_UP', NULL, NULL, NULL, NULL, NULL, '{}', NULL)");
        } catch (const std::exception& e) {
            refused = std::string(e.what()).find("not in the catalogue") != std::string::npos;
        }
        QVERIFY(refused);
        // Every reason maps onto its documented exit code.
        for (const auto& r : relctl::catalogue::kReasons)
            QCOMPARE(relctl::exitCodeForReason(r.code), r.exit);
    }

    // relctl_job can run every command a CI job needs.
    void aJobLoginRunsEveryCiCommand()
    {
        TestDatabase db;
        relctlWithDsn(db.dsn(), {"env", "add", "prod"});
        const std::string job = db.jobDsn();
        const AcquiredLease l = acquire(db, "prod", "job-1", 1, {}, "job-1-acquire");
        const Env lease{{"RELCTL_LEASE", l.handle}};
        QCOMPARE(relctlWithDsn(job, {"lease", "renew"}, lease).exitCode, 0);
        QCOMPARE(relctlWithDsn(job, {"env", "show", "prod"}).exitCode, 0);
        QCOMPARE(relctlWithDsn(job, {"lease", "show", "--env", "prod"}).exitCode, 0);
        QCOMPARE(relctlWithDsn(job, {"op", "show", "job-1-acquire"}).exitCode, 0);
        QCOMPARE(relctlWithDsn(job, {"publish", "--op-id", "job-1-publish"}, lease).exitCode, 0);
        QCOMPARE(relctlWithDsn(job, {"manifest", "show", "--env", "prod"}).exitCode, 0);
        QCOMPARE(relctlWithDsn(job, {"lease", "release"}, lease).exitCode, 0);
        RunResult run = relctlWithDsn(job, {"run", "--env", "prod", "--job", "job-2", "--release", "r2",
                                            "--generation", "2", "--op-id", "job-2", "--", "true"});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        QCOMPARE(relctlWithDsn(job, {"migrate", "--status"}).exitCode, 0);
        // What a job may not do.
        QCOMPARE(
            relctlWithDsn(job, {"lease", "revoke", "--env", "prod", "--by", "x", "--reason", "y"}).exitCode,
            1);
        QCOMPARE(relctlWithDsn(job, {"audit"}).exitCode, 1);
    }
};

QTEST_GUILESS_MAIN(TestSecurity)
#include "test_security.moc"
