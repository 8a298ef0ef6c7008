// The release console's window over the in-memory backend (FakeBackend),
// offscreen: no database, milliseconds. The views show what the backend
// holds, operator actions clicked through their confirmations reach the
// backend and their outcome comes back to the window, a refusal picked in the
// audit browser is traced. (test_mainwindow runs the window against
// PostgreSQL, through the protocol.)

#include "approvalsview.h"
#include "auditmodel.h"
#include "auditview.h"
#include "consoleclicks.h"
#include "consolesession.h"
#include "environmentsmodel.h"
#include "environmentsview.h"
#include "fakebackend.h"
#include "mainwindow.h"
#include "tracepanel.h"

#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QToolButton>
#include <QtTest>

using namespace relctl::ui;

namespace {

relctl::EnvironmentRow environment(const std::string& name, bool leased)
{
    relctl::EnvironmentRow row;
    row.name = name;
    row.policy = "newest";
    row.supersede = "approval";
    row.serialization = "enforced";
    if (leased) {
        row.holderJob = name + "-deploy";
        row.holderRelease = "v1.2";
        row.holderToken = 7;
        row.leaseExpiresAt = 4'000'000'000'000;
    }
    return row;
}

// A window over a fake holding three environments (test leased), ten
// events (one a refused stale publish on prod) and one supersession request.
struct Console
{
    Console() : fake(new FakeBackend), session(std::unique_ptr<ConsoleBackend>(fake)), window(&session)
    {
        fake->setEnvironments(
            {environment("prod", false), environment("staging", false), environment("test", true)});
        for (int i = 0; i < 9; ++i) {
            relctl::AuditEvent e;
            e.env = i % 3 == 0 ? "prod" : "test";
            e.operation = "renew";
            e.outcome = "accepted";
            e.job = "job-" + std::to_string(i);
            fake->addEvent(e);
        }
        relctl::AuditEvent stale;
        stale.env = "prod";
        stale.operation = "publish";
        stale.outcome = "rejected";
        stale.reason = "STALE_GENERATION";
        stale.job = "pipeline-108";
        stale.generation = 8;
        stale.token = 41;
        staleEvent = fake->addEvent(stale);
        relctl::RefusalTrace trace;
        trace.event = fake->events().back();
        trace.currentRelease = "v1.9";
        trace.currentGeneration = 9;
        trace.currentJob = "pipeline-109";
        fake->setTrace(staleEvent, trace);
        ApprovalRow request;
        request.id = 5;
        request.env = QStringLiteral("staging");
        request.winnerJob = QStringLiteral("job-22");
        request.winnerRelease = QStringLiteral("v2.2");
        request.winnerGeneration = 22;
        request.skipped = {QStringLiteral("job-21 (generation 21)")};
        fake->setApprovals({request});
        // The debounce of a reload after events, shortened: waited for at every start.
        session.setReloadDelay(std::chrono::milliseconds(20));
        window.show();
        session.start();
    }

    bool loaded()
    {
        return QTest::qWaitFor(
            [this] {
                return session.environments()->rowCount() == 3 && session.audit()->rowCount() == 10 &&
                       window.approvalsView()->count() == 1;
            },
            2000);
    }

    void selectEnvironment(const QString& name)
    {
        QTableView* table = window.environmentsView()->table();
        for (int row = 0; row < table->model()->rowCount(); ++row)
            if (table->model()->index(row, 0).data().toString() == name)
                table->selectRow(row);
    }

    bool frozenInView(const QString& name) const
    {
        QAbstractItemModel* shown = window.environmentsView()->table()->model();
        for (int row = 0; row < shown->rowCount(); ++row)
            if (shown->index(row, 0).data().toString() == name)
                return shown->index(row, 0).data(EnvironmentsModel::Frozen).toBool();
        return false;
    }

    FakeBackend* fake;
    ConsoleSession session;
    MainWindow window;
    std::int64_t staleEvent = 0;
};

} // namespace

