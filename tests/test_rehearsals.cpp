// The console's Rehearsals page against a real server: a scenario plays on a
// scratch database through real relctl processes while the GUI thread keeps
// running, the page shows its steps, its timeline and its verdicts, a second
// run cannot start meanwhile, Cancel stops a run and the scratch database is
// dropped either way; a failed rehearsal is red and names what broke.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "consolesession.h"
#include "environmentsmodel.h"
#include "mainwindow.h"
#include "postgresbackend.h"
#include "rehearsalrunner.h"
#include "rehearsalstepmodel.h"
#include "rehearsalsview.h"
#include "relctl/database.h"
#include "testdatabase.h"
#include "timelinepainter.h"
#include "timelinewidget.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QtTest>

using namespace relctl::ui;
namespace rh = relctl::rehearsal;

namespace {

constexpr int kScenarioName = Qt::UserRole + 1; // as the page stores them
constexpr int kPassed = Qt::UserRole + 2;

// The console as release-console runs it, on `dsn`, with the actors' relctl
// from this build.
struct Console
{
    explicit Console(const std::string& dsn)
        : session(std::make_unique<PostgresBackend>(ConnectionTarget::fromDsn(QString::fromStdString(dsn)),
                                                    false)),
          window(&session), view(window.rehearsalsView())
    {
        view->runner()->setRelctl(RELCTL_BIN);
        window.show();
        session.start();
    }

    template <typename T> T* child(const char* name) const
    {
        return view->findChild<T*>(QString::fromLatin1(name));
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

    ConsoleSession session;
    MainWindow window;
    RehearsalsView* view;
};

QTreeWidgetItem* topLevel(QTreeWidget* tree, const QString& name)
{
    for (int i = 0; i < tree->topLevelItemCount(); ++i)
        if (tree->topLevelItem(i)->text(0) == name)
            return tree->topLevelItem(i);
    return nullptr;
}

QTreeWidgetItem* childNamed(QTreeWidgetItem* parent, const QString& name)
{
    for (int i = 0; parent && i < parent->childCount(); ++i)
        if (parent->child(i)->text(0) == name)
            return parent->child(i);
    return nullptr;
}

} // namespace

class TestRehearsals : public QObject
{
    Q_OBJECT

    std::unique_ptr<TestDatabase> m_db;

    // Scratch databases of the cluster; `name` narrows it to one.
    long long scratchDatabases(const std::string& name = "relctl_rehearsal_%") const
    {
        return m_db->count("SELECT count(*) FROM pg_database WHERE datname LIKE " + sqlLiteral(name));
    }

private slots:
    void initTestCase()
    {
        // Settings of the tests' own, never the user's.
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        m_db = std::make_unique<TestDatabase>();
        relctl::Database(m_db->dsn()).addEnvironment({"prod", {}, {}});
    }

    void aScenarioPlaysOffTheGuiThreadAndPasses()
    {
        // The cluster's superuser: scratch databases are created and migrated on its server.
        Console c(m_db->adminDsn());
        // "like" offers the session's environments.
        QTRY_VERIFY_WITH_TIMEOUT(c.child<QComboBox>("rehearsalLike")->findText(QStringLiteral("prod")) > 0,
                                 15000);
        c.check({QStringLiteral("race")});
        QSignalSpy finished(c.view->runner(), &RehearsalRunner::finished);
        QSignalSpy slices(c.view->runner(), &RehearsalRunner::timelineUpdated);

        // A timer on the GUI thread keeps firing while the scenario plays.
        int ticks = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, this, [&ticks] { ++ticks; });
        ticker.start(10);
        QElapsedTimer elapsed;
        elapsed.start();
        c.click("rehearsalRun");
        auto* run = c.child<QPushButton>("rehearsalRun");
        QVERIFY(c.view->runner()->isRunning());
        // A second run cannot start while one runs: the button is disabled and
        // the runner refuses.
        QVERIFY(!run->isEnabled());
        QVERIFY(c.child<QPushButton>("rehearsalCancel")->isEnabled());
        QVERIFY(!c.view->runner()->start(ConnectionTarget::fromDsn(QString::fromStdString(m_db->adminDsn())),
                                         {}));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        const qint64 ms = elapsed.elapsed();
        ticker.stop();
        QVERIFY2(
            ticks >= 5 && ticks >= ms / 40,
            qPrintable(QStringLiteral("%1 ticks in %2 ms: the GUI thread was blocked").arg(ticks).arg(ms)));

