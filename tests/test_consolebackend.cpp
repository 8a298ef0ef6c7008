// The console's PostgreSQL backend as a whole (its workers and their
// connections), against a real database: the audit browser's pages do not
// wait behind the main connection's requests, and their connection is open
// from the start.

#include "postgresbackend.h"
#include "testdatabase.h"

#include <QSignalSpy>
#include <QtTest>
#include <pqxx/pqxx>

using namespace relctl::ui;

class TestConsoleBackend final : public QObject
{
    Q_OBJECT

private slots:
    // The main connection's environments read waits on a lock another
    // session holds; the audit page asked after it is answered meanwhile,
    // on the pages' own connection, and the environments once the lock goes.
    void aPageDoesNotWaitBehindTheMainConnection()
    {
        TestDatabase db;
        db.exec("INSERT INTO relctl.events (env, operation, outcome) "
                "SELECT 'prod', 'renew', 'accepted' FROM generate_series(1, 12)");
        PostgresBackend backend(ConnectionTarget::fromDsn(QString::fromStdString(db.dsn())), false);
        QSignalSpy connection(&backend, &ConsoleBackend::connectionChanged);
        QSignalSpy environments(&backend, &ConsoleBackend::environmentsLoaded);
        QSignalSpy pages(&backend, &ConsoleBackend::auditPageLoaded);
        backend.start();
        QVERIFY(connection.wait(15000));
        QVERIFY(connection.last().at(0).value<ConnectionState>().connected);

        pqxx::connection locker(db.adminDsn());
        pqxx::work lock(locker);
        lock.exec("LOCK TABLE relctl.environments IN ACCESS EXCLUSIVE MODE");
        backend.loadEnvironments(1);
        // Asked after the environments: one worker would answer it only
        // after them, once the lock is gone.
        backend.loadAuditPage(1, {{}, {}, std::nullopt, std::nullopt, 500});
        QVERIFY(pages.wait(10000));
        QCOMPARE(pages.first().at(1).value<relctl::AuditPage>().events.size(), std::size_t(12));
        QCOMPARE(environments.count(), 0);
        lock.abort();
        QVERIFY(environments.wait(10000));
    }

    // Three connections from the start, before any page is asked: the main
    // one, its listener and the pages'. The exporter connects on its first
    // export, not before.
    void thePagesConnectionIsOpenFromTheStart()
    {
        TestDatabase db;
        PostgresBackend backend(ConnectionTarget::fromDsn(QString::fromStdString(db.dsn())), false);
        backend.start();
        const std::string others = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                   "AND pid <> pg_backend_pid() AND backend_type = 'client backend'";
        QTRY_COMPARE_WITH_TIMEOUT(db.count(others), 3LL, 15000);
        QTest::qWait(300);
        QCOMPARE(db.count(others), 3LL);
    }
};

QTEST_GUILESS_MAIN(TestConsoleBackend)
#include "test_consolebackend.moc"
