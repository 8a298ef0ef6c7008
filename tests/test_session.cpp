// The console's session without a window or widgets: it runs under a
// QCoreApplication, linking only relctl_ui_session (worker, connections and
// models), against a real database. A failed request is answered to the view
// that asked for it and to nobody else.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "auditmodel.h"
#include "consolesession.h"
#include "environmentsmodel.h"
#include "postgresbackend.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QSignalSpy>
#include <QtTest>

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
};

QTEST_GUILESS_MAIN(TestSession)
#include "test_session.moc"