        const auto report = finished.first().at(0).value<rh::Report>();
        QVERIFY2(finished.first().at(1).toString().isEmpty(), qPrintable(finished.first().at(1).toString()));
        QVERIFY2(report.passed(), qPrintable(c.status()));
        QVERIFY(c.status().contains(QStringLiteral("PASSED")));
        QVERIFY(!c.child<QLabel>("rehearsalStatus")->property("failed").toBool());

        // The verdicts: the race's expectations, each passed, with its detail.
        auto* verdicts = c.child<QTreeWidget>("rehearsalVerdicts");
        QTreeWidgetItem* race = topLevel(verdicts, QStringLiteral("race"));
        QVERIFY(race);
        QVERIFY(race->data(0, kPassed).toBool());
        QVERIFY(race->text(1).startsWith(QStringLiteral("PASSED")));
        for (const char* name :
             {"r9-exit-0", "r8-exit-4", "r8-never-deployed", "r8-traced-stale-generation"}) {
            QTreeWidgetItem* v = childNamed(race, QString::fromLatin1(name));
            QVERIFY2(v, name);
            QVERIFY2(v->data(0, kPassed).toBool(), name);
            QVERIFY2(v->text(1).startsWith(QStringLiteral("passed: ")) && v->text(1).size() > 12, name);
        }

        // The live log: r8's stale acquire refused, tinted as a refusal.
        auto* log = c.child<QTableView>("rehearsalSteps");
        const QAbstractItemModel* steps = log->model();
        QVERIFY(steps->rowCount() >= 5);
        bool stale = false;
        for (int row = 0; row < steps->rowCount(); ++row) {
            const QString reason =
                steps->index(row, int(RehearsalStepModel::Column::Reason)).data().toString();
            if (reason == QStringLiteral("STALE_GENERATION")) {
                stale = true;
                QVERIFY(steps->index(row, 0).data(RehearsalStepModel::Refusal).toBool());
                QVERIFY(steps->index(row, 0).data(Qt::BackgroundRole).isValid());
            }
        }
        QVERIFY(stale);

        // The timeline got the scratch environment live, and shows its leases
        // and markers: r9's lease, r8's refusal.
        QVERIFY(!slices.isEmpty());
        const relctl::TimelineSlice& shown = c.view->shownSlice();
        QCOMPARE(shown.environments, std::vector<std::string>{"race"});
        QCOMPARE(shown.leases.size(), report.scenarios.at(0).timeline.leases.size());
        QVERIFY(!shown.leases.empty());
        QVERIFY(std::any_of(shown.markers.begin(), shown.markers.end(),
                            [](const relctl::TimelineMarker& m) { return m.kind == "refusal"; }));
        auto* timeline = c.child<TimelineWidget>("rehearsalTimeline");
        for (const relctl::LeaseSpan& lease : shown.leases)
            QVERIFY(lease.acquiredAt.millis() >= timeline->visibleFrom() &&
                    lease.endsAt.millis() <= timeline->visibleTo());

        auto* progress = c.child<QProgressBar>("rehearsalProgress");
        QCOMPARE(progress->maximum(), 1);
        QCOMPARE(progress->value(), progress->maximum());
        QVERIFY(run->isEnabled());
        QVERIFY(!c.child<QPushButton>("rehearsalCancel")->isEnabled());

        // The scratch database is gone again.
        QVERIFY(report.dropped);
        QVERIFY(QString::fromStdString(report.database).startsWith(QStringLiteral("relctl_rehearsal_")));
        QCOMPARE(scratchDatabases(report.database), 0);
        QCOMPARE(scratchDatabases(), 0);

