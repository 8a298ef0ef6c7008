// The release console's window over the in-memory backend (FakeBackend),
// offscreen: no database, milliseconds. The views show what the backend
// holds, operator actions clicked through their confirmations reach the
// backend and their outcome comes back to the window, a refusal picked in the
// audit browser is traced. (test_mainwindow runs the window against
// PostgreSQL, through the protocol.)

#include "auditmodel.h"
#include "auditview.h"
#include "consoleclicks.h"
#include "consolesession.h"
#include "consoleviews.h"
#include "decisionnotifier.h"
#include "environmentsmodel.h"
#include "environmentsview.h"
#include "fakebackend.h"
#include "fakeconsole.h"
#include "mainwindow.h"
#include "promotionsview.h"
#include "queuemodel.h"
#include "queueview.h"
#include "startupreport.h"
#include "supersessionsview.h"
#include "timelinelegend.h"
#include "timelinewidget.h"
#include "tracepanel.h"

#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeView>
#include <QtTest>

using namespace relctl::ui;

namespace {

// Times in these tests are epoch milliseconds, as the console's functions send them.
relctl::Timestamp ms(std::int64_t n)
{
    return relctl::Timestamp::fromMillis(n);
}

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
        row.holderGeneration = 12;
        row.holderToken = 7;
        row.serverNow = ms(3'999'999'000'000);
        row.holderAcquiredAt = row.serverNow - std::chrono::milliseconds(103000); // held for 1 min 43 s
        row.leaseExpiresAt = ms(4'000'000'000'000);
    }
    return row;
}

relctl::QueuedCandidate waiting(std::int64_t id, const std::string& job, std::int64_t generation,
                                std::int64_t position)
{
    relctl::QueuedCandidate c;
    c.candidate = id;
    c.job = job;
    c.release = "v" + std::to_string(generation);
    c.generation = generation;
    c.position = position;
    return c;
}

// A window over a fake holding three environments (test leased), ten
// events (one a refused stale publish on prod) and one supersession request.
struct Console : FakeConsole
{
    Console()
    {
        // test: leased, two candidates queued behind the holder.
        relctl::EnvironmentRow test = environment("test", true);
        test.queue = {waiting(31, "test-next", 13, 1), waiting(32, "test-later", 14, 2)};
        test.queueLength = 2;
        relctl::EnvironmentRow staging = environment("staging", false);
        staging.pendingPromotions = 1;
        fake->setEnvironments({environment("prod", false), staging, test});
        for (int i = 0; i < 9; ++i) {
            relctl::Event e;
            e.env = i % 3 == 0 ? "prod" : "test";
            e.operation = "renew";
            e.outcome = "accepted";
            e.job = "job-" + std::to_string(i);
            fake->addEvent(e);
        }
        relctl::Event stale;
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
        SupersessionRow request;
        request.id = 5;
        request.env = QStringLiteral("staging");
        request.winnerJob = QStringLiteral("job-22");
        request.winnerRelease = QStringLiteral("v2.2");
        request.winnerGeneration = 22;
        request.skipped = {QStringLiteral("job-21 (generation 21)")};
        fake->setSupersessions({request});
        start();
    }

    bool loaded()
    {
        return QTest::qWaitFor(
            [this] {
                return session.environments()->rowCount() == 3 && session.audit()->rowCount() == 10 &&
                       window.supersessionsView()->count() == 1;
            },
            2000);
    }

    void selectEnvironment(const QString& name) { ::selectEnvironment(window, name); }

    bool frozenInView(const QString& name) const
    {
        QAbstractItemModel* shown = window.environmentsView()->table()->model();
        for (int row = 0; row < shown->rowCount(); ++row)
            if (shown->index(row, 0).data().toString() == name)
                return shown->index(row, 0).data(EnvironmentsModel::Frozen).toBool();
        return false;
    }

    std::int64_t staleEvent = 0;
};

