// The release console's environments view on its own, offscreen, over a model
// fed by hand: which operator actions a login is offered (and the tooltip that
// says why not), the "Needs me" filter and what acts through it, the column
// names and how a live lease's time reads. No database, no window.

#include "bulkfreezedialog.h"
#include "consoleclicks.h"
#include "consoletypes.h"
#include "environmentsmodel.h"
#include "environmentsview.h"
#include "permissions.h"
#include "timeformat.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QFont>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QToolButton>
#include <QTreeView>
#include <QtTest>

using namespace relctl::ui;
using Column = EnvironmentsModel::Column;

namespace {

constexpr std::int64_t kServerNow = 4'000'000'000'000;

relctl::Timestamp ms(std::int64_t n)
{
    return relctl::Timestamp::fromMillis(n);
}

relctl::EnvironmentRow environment(const std::string& name)
{
    relctl::EnvironmentRow row;
    row.name = name;
    row.policy = "newest";
    row.supersede = "approval";
    row.serialization = "enforced";
    row.serverNow = ms(kServerNow);
    return row;
}

// test: free; staging: leased for 1 min 43 s, 90 s to go; canary: frozen;
// prod: leased, one promotion open.
std::vector<relctl::EnvironmentRow> fourEnvironments()
{
    auto test = environment("test");
    auto staging = environment("staging");
    staging.holderJob = "staging-deploy";
    staging.holderRelease = "v1.2";
    staging.holderToken = 7;
    staging.holderGeneration = 12;
    staging.holderAcquiredAt = ms(kServerNow - 103'000);
    staging.leaseExpiresAt = ms(kServerNow + 90'000);
    auto canary = environment("canary");
    canary.frozen = true;
    canary.frozenBy = "rm-alice";
    canary.frozenReason = "change window";
    auto prod = environment("prod");
    prod.holderJob = "prod-deploy";
    prod.holderRelease = "v1.1";
    prod.holderToken = 3;
    prod.holderAcquiredAt = ms(kServerNow - 5'000);
    prod.leaseExpiresAt = ms(kServerNow + 3'600'000);
    prod.pendingPromotions = 1;
    return {test, staging, canary, prod};
}

QToolButton* buttonFor(QWidget* parent, const QAction* action)
{
    for (auto* b : parent->findChildren<QToolButton*>())
        if (b->defaultAction() == action)
            return b;
    return nullptr;
}

QStringList names(std::initializer_list<const char*> list)
{
    QStringList out;
    for (const char* name : list)
        out << QLatin1String(name);
    return out;
}

QStringList shownNames(const QTreeView* table)
{
    return static_cast<const EnvironmentsTree*>(table->model())->shownEnvironments();
}

void select(EnvironmentsView& view, const QString& name)
{
    view.table()->clearSelection();
    view.selectEnvironment(name);
}

// A view over the four environments, on a schema with every action.
struct Fixture
{
    Fixture() : view(&model)
    {
        model.setEnvironments(fourEnvironments());
        view.setSchemaVersion(kPromotionsSchemaVersion);
        view.resize(1200, 400);
        view.show();
    }

    QAction* action(const char* name) const { return view.findChild<QAction*>(QLatin1String(name)); }
    QLabel* nothingForMe() const { return view.findChild<QLabel*>(QStringLiteral("nothingForMe")); }

    EnvironmentsModel model;
    QAbstractItemModelTester tester{&model, QAbstractItemModelTester::FailureReportingMode::Fatal};
    EnvironmentsView view;
};

} // namespace

class TestEnvironmentsView final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // Settings of the tests' own, never the user's.
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    // A CI job's login is not offered what only relctl_manager may do, and
    // every way in (action, button) says so, naming the login and the role.
    void aJobLoginIsNotOfferedOperatorActions()
    {
        Fixture f;
        f.view.setPermissions(Permissions(QStringLiteral("ci-bot"), {QStringLiteral("relctl_job")}, {}));
        for (const QString& env : {QStringLiteral("staging"), QStringLiteral("canary")}) {
            select(f.view, env);
            QCOMPARE(f.view.selectedEnvironment(), env);
            for (const char* name : {"freeze", "unfreeze", "revoke"}) {
                QAction* a = f.action(name);
                QVERIFY2(a && !a->isEnabled(), name);
                QVERIFY2(a->toolTip().contains(QLatin1String("ci-bot")) &&
                             a->toolTip().contains(QLatin1String("relctl_manager")),
                         qPrintable(a->toolTip()));
                QToolButton* b = buttonFor(&f.view, a);
                QVERIFY2(b && !b->isEnabled(), name);
                QCOMPARE(b->toolTip(), a->toolTip());
            }
            // Reading the history needs no role of a manager.
            QVERIFY(f.view.historyAction()->isEnabled());
        }
        // Even with nothing selected the tooltip says the real reason.
        f.view.table()->clearSelection();
        QVERIFY(f.action("freeze")->toolTip().contains(QLatin1String("relctl_manager")));

        // A manager's login gets them back.
        f.view.setPermissions(Permissions(QStringLiteral("rm-bob"), {QStringLiteral("relctl_manager")}, {}));
        select(f.view, QStringLiteral("staging"));
        QVERIFY(f.action("freeze")->isEnabled());
        QVERIFY(f.action("revoke")->isEnabled());
        QVERIFY(!f.action("freeze")->toolTip().contains(QLatin1String("relctl_manager")));
    }

    // Not known yet (or a backend that does not say): everything is offered,
    // and the server's answer is what the operator sees.
    void unknownPermissionsOfferEverything()
    {
        Fixture f;
        f.view.setPermissions(Permissions());
        select(f.view, QStringLiteral("staging"));
        QVERIFY(f.action("freeze")->isEnabled());
        QVERIFY(f.action("revoke")->isEnabled());
        QVERIFY(!f.action("unfreeze")->isEnabled()); // not frozen: nothing to unfreeze
        select(f.view, QStringLiteral("canary"));
        QVERIFY(f.action("unfreeze")->isEnabled());
    }

    // "Needs me": the count on the toggle, the marked rows with the filter
    // off, exactly the set with it on, and the line when nothing waits.
    void needsMeFiltersToTheSet()
    {
        Fixture f;
        QAction* needsMe = f.view.needsMeAction();
        QVERIFY(needsMe && needsMe->isCheckable() && !needsMe->isChecked());
        QCOMPARE(needsMe->text(), QStringLiteral("Needs me"));

        f.view.setNeedsMe({QStringLiteral("staging"), QStringLiteral("prod")});
        QCOMPARE(needsMe->text(), QStringLiteral("Needs me (2)"));
        QCOMPARE(buttonFor(&f.view, needsMe)->text(), QStringLiteral("Needs me (2)"));
        // Filter off: every row, the ones waiting for me in bold.
        QTreeView* table = f.view.table();
        QCOMPARE(shownNames(table), names({"canary", "prod", "staging", "test"}));
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            const QModelIndex cell = table->model()->index(row, int(Column::Environment));
            const bool mine = cell.data().toString() == QLatin1String("staging") ||
                              cell.data().toString() == QLatin1String("prod");
            QCOMPARE(cell.data(EnvironmentsModel::NeedsMe).toBool(), mine);
            QCOMPARE(cell.data(Qt::FontRole).value<QFont>().bold(), mine);
            QCOMPARE(cell.data(Qt::ToolTipRole).toString().contains(QLatin1String("waits for your decision")),
                     mine);
        }

        needsMe->setChecked(true);
        QCOMPARE(shownNames(table), names({"prod", "staging"}));
        QVERIFY(f.nothingForMe()->isHidden());
        // The set follows the requests as they are read.
        f.view.setNeedsMe({QStringLiteral("prod"), QStringLiteral("canary")});
        QCOMPARE(shownNames(table), names({"canary", "prod"}));
        QCOMPARE(needsMe->text(), QStringLiteral("Needs me (2)"));
        // A fresh read (same names) keeps the filter.
        f.model.setEnvironments(fourEnvironments());
        QCOMPARE(shownNames(table), names({"canary", "prod"}));

        // Nothing waits: no rows, and a plain line that says so.
        f.view.setNeedsMe({});
        QCOMPARE(table->model()->rowCount(), 0);
        QCOMPARE(needsMe->text(), QStringLiteral("Needs me"));
        QVERIFY(f.nothingForMe()->isVisible());
        QCOMPARE(f.nothingForMe()->text(), QStringLiteral("Nothing waits for you."));

        needsMe->setChecked(false);
        QCOMPARE(shownNames(table), names({"canary", "prod", "staging", "test"}));
        QVERIFY(f.nothingForMe()->isHidden());
    }

    // Through the filter the table's rows are not the model's: what is
    // selected, what its confirmation says and what the action names are
    // the environment on the selected row.
    void actionsThroughTheFilterActOnTheShownEnvironment()
    {
        Fixture f;
        f.view.setNeedsMe({QStringLiteral("prod")});
        f.view.needsMeAction()->setChecked(true);
        QTreeView* table = f.view.table();
        QCOMPARE(shownNames(table), QStringList{QStringLiteral("prod")});
        QSignalSpy changed(&f.view, &EnvironmentsView::selectedEnvironmentChanged);
        f.view.selectEnvironment(QStringLiteral("prod"));
        QCOMPARE(f.view.selectedEnvironment(), QStringLiteral("prod"));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.last().at(0).toString(), QStringLiteral("prod"));
        // What revoking would do is said of prod's lease, not of row 0's (test, no lease).
        QVERIFY2(f.view.consequences(ConsoleAction::Kind::Revoke).contains(QLatin1String("prod-deploy")),
                 qPrintable(f.view.consequences(ConsoleAction::Kind::Revoke)));
        QVERIFY(f.action("revoke")->isEnabled()); // prod holds a lease; test does not

        QSignalSpy requested(&f.view, &EnvironmentsView::actionRequested);
        auto shown = std::make_shared<QString>();
        const auto answered = confirmNextAction(QStringLiteral("rm-bob"), QStringLiteral("stuck job"), shown);
        f.action("revoke")->trigger();
        QVERIFY(*answered);
        QCOMPARE(requested.count(), 1);
        const auto action = requested.first().at(0).value<ConsoleAction>();
        QCOMPARE(action.kind, ConsoleAction::Kind::Revoke);
        QCOMPARE(action.env, QStringLiteral("prod"));
        QVERIFY2(shown->contains(QLatin1String("prod-deploy")), qPrintable(*shown));
        // Confirming is not the server accepting: the name is not saved here.
        QVERIFY(!QSettings().contains(QStringLiteral("operator/name")));

        // The filter hiding the selected row takes the selection with it, and says so.
        f.view.setNeedsMe({QStringLiteral("staging")});
        QCOMPARE(shownNames(table), QStringList{QStringLiteral("staging")});
        QCOMPARE(f.view.selectedEnvironment(), QString());
        QVERIFY(!f.action("revoke")->isEnabled());
        QCOMPARE(changed.last().at(0).toString(), QString());
    }