        // The HTML report, as Save report… writes it.
        QVERIFY(c.child<QPushButton>("rehearsalSave")->isEnabled());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("report.html"));
        QVERIFY(c.view->saveReport(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray html = file.readAll();
        QVERIFY(html.contains("r8-exit-4"));
        QVERIFY(html.contains("<svg"));
    }

    void cancelStopsTheRunAndDropsTheScratchDatabase()
    {
        Console c(m_db->adminDsn());
        c.check({}); // nothing checked: Run asks for a scenario and starts nothing
        c.click("rehearsalRun");
        QVERIFY(!c.view->runner()->isRunning());
        QVERIFY(c.status().contains(QStringLiteral("at least one")));

        auto* list = c.child<QListWidget>("rehearsalScenarios");
        for (int row = 0; row < list->count(); ++row)
            list->item(row)->setCheckState(Qt::Checked);
        QSignalSpy finished(c.view->runner(), &RehearsalRunner::finished);
        c.click("rehearsalRun");
        const QAbstractItemModel* steps = c.child<QTableView>("rehearsalSteps")->model();
        QTRY_VERIFY_WITH_TIMEOUT(steps->rowCount() > 0, 30000);
        QVERIFY(finished.isEmpty());
        c.click("rehearsalCancel");
        QVERIFY(c.status().contains(QStringLiteral("Cancelling")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);

        const auto report = finished.first().at(0).value<rh::Report>();
        QVERIFY(report.cancelled);
        QVERIFY(report.scenarios.size() < rh::scenarios().size());
        QVERIFY2(c.status().startsWith(QStringLiteral("Cancelled")), qPrintable(c.status()));
        QVERIFY(report.dropped);
        QCOMPARE(scratchDatabases(report.database), 0);
        QCOMPARE(scratchDatabases(), 0);
        QVERIFY(c.child<QPushButton>("rehearsalRun")->isEnabled());
        QVERIFY(!c.child<QPushButton>("rehearsalCancel")->isEnabled());
    }

    void aRunThatCannotStartSaysWhyInRed()
    {
        // The manager's login may not create databases.
        Console c(m_db->dsn());
        c.check({QStringLiteral("race")});
        QSignalSpy finished(c.view->runner(), &RehearsalRunner::finished);
        c.click("rehearsalRun");
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QVERIFY(!finished.first().at(1).toString().isEmpty());
        QVERIFY2(c.status().contains(QStringLiteral("could not start")), qPrintable(c.status()));
        QVERIFY(c.child<QLabel>("rehearsalStatus")->property("failed").toBool());
        QVERIFY(c.child<QPushButton>("rehearsalRun")->isEnabled());
        QVERIFY(!c.child<QPushButton>("rehearsalSave")->isEnabled());
    }

    void aFailedRehearsalIsRedAndNamesTheBrokenInvariant()
    {
        // The page shows what the runner reports; a failure fabricated here
        // (the real scenarios pass) goes the same way as one from the engine.
        Console c(m_db->adminDsn());
        rh::ScenarioResult result;
        result.name = "race";
        result.passed = false;
        result.invariants = {
            {"r9-exit-0", true, "r9 exited 0", {}},
            {"r8-exit-4", false, "r8 exited 0 (expected 4: STALE_GENERATION)", {"r8 exited 0"}}};
        rh::Report report;
        report.scenarios = {result};
        report.database = "relctl_rehearsal_000000000000";
        report.dropped = true;
        emit c.view->runner()->scenarioFinished(result);
        emit c.view->runner()->finished(report, {});

        QTreeWidgetItem* race = topLevel(c.child<QTreeWidget>("rehearsalVerdicts"), QStringLiteral("race"));
        QVERIFY(race);
        QVERIFY(!race->data(0, kPassed).toBool());
        QCOMPARE(race->text(1), QStringLiteral("FAILED"));
        QTreeWidgetItem* broken = childNamed(race, QStringLiteral("r8-exit-4"));
        QVERIFY(broken);
        QVERIFY(broken->text(1).contains(QStringLiteral("FAILED: r8 exited 0")));
        QCOMPARE(broken->foreground(1).color(), QColor(0xdc, 0x32, 0x2f));
        QVERIFY(childNamed(race, QStringLiteral("r9-exit-0"))->data(0, kPassed).toBool());
        QVERIFY(c.child<QLabel>("rehearsalStatus")->property("failed").toBool());
        QVERIFY2(c.status().contains(QStringLiteral("FAILED")) &&
                     c.status().contains(QStringLiteral("r8-exit-4")),
                 qPrintable(c.status()));
        QVERIFY(c.status().contains(QStringLiteral("#dc322f")));
    }
    void theReportDrawsInTheConsolesColours()
    {
        // A lease of every ending and an event of every kind, as a scenario records them.
        const auto at = [](std::int64_t s) {
            return relctl::Timestamp::fromMillis(1'700'000'000'000 + s * 1000);
        };
        rh::ScenarioResult scenario;
        scenario.name = "colours";
        std::int64_t token = 1;
        const std::vector<std::string> endings{"live", "released", "expired", "revoked"};
        for (const auto& ending : endings) {
            scenario.timeline.leases.push_back(
                {"prod", token, "job-" + ending, "v1", 1, at(token), at(token + 1), ending});
            ++token;
        }
        const std::vector<std::string> kinds{"publish",  "refusal",  "superseded", "queued",
                                             "operator", "rollback", "promotion"};
        std::int64_t id = 1;
        for (const auto& kind : kinds) {
            scenario.timeline.markers.push_back({id, "prod", at(id), kind, "what happened", "job"});
            ++id;
        }
        rh::Report report;
        report.scenarios.push_back(scenario);
        const QString html = QString::fromStdString(rh::toHtml(report));

        // The console's colours on a light theme (white plot, black text),
        // which is what the report is drawn on.
        QPalette light;
        for (auto group : {QPalette::Active, QPalette::Inactive, QPalette::Disabled}) {
            light.setColor(group, QPalette::Base, Qt::white);
            light.setColor(group, QPalette::Text, Qt::black);
        }
        const auto console = relctl::ui::TimelineColors::fromPalette(light);
        // A lease bar: <rect ... fill='#rrggbb'><title>job: token N, ..., ENDING after ...
        const QRegularExpression bar(QStringLiteral("fill='(#[0-9a-f]{6})'><title>[^<]*, (\\w+) after"));
        int bars = 0;
        for (auto m = bar.globalMatch(html); m.hasNext(); ++bars) {
            const auto match = m.next();
            const auto ending = match.captured(2).toStdString();
            QCOMPARE(match.captured(1), console.ending(relctl::ui::leaseEnding(ending)).name());
        }
        QCOMPARE(bars, static_cast<int>(endings.size()));
        // An event's mark: its colour (a fill, or a stroke when hollow), then <title>KIND: ...
        const QRegularExpression mark(QStringLiteral(
            "<(?:polygon|rect|circle)[^>]*?(?:fill|stroke)='(#[0-9a-f]{6})'[^>]*><title>(\\w+):"));
        int marks = 0;
        for (auto m = mark.globalMatch(html); m.hasNext(); ++marks) {
            const auto match = m.next();
            const auto kind = match.captured(2).toStdString();
            QVERIFY2(console.marker(relctl::ui::markerKind(kind)).name() == match.captured(1),
                     qPrintable(QString::fromStdString(kind) + QStringLiteral(": ") + match.captured(1)));
        }
        QCOMPARE(marks, static_cast<int>(kinds.size()));
        // Red is the refusals' alone, in the report as in the console.
        const QString red = console.marker(relctl::ui::MarkerKind::Refusal).name();
        QCOMPARE(html.count(red), 2); // the refusal's mark and its legend entry
    }
};

QTEST_MAIN(TestRehearsals)
#include "test_rehearsals.moc"
