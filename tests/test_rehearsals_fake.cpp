// The console's Rehearsals page over the in-memory backend (FakeBackend),
// offscreen: no database, no relctl processes, milliseconds. The page owns no
// runner: Run reaches the backend through the session with the scenarios
// checked, the backend's scripted run is what the page shows (steps, timeline,
// verdicts, status), and Cancel and a run that cannot start go the same way.
// The page's layout at a dock's size, and where its report is saved and what
// happens when no program opens it, are checked here too, with a home folder
// and settings of the test's own.
// (test_rehearsals plays real scenarios on a real server.)

#include "consolesession.h"
#include "environmentsmodel.h"
#include "fakebackend.h"
#include "rehearsalsview.h"

#include <QComboBox>
#include <QCompleter>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>

using namespace relctl::ui;
namespace rh = relctl::rehearsal;

namespace {

constexpr int kScenarioName = Qt::UserRole + 1; // as the page stores them
constexpr int kPassed = Qt::UserRole + 2;

// A session over a fake and the page on it; the fake is owned by the session.
struct Page
{
    Page() : fake(new FakeBackend), session(std::unique_ptr<ConsoleBackend>(fake)), view(&session)
    {
        view.show();
    }

    template <typename T> T* child(const char* name) const
    {
        return view.findChild<T*>(QString::fromLatin1(name));
    }

    void check(const QStringList& names) const
    {
        auto* list = child<QListWidget>("rehearsalScenarios");
        for (int row = 0; row < list->count(); ++row)
            list->item(row)->setCheckState(names.contains(list->item(row)->data(kScenarioName).toString())
                                               ? Qt::Checked
                                               : Qt::Unchecked);
    }

    void click(const char* button) const { QTest::mouseClick(child<QPushButton>(button), Qt::LeftButton); }

    QString status() const { return child<QLabel>("rehearsalStatus")->text(); }
    bool failed() const { return child<QLabel>("rehearsalStatus")->property("failed").toBool(); }

    FakeBackend* fake;
    ConsoleSession session;
    RehearsalsView view;
};

// The race scenario as a failed run would report it: one step, a lease on
// its timeline, one invariant broken.
rh::Report failedRace()
{
    rh::ScenarioResult race;
    race.name = "race";
    race.passed = false;
    race.durationMs = 2100;
    rh::Step step;
    step.scenario = "race";
    step.actor = "r8";
    step.action = "relctl run";
    step.outcome = "accepted";
    race.steps = {step};
    race.timeline.environments = {"race"};
    race.timeline.leases.push_back({});
    race.timeline.leases.back().env = "race";
    race.timeline.leases.back().acquiredAt = relctl::Timestamp::fromMillis(1'700'000'000'000);
    race.timeline.leases.back().endsAt = relctl::Timestamp::fromMillis(1'700'000'001'500);
    race.invariants = {{"r9-exit-0", true, "r9 exited 0", {}},
                       {"r8-exit-4", false, "r8 exited 0 (expected 4: STALE_GENERATION)", {"r8 exited 0"}}};
    rh::Report report;
    report.scenarios = {race};
    report.database = "relctl_rehearsal_000000000000";
    report.dropped = true;
    return report;
}

// Eight passed scenarios of two one-line invariants each: more verdicts than
// any dock shows at once.
rh::Report manyScenarios()
{
    rh::Report report;
    for (int i = 0; i < 8; ++i) {
        rh::ScenarioResult s;
        s.name = "scenario-" + std::to_string(i);
        s.passed = true;
        s.durationMs = 1200;
        s.invariants = {{"exit-0", true, "exited 0", {}}, {"one-lease", true, "one lease", {}}};
        report.scenarios.push_back(s);
    }
    report.database = "relctl_rehearsal_000000000000";
    report.dropped = true;
    return report;
}

// The widget's whole rectangle inside the page's: nothing to scroll to reach it.
bool wholeInside(const QWidget* w, const QWidget* page)
{
    return w->isVisibleTo(page) && page->rect().contains(QRect(w->mapTo(page, QPoint(0, 0)), w->size()));
}

// How many verdict rows are shown whole.
int rowsShown(QTreeWidget* tree)
{
    int shown = 0;
    for (QTreeWidgetItemIterator it(tree); *it; ++it) {
        const QRect rect = tree->visualItemRect(*it);
        if (rect.isValid() && tree->viewport()->rect().contains(rect))
            ++shown;
    }
    return shown;
}

// The report's name as proposed at a moment: dated to the minute, in UTC.
QString datedName(const QDateTime& at)
{
    return QStringLiteral("relctl-rehearsal-%1.html").arg(at.toString(QStringLiteral("yyyy-MM-dd-HHmm")));
}

QTreeWidgetItem* topLevel(QTreeWidget* tree, const QString& name)
{
    for (int i = 0; i < tree->topLevelItemCount(); ++i)
        if (tree->topLevelItem(i)->text(0) == name)
            return tree->topLevelItem(i);
    return nullptr;
}

} // namespace

