// The console's worker: queries run off the GUI thread, results come back as
// values, events arrive live, a lost database is retried. Real PostgreSQL.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "consoleworker.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QtTest>

using namespace relctl::ui;

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
    // Runs call(worker) on the worker's thread, as the session does.
    template <typename Call> void post(Call call, Qt::ConnectionType type = Qt::QueuedConnection)
    {
        QMetaObject::invokeMethod(
            worker, [w = worker, call] { call(*w); }, type);
    }
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
        // The spies record on the worker's thread, so an answer may come
        // before a wait() would begin: the tests count answers instead.
        QTRY_VERIFY_WITH_TIMEOUT(!connected.isEmpty(), 10000);
        QVERIFY(connected.last().at(0).value<ConnectionState>().connected);

        int ticks = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, this, [&] { ++ticks; });
        ticker.start(20);
        QElapsedTimer elapsed;
        elapsed.start();
        r.post([](ConsoleWorker& w) { w.sleepOnServer(7, 2.0); });
        QTRY_VERIFY_WITH_TIMEOUT(!slept.isEmpty(), 10000);
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
        QTRY_VERIFY_WITH_TIMEOUT(!connected.isEmpty(), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(events.count() >= 1, 5000); // the reload after connecting
        events.clear();
        QCOMPARE(runRelctl(db, {"env", "add", "staging"}).exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(!events.isEmpty(), 5000);
        QVERIFY(events.last().at(0).toStringList().contains(QStringLiteral("staging")));
    }

    // A renewal is not announced (functions/audit.sql): the worker follows
    // the trail by event id and still reports it.
    void unannouncedEventsArriveByFollowingTheTrail()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "staging"}).exitCode, 0);
        const RunResult acquired = runRelctl(db, {"lease", "acquire", "--env", "staging", "--job", "j",
                                                  "--release", "r1", "--generation", "1"});
        QCOMPARE(acquired.exitCode, 0);
        Running r(db.dsn());
        QSignalSpy connected(r.worker, &ConsoleWorker::connectionChanged);
        QSignalSpy events(r.worker, &ConsoleWorker::eventsArrived);
        r.start();
        QTRY_VERIFY_WITH_TIMEOUT(!connected.isEmpty(), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(events.count() >= 1, 5000); // the reload after connecting
        events.clear();
        QCOMPARE(runRelctl(db, {"lease", "renew", "--lease", acquired.line()}).exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(!events.isEmpty(), 5000);
        QCOMPARE(events.last().at(0).toStringList(), QStringList{QStringLiteral("staging")});
    }

    void anUnreachableDatabaseIsReportedAndRetried()
    {
        Running r("host=/nonexistent-relctl-socket-dir user=nobody connect_timeout=2");
        QSignalSpy state(r.worker, &ConsoleWorker::connectionChanged);
        QSignalSpy failed(r.worker, &ConsoleWorker::requestFailed);
        r.start();
        QTRY_VERIFY_WITH_TIMEOUT(!state.isEmpty(), 10000);
        const auto s = state.last().at(0).value<ConnectionState>();
        QVERIFY(!s.connected);
        QVERIFY(!s.message.isEmpty());
        r.post([](ConsoleWorker& w) { w.loadEnvironments(3); });
        // The spy records on the worker's thread: a refusal that fast may precede wait().
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        // Named by kind as well as serial: serials are numbered per kind.
        QCOMPARE(failed.first().at(0).value<RequestId>(), (RequestId{RequestKind::Environments, 3}));
        // An operator's action is answered as an action, refused with the
        // connection's message, never left without an answer.
        QSignalSpy done(r.worker, &ConsoleWorker::actionFinished);
        const ConsoleAction freeze{ConsoleAction::Kind::Freeze, QStringLiteral("prod"), 0,
                                   QStringLiteral("erin"), QStringLiteral("incident 7")};
        r.post([freeze](ConsoleWorker& w) { w.runAction(4, freeze); });
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
        QCOMPARE(done.first().at(0).value<quint64>(), quint64(4));
        QVERIFY(!done.first().at(1).toBool());
        QVERIFY(!done.first().at(2).toString().isEmpty());
        QCOMPARE(failed.count(), 1);
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
        r.post([freeze](ConsoleWorker& w) { w.runAction(1, freeze); });
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
        QVERIFY(done.first().at(1).toBool());
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'freeze' AND actor = 'erin' "
                          "AND detail->>'reason' = 'incident 7'"),
                 1LL);
        // A refused action comes back with the server's message.
        ConsoleAction revoke{ConsoleAction::Kind::Revoke, QStringLiteral("prod"), 0, QStringLiteral("erin"),
                             QString()};
        r.post([revoke](ConsoleWorker& w) { w.runAction(2, revoke); });
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 10000);
        QVERIFY(!done.last().at(1).toBool());
        QVERIFY(done.last().at(2).toString().contains(QStringLiteral("reason")));
    }

    // Freezing many environments is one call: each one changed records its
    // freeze with the one reason; an unknown name refuses the lot.
    void freezingManyChangesEachEnvironment()
    {
        TestDatabase db;
        for (const char* env : {"svc1.prod", "svc2.prod", "svc1.test"})
            QCOMPARE(runRelctl(db, {"env", "add", env}).exitCode, 0);
        Running r(db.dsn());
        QSignalSpy done(r.worker, &ConsoleWorker::actionFinished);
        r.start();
        ConsoleAction freeze;
        freeze.kind = ConsoleAction::Kind::FreezeMany;
        freeze.envs = {QStringLiteral("svc1.prod"), QStringLiteral("svc2.prod")};
        freeze.by = QStringLiteral("erin");
        freeze.reason = QStringLiteral("holiday");
        r.post([freeze](ConsoleWorker& w) { w.runAction(1, freeze); });
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
        QVERIFY2(done.first().at(1).toBool(), qPrintable(done.first().at(2).toString()));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.environments WHERE frozen_at IS NOT NULL"), 2LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'freeze' AND actor = 'erin' "
                          "AND detail->>'reason' = 'holiday'"),
                 2LL);

        ConsoleAction unknown = freeze;
        unknown.kind = ConsoleAction::Kind::UnfreezeMany;
        unknown.envs = {QStringLiteral("svc1.prod"), QStringLiteral("nope")};
        r.post([unknown](ConsoleWorker& w) { w.runAction(2, unknown); });
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 10000);
        QVERIFY(!done.last().at(1).toBool());
        QCOMPARE(db.count("SELECT count(*) FROM relctl.environments WHERE frozen_at IS NOT NULL"), 2LL);

        ConsoleAction unfreeze = unknown;
        unfreeze.envs = {QStringLiteral("svc1.prod"), QStringLiteral("svc2.prod"),
                         QStringLiteral("svc1.test")};
        r.post([unfreeze](ConsoleWorker& w) { w.runAction(3, unfreeze); });
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 3, 10000);
        QVERIFY2(done.last().at(1).toBool(), qPrintable(done.last().at(2).toString()));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.environments WHERE frozen_at IS NOT NULL"), 0LL);
    }

    // An export through the worker: every filtered event in the sort's
    // order lands in the file, progress is reported page by page, and a
    // cancelled export leaves no file.
    void exportThroughTheWorker()
    {
        TestDatabase db;
        db.exec("INSERT INTO relctl.events (env, operation, outcome, job) "
                "SELECT (ARRAY['prod', 'qa'])[1 + i % 2], 'renew', 'accepted', 'job-' || (i % 97) "
                "FROM generate_series(1, 24000) AS i");
        Running r(db.dsn());
        r.worker->setLive(false);
        QSignalSpy progress(r.worker, &ConsoleWorker::exportProgress);
        QSignalSpy finished(r.worker, &ConsoleWorker::exportFinished);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("prod.csv"));
        relctl::AuditFilter filter;
        filter.env = "prod";
        const relctl::AuditSort sort{relctl::AuditSort::Column::Job, true};
        r.post([=](ConsoleWorker& w) {
            w.exportAudit(3, path, false, filter, sort, std::make_shared<std::atomic<bool>>(false));
        });
        // The spy records on the worker's thread: the signal may precede wait().
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QCOMPARE(finished.first().at(0).value<quint64>(), quint64(3));
        QVERIFY2(finished.first().at(1).toBool(), qPrintable(finished.first().at(3).toString()));
        QCOMPARE(finished.first().at(2).toLongLong(), 12000);
        QCOMPARE(progress.count(), 3); // pages of 5,000
        QCOMPARE(progress.last().at(1).toLongLong(), 12000);

        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().split('\n');
        QCOMPARE(lines.size(), 12000 + 2); // header, rows, and nothing after the last CRLF
        QVERIFY(lines[0].startsWith("id,at,env,operation,outcome,"));
        QList<qint64> expected;
        for (const auto& row :
             db.rows("SELECT id FROM relctl.events WHERE env = 'prod' ORDER BY job DESC, id DESC"))
            expected << std::stoll(row[0]);
        for (int i = 0; i < expected.size(); ++i)
            QCOMPARE(lines[i + 1].left(lines[i + 1].indexOf(',')).toLongLong(), expected[i]);

        // Cancelled before it starts reading: nothing is written, the old file stays.
        finished.clear();
        auto cancel = std::make_shared<std::atomic<bool>>(true);
        r.post([=, cancelled = dir.filePath(QStringLiteral("cancelled.json"))](ConsoleWorker& w) {
            w.exportAudit(4, cancelled, true, filter, sort, cancel);
        });
        // The spy records on the worker's thread: the signal may precede wait().
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QVERIFY(!finished.first().at(1).toBool());
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("prod.csv")});
    }

    // The exporter follows a connection switch without holding an idle
    // connection to the new database, and exports from it on request.
    void exporterFollowsATargetSwitchLazily()
    {
        TestDatabase first, second;
        second.exec("INSERT INTO relctl.events (env, operation, outcome) "
                    "SELECT 'qa', 'renew', 'accepted' FROM generate_series(1, 7)");
        Running r(first.dsn());
        r.worker->setLive(false);
        QSignalSpy finished(r.worker, &ConsoleWorker::exportFinished);
        r.post([target = ConnectionTarget::fromDsn(QString::fromStdString(second.dsn()))](
                   ConsoleWorker& w) { w.setTarget(target); },
               Qt::BlockingQueuedConnection);
        const std::string others = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                   "AND pid <> pg_backend_pid()";
        QCOMPARE(second.count(others), 0LL);

        QTemporaryDir dir;
        r.post([path = dir.filePath(QStringLiteral("qa.json"))](ConsoleWorker& w) {
            w.exportAudit(1, path, true, relctl::AuditFilter{}, relctl::AuditSort{},
                          std::make_shared<std::atomic<bool>>(false));
        });
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QVERIFY2(finished.first().at(1).toBool(), qPrintable(finished.first().at(3).toString()));
        QCOMPARE(finished.first().at(2).toLongLong(), 7);
        QCOMPARE(second.count(others), 1LL); // the exporter's own, now that it exported
    }

    // The pages worker reads the first page as it connects; the window's
    // first request for it is answered from it, once, and only while no
    // event it would show has arrived since.
    void aPrefetchedFirstPageIsServedOnlyWhileCurrent()
    {
        TestDatabase db;
        const auto add = [&db](const char* env) {
            db.exec(std::string("INSERT INTO relctl.events (env, operation, outcome) VALUES ('") + env +
                    "', 'renew', 'accepted')");
        };
        add("staging");
        add("staging");
        Running r(db.dsn());
        r.worker->setPrefetchFirstAuditPage(true);
        QSignalSpy connected(r.worker, &ConsoleWorker::connectionChanged);
        QSignalSpy pages(r.worker, &ConsoleWorker::auditPageLoaded);
        r.start();
        QTRY_VERIFY_WITH_TIMEOUT(!connected.isEmpty(), 10000);
        QVERIFY(connected.last().at(0).value<ConnectionState>().connected);
        const auto load = [&r](quint64 serial) {
            r.post([serial](ConsoleWorker& w) { w.loadAuditPage(serial, relctl::AuditPageRequest{}); });
        };
        const auto page = [&pages] { return pages.last().at(1).value<relctl::AuditPage>(); };
        const auto reconnect = [&r, &db] {
            r.post([target = ConnectionTarget::fromDsn(QString::fromStdString(db.dsn()))](
                       ConsoleWorker& w) { w.setTarget(target); },
                   Qt::BlockingQueuedConnection);
        };

        load(1);
        QTRY_COMPARE_WITH_TIMEOUT(pages.count(), 1, 10000);
        QCOMPARE(r.worker->prefetchedPagesServed(), 1);
        QCOMPARE(page().events.size(), std::size_t(2));

        // Served once: asked again, the page is read.
        add("qa");
        load(2);
        QTRY_COMPARE_WITH_TIMEOUT(pages.count(), 2, 10000);
        QCOMPARE(r.worker->prefetchedPagesServed(), 1);
        QCOMPARE(page().events.size(), std::size_t(3));
        QCOMPARE(page().events.front().env, std::string("qa"));

        // Prefetched again on connecting; an event arrives before the
        // window asks: the prefetched page is out of date and not served.
        reconnect();
        add("prod");
        load(3);
        QTRY_COMPARE_WITH_TIMEOUT(pages.count(), 3, 10000);
        QCOMPARE(r.worker->prefetchedPagesServed(), 1);
        QCOMPARE(page().events.size(), std::size_t(4));
        QCOMPARE(page().events.front().env, std::string("prod"));

        // Another page than the one prefetched (another sort) is read.
        reconnect();
        r.post([](ConsoleWorker& w) {
            relctl::AuditPageRequest byJob;
            byJob.sort.column = relctl::AuditSort::Column::Job;
            w.loadAuditPage(4, byJob);
        });
        QTRY_COMPARE_WITH_TIMEOUT(pages.count(), 4, 10000);
        QCOMPARE(r.worker->prefetchedPagesServed(), 1);
        QCOMPARE(page().events.size(), std::size_t(4));

        // Nothing arrived since connecting: served.
        reconnect();
        load(5);
        QTRY_COMPARE_WITH_TIMEOUT(pages.count(), 5, 10000);
        QCOMPARE(r.worker->prefetchedPagesServed(), 2);
        QCOMPARE(page().events.size(), std::size_t(4));
        QCOMPARE(page().events.front().env, std::string("prod"));
    }
};

QTEST_GUILESS_MAIN(TestWorker)
#include "test_worker.moc"