    // An organisation: svc1..svc3 with test and prod, groups as rows.
    void theSearchNarrowsTheRowsAndSaysHowMany()
    {
        EnvironmentsModel model;
        std::vector<relctl::EnvironmentRow> rows;
        for (const char* name :
             {"svc1.prod", "svc1.test", "svc2.prod", "svc2.test", "svc10.prod", "svc10.test"})
            rows.push_back(environment(name));
        model.setEnvironments(rows);
        EnvironmentsView view(&model);
        view.show();
        QSignalSpy searched(&view, &EnvironmentsView::searchChanged);
        QCOMPARE(view.countText(), QStringLiteral("6 environments"));
        QTest::keyClicks(view.searchBox(), QStringLiteral("*.prod"));
        QVERIFY(searched.count() > 0);
        QCOMPARE(shownNames(view.table()), names({"svc1.prod", "svc2.prod", "svc10.prod"}));
        QCOMPARE(view.countText(), QStringLiteral("3 of 6 environments"));
        QCOMPARE(view.findChild<QLabel*>(QStringLiteral("environmentCount"))->text(),
                 QStringLiteral("3 of 6 environments"));
        // Esc in the box clears it.
        QTest::keyClick(view.searchBox(), Qt::Key_Escape);
        QVERIFY(view.searchBox()->text().isEmpty());
        QCOMPARE(view.countText(), QStringLiteral("6 environments"));
    }

