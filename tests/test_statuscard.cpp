// "What became of this job or operation?" in the release console, over the
// in-memory backend (FakeBackend), offscreen: asked from the audit browser
// (a row's context menu, the Status… button) or typed into the card, it
// reaches the backend as a job or an op id lookup, and the card shows the
// state (its colour), the sentence, the next step, the caveat of a stopped
// command and the evidence. test_mainwindow asks the real database.

#include "auditmodel.h"
#include "auditview.h"
#include "consolesession.h"
#include "fakebackend.h"
#include "fakeconsole.h"
#include "jobstatus.h"
#include "mainwindow.h"
#include "statuscard.h"
#include "statusdialog.h"

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QtTest>

using namespace relctl::ui;
using nlohmann::json;

namespace {

constexpr auto Job = StatusLookup::Kind::Job;
constexpr auto Operation = StatusLookup::Kind::Operation;

relctl::JobStatus status(const std::string& state, const std::string& summary, const std::string& next,
                         json evidence)
{
    relctl::JobStatus s;
    s.state = state;
    s.summary = summary;
    s.next = next;
    s.evidence = std::move(evidence);
    return s;
}

// The server's answers (relctl.job_state, relctl.op_state), as they read.
relctl::JobStatus rejected()
{
    relctl::JobStatus s =
        status("rejected", "rejected: generation 8 is older than the current generation 9",
               "a retry with the same op id gets the same refusal; relctl trace JOB says what decided it",
               {{"reason", "STALE_GENERATION"},
                {"env", "prod"},
                {"event", 10},
                {"message", "generation 8 is older than the current generation 9"}});
    s.job = "pipeline-108";
    s.opId = "op-108-publish";
    return s;
}

relctl::JobStatus completed()
{
    relctl::JobStatus s =
        status("completed",
               "completed: v1.9 (generation 9) was published on prod by pipeline-109 at 2026-12-01 "
               "20:09:29.501378+00 and is still current",
               "nothing to retry: the publish took effect",
               {{"env", "prod"},
                {"release", "v1.9"},
                {"generation", 9},
                {"published_at", "2026-12-01T20:09:29.501378+00:00"},
                {"current", true},
                {"superseded_by", nullptr},
                {"lease", {{"token", 41}, {"acquired_at", "2026-12-01T20:08:00+00:00"}}}});
    s.job = "pipeline-109";
    s.opId = "op-109-publish";
    return s;
}

relctl::JobStatus running()
{
    relctl::JobStatus s =
        status("accepted-running", "accepted, still running: pipeline-109 holds prod with fencing token 41",
               "do not start the work again: the holder is still running; wait for it, or revoke the lease",
               {{"env", "prod"}, {"token", 41}, {"expires_in_ms", 28'500}});
    s.job = "pipeline-109";
    return s;
}

relctl::JobStatus cancelled()
{
    relctl::JobStatus s = status(
        "cancelled",
        "cancelled: the run of pipeline-111 on prod (token 44) was cancelled by SIGTERM and published "
        "nothing",
        "check the deploy target for work the command started; then a new run (a new op id) may deploy",
        {{"env", "prod"},
         {"ending", "released"},
         {"stopped",
          {{"cause", "cancelled"},
           {"signal", "SIGTERM"},
           {"process_group", 4242},
           {"command_started", true},
           {"exit_code", 143},
           {"killed_by", "SIGTERM"},
           {"escalated", false}}},
         {"caveat",
          "external work started by the command (a rollout, a migration, a remote job) is not known "
          "to have stopped: check the deploy target before running again"}});
    s.job = "pipeline-111";
    return s;
}

// A window over a fake holding a refused publish and an accepted one.
struct Console : FakeConsole
{
    Console()
    {
        relctl::EnvironmentRow prod;
        prod.name = "prod";
        fake->setEnvironments({prod});
        relctl::Event published;
        published.env = "prod";
        published.operation = "publish";
        published.outcome = "accepted";
        published.job = "pipeline-109";
        published.opId = "op-109-publish";
        fake->addEvent(published);
        relctl::Event stale = published;
        stale.outcome = "rejected";
        stale.reason = "STALE_GENERATION";
        stale.job = "pipeline-108";
        stale.opId = "op-108-publish";
        fake->addEvent(stale);
        fake->setStatus({Operation, QStringLiteral("op-108-publish")}, rejected());
        fake->setStatus({Job, QStringLiteral("pipeline-109")}, completed());
        fake->setStatus({Job, QStringLiteral("pipeline-111")}, cancelled());
        start();
    }

    bool loaded() const
    {
        return QTest::qWaitFor([this] { return session.audit()->rowCount() == 2; }, 2000);
    }

    int row(const std::string& job) const
    {
        for (int r = 0; r < session.audit()->rowCount(); ++r)
            if (session.audit()->eventAt(r)->job == job)
                return r;
        return -1;
    }

    // The context menu of the audit row, as a right click opens it.
    QMenu* rowMenu(int row) const
    {
        QTableView* table = window.auditView()->table();
        const QRect cell = table->visualRect(session.audit()->index(row, 0));
        emit table->customContextMenuRequested(cell.center());
        for (QWidget* w : QApplication::topLevelWidgets())
            if (auto* menu = qobject_cast<QMenu*>(w); menu && menu->isVisible())
                return menu;
        return nullptr;
    }

    StatusCard* card() const { return window.statusDialog() ? window.statusDialog()->card() : nullptr; }

    // The card answered (not looking up any more).
    bool answered() const
    {
        return QTest::qWaitFor([this] { return card() && !card()->state().isEmpty(); }, 2000);
    }
};

QAction* action(QMenu* menu, const QString& name)
{
    for (QAction* a : menu->actions())
        if (a->objectName() == name)
            return a;
    return nullptr;
}

} // namespace

class TestStatusCard final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    // Each state as the card shows it: its word on a badge of its colour,
    // the server's sentence, the next step in bold. Typed into the card
    // (opened empty from the Status… button) and looked up with Enter.
    void theCardShowsTheState_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("state");
        QTest::addColumn<QString>("summary");
        QTest::addColumn<QString>("next");
        QTest::addRow("unknown job") << int(Job) << QStringLiteral("never-ran") << QStringLiteral("unknown")
                                     << QStringLiteral("Unknown: the database has no lease, candidate or "
                                                       "refusal of job never-ran.")
                                     << QStringLiteral("Next: The job never reached the database: running it "
                                                       "is safe.");
        QTest::addRow("unknown op id")
            << int(Operation) << QStringLiteral("lost-op") << QStringLiteral("unknown")
            << QStringLiteral("Unknown: the database has no record of op id lost-op.")
            << QStringLiteral("Next: The operation never reached the database: a "
                              "retry with the same op id is safe.");
        QTest::addRow("rejected op id")
            << int(Operation) << QStringLiteral("op-108-publish") << QStringLiteral("rejected")
            << QStringLiteral("Rejected: generation 8 is older than the current generation 9.")
            << QStringLiteral(
                   "Next: A retry with the same op id gets the same refusal; relctl trace JOB says "
                   "what decided it.");
        QTest::addRow("completed job")
            << int(Job) << QStringLiteral("pipeline-109") << QStringLiteral("completed")
            << QStringLiteral("Completed: v1.9 (generation 9) was published on prod by pipeline-109 at "
                              "2026-12-01 20:09:29.501 UTC and is still current.")
            << QStringLiteral("Next: Nothing to retry: the publish took effect.");
        QTest::addRow("cancelled job")
            << int(Job) << QStringLiteral("pipeline-111") << QStringLiteral("cancelled")
            << QStringLiteral(
                   "Cancelled: the run of pipeline-111 on prod (token 44) was cancelled by SIGTERM and "
                   "published nothing.")
            << QStringLiteral("Next: Check the deploy target for work the command started; then a new run (a "
                              "new op id) may deploy.");
    }

    void theCardShowsTheState()
    {
        QFETCH(int, kind);
        QFETCH(QString, key);
        QFETCH(QString, state);
        QFETCH(QString, summary);
        QFETCH(QString, next);
        Console c;
        QVERIFY(c.loaded());
        // Nothing selected: the card opens empty, waiting for a key.
        auto* open = c.window.auditView()->findChild<QPushButton*>(QStringLiteral("statusLookup"));
        QVERIFY(open);
        open->click();
        StatusDialog* dialog = c.window.statusDialog();
        QVERIFY(dialog && dialog->isVisible());
        QVERIFY(c.fake->statusLookups().empty());
        dialog->kindBox()->setCurrentIndex(dialog->kindBox()->findData(kind));
        QTest::keyClicks(dialog->keyField(), QStringLiteral("  ") + key + QStringLiteral(" "));
        QTest::keyClick(dialog->keyField(), Qt::Key_Return);
        QVERIFY(dialog->isVisible()); // Enter looks up; it does not close the card
        QVERIFY(c.answered());
        QCOMPARE(c.fake->statusLookups().size(), std::size_t(1));
        QCOMPARE(c.fake->statusLookups().front(), (StatusLookup{StatusLookup::Kind(kind), key}));
        StatusCard* card = c.card();
        QCOMPARE(card->state(), state);
        QCOMPARE(card->summary(), summary);
        QCOMPARE(card->next(), next);
        QCOMPARE(card->badgeColour(), jobstatus::stateColour(state));
        QVERIFY(card->findChild<QLabel*>(QStringLiteral("statusNext"))->font().bold());
        // Only a stopped command carries a caveat, and then it is shown.
        QCOMPARE(card->caveat().isEmpty(), state != QStringLiteral("cancelled"));
    }

    // An unknown answer is the one that says "safe to retry": the card
    // offers the other kind of lookup, since a job's name looked up as an
    // op id is unknown too.
    void anUnknownJobCanBeLookedUpAsAnOpId()
    {
        Console c;
        QVERIFY(c.loaded());
        c.window.showStatus({Job, QStringLiteral("op-108-publish")});
        QVERIFY(c.answered());
        QCOMPARE(c.card()->state(), QStringLiteral("unknown"));
        QCOMPARE(c.card()->badgeColour(), jobstatus::stateColour(QStringLiteral("unknown")));
        auto* other = c.card()->findChild<QPushButton*>(QStringLiteral("statusOtherKind"));
        QVERIFY(other && other->isVisible());
        QVERIFY(other->text().contains(QStringLiteral("as an op id")));
        other->click();
        QTRY_COMPARE_WITH_TIMEOUT(c.card()->state(), QStringLiteral("rejected"), 2000);
        QCOMPARE(c.fake->statusLookups().back(), (StatusLookup{Operation, QStringLiteral("op-108-publish")}));
        QCOMPARE(c.window.statusDialog()->kindBox()->currentData().toInt(), int(Operation));
        QVERIFY(other->isHidden());
        // The evidence, key by key.
        const QStringList evidence = c.card()->evidence();
        for (const char* line : {"reason: STALE_GENERATION", "env: prod", "event: 10"})
            QVERIFY2(evidence.contains(QLatin1String(line)), qPrintable(evidence.join(QLatin1Char('\n'))));
    }

    // An audit row's context menu asks about its op id or its job.
    void anAuditRowAsksAboutItsOperationOrItsJob()
    {
        Console c;
        QVERIFY(c.loaded());
        QMenu* menu = c.rowMenu(c.row("pipeline-108"));
        QVERIFY(menu);
        QAction* ofOperation = action(menu, QStringLiteral("statusOfOperation"));
        QVERIFY(ofOperation);
        QCOMPARE(ofOperation->text(), QStringLiteral("What became of operation op-108-publish?"));
        ofOperation->trigger();
        menu->close();
        QVERIFY(c.answered());
        QCOMPARE(c.fake->statusLookups().back(), (StatusLookup{Operation, QStringLiteral("op-108-publish")}));
        QCOMPARE(c.card()->state(), QStringLiteral("rejected"));

        menu = c.rowMenu(c.row("pipeline-109"));
        QVERIFY(menu);
        QAction* ofJob = action(menu, QStringLiteral("statusOfJob"));
        QVERIFY(ofJob);
        QCOMPARE(ofJob->text(), QStringLiteral("What became of job pipeline-109?"));
        ofJob->trigger();
        menu->close();
        // One card: the same window, now about the job.
        QTRY_COMPARE_WITH_TIMEOUT(c.card()->state(), QStringLiteral("completed"), 2000);
        QCOMPARE(c.window.findChildren<StatusDialog*>().size(), 1);
        QCOMPARE(c.card()->badgeColour(), jobstatus::stateColour(QStringLiteral("completed")));
        const QStringList evidence = c.card()->evidence();
        for (const char* line : {"current: yes", "published_at: 2026-12-01 20:09:29.501 UTC", "lease",
                                 "  token: 41", "  acquired_at: 2026-12-01 20:08:00 UTC"})
            QVERIFY2(evidence.contains(QLatin1String(line)), qPrintable(evidence.join(QLatin1Char('\n'))));
        // A null (superseded_by of a current publish) is left out.
        QVERIFY(!evidence.join(QLatin1Char('\n')).contains(QStringLiteral("superseded_by")));
        QVERIFY(c.card()->findChild<QPushButton*>(QStringLiteral("statusOtherKind"))->isHidden());
    }

    // The Status… button asks about the selected row's job.
    void theStatusButtonAsksAboutTheSelectedJob()
    {
        Console c;
        QVERIFY(c.loaded());
        c.window.auditView()->table()->selectRow(c.row("pipeline-109"));
        c.window.auditView()->findChild<QPushButton*>(QStringLiteral("statusLookup"))->click();
        QVERIFY(c.answered());
        QCOMPARE(c.fake->statusLookups().back(), (StatusLookup{Job, QStringLiteral("pipeline-109")}));
        QCOMPARE(c.window.statusDialog()->keyField()->text(), QStringLiteral("pipeline-109"));
        QCOMPARE(c.card()->state(), QStringLiteral("completed"));
    }

    // A cancelled run: the caveat where it cannot be missed, and what was
    // stopped in words above its evidence.
    void aCancelledRunShowsItsCaveat()
    {
        Console c;
        QVERIFY(c.loaded());
        c.window.showStatus({Job, QStringLiteral("pipeline-111")});
        QVERIFY(c.answered());
        QCOMPARE(c.card()->state(), QStringLiteral("cancelled"));
        QCOMPARE(c.card()->badgeColour(), jobstatus::stateColour(QStringLiteral("ended-unpublished")));
        QVERIFY2(c.card()->caveat().contains(QStringLiteral("not known to have stopped")),
                 qPrintable(c.card()->caveat()));
        QVERIFY(c.card()->findChild<QLabel*>(QStringLiteral("statusCaveat"))->isVisible());
        const QStringList evidence = c.card()->evidence();
        QVERIFY2(
            evidence.contains(QStringLiteral("stopped: stopped the command (process group 4242, SIGTERM, "
                                             "exit 143)")),
            qPrintable(evidence.join(QLatin1Char('\n'))));
        QVERIFY(evidence.contains(QStringLiteral("  process_group: 4242")));
        // The caveat is not listed a second time among the keys.
        QVERIFY(!evidence.join(QLatin1Char('\n')).contains(QStringLiteral("caveat")));
    }

    // The answer to an earlier lookup never fills the card asked about
    // something else since, whatever order the answers come in.
    void anEarlierAnswerNeverShowsForANewerLookup()
    {
        Console c;
        QVERIFY(c.loaded());
        c.fake->setHoldingAnswers(true);
        c.window.showStatus({Job, QStringLiteral("pipeline-109")});
        c.window.showStatus({Operation, QStringLiteral("op-108-publish")});
        QVERIFY(c.card()->state().isEmpty());
        QVERIFY(c.card()->notice().contains(QStringLiteral("op-108-publish")));
        c.fake->setHoldingAnswers(false);
        c.fake->releaseHeld(FakeBackend::Order::NewestFirst);
        QVERIFY(c.answered());
        QTest::qWait(50); // the older answer arrives too, and is dropped
        QCOMPARE(c.card()->state(), QStringLiteral("rejected"));
    }

    // An open card follows the job: the session asks again after new
    // events, and the card moves from running to completed.
    void anOpenCardFollowsTheJob()
    {
        Console c;
        QVERIFY(c.loaded());
        c.fake->setStatus({Job, QStringLiteral("pipeline-109")}, running());
        c.window.showStatus({Job, QStringLiteral("pipeline-109")});
        QVERIFY(c.answered());
        QCOMPARE(c.card()->state(), QStringLiteral("accepted-running"));
        QVERIFY(c.card()->evidence().contains(QStringLiteral("expires_in_ms: 28.5 s")));
        c.fake->setStatus({Job, QStringLiteral("pipeline-109")}, completed());
        c.fake->announce({QStringLiteral("prod")});
        QTRY_COMPARE_WITH_TIMEOUT(c.card()->state(), QStringLiteral("completed"), 2000);
        // Closed, it is not asked about any more.
        const std::size_t asked = c.fake->statusLookups().size();
        c.window.statusDialog()->reject();
        c.fake->announce({QStringLiteral("prod")});
        QTest::qWait(100);
        QCOMPARE(c.fake->statusLookups().size(), asked);
    }

    // A lookup the database could not answer says so: nothing is known
    // either way, and no earlier answer stands in for it.
    void aFailedLookupSaysNothingIsKnown()
    {
        Console c;
        QVERIFY(c.loaded());
        c.fake->failNext(RequestKind::Status, QStringLiteral("server closed the connection"));
        c.window.showStatus({Job, QStringLiteral("pipeline-109")});
        QTRY_VERIFY_WITH_TIMEOUT(c.card()->notice().contains(QStringLiteral("server closed the connection")),
                                 2000);
        QVERIFY(c.card()->state().isEmpty());
        QVERIFY(c.card()->notice().contains(QStringLiteral("do not retry blind")));
        // Asked again (a reload), it is answered.
        c.session.reload();
        QVERIFY(c.answered());
        QCOMPARE(c.card()->state(), QStringLiteral("completed"));
    }
};

QTEST_MAIN(TestStatusCard)
#include "test_statuscard.moc"
