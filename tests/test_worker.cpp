// The console's worker: queries run off the GUI thread, results come back as
// values, events arrive live, a lost database is retried. Real PostgreSQL.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "consoleworker.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QSignalSpy>
#include <QThread>
#include <QTimer>
#include <QtTest>

namespace {

// A worker on its own thread, as the console runs it.
struct Running
{
    QThread thread;
    ConsoleWorker* worker;

    explicit Running(const std::string& dsn)
        : worker(new ConsoleWorker(ConnectionTarget::fromDsn(QString::fromStdString(dsn))))
    {
        worker->moveToThread(&thread);
        QObject::connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
        thread.start();
    }
    void start() { QMetaObject::invokeMethod(worker, &ConsoleWorker::start, Qt::QueuedConnection); }
    ~Running()
    {
        thread.quit();
        thread.wait();
    }
};

} // namespace

class TestWorker final : public QObject
{
    Q_OBJECT

private slots:
    void slowQueryDoesNotBlockTheGuiThread()
    {
        TestDatabase db;
        Running r(db.dsn());
        QSignalSpy connected(r.worker, &ConsoleWorker::connectionChanged);
        QSignalSpy slept(r.worker, &ConsoleWorker::slept);
        r.start();
        QVERIFY(connected.wait(10000));
        QVERIFY(connected.last().at(0).value<ConnectionState>().connected);

        int ticks = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, this, [&] { ++ticks; });
        ticker.start(20);
        QElapsedTimer elapsed;
        elapsed.start();
        QMetaObject::invokeMethod(r.worker, "sleepOnServer", Qt::QueuedConnection, Q_ARG(quint64, 7),
                                  Q_ARG(double, 2.0));
        QVERIFY(slept.wait(10000));
        QCOMPARE(slept.first().at(0).value<quint64>(), quint64(7));
        QVERIFY(elapsed.elapsed() >= 1900);
        // 2 s at one tick per 20 ms is ~100: the event loop kept running throughout.
        QVERIFY2(ticks >= 60, qPrintable(QStringLiteral("only %1 ticks").arg(ticks)));
    }

    void eventsArriveLive()
    {
        TestDatabase db;
        Running r(db.dsn());
        QSignalSpy connected(r.worker, &ConsoleWorker::connectionChanged);
        QSignalSpy events(r.worker, &ConsoleWorker::eventsArrived);
        r.start();
        QVERIFY(connected.wait(10000));
        QTRY_VERIFY_WITH_TIMEOUT(events.count() >= 1, 5000); // the reload after connecting
        events.clear();
        QCOMPARE(runRelctl(db, {"env", "add", "staging"}).exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(!events.isEmpty(), 5000);
        QVERIFY(events.last().at(0).toStringList().contains(QStringLiteral("staging")));
    }

    void anUnreachableDatabaseIsReportedAndRetried()
    {
        Running r("host=/nonexistent-relctl-socket-dir user=nobody connect_timeout=2");
        QSignalSpy state(r.worker, &ConsoleWorker::connectionChanged);
        QSignalSpy failed(r.worker, &ConsoleWorker::requestFailed);
        r.start();
        QVERIFY(state.wait(10000));
        const auto s = state.last().at(0).value<ConnectionState>();
        QVERIFY(!s.connected);
        QVERIFY(!s.message.isEmpty());
        QMetaObject::invokeMethod(r.worker, "loadEnvironments", Qt::QueuedConnection, Q_ARG(quint64, 3));
        QVERIFY(failed.wait(10000));
        QCOMPARE(failed.first().at(0).value<quint64>(), quint64(3));
    }

    void operatorActionsChangeTheDatabase()
    {
        TestDatabase db;
        runRelctl(db, {"env", "add", "prod"});
        Running r(db.dsn());
        QSignalSpy done(r.worker, &ConsoleWorker::actionFinished);
        r.start();
        ConsoleAction freeze{ConsoleAction::Kind::Freeze, QStringLiteral("prod"), 0, QStringLiteral("erin"),
                             QStringLiteral("incident 7")};
        QMetaObject::invokeMethod(r.worker, "runAction", Qt::QueuedConnection, Q_ARG(quint64, 1),
                                  Q_ARG(ConsoleAction, freeze));
        QVERIFY(done.wait(10000));
        QVERIFY(done.first().at(1).toBool());
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'freeze' AND actor = 'erin' "
                          "AND detail->>'reason' = 'incident 7'"),
                 1LL);
        // A refused action comes back with the server's message.
        ConsoleAction revoke{ConsoleAction::Kind::Revoke, QStringLiteral("prod"), 0, QStringLiteral("erin"),
                             QString()};
        QMetaObject::invokeMethod(r.worker, "runAction", Qt::QueuedConnection, Q_ARG(quint64, 2),
                                  Q_ARG(ConsoleAction, revoke));
        QVERIFY(done.wait(10000));
        QVERIFY(!done.last().at(1).toBool());
        QVERIFY(done.last().at(2).toString().contains(QStringLiteral("reason")));
    }
};

QTEST_GUILESS_MAIN(TestWorker)
#include "test_worker.moc"