    // Needs attention: its count on the toggle, exactly the environments with
    // reasons while on, their summaries in a column.
    void needsAttentionListsExactlyTheEnvironmentsWithReasons()
    {
        auto rows = fourEnvironments();
        relctl::AttentionItem frozen;
        frozen.reason = "frozen";
        frozen.summary = "frozen by rm-alice: change window";
        rows[2].attention = {frozen}; // canary
        relctl::AttentionItem expiring;
        expiring.reason = "expiring";
        expiring.summary = "lease expires in 1 min 30 s";
        rows[1].attention = {expiring}; // staging
        EnvironmentsModel model;
        model.setEnvironments(rows);
        EnvironmentsView view(&model);
        QCOMPARE(view.attentionAction()->text(), QStringLiteral("Needs attention (2)"));
        view.attentionAction()->trigger();
        QCOMPARE(view.mode(), EnvironmentsView::Mode::Attention);
        QVERIFY(!view.needsMeAction()->isChecked() && !view.allAction()->isChecked());
        QCOMPARE(shownNames(view.table()), names({"canary", "staging"}));
        const QModelIndex canary = view.tree()->indexOfEnvironment(QStringLiteral("canary"));
        QCOMPARE(canary.siblingAtColumn(EnvironmentsTree::kAttentionColumn).data().toString(),
                 QStringLiteral("frozen by rm-alice: change window"));
        // Unchecking it shows all again.
        view.attentionAction()->trigger();
        QCOMPARE(view.mode(), EnvironmentsView::Mode::All);
        QVERIFY(view.allAction()->isChecked());
        QCOMPARE(shownNames(view.table()).size(), 4);
    }

