// The console's session without a window or widgets: it runs under a
// QCoreApplication, linking only relctl_ui_session (worker, connections and
// models), against a real database. A failed request is answered to the view
// that asked for it and to nobody else.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "auditmodel.h"
#include "consolesession.h"
#include "environmentsmodel.h"
#include "postgresbackend.h"
#include "relctl/console.h"
#include "relctl/database.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QSignalSpy>
#include <QtTest>
#include <pqxx/pqxx>

using namespace relctl::ui;

class TestSession final : public QObject
{
    Q_OBJECT

private slots:
    // A failed request is answered to the one that asked, and to nobody else.
    // Every view numbers its own requests from 1, so on connecting the
    // environments, the approvals and the audit browser's first page all go
    // out as request 1: the environments (or approvals) being refused must
    // not cancel that page. A bare session, no window: a view would ask for
    // the page again and hide a cancelled one.
    void aFailedRequestCancelsOnlyItsOwnRequester_data()
    {
        QTest::addColumn<QString>("function");
        QTest::addRow("environments") << QStringLiteral("relctl.console_environments");
        QTest::addRow("approvals") << QStringLiteral("relctl.approvals");
    }

    void aFailedRequestCancelsOnlyItsOwnRequester()
    {
        QFETCH(QString, function);
        TestDatabase db;
        db.exec("INSERT INTO relctl.events (env, operation, outcome) "
                "SELECT 'prod', 'renew', 'accepted' FROM generate_series(1, 12)");
        // Refused by the server, not lost: the connection stays up.
        db.exec("REVOKE EXECUTE ON FUNCTION " + function.toStdString() + " FROM relctl_reviewer");
        ConsoleSession session(std::make_unique<PostgresBackend>(
            ConnectionTarget::fromDsn(QString::fromStdString(db.dsn())), false));
        QSignalSpy failed(&session, &ConsoleSession::failed);
        session.start();
        QVERIFY(failed.wait(15000));
        QVERIFY2(failed.first().at(0).toString().contains(QStringLiteral("permission denied")),
                 qPrintable(failed.first().at(0).toString()));
        QTRY_COMPARE_WITH_TIMEOUT(session.audit()->rowCount(), 12, 10000);
        QVERIFY(!session.audit()->hasPendingRequest());
        QCOMPARE(failed.count(), 1);
    }