class TestMainWindowFake final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // Settings of the tests' own, never the user's.
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void theViewsShowTheBackendsData()
    {
        Console c;
        QVERIFY(c.loaded());
        QTableView* environments = c.window.environmentsView()->table();
        QStringList names;
        for (int row = 0; row < environments->model()->rowCount(); ++row)
            names << environments->model()->index(row, 0).data().toString();
        names.sort();
        QCOMPARE(names,
                 (QStringList{QStringLiteral("prod"), QStringLiteral("staging"), QStringLiteral("test")}));
        QCOMPARE(c.window.auditView()->table()->model()->rowCount(), 10);
        // Newest first: the refusal on top.
        QCOMPARE(c.session.audit()->eventAt(0)->id, c.staleEvent);
        auto* server = c.window.findChild<QLabel*>(QStringLiteral("connectionServer"));
        QVERIFY(server);
        QCOMPARE(server->text(), QStringLiteral("in-memory fake"));
        QVERIFY(c.window.findChild<QListWidget*>()->item(0)->text().contains(QStringLiteral("job-22")));
    }

    // Freeze, then unfreeze "test" from the environments view: each reaches
    // the backend as the operator confirmed it, and the view follows the
    // event that announces it.
    void anActionFromTheWindowReachesTheBackend()
    {
        Console c;
        QVERIFY(c.loaded());
        c.selectEnvironment(QStringLiteral("test"));
        auto* freeze = button<QToolButton>(c.window.environmentsView(), QStringLiteral("Freeze"));
        auto* unfreeze = button<QToolButton>(c.window.environmentsView(), QStringLiteral("Unfreeze"));
        QVERIFY(freeze && unfreeze);
        QVERIFY(freeze->isEnabled());
        QVERIFY(!unfreeze->isEnabled());

        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        auto answered = confirmNextAction(QStringLiteral("rm-bob"), QStringLiteral("change window closed"));
        freeze->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(1000));
        QVERIFY(finished.first().at(0).toBool());
        QCOMPARE(c.fake->actions().size(), 1);
        const ConsoleAction sent = c.fake->actions().first();
        QCOMPARE(sent.kind, ConsoleAction::Kind::Freeze);
        QCOMPARE(sent.env, QStringLiteral("test"));
        QCOMPARE(sent.by, QStringLiteral("rm-bob"));
        QCOMPARE(sent.reason, QStringLiteral("change window closed"));
        QTRY_VERIFY_WITH_TIMEOUT(c.frozenInView(QStringLiteral("test")), 1000);
        QTRY_VERIFY_WITH_TIMEOUT(unfreeze->isEnabled(), 1000);
        QVERIFY(!freeze->isEnabled());
        // The event the freeze recorded reaches the audit browser on top.
        QTRY_COMPARE_WITH_TIMEOUT(c.session.audit()->rowCount(), 11, 1000);
        QCOMPARE(c.session.audit()->eventAt(0)->operation, std::string("freeze"));

        answered = confirmNextAction(QStringLiteral("rm-bob"), {});
        unfreeze->click();
        QVERIFY(*answered);
        QTRY_COMPARE_WITH_TIMEOUT(c.fake->actions().size(), 2, 1000);
        QCOMPARE(c.fake->actions().last().kind, ConsoleAction::Kind::Unfreeze);
        QTRY_VERIFY_WITH_TIMEOUT(!c.frozenInView(QStringLiteral("test")), 1000);
    }

    // Approving the pending request sends its id; the list empties once
    // the backend has decided.
    void aSupersessionIsApprovedFromTheWindow()
    {
        Console c;
        QVERIFY(c.loaded());
        c.window.approvalsView()->findChild<QListWidget*>()->setCurrentRow(0);
        auto* approve = button<QPushButton>(c.window.approvalsView(), QStringLiteral("Approve"));
        QVERIFY(approve && approve->isEnabled());
        const auto answered = confirmNextAction(QStringLiteral("rm-alice"), {});
        approve->click();
        QVERIFY(*answered);
        QTRY_COMPARE_WITH_TIMEOUT(c.fake->actions().size(), 1, 1000);
        QCOMPARE(c.fake->actions().first().kind, ConsoleAction::Kind::Approve);
        QCOMPARE(c.fake->actions().first().request, qint64(5));
        QTRY_COMPARE_WITH_TIMEOUT(c.window.approvalsView()->count(), 0, 1000);
    }

    // A refused action is shown to the operator with the backend's reason,
    // without blocking the window.
    void aRefusedActionIsShown()
    {
        Console c;
        QVERIFY(c.loaded());
        c.fake->refuseNextAction(QStringLiteral("LEASE_SUPERSEDED: the lease was already replaced"));
        c.selectEnvironment(QStringLiteral("test"));
        auto* revoke = button<QToolButton>(c.window.environmentsView(), QStringLiteral("Revoke"));
        QVERIFY(revoke && revoke->isEnabled());
        const auto answered = confirmNextAction(QStringLiteral("rm-bob"), QStringLiteral("stuck"));
        revoke->click();
        QVERIFY(*answered);
        QMessageBox* box = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((box = c.window.findChild<QMessageBox*>()) != nullptr, 1000);
        QVERIFY(box->text().contains(QStringLiteral("LEASE_SUPERSEDED")));
        QCOMPARE(c.fake->actions().first().kind, ConsoleAction::Kind::Revoke);
        // Nothing changed: the lease is still shown.
        QVERIFY(c.fake->environment(QStringLiteral("test"))->holderJob.has_value());
    }

    // A refusal picked in the audit browser is traced through the backend.
    void aRefusalPickedInTheAuditBrowserIsTraced()
    {
        Console c;
        QVERIFY(c.loaded());
        const std::optional<int> row = c.session.audit()->rowForEvent(c.staleEvent);
        QVERIFY(row);
        c.window.auditView()->table()->selectionModel()->setCurrentIndex(c.session.audit()->index(*row, 0),
                                                                         QItemSelectionModel::ClearAndSelect |
                                                                             QItemSelectionModel::Rows);
        QTRY_VERIFY_WITH_TIMEOUT(c.window.tracePanel()->text().contains(QStringLiteral("pipeline-109")),
                                 1000);
        QVERIFY(c.window.tracePanel()->text().contains(QStringLiteral("v1.9")));
        QCOMPARE(c.fake->requestCount(RequestKind::Trace), 1);
    }
};

QTEST_MAIN(TestMainWindowFake)
#include "test_mainwindow_fake.moc"
