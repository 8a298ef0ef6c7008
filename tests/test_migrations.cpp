// The migration runner: versions and checksums recorded, one transaction per
// migration, a changed applied file refused, concurrent runs safe.

#define RELCTL_TEST_NO_SHORT_NAME
#include "relctl/database.h"
#include "relctl/migrations.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QtTest>
#include <fstream>
#include <sstream>

using nlohmann::json;

namespace {

// 0001–0004 as they were before their functions moved to
// migrations/functions/ (tests/data/migrations-before-0005).
std::vector<relctl::Migration> migrationsBefore0005()
{
    std::vector<relctl::Migration> set;
    for (const relctl::Migration& m : relctl::bundledMigrations()) {
        if (m.version > 4)
            break;
        std::ifstream in(std::string(RELCTL_TEST_DATA) + "/migrations-before-0005/" + m.name + ".sql");
        std::stringstream text;
        text << in.rdbuf();
        if (text.str().empty())
            qFatal("missing former text of %s", m.name.c_str());
        set.push_back({m.version, m.name, text.str()});
    }
    return set;
}

// The bundled migrations up to `version`: a database as it stood then.
std::vector<relctl::Migration> migrationsUpTo(int version)
{
    std::vector<relctl::Migration> set;
    for (const relctl::Migration& m : relctl::bundledMigrations())
        if (m.version <= version)
            set.push_back(m);
    return set;
}

// The function modules as they were before migration 0006 (promotions and
// rollback), when 0001–0005 were the whole schema
// (tests/data/modules-before-0006).
std::vector<relctl::SchemaModule> modulesBefore0006()
{
    std::vector<relctl::SchemaModule> set;
    for (const relctl::SchemaModule& m : relctl::bundledModules()) {
        const std::string file = m.name.substr(m.name.find('/') + 1) + ".sql";
        std::ifstream in(std::string(RELCTL_TEST_DATA) + "/modules-before-0006/" + file);
        if (!in)
            continue; // a module that 0006 brought
        std::stringstream text;
        text << in.rdbuf();
        set.push_back({m.name, text.str()});
    }
    return set;
}

} // namespace

class TestMigrations final : public QObject
{
    Q_OBJECT

private slots:
    void migrateAppliesEveryBundledMigrationOnce()
    {
        TestDatabase db(TestDatabase::Schema::Empty);
        const auto& bundled = relctl::bundledMigrations();
        QVERIFY(!bundled.empty());
        const std::size_t steps = bundled.size() + relctl::bundledModules().size();
        QVERIFY(relctl::bundledModules().size() > 1);

        json status = runRelctl(db, {"--json", "migrate", "--status"}).json();
        QCOMPARE(status["migrations"].size(), steps);
        for (const json& m : status["migrations"])
            QCOMPARE(m["state"].get<std::string>(), std::string("pending"));

        RunResult first = runRelctl(db, {"--json", "migrate"});
        QCOMPARE(first.exitCode, 0);
        QCOMPARE(first.json()["applied"].size(), steps);
        RunResult second = runRelctl(db, {"--json", "migrate"});
        QCOMPARE(second.exitCode, 0);
        QCOMPARE(second.json()["applied"].size(), std::size_t(0));

        status = runRelctl(db, {"--json", "migrate", "--status"}).json();
        for (const json& m : status["migrations"]) {
            QCOMPARE(m["state"].get<std::string>(), std::string("applied"));
            QCOMPARE(m["checksum"].get<std::string>().size(), std::size_t(64)); // SHA-256, hex
            QVERIFY(m["applied_at"].is_string());
        }
        QCOMPARE(db.count("SELECT count(*) FROM relctl.schema_migrations"),
                 static_cast<long long>(bundled.size()));
        RunResult plain = runRelctl(db, {"migrate", "--status"});
        QVERIFY(plain.out.find(bundled.front().name + " applied") != std::string::npos);
    }