// The raised tab of the side docks (trace, queue, approvals, promotions).
QString currentSideTab(const QMainWindow& window)
{
    for (const QTabBar* bar : window.findChildren<QTabBar*>()) {
        for (int i = 0; i < bar->count(); ++i) {
            if (bar->tabText(i) == QStringLiteral("Trace"))
                return bar->tabText(bar->currentIndex());
        }
    }
    return {};
}

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
        QTreeView* environments = c.window.environmentsView()->table();
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
        c.window.supersessionsView()->findChild<QListWidget*>()->setCurrentRow(0);
        auto* approve = button<QPushButton>(c.window.supersessionsView(), QStringLiteral("Approve"));
        QVERIFY(approve && approve->isEnabled());
        const auto answered = confirmNextAction(QStringLiteral("rm-alice"), {});
        approve->click();
        QVERIFY(*answered);
        QTRY_COMPARE_WITH_TIMEOUT(c.fake->actions().size(), 1, 1000);
        QCOMPARE(c.fake->actions().first().kind, ConsoleAction::Kind::Approve);
        QCOMPARE(c.fake->actions().first().request, qint64(5));
        QTRY_COMPARE_WITH_TIMEOUT(c.window.supersessionsView()->count(), 0, 1000);
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
        // Whichever side tab was up, the trace comes to the front.
        c.window.queueView()->parentWidget()->raise();
        QCOMPARE(currentSideTab(c.window), QStringLiteral("Queue (2)"));
        QTRY_VERIFY_WITH_TIMEOUT(c.window.tracePanel()->text().contains(QStringLiteral("pipeline-109")),
                                 1000);
        QTRY_COMPARE_WITH_TIMEOUT(currentSideTab(c.window), QStringLiteral("Trace"), 1000);
        QVERIFY(c.window.tracePanel()->text().contains(QStringLiteral("v1.9")));
        QCOMPARE(c.fake->requestCount(RequestKind::Trace), 1);
    }

    // A release that records what relctl run stopped has no refusal to
    // trace, but the trace panel says what the run could not stop.
    void aStoppedRunIsExplainedInTheTracePanel()
    {
        Console c;
        QVERIFY(c.loaded());
        relctl::Event release;
        release.env = "prod";
        release.operation = "release";
        release.outcome = "accepted";
        release.job = "pipeline-110";
        release.token = 42;
        release.detail =
            nlohmann::json{{"state", "released"},
                           {"note", "cancelled by SIGTERM"},
                           {"stopped",
                            {{"cause", "cancelled"},
                             {"signal", "SIGTERM"},
                             {"process_group", 4242},
                             {"command_started", true},
                             {"exit_code", 143},
                             {"killed_by", "SIGTERM"},
                             {"escalated", false}}},
                           {"caveat", "external work started by the command is not known to have "
                                      "stopped: check the deploy target before running again"}}
                .dump();
        const std::int64_t id = c.fake->addEvent(release);
        c.fake->announce({QStringLiteral("prod")});
        QTRY_COMPARE_WITH_TIMEOUT(c.session.audit()->rowCount(), 11, 2000);
        const std::optional<int> row = c.session.audit()->rowForEvent(id);
        QVERIFY(row);
        c.window.auditView()->table()->selectionModel()->setCurrentIndex(c.session.audit()->index(*row, 0),
                                                                         QItemSelectionModel::ClearAndSelect |
                                                                             QItemSelectionModel::Rows);
        QTRY_VERIFY_WITH_TIMEOUT(c.window.tracePanel()->text().contains(QStringLiteral("process group 4242")),
                                 1000);
        QVERIFY(c.window.tracePanel()->text().contains(QStringLiteral("is not known to have stopped")));
        QCOMPARE(c.fake->requestCount(RequestKind::Trace), 0);
    }

    // Each confirmation says what the action will do before it is made.
    void confirmationsStateTheirConsequences()
    {
        Console c;
        QVERIFY(c.loaded());
        c.selectEnvironment(QStringLiteral("test"));
        auto shown = std::make_shared<QString>();
        auto answered = confirmNextAction(QStringLiteral("rm-bob"), QStringLiteral("stuck"), shown);
        button<QToolButton>(c.window.environmentsView(), QStringLiteral("Revoke"))->click();
        QVERIFY(*answered);
        // Revoke: the holder (job, release, token), how long it held, who is next.
        for (const char* part : {"test-deploy", "v1.2", "fencing token 7", "1 min 43 s", "LEASE_REVOKED",
                                 "Next in the queue: job test-next"})
            QVERIFY2(shown->contains(QLatin1String(part)),
                     qPrintable(QLatin1String(part) + QStringLiteral(" not in ") + *shown));

        answered = confirmNextAction(QStringLiteral("rm-bob"), QStringLiteral("audit"), shown);
        button<QToolButton>(c.window.environmentsView(), QStringLiteral("Freeze"))->click();
        QVERIFY(*answered);
        // Freeze: the live holder whose publish is refused, the queue that waits.
        for (const char* part : {"DISPATCH_FROZEN", "test-deploy", "publish will be refused",
                                 "2 queued candidate(s) will wait", "test-next", "test-later"})
            QVERIFY2(shown->contains(QLatin1String(part)),
                     qPrintable(QLatin1String(part) + QStringLiteral(" not in ") + *shown));

        // Approve and deny: the winner and every candidate skipped.
        c.window.supersessionsView()->findChild<QListWidget*>()->setCurrentRow(0);
        answered = confirmNextAction(QStringLiteral("rm-alice"), {}, shown);
        button<QPushButton>(c.window.supersessionsView(), QStringLiteral("Approve"))->click();
        QVERIFY(*answered);
        for (const char* part : {"Approve supersession #5", "job-22", "v2.2", "generation 22", "SUPERSEDED",
                                 "job-21 (generation 21)"})
            QVERIFY2(shown->contains(QLatin1String(part)),
                     qPrintable(QLatin1String(part) + QStringLiteral(" not in ") + *shown));
    }

    void aDenialSaysWhoAdoptsFirst()
    {
        Console c;
        QVERIFY(c.loaded());
        c.window.supersessionsView()->findChild<QListWidget*>()->setCurrentRow(0);
        auto shown = std::make_shared<QString>();
        const auto answered =
            confirmNextAction(QStringLiteral("rm-alice"), QStringLiteral("in order"), shown);
        button<QPushButton>(c.window.supersessionsView(), QStringLiteral("Deny"))->click();
        QVERIFY(*answered);
        for (const char* part : {"Deny supersession #5", "job-21 (generation 21)", "adopt before", "job-22"})
            QVERIFY2(shown->contains(QLatin1String(part)),
                     qPrintable(QLatin1String(part) + QStringLiteral(" not in ") + *shown));
    }

    // What awaits a decision or a turn is counted where a release manager looks.
    void pendingWorkIsCounted()
    {
        Console c;
        QVERIFY(c.loaded());
        const auto dockTitle = [&](QWidget* content) {
            return qobject_cast<QDockWidget*>(content->parentWidget())->windowTitle();
        };
        QTRY_COMPARE_WITH_TIMEOUT(dockTitle(c.window.supersessionsView()),
                                  QStringLiteral("Supersessions (1)"), 1000);
        QCOMPARE(dockTitle(c.window.queueView()), QStringLiteral("Queue (2)"));
        QCOMPARE(dockTitle(c.window.promotionsView()), QStringLiteral("Promotions (1)"));
        // The queue view lists test's two candidates in serving order.
        QueueModel* queue = c.window.queueView()->model();
        QCOMPARE(queue->rowCount(), 2);
        QCOMPARE(queue->index(0, int(QueueModel::Column::Job)).data().toString(),
                 QStringLiteral("test-next"));
        QCOMPARE(queue->index(0, int(QueueModel::Column::Standing)).data().toString(),
                 QStringLiteral("next"));
        QCOMPARE(queue->index(1, int(QueueModel::Column::Job)).data().toString(),
                 QStringLiteral("test-later"));
        QVERIFY(c.window.queueView()->summary().contains(QStringLiteral("2 on test")));
        // The environments table has a column for what awaits approval.
        QAbstractItemModel* envs = c.window.environmentsView()->table()->model();
        for (int row = 0; row < envs->rowCount(); ++row) {
            const QString name = envs->index(row, 0).data().toString();
            const QString pending =
                envs->index(row, int(EnvironmentsModel::Column::Pending)).data().toString();
            QCOMPARE(pending, name == QStringLiteral("staging") ? QStringLiteral("1 to decide") : QString());
        }
        // Deciding the request takes it off the tab's count.
        c.window.supersessionsView()->findChild<QListWidget*>()->setCurrentRow(0);
        const auto answered = confirmNextAction(QStringLiteral("rm-alice"), {});
        button<QPushButton>(c.window.supersessionsView(), QStringLiteral("Approve"))->click();
        QVERIFY(*answered);
        QTRY_COMPARE_WITH_TIMEOUT(dockTitle(c.window.supersessionsView()), QStringLiteral("Supersessions"),
                                  1000);
        // Showing only the selected environment's queue.
        c.selectEnvironment(QStringLiteral("prod"));
        c.window.queueView()->findChild<QCheckBox*>(QStringLiteral("queueSelectedOnly"))->setChecked(true);
        QCOMPARE(queue->rowCount(), 0);
        c.selectEnvironment(QStringLiteral("test"));
        QCOMPARE(queue->rowCount(), 2);
    }

    // The status bar repeats a notice on its one line: one decision with
    // its words, a burst of them as its count, since a second line would not
    // show and the first would run under the connection's labels.
    void aNoticeFitsTheStatusBarsLine()
    {
        Console c;
        QVERIFY(c.loaded());
        DecisionNotifier* notifier = c.window.decisions();
        emit notifier->notified(QStringLiteral("Promotion waits for you"),
                                QStringLiteral("v5 to prod (request #1, asked by ci): 0 of 1 approvals."));
        QCOMPARE(c.window.statusBar()->currentMessage(),
                 QStringLiteral(
                     "Promotion waits for you: v5 to prod (request #1, asked by ci): 0 of 1 approvals."));
        emit notifier->notified(QStringLiteral("69 decisions wait for you"),
                                QStringLiteral("v5 to prod (request #1, asked by ci): 0 of 1 approvals.\n"
                                               "v6 to prod (request #2, asked by ci): 0 of 1 approvals.\n"
                                               "… and 67 more: see the console."));
        QCOMPARE(c.window.statusBar()->currentMessage(),
                 QStringLiteral("69 decisions wait for you (Needs me lists them)"));
        // While it shows, the target and the server give it their room.
        auto* target = c.window.findChild<QLabel*>(QStringLiteral("connectionTarget"));
        auto* server = c.window.findChild<QLabel*>(QStringLiteral("connectionServer"));
        QVERIFY(target && server);
        QVERIFY(target->isHidden() && server->isHidden());
        c.window.statusBar()->clearMessage();
        QVERIFY(!target->isHidden() && !server->isHidden());
    }

    // The side's tabs read whole with long counts in a 1600-wide window:
    // none is elided, and a bar too narrow for them scrolls.
    void theSideTabsKeepTheirWords()
    {
        Console c;
        QVERIFY(c.loaded());
        c.window.resize(1600, 1000);
        c.window.findChild<QDockWidget*>(QStringLiteral("Supersessions"))
            ->setWindowTitle(QStringLiteral("Supersessions (2 for you)"));
        c.window.findChild<QDockWidget*>(QStringLiteral("Promotions"))
            ->setWindowTitle(QStringLiteral("Promotions (27, 12 for you)"));
        c.window.findChild<QDockWidget*>(QStringLiteral("Queue"))
            ->setWindowTitle(QStringLiteral("Queue (60)"));
        QApplication::processEvents();
        QTabBar* side = nullptr;
        for (QTabBar* bar : c.window.findChildren<QTabBar*>(QString(), Qt::FindDirectChildrenOnly))
            for (int i = 0; i < bar->count(); ++i)
                if (bar->tabText(i) == QStringLiteral("Trace"))
                    side = bar;
        QVERIFY(side);
        QCOMPARE(side->count(), 4);
        QCOMPARE(side->elideMode(), Qt::ElideNone);
        for (int i = 0; i < side->count(); ++i)
            QVERIFY2(side->tabRect(i).width() >= side->fontMetrics().horizontalAdvance(side->tabText(i)),
                     qPrintable(side->tabText(i)));
    }

    // Every operator action is in the menu bar, and works from there.
    void everyActionIsInTheActionsMenu()
    {
        Console c;
        QVERIFY(c.loaded());
        QMenu* actions = c.window.menuBar()->findChild<QMenu*>(QStringLiteral("actionsMenu"));
        QVERIFY(actions);
        QStringList names;
        for (QAction* a : actions->actions())
            if (!a->isSeparator())
                names << a->objectName();
        for (const char* name : {"freeze", "unfreeze", "revoke", "manifestHistory", "approveSupersession",
                                 "denySupersession", "approvePromotion", "denyPromotion"})
            QVERIFY2(names.contains(QLatin1String(name)), name);
        c.selectEnvironment(QStringLiteral("test"));
        QAction* freeze = c.window.findChild<QAction*>(QStringLiteral("freeze"));
        QVERIFY(freeze->isEnabled());
        auto answered = confirmNextAction(QStringLiteral("rm-bob"), QStringLiteral("from the menu"));
        freeze->trigger();
        QVERIFY(*answered);
        QTRY_COMPARE_WITH_TIMEOUT(c.fake->actions().size(), 1, 1000);
        QCOMPARE(c.fake->actions().first().kind, ConsoleAction::Kind::Freeze);
        QCOMPARE(c.fake->actions().first().env, QStringLiteral("test"));
        // Approve from the menu acts on the request selected in the Supersessions view.
        QAction* approve = c.window.findChild<QAction*>(QStringLiteral("approveSupersession"));
        QVERIFY(!approve->isEnabled()); // nothing selected yet
        c.window.supersessionsView()->findChild<QListWidget*>()->setCurrentRow(0);
        QVERIFY(approve->isEnabled());
        answered = confirmNextAction(QStringLiteral("rm-alice"), {});
        approve->trigger();
        QVERIFY(*answered);
        QTRY_COMPARE_WITH_TIMEOUT(c.fake->actions().size(), 2, 1000);
        QCOMPARE(c.fake->actions().last().kind, ConsoleAction::Kind::Approve);
        QCOMPARE(c.fake->actions().last().request, qint64(5));
    }

    // While the database is unreachable what is shown is marked as stale
    // everywhere, and comes back when the connection does.
    void whatIsShownGoesStaleWhileDisconnected()
    {
        Console c;
        QVERIFY(c.loaded());
        QVERIFY(!c.window.isStale());
        QTreeView* table = c.window.environmentsView()->table();
        const QColor live = table->palette().color(QPalette::Active, QPalette::Text);
        c.fake->dropConnection(QStringLiteral("server closed the connection"));
        QTRY_VERIFY_WITH_TIMEOUT(c.window.isStale(), 1000);
        QVERIFY(c.session.environments()->isStale());
        QVERIFY(c.window.queueView()->model()->isStale());
        for (QWidget* view : std::initializer_list<QWidget*>{table, c.window.auditView()->table(),
                                                             c.window.tracePanel(), c.window.queueView()})
            QVERIFY2(view->palette().color(QPalette::Active, QPalette::Text) != live,
                     view->metaObject()->className());
        const QModelIndex expires =
            c.session.environments()->index(2, int(EnvironmentsModel::Column::ExpiresIn));
        const QString shown = expires.data().toString();
        c.session.environments()->tick();
        QCOMPARE(expires.data().toString(), shown);
        // The timeline's clock stops too: the now-line does not move on.
        QVERIFY(c.window.timeline()->isStale());
        const double stopped = c.window.timeline()->serverNowEstimate();
        QTest::qWait(30);
        QCOMPARE(c.window.timeline()->serverNowEstimate(), stopped);
        // Reconnected and read again: current.
        c.session.setTarget(c.session.target());
        QTRY_VERIFY_WITH_TIMEOUT(!c.window.isStale(), 1000);
        QTRY_VERIFY_WITH_TIMEOUT(!c.session.environments()->isStale(), 1000);
        QCOMPARE(table->palette().color(QPalette::Active, QPalette::Text), live);
        QVERIFY(!c.window.timeline()->isStale());
        QVERIFY(c.window.timeline()->serverNowEstimate() > stopped);
    }

    void aDemoSaysSo()
    {
        Console c;
        QVERIFY(!c.window.windowTitle().contains(QStringLiteral("DEMO")));
        auto* badge = c.window.findChild<QLabel*>(QStringLiteral("demoBadge"));
        QVERIFY(badge && badge->isHidden());
        c.window.setDemo(true);
        QVERIFY(c.window.windowTitle().contains(QStringLiteral("DEMO")));
        QVERIFY(!badge->isHidden());
        QVERIFY(badge->text().contains(QStringLiteral("DEMO")));
    }

    // The window opens within the screen's available area: here the
    // offscreen platform's screen, smaller than the 1400x900 the window
    // prefers.
    void theWindowOpensWithinTheScreensHeight()
    {
        Console c;
        const QSize available = c.window.screen()->availableGeometry().size();
        QVERIFY(available.width() < 1400 && available.height() < 900);
        // The height the screen has; the width no less than the window's
        // minimum (the audit browser's filter row), which is wider than
        // this screen.
        QCOMPARE(c.window.height(), available.height());
        QCOMPARE(c.window.width(), std::max(available.width(), c.window.minimumSizeHint().width()));
    }

    // Only a screen smaller than the preferred size shrinks the window, and
    // only in the dimension it lacks.
    void theFirstSizeIsCappedOnlyWhereTheScreenIsSmaller_data()
    {
        QTest::addColumn<QSize>("available");
        QTest::addColumn<QSize>("expected");
        QTest::addRow("large screen") << QSize(2560, 1400) << QSize(1400, 900);
        QTest::addRow("exactly the size") << QSize(1400, 900) << QSize(1400, 900);
        QTest::addRow("laptop") << QSize(1366, 728) << QSize(1366, 728);
        QTest::addRow("narrow, tall") << QSize(1080, 1880) << QSize(1080, 900);
        QTest::addRow("unknown") << QSize() << QSize(1400, 900);
    }

    void theFirstSizeIsCappedOnlyWhereTheScreenIsSmaller()
    {
        QFETCH(QSize, available);
        QFETCH(QSize, expected);
        QCOMPARE(MainWindow::firstSize(QSize(1400, 900), available), expected);
    }

    // In a small window the timeline keeps the space: the environments dock
    // is as tall as its rows, not a third of the window.
    void aSmallWindowGivesTheTimelineTheSpace()
    {
        Console c;
        QVERIFY(c.loaded());
        c.window.resize(1024, 700);
        QTRY_COMPARE_WITH_TIMEOUT(c.window.height(), 700, 1000);
        // Every view fits that width too (the audit browser's filter row is the widest).
        QCOMPARE(c.window.width(), 1024);
        QApplication::processEvents();
        QTreeView* table = c.window.environmentsView()->table();
        const int rowHeight = table->sizeHintForRow(0);
        const int rowsHeight = table->header()->height() + 3 * rowHeight;
        const int unused = table->viewport()->height() + table->header()->height() - rowsHeight;
        QVERIFY2(unused < rowHeight * 2, qPrintable(QStringLiteral("%1 px below the rows").arg(unused)));
        QCOMPARE(table->verticalScrollBar()->maximum(), 0); // and every row shows
        QVERIFY2(c.window.timeline()->height() >= 150,
                 qPrintable(QString::number(c.window.timeline()->height())));
    }

    // The timeline's legend, with its entry for a collapsed group's shading,
    // at the two window sizes people use most: the lanes are the data, so it
    // takes at most a quarter of the timeline's height (it used to take three
    // rows at 1280x800 and four at 1024x700, leaving one lane), the lanes the
    // rest. Every entry is either shown, inside the strip and over no other,
    // or explained in the tooltip of the last one, "+N more (L)".
    void theLegendLaysOutAtCommonSizes_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addRow("1280x800") << QSize(1280, 800);
        QTest::addRow("1024x700") << QSize(1024, 700);
    }

    void theLegendLaysOutAtCommonSizes()
    {
        using relctl::ui::TimelineLegend;
        QFETCH(QSize, size);
        Console c;
        QVERIFY(c.loaded());
        c.window.resize(size);
        QTRY_COMPARE_WITH_TIMEOUT(c.window.size(), size, 1000);
        QApplication::processEvents();
        const TimelineWidget* timeline = c.window.timeline();
        const TimelineLegend& legend = timeline->legend();
        const auto& geometry = timeline->timelineGeometry();
        QVERIFY2(timeline->height() >= 150, qPrintable(QString::number(timeline->height())));
        QVERIFY(timeline->legendVisible());
        QVERIFY(!timeline->legendExpanded());
        QVERIFY2(legend.height() <= timeline->height() / 4,
                 qPrintable(QStringLiteral("%1 of %2").arg(legend.height()).arg(timeline->height())));
        QVERIFY(legend.height() >= TimelineLegend::heightOf(timeline->font(), 1));
        // The lanes get the rest: everything above the legend.
        QCOMPARE(geometry.viewportHeight(), double(timeline->height() - legend.height()));
        const int lanes =
            static_cast<int>((geometry.viewportHeight() - geometry.plotTop()) / geometry.laneHeight());
        QVERIFY2(lanes >= 3, qPrintable(QStringLiteral("%1 lanes show").arg(lanes)));

        const QRect strip(0, timeline->height() - legend.height(), timeline->width(), legend.height());
        const LegendEntry* more = legend.toggle();
        std::vector<const LegendEntry*> shown;
        bool held = false;
        int hidden = 0;
        for (const auto& e : legend.entries()) {
            held = held || e.swatch == LegendEntry::Swatch::GroupHeld;
            if (e.shown()) {
                shown.push_back(&e);
            } else if (e.swatch != LegendEntry::Swatch::Caption) {
                ++hidden;
                QVERIFY2(more, qPrintable(e.label));
                QVERIFY2(more->help.contains(e.label + QStringLiteral(": ") + e.help), qPrintable(e.label));
            }
        }
        QVERIFY(held);
        QCOMPARE(hidden, legend.hiddenCount());
        if (more) {
            QCOMPARE(more->label, QStringLiteral("+%1 more (L)").arg(hidden));
            shown.push_back(more);
        }
        for (std::size_t i = 0; i < shown.size(); ++i) {
            QVERIFY2(strip.contains(shown[i]->rect), qPrintable(shown[i]->label));
            for (std::size_t j = 0; j < i; ++j)
                QVERIFY2(!shown[j]->rect.intersects(shown[i]->rect), qPrintable(shown[i]->label));
        }
    }

    // A large installation's fifty environments scroll in their table
    // rather than take the window: the audit browser keeps room for a
    // screenful of events, the timeline for its lanes.
    void manyEnvironmentsLeaveTheAuditBrowserItsRows()
    {
        Console c;
        // The size the window prefers, whatever the test screen's.
        c.window.resize(1400, 900);
        std::vector<relctl::EnvironmentRow> many;
        many.reserve(50);
        for (int i = 0; i < 50; ++i)
            many.push_back(environment("env-" + std::to_string(i), i % 10 == 0));
        c.fake->setEnvironments(many);
        c.fake->announce({});
        QTRY_COMPARE_WITH_TIMEOUT(c.session.environments()->rowCount(), 50, 2000);
        QApplication::processEvents();
        QTreeView* environments = c.window.environmentsView()->table();
        QVERIFY(environments->verticalScrollBar()->maximum() > 0);
        QVERIFY2(c.window.environmentsView()->height() <= c.window.height() / 3 + 1,
                 qPrintable(QString::number(c.window.environmentsView()->height())));
        QTableView* audit = c.window.auditView()->table();
        const int rows = audit->viewport()->height() / audit->verticalHeader()->defaultSectionSize();
        QVERIFY2(rows >= 5, qPrintable(QStringLiteral("%1 audit rows show").arg(rows)));
        QVERIFY2(c.window.timeline()->height() >= 150,
                 qPrintable(QString::number(c.window.timeline()->height())));
    }

    // The timeline's groups are given once on a first load (each time reads
    // every environment), and again when the rows are read from scratch (a
    // reset of the environments, which inserts none and says nothing else).
    void theTimelinesGroupsFollowTheEnvironmentsOnce()
    {
        Console c;
        QVERIFY(c.loaded());
        QApplication::processEvents();
        QCOMPARE(c.window.timelineGroupings(), 1);
        QVERIFY(c.window.timeline()->timelineRows().groupOf().contains(QStringLiteral("prod")));

        // A reload that changes no environment's membership leaves them.
        c.fake->announce({});
        QTest::qWait(100);
        QCOMPARE(c.window.timelineGroupings(), 1);

        // A read with one name twice is not merged by name: the model resets.
        relctl::EnvironmentRow svc = environment("svc.prod", false);
        svc.group = "svc";
        c.fake->setEnvironments({environment("prod", false), svc, svc});
        QSignalSpy reset(c.session.environments(), &QAbstractItemModel::modelReset);
        c.fake->announce({});
        QTRY_COMPARE_WITH_TIMEOUT(reset.count(), 1, 2000);
        QCOMPARE(c.window.timelineGroupings(), 2);
        QCOMPARE(c.window.timeline()->timelineRows().groupOf().value(QStringLiteral("svc.prod")),
                 QStringLiteral("svc"));
    }

    // Following now moves the view a little on every tick and after every
    // slice; the slice asked for covers a margin, so the window does not ask
    // again each time (it once asked after every answer, without end).
    void followingNowAsksForTheTimelineOnlyWhenItsSliceRunsOut()
    {
        Console c;
        QVERIFY(c.loaded());
        QVERIFY(c.window.timeline()->followNow());
        QTRY_COMPARE_WITH_TIMEOUT(c.fake->requestCount(RequestKind::Timeline), 1, 2000);
        QTest::qWait(500); // ticks, and the answer with its own move
        QCOMPARE(c.fake->requestCount(RequestKind::Timeline), 1);
        // A view outside the slice is asked for at once.
        const qint64 from = c.window.timeline()->visibleFrom();
        c.window.timeline()->setVisibleRange(from - 86'400'000, from - 86'000'000);
        QCOMPARE(c.fake->requestCount(RequestKind::Timeline), 2);
    }

    // RELCTL_CONSOLE_REPORT (the console benchmark's hook): one line, once
    // the window, the environments and the first audit page are painted,
    // in that order of causes; nothing without the variable.
    void theStartupReportSaysWhenTheWindowWasUsable()
    {
        FakeBackend* fake = new FakeBackend;
        fake->setEnvironments({environment("prod", false), environment("test", true)});
        for (int i = 0; i < 3; ++i) {
            relctl::Event e;
            e.env = "prod";
            e.operation = "renew";
            e.outcome = "accepted";
            fake->addEvent(e);
        }
        ConsoleSession session{std::unique_ptr<ConsoleBackend>(fake)};
        MainWindow window(&session);
        QVERIFY(!StartupReport::fromEnvironment(&window, &session));
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("report.json"));
        qputenv("RELCTL_CONSOLE_REPORT", file.toLocal8Bit());
        QVERIFY(StartupReport::fromEnvironment(&window, &session));
        qunsetenv("RELCTL_CONSOLE_REPORT");
        window.show();
        session.start();
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(file), 5000);
        QFile in(file);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray line = in.readAll();
        QVERIFY(line.endsWith('\n'));
        QCOMPARE(line.count('\n'), 1);
        const QJsonObject r = QJsonDocument::fromJson(line).object();
        const auto at = [&r](const char* key) { return qint64(r.value(QLatin1String(key)).toDouble()); };
        QCOMPARE(r.value(QStringLiteral("audit_rows")).toInt(), 3);
        QVERIFY(at("created_ns") > 0);
        QVERIFY(at("created_ns") <= at("shown_ns"));
        QVERIFY(at("connected_ns") <= at("environments_answered_ns"));
        QVERIFY(at("environments_answered_ns") <= at("environments_painted_ns"));
        QVERIFY(at("audit_requested_ns") <= at("audit_answered_ns"));
        QVERIFY(at("audit_answered_ns") <= at("audit_painted_ns"));
        for (const char* key : {"shown_ns", "environments_painted_ns", "audit_painted_ns"})
            QVERIFY2(at(key) <= at("usable_ns"), key);
        QVERIFY(r.value(QStringLiteral("hwm_kb")).toDouble() >= r.value(QStringLiteral("rss_kb")).toDouble());
        QVERIFY(r.value(QStringLiteral("rss_kb")).toDouble() > 0);
    }
};

QTEST_MAIN(TestMainWindowFake)
#include "test_mainwindow_fake.moc"