    // A live update of one environment leaves the open groups and the
    // selection where they were.
    void aLiveUpdateKeepsOpenGroupsAndTheSelection()
    {
        EnvironmentsModel model;
        std::vector<relctl::EnvironmentRow> rows;
        for (const char* name : {"svc1.prod", "svc1.test", "svc2.prod", "svc2.test"})
            rows.push_back(environment(name));
        model.setEnvironments(rows);
        EnvironmentsView view(&model);
        view.setSchemaVersion(kPromotionsSchemaVersion);
        view.show();
        const QModelIndex svc1 = view.tree()->indexOfGroup(QStringLiteral("svc1"));
        view.table()->collapse(svc1);
        QCOMPARE(view.collapsedGroups(), QSet<QString>{QStringLiteral("svc1")});
        QVERIFY(view.selectEnvironment(QStringLiteral("svc2.test")));
        auto frozen = environment("svc2.test");
        frozen.frozen = true;
        model.updateEnvironments({QStringLiteral("svc2.prod"), QStringLiteral("svc2.test")},
                                 {environment("svc2.prod"), frozen});
        QVERIFY(!view.table()->isExpanded(view.tree()->indexOfGroup(QStringLiteral("svc1"))));
        QVERIFY(view.table()->isExpanded(view.tree()->indexOfGroup(QStringLiteral("svc2"))));
        QCOMPARE(view.selectedEnvironment(), QStringLiteral("svc2.test"));
        QVERIFY(view.operatorActions().at(1)->isEnabled()); // unfreeze: it is frozen now
        // The timeline's collapsing comes back here without echo.
        QSignalSpy echoed(&view, &EnvironmentsView::collapsedGroupsChanged);
        view.setCollapsedGroups({QStringLiteral("svc2")});
        QVERIFY(view.table()->isExpanded(view.tree()->indexOfGroup(QStringLiteral("svc1"))));
        QVERIFY(!view.table()->isExpanded(view.tree()->indexOfGroup(QStringLiteral("svc2"))));
        QCOMPARE(echoed.count(), 0);
    }

    // An organisation's first read (more than 50 environments) opens with
    // every group closed, and no group is opened on the way there: opening
    // 2,000 groups to close them again one by one cost the first load
    // 100 ms. The timeline hears the closed groups once.
    void theFirstReadOfAnOrganisationOpensNoGroup()
    {
        EnvironmentsModel model;
        EnvironmentsView view(&model);
        view.show();
        QSignalSpy expanded(view.table(), &QTreeView::expanded);
        QSignalSpy collapsed(view.table(), &QTreeView::collapsed);
        QSignalSpy groups(&view, &EnvironmentsView::collapsedGroupsChanged);
        std::vector<relctl::EnvironmentRow> rows;
        for (int i = 1; i <= 30; ++i)
            for (const char* stage : {"prod", "test"})
                rows.push_back(environment("svc" + std::to_string(i) + "." + stage));
        model.setEnvironments(rows);
        QCOMPARE(view.tree()->rowCount(), 30);
        QCOMPARE(expanded.count(), 0);
        QCOMPARE(collapsed.count(), 0);
        QCOMPARE(groups.count(), 1);
        QCOMPARE(view.collapsedGroups().size(), 30);
        QCOMPARE(groups.first().at(0).value<QSet<QString>>(), view.collapsedGroups());
        for (int r = 0; r < view.tree()->rowCount(); ++r)
            QVERIFY(!view.table()->isExpanded(view.tree()->index(r, 0)));
        // The person's choice holds from then on, and a later live update keeps it.
        view.table()->expand(view.tree()->indexOfGroup(QStringLiteral("svc7")));
        QVERIFY(!view.collapsedGroups().contains(QStringLiteral("svc7")));
        model.updateEnvironments({QStringLiteral("svc7.dev")}, {environment("svc7.dev")});
        QVERIFY(view.table()->isExpanded(view.tree()->indexOfGroup(QStringLiteral("svc7"))));
        QVERIFY(!view.table()->isExpanded(view.tree()->indexOfGroup(QStringLiteral("svc8"))));
    }