    void changedMigrationIsRefused()
    {
        TestDatabase db(TestDatabase::Schema::Empty);
        std::vector<relctl::Migration> set{{1, "0001_first", "CREATE TABLE relctl.first (id int);"}};
        relctl::Database(db.dsn()).migrate(set, {});

        set[0].sql += "\n-- edited after it was applied\n";
        set.push_back({2, "0002_second", "CREATE TABLE relctl.second (id int);"});
        relctl::Database conn(db.dsn());
        bool refused = false;
        try {
            conn.migrate(set, {});
        } catch (const relctl::Error& e) {
            refused = std::string(e.what()).find("0001_first was changed after it was applied") !=
                      std::string::npos;
        }
        QVERIFY(refused);
        // Nothing after the refusal was applied.
        QCOMPARE(db.count("SELECT count(*) FROM relctl.schema_migrations"), 1LL);
        QCOMPARE(
            db.count("SELECT count(*) FROM pg_tables WHERE schemaname = 'relctl' AND tablename = 'second'"),
            0LL);

        auto states = conn.migrationStatus(set, {});
        QCOMPARE(states.size(), std::size_t(2));
        QCOMPARE(states[0].state, std::string("changed"));
        QCOMPARE(states[1].state, std::string("pending"));
    }

    void eachMigrationIsOneTransaction()
    {
        TestDatabase db(TestDatabase::Schema::Empty);
        std::vector<relctl::Migration> set{
            {1, "0001_good", "CREATE TABLE relctl.good (id int);"},
            {2, "0002_bad", "CREATE TABLE relctl.half (id int); SELECT 1 / 0;"},
        };
        relctl::Database conn(db.dsn());
        bool failed = false;
        try {
            conn.migrate(set, {});
        } catch (const relctl::Error&) {
            failed = true;
        }
        QVERIFY(failed);
        // The good one stays applied; the failing one left nothing behind.
        QCOMPARE(db.scalar("SELECT string_agg(name, ',') FROM relctl.schema_migrations"),
                 std::string("0001_good"));
        QCOMPARE(
            db.count("SELECT count(*) FROM pg_tables WHERE schemaname = 'relctl' AND tablename = 'half'"),
            0LL);
        // A newer migration the build does not know is reported, not an error.
        relctl::Database(db.dsn()).migrate({set[0]}, {});
        auto states = relctl::Database(db.dsn()).migrationStatus({}, {});
        QCOMPARE(states.size(), std::size_t(1));
        QCOMPARE(states[0].state, std::string("unknown"));
    }