    // The other way round: the audit browser's own failure does reach it, so
    // a later fetchMore() asks again; the environments are still delivered.
    void aFailedAuditPageIsForgottenByTheAuditBrowser()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        db.exec("REVOKE EXECUTE ON FUNCTION relctl.console_audit FROM relctl_reviewer");
        ConsoleSession session(std::make_unique<PostgresBackend>(
            ConnectionTarget::fromDsn(QString::fromStdString(db.dsn())), false));
        QSignalSpy failed(&session, &ConsoleSession::failed);
        QSignalSpy environments(&session, &ConsoleSession::environmentsLoaded);
        session.start();
        QVERIFY(failed.wait(15000));
        QTRY_COMPARE_WITH_TIMEOUT(environments.count(), 1, 10000);
        QCOMPARE(session.environments()->rowCount(), 1);
        QVERIFY(session.audit()->isActive());
        QVERIFY(!session.audit()->hasPendingRequest());
        QCOMPARE(session.audit()->rowCount(), 0);
    }

    // The console's reads of some environments return those only (a live
    // update's cost follows the environments it touches), read by a
    // reviewer: the environments, the timeline's lanes, and the promotions
    // of the names and of what is promoted from them.
    void theReadsOfSomeEnvironmentsReturnThoseOnly()
    {
        TestDatabase db;
        for (const char* env : {"a.test", "a.staging", "b.prod", "c.prod"})
            QCOMPARE(runRelctl(db, {"env", "add", env}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "set", "a.staging", "--promote-from", "a.test"}).exitCode, 0);
        relctl::Database manager(db.dsn());
        manager.freeze("b.prod", "erin", "incident 7");
        manager.freeze("c.prod", "erin", "incident 7");

        relctl::Database reviewer(db.reviewerDsn());
        relctl::ConsoleQueries queries(reviewer);
        const auto rows = queries.environments(std::vector<std::string>{"b.prod", "gone"});
        QCOMPARE(rows.size(), std::size_t(1));
        QCOMPARE(rows[0].name, std::string("b.prod"));
        QVERIFY(rows[0].frozen);
        QCOMPARE(queries.environments().size(), std::size_t(4));

        const relctl::Timestamp now = rows[0].serverNow;
        const auto lanes = queries.timeline(relctl::Timestamp::fromMillis(now.millis() - 3'600'000),
                                            relctl::Timestamp::fromMillis(now.millis() + 60'000),
                                            std::vector<std::string>{"b.prod"});
        QCOMPARE(lanes.environments, std::vector<std::string>{"b.prod"});
        QCOMPARE(lanes.freezes.size(), std::size_t(1));
        QCOMPARE(lanes.freezes[0].env, std::string("b.prod"));

        // Every path: a.test (promoted from) and a.staging; b and c have none.
        const relctl::PromotionsRead all = queries.promotions();
        QVERIFY(!all.covers);
        QCOMPARE(all.environments.size(), std::size_t(2));
        // A live update of a.test covers a.staging, promoted from it.
        const relctl::PromotionsRead part = queries.promotions(std::vector<std::string>{"a.test"});
        QVERIFY(part.covers);
        QCOMPARE(*part.covers, (std::vector<std::string>{"a.staging", "a.test"}));
        QCOMPARE(part.environments.size(), std::size_t(2));
        const relctl::PromotionsRead none = queries.promotions(std::vector<std::string>{"b.prod"});
        QCOMPARE(*none.covers, std::vector<std::string>{"b.prod"});
        QVERIFY(none.environments.empty());
        QVERIFY(none.promotions.empty());

        // Any arguments, from a reviewer: no failure, nothing unexpected.
        pqxx::connection raw(db.reviewerDsn());
        pqxx::nontransaction tx(raw);
        for (const char* call : {"SELECT relctl.console_promotions(NULL, NULL)",
                                 "SELECT relctl.console_promotions(ARRAY[NULL, '', 'x''; DROP']::text[], -5)",
                                 "SELECT relctl.console_promotions('{}'::text[], 2147483647)"})
            QVERIFY(!tx.exec1(call)[0].is_null());
    }

    // A freeze of one environment reaches the console as a live update of
    // that environment: its row alone is read and changed, no full read.
    void aFreezeArrivesAsALiveUpdateOfItsEnvironment()
    {
        TestDatabase db;
        for (const char* env : {"a.test", "b.prod", "c.prod"})
            QCOMPARE(runRelctl(db, {"env", "add", env}).exitCode, 0);
        ConsoleSession session(std::make_unique<PostgresBackend>(
            ConnectionTarget::fromDsn(QString::fromStdString(db.reviewerDsn())), false));
        QSignalSpy loaded(&session, &ConsoleSession::environmentsLoaded);
        session.start();
        QVERIFY(loaded.wait(15000));
        QTRY_VERIFY_WITH_TIMEOUT(!session.audit()->hasPendingRequest(), 10000);
        QTest::qWait(300); // the first reads settled
        const qsizetype fullReads = loaded.count();
        QSignalSpy applied(&session, &ConsoleSession::liveUpdateApplied);
        QSignalSpy resets(session.environments(), &QAbstractItemModel::modelReset);

        relctl::Database(db.dsn()).freeze("b.prod", "erin", "incident 7");
        QTRY_VERIFY_WITH_TIMEOUT(session.environments()->index(1, 0).data(EnvironmentsModel::Frozen).toBool(),
                                 10000);
        QTRY_VERIFY_WITH_TIMEOUT(!applied.isEmpty(), 5000);
        QCOMPARE(applied.first().at(0).toString(), QStringLiteral("environments"));
        QCOMPARE(applied.first().at(1).toStringList(), QStringList{QStringLiteral("b.prod")});
        QCOMPARE(loaded.count(), fullReads);
        QCOMPARE(resets.count(), 0);
        QVERIFY(!session.environments()->index(2, 0).data(EnvironmentsModel::Frozen).toBool());
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "test_session.moc"
