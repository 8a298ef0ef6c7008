// The release console as a whole, offscreen, against a real database seeded
// through the protocol: the views fill from the worker, a refused write is
// traced, a live event appears without a reload, an operator action reaches
// the audit trail, and --screenshot renders the window.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "actiondialog.h"
#include "approvalsview.h"
#include "auditmodel.h"
#include "auditview.h"
#include "consolesession.h"
#include "demo.h"
#include "environmentsmodel.h"
#include "environmentsview.h"
#include "mainwindow.h"
#include "relctl/database.h"
#include "relctlprocess.h"
#include "testdatabase.h"
#include "tracepanel.h"

#include <QApplication>
#include <QComboBox>
#include <QImage>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

using namespace relctl::ui;

class TestMainWindow final : public QObject
{
    Q_OBJECT

    std::unique_ptr<TestDatabase> m_db;

private slots:
    void initTestCase()
    {
        // Settings of the tests' own, never the user's.
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        m_db = std::make_unique<TestDatabase>();
        relctl::Database db(m_db->dsn());
        seedDemoHistory(db);
    }

    void viewsFillAndARefusalIsTraced()
    {
        ConsoleSession session(ConnectionTarget::fromDsn(QString::fromStdString(m_db->dsn())), false);
        MainWindow window(&session);
        window.show();
        session.start();
        QTRY_COMPARE_WITH_TIMEOUT(session.environments()->rowCount(), 3, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(session.audit()->rowCount() > 10, 15000);

        // Pick the seeded stale write in the audit browser: the trace names
        // the job that won and the manifest that was current.
        std::optional<int> staleRow;
        for (int row = 0; row < session.audit()->rowCount(); ++row) {
            const relctl::AuditEvent* e = session.audit()->eventAt(row);
            if (e && e->reason && *e->reason == "STALE_GENERATION")
                staleRow = row;
        }
        QVERIFY(staleRow);
        QTableView* table = window.auditView()->table();
        table->selectionModel()->setCurrentIndex(session.audit()->index(*staleRow, 0),
                                                 QItemSelectionModel::ClearAndSelect |
                                                     QItemSelectionModel::Rows);
        QTRY_VERIFY_WITH_TIMEOUT(window.tracePanel()->text().contains(QStringLiteral("pipeline-109")), 10000);
        // The time range narrows through the server: a window in the future is empty.
        QComboBox* since = nullptr;
        for (QComboBox* box : window.auditView()->findChildren<QComboBox*>())
            if (box->toolTip() == QStringLiteral("Time range"))
                since = box;
        QVERIFY(since);
        since->setCurrentIndex(1); // last 15 minutes: the seeded history is seconds old
        QVERIFY(session.audit()->filter().from.has_value());
        QTRY_VERIFY_WITH_TIMEOUT(session.audit()->rowCount() > 10, 10000);
        const QString trace = window.tracePanel()->text();
        QVERIFY(trace.contains(QStringLiteral("pipeline-108")));
        QVERIFY(trace.contains(QStringLiteral("v1.9")));
        QVERIFY(trace.contains(QStringLiteral("ms before the refusal")));
    }

    void liveEventsAppearWithoutReload()
    {
        ConsoleSession session(ConnectionTarget::fromDsn(QString::fromStdString(m_db->dsn())), false);
        MainWindow window(&session);
        window.show();
        session.start();
        QTRY_COMPARE_WITH_TIMEOUT(session.environments()->rowCount(), 3, 15000);
        QCOMPARE(runRelctl(*m_db, {"env", "add", "canary"}).exitCode, 0);
        QTRY_COMPARE_WITH_TIMEOUT(session.environments()->rowCount(), 4, 10000);
    }

    void anOperatorActionIsConfirmedAndRecorded()
    {
        ConsoleSession session(ConnectionTarget::fromDsn(QString::fromStdString(m_db->dsn())), false);
        MainWindow window(&session);
        window.show();
        session.start();
        QTRY_VERIFY_WITH_TIMEOUT(session.environments()->rowCount() >= 3, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(session.connection().schemaVersion >= 2, 10000);
        // Select "test" (it holds a live lease) and click "Revoke lease…".
        QTableView* table = window.environmentsView()->table();
        for (int row = 0; row < session.environments()->rowCount(); ++row)
            if (session.environments()->index(row, 0).data().toString() == QStringLiteral("test"))
                table->selectRow(row);
        QToolButton* revoke = nullptr;
        for (QToolButton* b : window.environmentsView()->findChildren<QToolButton*>())
            if (b->text().contains(QStringLiteral("Revoke")))
                revoke = b;
        QVERIFY(revoke);
        QTRY_VERIFY_WITH_TIMEOUT(revoke->isEnabled(), 5000);
        QSignalSpy finished(&session, &ConsoleSession::actionFinished);
        // The confirmation is modal: answer it when it opens.
        // (Found among the top-level widgets: offscreen, no window is ever active.)
        bool answered = false;
        QTimer::singleShot(200, this, [&answered] {
            for (QWidget* w : QApplication::topLevelWidgets()) {
                auto* dialog = qobject_cast<ActionDialog*>(w);
                if (!dialog || !dialog->isVisible())
                    continue;
                dialog->findChild<QPlainTextEdit*>()->setPlainText(QStringLiteral("stuck in the test"));
                dialog->accept();
                answered = true;
            }
        });
        revoke->click();
        QVERIFY(answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'revoke' AND env = 'test' "
                             "AND detail->>'reason' = 'stuck in the test'"),
                 1LL);
    }

    void aSupersessionIsApprovedFromTheConsole()
    {
        // A pending request needs live waiters: staging is newest/approval in the demo.
        const std::string h = runRelctl(*m_db, {"lease", "acquire", "--env", "staging", "--job", "holder",
                                                "--release", "v1.20", "--generation", "20"})
                                  .line();
        std::vector<std::unique_ptr<QProcess>> waiters;
        for (int g : {21, 22}) {
            waiters.push_back(
                startRelctl(*m_db, {"lease", "acquire", "--env", "staging", "--job",
                                    "waiter-" + std::to_string(g), "--release", "v1." + std::to_string(g),
                                    "--generation", std::to_string(g), "--wait", "60s"}));
            QTRY_COMPARE_WITH_TIMEOUT(
                m_db->count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting' "
                            "AND job = 'waiter-" +
                            std::to_string(g) + "'"),
                1LL, 10000);
        }
        ConsoleSession session(ConnectionTarget::fromDsn(QString::fromStdString(m_db->dsn())), false);
        MainWindow window(&session);
        window.show();
        session.start();
        QTRY_COMPARE_WITH_TIMEOUT(window.approvalsView()->count(), 1, 15000);
        auto* list = window.approvalsView()->findChild<QListWidget*>();
        list->setCurrentRow(0);
        QPushButton* approve = nullptr;
        for (QPushButton* b : window.approvalsView()->findChildren<QPushButton*>())
            if (b->text().contains(QStringLiteral("Approve")))
                approve = b;
        QVERIFY(approve);
        QTRY_VERIFY_WITH_TIMEOUT(approve->isEnabled(), 5000);
        QSignalSpy finished(&session, &ConsoleSession::actionFinished);
        QTimer::singleShot(200, this, [] {
            for (QWidget* w : QApplication::topLevelWidgets())
                if (auto* dialog = qobject_cast<ActionDialog*>(w); dialog && dialog->isVisible())
                    dialog->accept(); // an approval's reason is optional
        });
        approve->click();
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QCOMPARE(
            m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'approve' AND env = 'staging'"),
            1LL);
        // The skipped waiter is refused at once; the winner waits for the holder.
        QVERIFY(waiters[0]->waitForFinished(10000));
        QCOMPARE(waiters[0]->exitCode(), 4);
        QCOMPARE(runRelctl(*m_db, {"lease", "release", "--lease", h}).exitCode, 0);
        QVERIFY(waiters[1]->waitForFinished(10000));
        QCOMPARE(waiters[1]->exitCode(), 0);
        // The waiter's lease is not ours to release: end it the operator's way.
        runRelctl(*m_db, {"lease", "revoke", "--env", "staging", "--by", "test", "--reason", "clean up"});
    }

    void screenshotRendersTheWindow()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("console.png"));
        QProcess console;
        console.start(QStringLiteral(RELEASE_CONSOLE_BIN),
                      {QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()),
                       QStringLiteral("--screenshot"), file});
        QVERIFY(console.waitForFinished(90000));
        QCOMPARE(console.exitCode(), 0);
        QImage image(file);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 800);
        QVERIFY(image.pixel(10, 10) != image.pixel(image.width() / 2, image.height() / 2) ||
                image.pixel(20, 200) != image.pixel(image.width() - 20, image.height() - 20));
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_mainwindow.moc"
