// The console's Rehearsals page over the in-memory backend (FakeBackend),
// offscreen: no database, no relctl processes, milliseconds. The page owns no
// runner: Run reaches the backend through the session with the scenarios
// checked, the backend's scripted run is what the page shows (steps, timeline,
// verdicts, status), and Cancel and a run that cannot start go the same way.
// (test_rehearsals plays real scenarios on a real server.)

#include "consolesession.h"
#include "fakebackend.h"
#include "rehearsalsview.h"

#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTreeWidget>
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
};

QTEST_MAIN(TestRehearsalsFake)
#include "test_rehearsals_fake.moc"