    // A few environments open with their groups open.
    void aFewEnvironmentsOpenWithTheirGroupsOpen()
    {
        EnvironmentsModel model;
        EnvironmentsView view(&model);
        view.show();
        QSignalSpy groups(&view, &EnvironmentsView::collapsedGroupsChanged);
        std::vector<relctl::EnvironmentRow> rows;
        for (const char* name : {"svc1.prod", "svc1.test", "svc2.prod", "svc2.test"})
            rows.push_back(environment(name));
        model.setEnvironments(rows);
        QCOMPARE(groups.count(), 0);
        QVERIFY(view.collapsedGroups().isEmpty());
        QVERIFY(view.table()->isExpanded(view.tree()->indexOfGroup(QStringLiteral("svc1"))));
        QVERIFY(view.table()->isExpanded(view.tree()->indexOfGroup(QStringLiteral("svc2"))));
    }

    // Freeze many on a group's row: the dialog lists every environment that
    // will change and those already frozen, and one FreezeMany goes out
    // with exactly the ones that change.
    void freezingAGroupListsItsEnvironmentsAndSendsOneAction()
    {
        EnvironmentsModel model;
        std::vector<relctl::EnvironmentRow> rows;
        for (const char* name : {"svc1.prod", "svc1.test", "svc2.prod", "svc2.staging", "svc2.test"})
            rows.push_back(environment(name));
        rows[3].frozen = true; // svc2.staging
        model.setEnvironments(rows);
        EnvironmentsView view(&model);
        view.setSchemaVersion(kPromotionsSchemaVersion);
        view.show();
        QAction* many = view.findChild<QAction*>(QStringLiteral("freezeMany"));
        QVERIFY(many);
        QVERIFY(!many->isEnabled()); // nothing selected, no search
        QVERIFY(view.selectGroup(QStringLiteral("svc2")));
        QVERIFY(many->isEnabled());
        QCOMPARE(view.bulkTargets(), names({"svc2.prod", "svc2.staging", "svc2.test"}));
        QSignalSpy requested(&view, &EnvironmentsView::actionRequested);
        QStringList listed, already;
        QTimer::singleShot(0, [&] {
            for (QWidget* w : QApplication::topLevelWidgets()) {
                auto* dialog = qobject_cast<BulkFreezeDialog*>(w);
                if (!dialog)
                    continue;
                for (int i = 0; i < dialog->changeList()->count(); ++i)
                    listed << dialog->changeList()->item(i)->text();
                for (int i = 0; i < dialog->unchangedList()->count(); ++i)
                    already << dialog->unchangedList()->item(i)->text();
                QVERIFY(!dialog->confirmButton()->isEnabled()); // no reason yet
                dialog->findChild<QPlainTextEdit*>()->setPlainText(QStringLiteral("holiday"));
                dialog->confirmButton()->click();
            }
        });
        many->trigger();
        QCOMPARE(listed, names({"svc2.prod", "svc2.test"}));
        QCOMPARE(already, names({"svc2.staging"}));
        QCOMPARE(requested.count(), 1);
        const auto action = requested.first().at(0).value<ConsoleAction>();
        QCOMPARE(action.kind, ConsoleAction::Kind::FreezeMany);
        QCOMPARE(action.envs, names({"svc2.prod", "svc2.test"}));
        QCOMPARE(action.reason, QStringLiteral("holiday"));

        // With nothing selected, the search's environments.
        view.table()->clearSelection();
        view.searchBox()->setText(QStringLiteral("*.test"));
        QVERIFY(many->isEnabled());
        QCOMPARE(view.bulkTargets(), names({"svc1.test", "svc2.test"}));

        // A login without relctl_manager is not offered them, and is told why.
        view.setPermissions(Permissions(QStringLiteral("ci-bot"), {QStringLiteral("relctl_job")}, {}));
        for (QAction* a : view.bulkActions()) {
            QVERIFY(!a->isEnabled());
            QVERIFY2(a->toolTip().contains(QLatin1String("relctl_manager")), qPrintable(a->toolTip()));
        }
    }

