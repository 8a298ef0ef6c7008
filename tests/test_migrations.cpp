// The migration runner: versions and checksums recorded, one transaction per
// migration, a changed applied file refused, concurrent runs safe.

#define RELCTL_TEST_NO_SHORT_NAME
#include "relctl/database.h"
#include "relctl/migrations.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QtTest>

using nlohmann::json;

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