    void concurrentRunsAreSafe()
    {
        // Six separate relctl processes migrate one empty database at once:
        // all succeed, one applies, the others wait and find nothing to do.
        TestDatabase db(TestDatabase::Schema::Empty);
        std::vector<std::unique_ptr<QProcess>> runs;
        for (int i = 0; i < 6; ++i) {
            auto p = std::make_unique<QProcess>();
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("RELCTL_DSN"), QString::fromStdString(db.dsn()));
            p->setProcessEnvironment(env);
            p->start(QString::fromStdString(relctlBinary()),
                     {QStringLiteral("--json"), QStringLiteral("migrate")});
            QVERIFY(p->waitForStarted());
            runs.push_back(std::move(p));
        }
        std::size_t appliedTotal = 0;
        int applyingRuns = 0;
        for (auto& p : runs) {
            RunResult r = finish(*p);
            QVERIFY2(r.exitCode == 0, r.err.c_str());
            const std::size_t n = r.json()["applied"].size();
            appliedTotal += n;
            applyingRuns += n > 0 ? 1 : 0;
        }
        QCOMPARE(appliedTotal, relctl::bundledMigrations().size() + relctl::bundledModules().size());
        QCOMPARE(applyingRuns, 1);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.schema_migrations"),
                 static_cast<long long>(relctl::bundledMigrations().size()));
    }

    // A database made by the migrations as they were before the trust
    // boundary, with history in it, a live lease, a waiter's candidate and
    // stored outcomes holding lease ids, upgrades in place: nothing is lost,
    // the old functions are replaced, and the live lease keeps working.
    void upgradesADatabaseMadeBeforeTheFunctionModules()
    {
        TestDatabase db(TestDatabase::Schema::Empty);
        const auto before = migrationsBefore0005();
        QCOMPARE(before.size(), std::size_t(4));
        relctl::Database(db.adminDsn()).migrate(before, {});
        // History, written through the old functions.
        db.exec("SELECT relctl.env_add('prod', NULL, NULL, '{}')");
        const json first = db.write("SELECT relctl.acquire('prod', 'job-1', 'v1', 1, 60000, 'job-1-acquire', "
                                    "'{\"host\": \"ci\"}', false)");
        db.exec("SELECT relctl.publish('prod', 1, '" + first["lease_id"].get<std::string>() +
                "', '{\"image\": \"v1\"}', 'job-1-publish', '{}')");
        db.exec("SELECT relctl.release('prod', 1, '" + first["lease_id"].get<std::string>() +
                "', '{}', NULL)");
        const json live = db.write("SELECT relctl.acquire('prod', 'job-2', 'v2', 2, 600000, 'job-2-acquire', "
                                   "'{}', false)");
        QCOMPARE(db.count("SELECT count(*) FROM relctl.operations WHERE outcome ? 'lease_id'"), 2LL);
        const long long events = db.count("SELECT count(*) FROM relctl.events");

        RunResult upgraded = runRelctl(db, {"--json", "migrate"});
        QVERIFY2(upgraded.exitCode == 0, upgraded.err.c_str());
        // 0005 and every module were applied; 0001–0004 count as applied.
        std::vector<std::string> applied;
        const json report = upgraded.json();
        for (const json& name : report["applied"])
            applied.push_back(name.get<std::string>());
        QCOMPARE(applied.front(), std::string("0005_roles_and_secrets"));
        QCOMPARE(applied.size(), relctl::bundledMigrations().size() - 4 + relctl::bundledModules().size());
        const json status = runRelctl(db, {"--json", "migrate", "--status"}).json();
        for (const json& m : status["migrations"])
            QCOMPARE(m["state"].get<std::string>(), std::string("applied"));
        QCOMPARE(runRelctl(db, {"--json", "migrate"}).json()["applied"].size(), std::size_t(0));

        // Nothing lost; the append-only guard is back.
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events"), events);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 1LL);
        QCOMPARE(db.count("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'relctl.events'::regclass "
                          "AND NOT tgisinternal"),
                 2LL);
        bool refused = false;
        try {
            db.exec("DELETE FROM relctl.events");
        } catch (const std::exception& e) {
            refused = std::string(e.what()).find("append-only") != std::string::npos;
        }
        QVERIFY(refused);
        // No function of the old text is left: every one has the new shape.
        QCOMPARE(db.count("SELECT count(*) FROM pg_proc WHERE pronamespace = 'relctl'::regnamespace "
                          "AND pg_get_userbyid(proowner) <> 'relctl_owner'"),
                 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM pg_proc WHERE pronamespace = 'relctl'::regnamespace "
                          "AND proname = 'record_by'"),
                 0LL);

        // The live lease, as a job login sees it now: usable with its handle,
        // and its op id no longer hands it out.
        db.createLogins();
        const std::string jobDsn = db.jobDsn();
        const std::string handle = live["handle"].get<std::string>();
        QCOMPARE(relctlWithDsn(jobDsn, {"lease", "renew"}, {{"RELCTL_LEASE", handle}}).exitCode, 0);
        RunResult shown = relctlWithDsn(jobDsn, {"--json", "op", "show", "job-2-acquire"});
        QCOMPARE(shown.exitCode, 0);
        QVERIFY2(shown.out.find(live["lease_id"].get<std::string>()) == std::string::npos, shown.out.c_str());
        RunResult replay = relctlWithDsn(jobDsn, {"--json", "lease", "acquire", "--env", "prod", "--job",
                                                  "job-2", "--release", "v2", "--generation", "2", "--ttl",
                                                  "10m", "--op-id", "job-2-acquire"});
        QCOMPARE(replay.exitCode, 7);
        QVERIFY(replay.out.find(live["lease_id"].get<std::string>()) == std::string::npos);
        // Tokens continue from where they were; publishing goes on.
        QCOMPARE(relctlWithDsn(jobDsn, {"publish", "--op-id", "job-2-publish"}, {{"RELCTL_LEASE", handle}})
                     .exitCode,
                 0);
        QCOMPARE(db.scalar("SELECT string_agg(generation::text, ',' ORDER BY id) FROM relctl.manifests"),
                 std::string("1,2"));
    }

    // A database made before promotions, with history and a live lease,
    // upgrades in place: the freshness bar is filled from the history, the
    // live lease publishes on, and a rollback afterwards keeps the bar.
    void upgradesADatabaseMadeBeforePromotions()
    {
        TestDatabase db(TestDatabase::Schema::Empty);
        const auto modules = modulesBefore0006();
        QCOMPARE(modules.size(), std::size_t(10));
        relctl::Database(db.adminDsn()).migrate(migrationsUpTo(5), modules);
        QCOMPARE(
            db.count("SELECT count(*) FROM pg_attribute WHERE attrelid = 'relctl.environments'::regclass "
                     "AND attname = 'high_water_generation'"),
            0LL);
        // History, written through the old functions: v3 and v5 published, v7 holding the lease.
        db.exec("SELECT relctl.env_add('prod', NULL, NULL, '{}')");
        for (int g : {3, 5}) {
            const json l =
                db.write("SELECT relctl.acquire('prod', 'job-" + std::to_string(g) + "', 'v" +
                         std::to_string(g) + "', " + std::to_string(g) + ", 60000, NULL, '{}', false)");
            db.exec("SELECT relctl.publish('prod', " + std::to_string(l["token"].get<long long>()) + ", '" +
                    l["lease_id"].get<std::string>() + "', '{\"image\": \"v" + std::to_string(g) +
                    "\"}', NULL, '{}')");
            db.exec("SELECT relctl.release('prod', " + std::to_string(l["token"].get<long long>()) + ", '" +
                    l["lease_id"].get<std::string>() + "', '{}', NULL)");
        }
        const json live =
            db.write("SELECT relctl.acquire('prod', 'job-7', 'v7', 7, 600000, NULL, '{}', false)");
        const long long events = db.count("SELECT count(*) FROM relctl.events");

        RunResult upgraded = runRelctl(db, {"--json", "migrate"});
        QVERIFY2(upgraded.exitCode == 0, upgraded.err.c_str());
        QCOMPARE(upgraded.json()["applied"][0], json("0006_promotions_and_rollback"));
        QCOMPARE(db.count("SELECT high_water_generation FROM relctl.environments WHERE name = 'prod'"), 5LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events"), events);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.manifests"), 2LL);

        db.createLogins();
        QCOMPARE(
            relctlWithDsn(db.jobDsn(), {"publish"}, {{"RELCTL_LEASE", live["handle"].get<std::string>()}})
                .exitCode,
            0);
        QCOMPARE(db.count("SELECT high_water_generation FROM relctl.environments WHERE name = 'prod'"), 7LL);
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "release"},
                               {{"RELCTL_LEASE", live["handle"].get<std::string>()}})
                     .exitCode,
                 0);
        QCOMPARE(runRelctl(db, {"rollback", "--env", "prod", "--to-release", "v5", "--by", "ops", "--reason",
                                "v7 bad"})
                     .exitCode,
                 0);
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "prod", "--job", "job-6",
                                             "--release", "v6", "--generation", "6"})
                     .exitCode,
                 4);
        QCOMPARE(relctlWithDsn(db.jobDsn(), {"run", "--env", "prod", "--job", "job-8", "--release", "v8",
                                             "--generation", "8", "--", "true"})
                     .exitCode,
                 0);
    }

    // Migration 0012 gives the requests and decisions made before it their
    // logins, from the audit trail: a promotion request the login of its
    // promotion-requested event (of its own environment), a decided
    // supersession the login of its approve or deny event; an undecided one
    // none. The rows are written as the functions before 0012 wrote them
    // (those functions are not kept: the rows are what 0012 reads). Then the
    // rule holds for them: the requester's login cannot approve.
    void migration0012GivesEarlierRequestsTheirLogins()
    {
        TestDatabase db(TestDatabase::Schema::Empty);
        relctl::Database(db.adminDsn()).migrate(migrationsUpTo(11), {});
        db.exec("INSERT INTO relctl.environments (name, default_ttl_ms, max_ttl_ms) "
                "VALUES ('prod', 60000, 600000), ('staging', 60000, 600000)");
        db.exec("INSERT INTO relctl.promotions (id, env, release, generation, requested_by) "
                "VALUES (1, 'prod', 'v1', 1, 'alice'), (2, 'prod', 'v2', 2, 'pipeline-2'), "
                "(3, 'staging', 'v3', 3, 'carol')");
        db.exec("INSERT INTO relctl.events (env, operation, outcome, db_user, actor, detail) VALUES "
                "('staging', 'promotion-requested', 'accepted', 'relctl_test_carol', 'carol', "
                "'{\"promotion\": 1}'), "
                "('prod', 'promotion-requested', 'accepted', 'relctl_test_alice', 'alice', '{\"promotion\": "
                "1}'), "
                "('prod', 'promotion-requested', 'accepted', 'relctl_test_job', NULL, '{\"promotion\": 2}'), "
                "('staging', 'promotion-requested', 'accepted', 'relctl_test_carol', 'carol', "
                "'{\"promotion\": 3}')");
        db.exec("INSERT INTO relctl.candidates (id, env, job, release, generation, ttl_ms, op_id) "
                "VALUES (10, 'prod', 'job-4', 'v4', 4, 60000, 'op-10')");
        db.exec("INSERT INTO relctl.supersessions (id, env, winner, skipped, state, decided_at, decided_by) "
                "VALUES (5, 'prod', 10, '{}', 'approved', clock_timestamp(), 'bob'), "
                "(6, 'prod', 10, '{}', 'denied', clock_timestamp(), 'dave'), (7, 'prod', 10, '{}', "
                "'pending', NULL, NULL)");
        db.exec("INSERT INTO relctl.events (env, operation, outcome, db_user, actor, detail) VALUES "
                "('prod', 'approve', 'accepted', 'relctl_test_bob', 'bob', '{\"request\": 5}'), "
                "('prod', 'deny', 'accepted', 'relctl_test_dave', 'dave', '{\"request\": 6}')");

        RunResult upgraded = runRelctl(db, {"--json", "migrate"});
        QVERIFY2(upgraded.exitCode == 0, upgraded.err.c_str());
        QCOMPARE(upgraded.json()["applied"][0], json("0012_approver_logins"));
        QCOMPARE(db.scalar("SELECT string_agg(id || '=' || coalesce(requested_login, '-'), ' ' ORDER BY id) "
                           "FROM relctl.promotions"),
                 std::string("1=relctl_test_alice 2=relctl_test_job 3=relctl_test_carol"));
        QCOMPARE(db.scalar("SELECT string_agg(id || '=' || coalesce(decided_login, '-'), ' ' ORDER BY id) "
                           "FROM relctl.supersessions"),
                 std::string("5=relctl_test_bob 6=relctl_test_dave 7=-"));

        // alice's login cannot approve the request it opened before 0012.
        const std::string alice = db.loginDsn("alice", {"relctl_manager"});
        RunResult self = relctlWithDsn(alice, {"--json", "promote", "approve", "1", "--by", "someone"});
        QCOMPARE(self.exitCode, 11);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'SELF_APPROVAL' "
                          "AND db_user = 'relctl_test_alice'"),
                 1LL);
    }

    void protocolNeedsTheSchema()
    {
        TestDatabase db(TestDatabase::Schema::Empty);
        RunResult r = runRelctl(db, {"env", "list"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.find("relctl migrate") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestMigrations)
#include "test_migrations.moc"
