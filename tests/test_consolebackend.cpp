// The console's PostgreSQL backend as a whole (its workers and their
// connections), against a real database: the audit browser's pages do not
// wait behind the main connection's requests, and their connection is open
// from the start; the full reads of the timeline and the promotions do not
// hold up the main connection either, and wait for the environments' full
// read instead of competing with it.

#include "postgresbackend.h"
#include "testdatabase.h"

#include <QDateTime>
#include <QSignalSpy>
#include <QtTest>
#include <pqxx/pqxx>

using namespace relctl::ui;

namespace {

// The last hour, as the timeline asks for it.
std::pair<qint64, qint64> lastHour()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    return {now - 3600 * 1000, now};
}

// Starts the backend and waits until it is connected (false: it did not
// connect within 15 s).
bool startConnected(PostgresBackend& backend)
{
    QSignalSpy connection(&backend, &ConsoleBackend::connectionChanged);
    backend.start();
    return connection.wait(15000) && connection.last().at(0).value<ConnectionState>().connected;
}

} // namespace

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
        QSignalSpy environments(&backend, &ConsoleBackend::environmentsLoaded);
        QSignalSpy pages(&backend, &ConsoleBackend::auditPageLoaded);
        QVERIFY(startConnected(backend));

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

    // A full timeline read waits on a lock another session holds on the
    // leases (which the approvals do not read); the approvals asked after it
    // are answered meanwhile on the main connection, and the timeline once
    // the lock goes. On one connection they would wait behind it, as a live
    // update waited behind a full read of 10,000 environments.
    void aFullReadDoesNotHoldUpTheMainConnection()
    {
        TestDatabase db;
        PostgresBackend backend(ConnectionTarget::fromDsn(QString::fromStdString(db.dsn())), false);
        QSignalSpy timeline(&backend, &ConsoleBackend::timelineLoaded);
        QSignalSpy approvals(&backend, &ConsoleBackend::supersessionsLoaded);
        QVERIFY(startConnected(backend));

        pqxx::connection locker(db.adminDsn());
        pqxx::work lock(locker);
        lock.exec("LOCK TABLE relctl.leases IN ACCESS EXCLUSIVE MODE");
        const auto [from, to] = lastHour();
        backend.loadTimeline(1, from, to);
        backend.loadSupersessions(1);
        QVERIFY(approvals.wait(10000));
        QCOMPARE(timeline.count(), 0);
        lock.abort();
        QVERIFY(timeline.wait(10000));
        QCOMPARE(timeline.first().at(0).value<quint64>(), quint64(1));
    }

    // While the environments' full read waits on a lock (on the manifests,
    // which the timeline does not read), a full timeline read asked after it
    // is held: it goes out once the environments are answered, not beside
    // them. A live update's lanes are not held.
    void fullReadsWaitForTheEnvironmentsAnswer()
    {
        TestDatabase db;
        PostgresBackend backend(ConnectionTarget::fromDsn(QString::fromStdString(db.dsn())), false);
        QSignalSpy environments(&backend, &ConsoleBackend::environmentsLoaded);
        QSignalSpy timeline(&backend, &ConsoleBackend::timelineLoaded);
        QVERIFY(startConnected(backend));

        pqxx::connection locker(db.adminDsn());
        pqxx::work lock(locker);
        lock.exec("LOCK TABLE relctl.manifests IN ACCESS EXCLUSIVE MODE");
        const auto [from, to] = lastHour();
        backend.loadEnvironments(1);
        backend.loadTimeline(1, from, to);
        // Unheld, its own connection would answer it in a fraction of this.
        QTest::qWait(1500);
        QCOMPARE(timeline.count(), 0);
        lock.abort();
        QVERIFY(environments.wait(10000));
        QTRY_COMPARE_WITH_TIMEOUT(timeline.count(), 1, 10000);

        // Nothing in flight: a full read goes out at once.
        pqxx::work again(locker);
        again.exec("LOCK TABLE relctl.manifests IN ACCESS EXCLUSIVE MODE");
        backend.loadTimeline(2, from, to);
        QTRY_COMPARE_WITH_TIMEOUT(timeline.count(), 2, 10000);
        again.abort();
    }

    // The environments' full read refused: what was held goes out all the same.
    void heldFullReadsGoOutWhenTheEnvironmentsFail()
    {
        TestDatabase db;
        db.exec("REVOKE EXECUTE ON FUNCTION relctl.console_environments FROM relctl_reviewer");
        PostgresBackend backend(ConnectionTarget::fromDsn(QString::fromStdString(db.dsn())), false);
        QSignalSpy failed(&backend, &ConsoleBackend::requestFailed);
        QSignalSpy timeline(&backend, &ConsoleBackend::timelineLoaded);
        QVERIFY(startConnected(backend));
        const auto [from, to] = lastHour();
        backend.loadEnvironments(1);
        backend.loadTimeline(1, from, to);
        QVERIFY(failed.wait(10000));
        QCOMPARE(failed.first().at(0).value<RequestId>().kind, RequestKind::Environments);
        QVERIFY(timeline.wait(10000));
    }
};

QTEST_GUILESS_MAIN(TestConsoleBackend)
#include "test_consolebackend.moc"