    void columnsSayWhatTheyCount()
    {
        EnvironmentsModel model;
        QCOMPARE(model.headerData(int(Column::Pending), Qt::Horizontal).toString(),
                 QStringLiteral("Open requests"));
        QVERIFY(model.headerData(int(Column::Pending), Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QLatin1String("promotion")));
        QCOMPARE(model.headerData(int(Column::HeldFor), Qt::Horizontal).toString(),
                 QStringLiteral("Held for"));
        QCOMPARE(model.headerData(int(Column::ExpiresIn), Qt::Horizontal).toString(),
                 QStringLiteral("Expires in"));
    }

    // A live lease says how long it has been held and how long it has left,
    // in the console's one duration format, and when it was acquired.
    void aLiveLeaseSaysHowLongItHasBeenHeld()
    {
        EnvironmentsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
        model.setEnvironments(fourEnvironments());
        // In natural order: canary, prod, staging, test.
        const QModelIndex held = model.index(2, int(Column::HeldFor));
        const QModelIndex expires = model.index(2, int(Column::ExpiresIn));
        QCOMPARE(held.data().toString(), QStringLiteral("1 min 43 s"));
        QCOMPARE(expires.data().toString(), QStringLiteral("1 min 30 s"));
        QCOMPARE(model.index(1, int(Column::HeldFor)).data().toString(), QStringLiteral("5 s"));
        QCOMPARE(model.index(1, int(Column::ExpiresIn)).data().toString(), QStringLiteral("1 h 00 min"));
        // No lease: blank, not "0 s".
        QVERIFY(!model.index(3, int(Column::HeldFor)).data().isValid());
        const QString tip = held.data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("Acquired at ") + formatTime(kServerNow - 103'000)) &&
                     tip.contains(QStringLiteral("Expires at ") + formatTime(kServerNow + 90'000)),
                 qPrintable(tip));

        // Both clocks move with the server's.
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
        model.setNow(kServerNow + 2'000);
        QCOMPARE(held.data().toString(), QStringLiteral("1 min 45 s"));
        QCOMPARE(expires.data().toString(), QStringLiteral("1 min 28 s"));
        QCOMPARE(changes.count(), 1);
        model.setNow(kServerNow + 90'000);
        QCOMPARE(expires.data().toString(), QStringLiteral("expired"));
    }

    void durationsReadAsEverywhereElse_data()
    {
        QTest::addColumn<qint64>("remainingMs");
        QTest::addColumn<QString>("countdown");
        QTest::addRow("past") << qint64(-5'000) << QStringLiteral("expired");
        QTest::addRow("zero") << qint64(0) << QStringLiteral("expired");
        QTest::addRow("1 ms rounds up") << qint64(1) << QStringLiteral("1 s");
        QTest::addRow("59 s") << qint64(59'000) << QStringLiteral("59 s");
        QTest::addRow("just over 59 s") << qint64(59'001) << QStringLiteral("1 min 0 s");
        QTest::addRow("61 s") << qint64(61'000) << QStringLiteral("1 min 1 s");
        QTest::addRow("one hour") << qint64(3'600'000) << QStringLiteral("1 h 00 min");
        QTest::addRow("over an hour") << qint64(3'725'000) << QStringLiteral("1 h 02 min");
    }

    void durationsReadAsEverywhereElse()
    {
        QFETCH(qint64, remainingMs);
        QFETCH(QString, countdown);
        QCOMPARE(EnvironmentsModel::formatCountdown(remainingMs), countdown);
        // Beyond a minute, exactly formatDuration's words.
        if (remainingMs >= 60'000 && remainingMs % 1000 == 0)
            QCOMPARE(countdown, formatDuration(remainingMs));
    }
};

QTEST_MAIN(TestEnvironmentsView)
#include "test_environmentsview.moc"