class TestRehearsalsFake : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // A home of the test's own: the documents folder is proposed from it,
        // and the settings that remember the last folder live under it.
        QVERIFY(m_home.isValid());
        qputenv("HOME", QFile::encodeName(m_home.path()));
        qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_home.filePath(QStringLiteral(".config"))));
        QStandardPaths::setTestModeEnabled(true);
        m_documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        QVERIFY2(m_documents.startsWith(m_home.path()), qPrintable(m_documents));
        QVERIFY(QDir().mkpath(m_documents));
    }

    void init() { QSettings().clear(); }

    void aScriptedRunReachesThePageThroughTheSession()
    {
        Page p;
        p.fake->setRehearsal(failedRace());
        QVERIFY(p.view.runner() == nullptr); // the fake has none: the page needs none
        p.check({QStringLiteral("race")});
        QSignalSpy finished(&p.session, &ConsoleSession::rehearsalFinished);
        p.click("rehearsalRun");

        // Asked of the backend, with the scenario checked; one run at a time.
        QCOMPARE(p.fake->rehearsals().size(), std::size_t(1));
        QCOMPARE(p.fake->rehearsals().front().scenarios, std::vector<std::string>{"race"});
        QVERIFY(p.session.isRehearsing());
        QVERIFY(!p.child<QPushButton>("rehearsalRun")->isEnabled());
        QVERIFY(p.child<QPushButton>("rehearsalCancel")->isEnabled());
        QVERIFY(!p.session.runRehearsal({}));
        QCOMPARE(p.fake->rehearsals().size(), std::size_t(1));

        QVERIFY(finished.wait(2000));
        QVERIFY(!p.session.isRehearsing());
        // The scripted verdict, red, and the broken invariant named.
        QTreeWidgetItem* race = topLevel(p.child<QTreeWidget>("rehearsalVerdicts"), QStringLiteral("race"));
        QVERIFY(race);
        QVERIFY(!race->data(0, kPassed).toBool());
        QCOMPARE(race->text(1), QStringLiteral("FAILED"));
        QCOMPARE(race->childCount(), 2);
        QVERIFY(p.failed());
        QVERIFY2(p.status().contains(QStringLiteral("r8-exit-4")), qPrintable(p.status()));
        // Its step in the log, its lease on the page's timeline.
        QCOMPARE(p.child<QTableView>("rehearsalSteps")->model()->rowCount(), 1);
        QCOMPARE(p.view.shownSlice().environments, std::vector<std::string>{"race"});
        QCOMPARE(p.view.shownSlice().leases.size(), std::size_t(1));
        QVERIFY(p.child<QPushButton>("rehearsalRun")->isEnabled());
        QVERIFY(p.child<QPushButton>("rehearsalSave")->isEnabled());
    }

    // "Like environment" offers the session's environments as they come and
    // go, read from its model (none first), not copied into the box name by
    // name. A name is typed, the list narrowing to the names containing the
    // text, and Run takes what the box says, Enter or not; a name no
    // environment has is refused, saying so, and nothing runs.
    void likeOffersTheEnvironmentsAndTakesATypedName()
    {
        Page p;
        p.fake->setRehearsal(failedRace());
        auto* like = p.child<QComboBox>("rehearsalLike");
        const QString none = QStringLiteral("none (the scenarios' defaults)");
        QCOMPARE(like->count(), 1);
        QCOMPARE(like->currentText(), none);
        const auto row = [](const char* name) {
            relctl::EnvironmentRow r;
            r.name = name;
            return r;
        };
        p.session.environments()->setEnvironments(
            {row("prod"), row("svc1.prod"), row("svc2.prod"), row("svc10.prod")});
        QCOMPARE(like->count(), 5);
        QCOMPARE(like->itemText(4), QStringLiteral("svc10.prod"));
        QCOMPARE(like->findText(QStringLiteral("svc2.prod")), 3);
        QCOMPARE(like->currentText(), none);
        // One gone, one new: the box follows, row for row.
        p.session.environments()->updateEnvironments(
            {QStringLiteral("svc2.prod"), QStringLiteral("svc3.prod")}, {row("svc3.prod")});
        QCOMPARE(like->count(), 5);
        QCOMPARE(like->findText(QStringLiteral("svc2.prod")), -1);
        QCOMPARE(like->findText(QStringLiteral("svc3.prod")), 3);
        QVERIFY(like->isEditable());
        like->completer()->setCompletionPrefix(QStringLiteral("10"));
        QCOMPARE(like->completer()->completionCount(), 1);
        QCOMPARE(like->completer()->currentCompletion(), QStringLiteral("svc10.prod"));

        like->lineEdit()->setText(QStringLiteral("svc10.prod"));
        p.check({QStringLiteral("race")});
        QSignalSpy finished(&p.session, &ConsoleSession::rehearsalFinished);
        p.click("rehearsalRun");
        QCOMPARE(p.fake->rehearsals().size(), std::size_t(1));
        QVERIFY(p.fake->rehearsals().front().like == std::optional<std::string>("svc10.prod"));
        QVERIFY(finished.wait(2000));

        like->lineEdit()->setText(QStringLiteral("svc99.prod"));
        p.click("rehearsalRun");
        QCOMPARE(p.fake->rehearsals().size(), std::size_t(1));
        QVERIFY2(p.status().contains(QStringLiteral("No environment is named svc99.prod")),
                 qPrintable(p.status()));

        like->setCurrentIndex(0);
        p.click("rehearsalRun");
        QCOMPARE(p.fake->rehearsals().size(), std::size_t(2));
        QVERIFY(!p.fake->rehearsals().back().like.has_value());
    }

    void cancelAndAFailedStartGoThroughTheSession()
    {
        Page p;
        p.check({QStringLiteral("race")});
        QSignalSpy finished(&p.session, &ConsoleSession::rehearsalFinished);

        // Cancel while the run is out: the backend hears it, the page says so.
        p.fake->setHoldingAnswers(true);
        p.click("rehearsalRun");
        p.click("rehearsalCancel");
        QCOMPARE(p.fake->rehearsalCancels(), 1);
        QVERIFY(p.status().contains(QStringLiteral("Cancelling")));
        p.fake->setHoldingAnswers(false);
        p.fake->releaseHeld();
        QVERIFY(finished.wait(2000));
        QVERIFY2(p.status().startsWith(QStringLiteral("Cancelled")), qPrintable(p.status()));
        QVERIFY(p.child<QPushButton>("rehearsalRun")->isEnabled());

        // A run that cannot start says why, in red.
        p.fake->setRehearsal({}, QStringLiteral("permission denied to create database"));
        p.click("rehearsalRun");
        QVERIFY(finished.wait(2000));
        QCOMPARE(p.fake->rehearsals().size(), std::size_t(2));
        QVERIFY2(p.status().contains(QStringLiteral("could not start")) &&
                     p.status().contains(QStringLiteral("permission denied")),
                 qPrintable(p.status()));
        QVERIFY(p.failed());
        QVERIFY(!p.child<QPushButton>("rehearsalSave")->isEnabled());
    }

    void theControlsAndFiveVerdictsFitTheDock_data()
    {
        QTest::addColumn<QSize>("dock");
        // What MainWindow's docks give the page on a 1280x800 screen.
        QTest::addRow("at the side") << QSize(420, 700);
        QTest::addRow("below the timeline") << QSize(1280, 230);
    }

    void theControlsAndFiveVerdictsFitTheDock()
    {
        QFETCH(QSize, dock);
        Page p;
        p.fake->setRehearsal(manyScenarios());
        // In a scroll area as MainWindow docks it: the page scrolls only when
        // the dock is smaller than the page can be.
        QScrollArea area;
        area.setWidgetResizable(true);
        area.setFrameShape(QFrame::NoFrame);
        area.setWidget(&p.view);
        // The page is Page's, also when a check below fails and returns.
        const auto release = qScopeGuard([&area] { area.takeWidget(); });
        area.resize(dock);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        QSignalSpy finished(&p.session, &ConsoleSession::rehearsalFinished);
        p.click("rehearsalRun");
        QVERIFY(finished.wait(2000));

        // The page may rearrange itself once it knows its size: let it settle.
        QTRY_VERIFY2(p.view.height() <= area.viewport()->height(),
                     qPrintable(QStringLiteral("the page needs %1 pixels of %2")
                                    .arg(p.view.minimumSizeHint().height())
                                    .arg(area.viewport()->height())));
        QVERIFY(!area.verticalScrollBar()->isVisible());
        for (const char* name : {"rehearsalRun", "rehearsalCancel", "rehearsalSave", "rehearsalOpen"})
            QVERIFY2(wholeInside(p.child<QPushButton>(name), &p.view), name);
        QVERIFY(wholeInside(p.child<QComboBox>("rehearsalLike"), &p.view));
        QVERIFY(wholeInside(p.child<QLabel>("rehearsalStatus"), &p.view));
        auto* verdicts = p.child<QTreeWidget>("rehearsalVerdicts");
        QVERIFY(wholeInside(verdicts, &p.view));
        QVERIFY2(rowsShown(verdicts) >= 5, qPrintable(QString::number(rowsShown(verdicts))));
    }

    void saveReportProposesADatedNameInTheDocumentsFolder()
    {
        Page p;
        p.fake->setRehearsal(failedRace());
        QSignalSpy finished(&p.session, &ConsoleSession::rehearsalFinished);
        p.click("rehearsalRun");
        QVERIFY(finished.wait(2000));

        const QDateTime before = QDateTime::currentDateTimeUtc();
        const QFileInfo proposed(p.view.proposedReportPath());
        const QDateTime after = QDateTime::currentDateTimeUtc();
        QCOMPARE(proposed.absolutePath(), m_documents);
        QVERIFY2(proposed.fileName() == datedName(before) || proposed.fileName() == datedName(after),
                 qPrintable(proposed.fileName()));

        // The dialog opens there, with that name.
        p.click("rehearsalSave");
        auto* dialog = p.view.findChild<QFileDialog*>(QStringLiteral("rehearsalSaveDialog"));
        QVERIFY(dialog);
        QCOMPARE(dialog->directory().absolutePath(), m_documents);
        QVERIFY2(
            dialog->selectedFiles().value(0).startsWith(m_documents + QStringLiteral("/relctl-rehearsal-")),
            qPrintable(dialog->selectedFiles().value(0)));

        // Saved elsewhere: said with the path, Open and Show in folder offered,
        // and the next report proposed in that folder.
        const QString folder = m_home.filePath(QStringLiteral("reports"));
        QVERIFY(QDir().mkpath(folder));
        const QString chosen = QDir(folder).filePath(QStringLiteral("mine.html"));
        dialog->selectFile(chosen);
        static_cast<QDialog*>(dialog)->accept(); // QFileDialog hides it; the save path runs as on OK
        QVERIFY(QFile::exists(chosen));
        QVERIFY2(p.view.notice().contains(chosen), qPrintable(p.view.notice()));
        QVERIFY2(p.status().contains(QStringLiteral("r8-exit-4")), qPrintable(p.status()));
        auto* open = p.child<QPushButton>("rehearsalOpenSaved");
        auto* show = p.child<QPushButton>("rehearsalShowSaved");
        QVERIFY(open->isVisible() && show->isVisible());
        QCOMPARE(QFileInfo(p.view.proposedReportPath()).absolutePath(), folder);
        {
            // Remembered for the next console too.
            Page next;
            QCOMPARE(QFileInfo(next.view.proposedReportPath()).absolutePath(), folder);
        }

        QList<QUrl> opened;
        p.view.setUrlOpener([&opened](const QUrl& url) {
            opened << url;
            return true;
        });
        QTest::mouseClick(open, Qt::LeftButton);
        QTest::mouseClick(show, Qt::LeftButton);
        QCOMPARE(opened, (QList<QUrl>{QUrl::fromLocalFile(chosen), QUrl::fromLocalFile(folder)}));

        // A folder that is gone is not proposed again: the documents folder is.
        QVERIFY(QDir(folder).removeRecursively());
        QCOMPARE(QFileInfo(p.view.proposedReportPath()).absolutePath(), m_documents);
    }

    void aReportNoProgramOpensLeavesTheVerdictShown()
    {
        Page p;
        p.fake->setRehearsal(failedRace());
        QSignalSpy finished(&p.session, &ConsoleSession::rehearsalFinished);
        p.click("rehearsalRun");
        QVERIFY(finished.wait(2000));
        const QString verdict = p.status();
        QVERIFY(p.failed());
        QVERIFY(p.view.notice().isEmpty());

        // A machine without a browser (a bare Xvfb): the verdict stays, and a
        // line of its own says where the report is, selectable for copying.
        QList<QUrl> asked;
        p.view.setUrlOpener([&asked](const QUrl& url) {
            asked << url;
            return false;
        });
        p.click("rehearsalOpen");
        QCOMPARE(asked.size(), 1);
        QCOMPARE(p.status(), verdict);
        QVERIFY(p.failed());
        const QString notice = p.view.notice();
        QVERIFY2(notice.startsWith(QStringLiteral("No program could open the report")), qPrintable(notice));
        QVERIFY2(notice.contains(asked.front().toLocalFile()), qPrintable(notice));
        QVERIFY(QFile::exists(asked.front().toLocalFile()));
        auto* line = p.child<QLabel>("rehearsalNotice");
        QVERIFY(line->isVisible());
        QVERIFY(line->textInteractionFlags() & Qt::TextSelectableByMouse);

        // A report that cannot be written says so on the same line, not over the verdict.
        QVERIFY(!p.view.saveReport(m_home.filePath(QStringLiteral("no/such/folder/report.html"))));
        QCOMPARE(p.status(), verdict);
        QVERIFY2(p.view.notice().startsWith(QStringLiteral("Could not write the report")),
                 qPrintable(p.view.notice()));

        // When a browser opens it, there is nothing to say; a new run clears the line.
        p.view.setUrlOpener([](const QUrl&) { return true; });
        p.click("rehearsalRun");
        QVERIFY(finished.wait(2000));
        QVERIFY(p.view.notice().isEmpty());
        p.click("rehearsalOpen");
        QVERIFY(p.view.notice().isEmpty());
    }

private:
    QTemporaryDir m_home;
    QString m_documents;
};

QTEST_MAIN(TestRehearsalsFake)
#include "test_rehearsals_fake.moc"
