// The environments grouped (EnvironmentsTree) over a model fed by hand: groups
// and natural order, what a group row sums up, the search and the modes, and
// that a live update of one environment touches its row and its group's row
// alone, at 10,000 environments within the GUI thread's 5 ms. No database.

#include "environmentsmodel.h"
#include "environmentstree.h"

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTreeView>
#include <QtTest>
#include <algorithm>

using namespace relctl::ui;
using Column = EnvironmentsModel::Column;

namespace {

constexpr std::int64_t kServerNow = 4'000'000'000'000;

relctl::EnvironmentRow environment(const std::string& name)
{
    relctl::EnvironmentRow row;
    row.name = name;
    const auto dot = name.find('.');
    row.group = dot == std::string::npos ? name : name.substr(0, dot);
    row.policy = "newest";
    row.supersede = "approval";
    row.serialization = "enforced";
    row.serverNow = relctl::Timestamp::fromMillis(kServerNow);
    return row;
}

relctl::AttentionItem attention(const std::string& reason, const std::string& summary)
{
    relctl::AttentionItem item;
    item.reason = reason;
    item.summary = summary;
    return item;
}

// prod alone; svc1, svc2 and svc10 with a test and a prod each. Given in
// natural order, as the model keeps them.
std::vector<relctl::EnvironmentRow> organisation()
{
    std::vector<relctl::EnvironmentRow> rows;
    rows.push_back(environment("prod"));
    for (const char* svc : {"svc1", "svc2", "svc10"})
        for (const char* stage : {"prod", "test"})
            rows.push_back(environment(std::string(svc) + "." + stage));
    return rows;
}

// n services with five stages each, in natural order.
std::vector<relctl::EnvironmentRow> services(int n)
{
    std::vector<relctl::EnvironmentRow> rows;
    rows.reserve(std::size_t(n) * 5);
    for (int i = 1; i <= n; ++i)
        for (const char* stage : {"dev", "prod", "prod-eu", "staging", "test"})
            rows.push_back(environment("svc" + std::to_string(i) + "." + stage));
    return rows;
}

QStringList topRows(const QAbstractItemModel& tree)
{
    QStringList names;
    for (int r = 0; r < tree.rowCount(); ++r)
        names << tree.index(r, 0).data().toString();
    return names;
}

QStringList childrenOf(const QAbstractItemModel& tree, int top)
{
    QStringList names;
    const QModelIndex parent = tree.index(top, 0);
    for (int r = 0; r < tree.rowCount(parent); ++r)
        names << tree.index(r, 0, parent).data().toString();
    return names;
}

QString cell(const EnvironmentsTree& tree, const QString& group, int column)
{
    const QModelIndex g = tree.indexOfGroup(group);
    return tree.index(g.row(), column).data().toString();
}

} // namespace

class TestEnvironmentsTree final : public QObject
{
    Q_OBJECT

private slots:
    // Groups in natural order (svc2 before svc10), members in natural order,
    // a group of one shown as its environment.
    void groupsInNaturalOrder()
    {
        EnvironmentsModel model;
        model.setEnvironments(organisation());
        EnvironmentsTree tree(&model);
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::Fatal);
        QCOMPARE(topRows(tree), (QStringList{QStringLiteral("prod"), QStringLiteral("svc1 (2)"),
                                             QStringLiteral("svc2 (2)"), QStringLiteral("svc10 (2)")}));
        QVERIFY(!tree.isGroupRow(tree.index(0, 0)));
        QCOMPARE(tree.environmentAt(tree.index(0, 0)), QStringLiteral("prod"));
        QVERIFY(tree.isGroupRow(tree.index(3, 0)));
        QCOMPARE(childrenOf(tree, 3),
                 (QStringList{QStringLiteral("svc10.prod"), QStringLiteral("svc10.test")}));
        QCOMPARE(tree.environmentsAt(tree.index(2, 0)),
                 (QStringList{QStringLiteral("svc2.prod"), QStringLiteral("svc2.test")}));
        QCOMPARE(tree.groupRows(),
                 (QStringList{QStringLiteral("svc1"), QStringLiteral("svc2"), QStringLiteral("svc10")}));
        QCOMPARE(tree.groupOf().value(QStringLiteral("svc10.test")), QStringLiteral("svc10"));
        QCOMPARE(tree.columnCount(), EnvironmentsTree::kAttentionColumn + 1);
        QCOMPARE(tree.headerData(EnvironmentsTree::kAttentionColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Needs attention"));
    }

    // A group row says what its members add up to: held, queued, frozen,
    // needing attention; the members' own cells say theirs.
    void aGroupRowSumsItsMembers()
    {
        auto rows = organisation();
        auto& prod = rows[3]; // svc2.prod
        auto& test = rows[4]; // svc2.test
        prod.holderToken = 7;
        prod.holderJob = "deploy";
        prod.leaseExpiresAt = relctl::Timestamp::fromMillis(kServerNow + 60'000);
        prod.queueLength = 2;
        test.frozen = true;
        test.attention = {attention("frozen", "frozen by rm-alice: change window")};
        prod.attention = {attention("waiting", "2 candidates waiting")};
        EnvironmentsModel model;
        model.setEnvironments(rows);
        EnvironmentsTree tree(&model);
        QCOMPARE(cell(tree, QStringLiteral("svc2"), int(Column::LeaseHolder)), QStringLiteral("1 held"));
        QCOMPARE(cell(tree, QStringLiteral("svc2"), int(Column::Queue)), QStringLiteral("2 queued"));
        QCOMPARE(cell(tree, QStringLiteral("svc2"), int(Column::Frozen)), QStringLiteral("1 frozen"));
        QCOMPARE(cell(tree, QStringLiteral("svc2"), EnvironmentsTree::kAttentionColumn),
                 QStringLiteral("2 need attention"));
        QCOMPARE(cell(tree, QStringLiteral("svc1"), int(Column::Frozen)), QString());
        QCOMPARE(cell(tree, QStringLiteral("svc1"), EnvironmentsTree::kAttentionColumn), QString());
        const QModelIndex member = tree.indexOfEnvironment(QStringLiteral("svc2.test"));
        QCOMPARE(member.siblingAtColumn(EnvironmentsTree::kAttentionColumn).data().toString(),
                 QStringLiteral("frozen by rm-alice: change window"));
        QCOMPARE(member.data(EnvironmentsModel::EnvironmentName).toString(), QStringLiteral("svc2.test"));
        QCOMPARE(tree.attentionCount(), 2);
    }

    // One environment read again: its row and its group's row change, no
    // other row, nothing inserted, removed or reset.
    void aLiveUpdateTouchesOneRowAndItsGroup()
    {
        EnvironmentsModel model;
        model.setEnvironments(organisation());
        EnvironmentsTree tree(&model);
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::Fatal);
        QSignalSpy changed(&tree, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&tree, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&tree, &QAbstractItemModel::rowsRemoved);
        QSignalSpy reset(&tree, &QAbstractItemModel::modelReset);
        auto frozen = environment("svc2.test");
        frozen.frozen = true;
        frozen.attention = {attention("frozen", "frozen")};
        model.updateEnvironments({QStringLiteral("svc2.test")}, {frozen});
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(removed.count(), 0);
        QCOMPARE(reset.count(), 0);
        QVERIFY(changed.count() >= 1);
        const QModelIndex member = tree.indexOfEnvironment(QStringLiteral("svc2.test"));
        const QModelIndex group = tree.indexOfGroup(QStringLiteral("svc2"));
        for (const QList<QVariant>& args : changed) {
            const auto from = args.at(0).value<QModelIndex>();
            const auto to = args.at(1).value<QModelIndex>();
            QCOMPARE(from.row(), to.row());
            QVERIFY2((from.row() == member.row() && from.parent() == group) ||
                         (from.row() == group.row() && !from.parent().isValid()),
                     qPrintable(from.data().toString()));
        }
        QCOMPARE(cell(tree, QStringLiteral("svc2"), int(Column::Frozen)), QStringLiteral("1 frozen"));
        QCOMPARE(tree.attentionCount(), 1);
    }

    // Environments that come and go: a second member turns a one-environment
    // row into a group row, a new group takes its place in natural order,
    // and the last member leaving takes the row with it.
    void environmentsComeAndGo()
    {
        EnvironmentsModel model;
        model.setEnvironments(organisation());
        EnvironmentsTree tree(&model);
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::Fatal);
        QSignalSpy reset(&tree, &QAbstractItemModel::modelReset);
        QSignalSpy membership(&tree, &EnvironmentsTree::membershipChanged);
        model.updateEnvironments({QStringLiteral("svc3.prod")}, {environment("svc3.prod")});
        QCOMPARE(topRows(tree),
                 (QStringList{QStringLiteral("prod"), QStringLiteral("svc1 (2)"), QStringLiteral("svc2 (2)"),
                              QStringLiteral("svc3.prod"), QStringLiteral("svc10 (2)")}));
        model.updateEnvironments({QStringLiteral("svc3.test")}, {environment("svc3.test")});
        QCOMPARE(topRows(tree).at(3), QStringLiteral("svc3 (2)"));
        QCOMPARE(childrenOf(tree, 3),
                 (QStringList{QStringLiteral("svc3.prod"), QStringLiteral("svc3.test")}));
        model.updateEnvironments({QStringLiteral("svc3.prod")}, {});
        QCOMPARE(topRows(tree).at(3), QStringLiteral("svc3.test"));
        model.updateEnvironments({QStringLiteral("svc3.test"), QStringLiteral("svc1.prod")}, {});
        QCOMPARE(topRows(tree), (QStringList{QStringLiteral("prod"), QStringLiteral("svc1.test"),
                                             QStringLiteral("svc2 (2)"), QStringLiteral("svc10 (2)")}));
        QCOMPARE(tree.totalCount(), 6);
        QCOMPARE(reset.count(), 0);
        QVERIFY(membership.count() >= 4);
        // Every environment's row still reads its own environment.
        for (const QString& env :
             {QStringLiteral("svc2.prod"), QStringLiteral("svc10.test"), QStringLiteral("prod")})
            QCOMPARE(tree.environmentAt(tree.indexOfEnvironment(env)), env);
    }

    // A search: a substring of the name or the group, or a glob; the count
    // says how many of all are shown, and the matches are what the timeline shows.
    void searchMatchesNamesAndGroups_data()
    {
        QTest::addColumn<QString>("search");
        QTest::addColumn<QStringList>("shown");
        QTest::addRow("substring") << QStringLiteral("PROD")
                                   << QStringList{QStringLiteral("prod"), QStringLiteral("svc1.prod"),
                                                  QStringLiteral("svc2.prod"), QStringLiteral("svc10.prod")};
        QTest::addRow("group") << QStringLiteral("svc10")
                               << QStringList{QStringLiteral("svc10.prod"), QStringLiteral("svc10.test")};
        QTest::addRow("glob") << QStringLiteral("svc?.test")
                              << QStringList{QStringLiteral("svc1.test"), QStringLiteral("svc2.test")};
        QTest::addRow("glob, whole name")
            << QStringLiteral("svc1*")
            << QStringList{QStringLiteral("svc1.prod"), QStringLiteral("svc1.test"),
                           QStringLiteral("svc10.prod"), QStringLiteral("svc10.test")};
        QTest::addRow("nothing") << QStringLiteral("canary") << QStringList{};
    }

    void searchMatchesNamesAndGroups()
    {
        QFETCH(QString, search);
        QFETCH(QStringList, shown);
        EnvironmentsModel model;
        model.setEnvironments(organisation());
        EnvironmentsTree tree(&model);
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::Fatal);
        tree.setSearch(search);
        QCOMPARE(tree.shownEnvironments(), shown);
        QCOMPARE(tree.shownCount(), shown.size());
        QCOMPARE(tree.totalCount(), 7);
        const auto matches = tree.searchMatches();
        QVERIFY(matches.has_value());
        QCOMPARE(*matches, QSet<QString>(shown.begin(), shown.end()));
        tree.setSearch({});
        QVERIFY(!tree.searchMatches().has_value());
        QCOMPARE(tree.shownCount(), 7);
    }

    // Needs attention: exactly the environments with reasons, following a
    // live update in and out; Needs me: exactly the set.
    void modesShowExactlyTheirEnvironments()
    {
        auto rows = organisation();
        rows[2].attention = {attention("refused", "a refusal 3 min ago")};    // svc1.test
        rows[5].attention = {attention("expiring", "lease expires in 20 s")}; // svc10.prod
        EnvironmentsModel model;
        model.setEnvironments(rows);
        EnvironmentsTree tree(&model);
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::Fatal);
        tree.setMode(EnvironmentsTree::Mode::Attention);
        QCOMPARE(tree.shownEnvironments(),
                 (QStringList{QStringLiteral("svc1.test"), QStringLiteral("svc10.prod")}));
        QCOMPARE(topRows(tree),
                 (QStringList{QStringLiteral("svc1 (1 of 2)"), QStringLiteral("svc10 (1 of 2)")}));
        auto frozen = environment("prod");
        frozen.attention = {attention("frozen", "frozen")};
        model.updateEnvironments({QStringLiteral("prod")}, {frozen});
        QCOMPARE(tree.shownEnvironments(), (QStringList{QStringLiteral("prod"), QStringLiteral("svc1.test"),
                                                        QStringLiteral("svc10.prod")}));
        model.updateEnvironments({QStringLiteral("svc1.test")}, {environment("svc1.test")});
        QCOMPARE(tree.shownEnvironments(),
                 (QStringList{QStringLiteral("prod"), QStringLiteral("svc10.prod")}));
        QCOMPARE(tree.attentionCount(), 2);

        model.setNeedsMe({QStringLiteral("svc2.prod")});
        tree.setMode(EnvironmentsTree::Mode::NeedsMe);
        QCOMPARE(tree.shownEnvironments(), QStringList{QStringLiteral("svc2.prod")});
        tree.setMode(EnvironmentsTree::Mode::All);
        QCOMPARE(tree.shownCount(), 7);
    }

    // The first read arrives as one insertion of every group row, grouped in
    // one pass: no group row is put in and then replaced by its group (a
    // member at a time, each insertion renumbering the rows after it).
    void theFirstReadIsOneInsertion()
    {
        EnvironmentsModel model;
        EnvironmentsTree tree(&model);
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&tree, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&tree, &QAbstractItemModel::rowsRemoved);
        QSignalSpy reset(&tree, &QAbstractItemModel::modelReset);
        QSignalSpy membership(&tree, &EnvironmentsTree::membershipChanged);
        model.setEnvironments(organisation());
        QCOMPARE(inserted.count(), 1);
        QVERIFY(!inserted.first().at(0).toModelIndex().isValid());
        QCOMPARE(inserted.first().at(1).toInt(), 0);
        QCOMPARE(inserted.first().at(2).toInt(), 3);
        QCOMPARE(removed.count(), 0);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(membership.count(), 1);
        QCOMPARE(topRows(tree), (QStringList{QStringLiteral("prod"), QStringLiteral("svc1 (2)"),
                                             QStringLiteral("svc2 (2)"), QStringLiteral("svc10 (2)")}));
        QCOMPARE(childrenOf(tree, 3),
                 (QStringList{QStringLiteral("svc10.prod"), QStringLiteral("svc10.test")}));
        QCOMPARE(tree.totalCount(), 7);
        QCOMPARE(tree.shownCount(), 7);
        // Later arrivals still come one at a time, at their place.
        inserted.clear();
        model.updateEnvironments({QStringLiteral("svc2.dev")}, {environment("svc2.dev")});
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(childrenOf(tree, 2), (QStringList{QStringLiteral("svc2.dev"), QStringLiteral("svc2.prod"),
                                                   QStringLiteral("svc2.test")}));
    }

    // 10,000 environments in 2,000 groups, in a tree view with half the
    // groups open and a row selected: the first build is quick, and a live
    // update of one environment costs the GUI thread (model, tree, view)
    // well under 5 ms, leaving the others, the open groups and the
    // selection alone.
    void tenThousandEnvironments()
    {
        EnvironmentsModel model;
        EnvironmentsTree tree(&model);
        QTreeView view;
        view.setUniformRowHeights(true);
        view.setModel(&tree);
        view.resize(1400, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QElapsedTimer timer;
        timer.start();
        model.setEnvironments(services(2000));
        for (int r = 0; r < tree.rowCount(); r += 2)
            view.expand(tree.index(r, 0));
        view.selectionModel()->select(tree.indexOfEnvironment(QStringLiteral("svc1.prod")),
                                      QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QCoreApplication::processEvents();
        const qint64 buildMs = timer.elapsed();
        QCOMPARE(tree.totalCount(), 10'000);
        QCOMPARE(tree.rowCount(), 2000);
        qInfo("10,000 environments: model, tree and first layout in %lld ms", buildMs);
        QVERIFY2(buildMs < 1500, qPrintable(QString::number(buildMs)));

        QSignalSpy reset(&tree, &QAbstractItemModel::modelReset);
        std::vector<qint64> costs, updates;
        for (int i = 0; i < 60; ++i) {
            const std::string name = "svc" + std::to_string(1 + (i * 37) % 2000) + ".prod";
            auto row = environment(name);
            row.frozen = i % 2 == 0;
            if (row.frozen)
                row.attention = {attention("frozen", "frozen")};
            timer.restart();
            model.updateEnvironments({QString::fromStdString(name)}, {row});
            updates.push_back(timer.nsecsElapsed());
            // The view paints what changed (the row and its group's row) as the event loop runs.
            QCoreApplication::processEvents();
            costs.push_back(timer.nsecsElapsed());
        }
        std::sort(updates.begin(), updates.end());
        qInfo("one live update at 10,000 environments: model and tree (signals included) median %.3f ms, "
              "worst %.3f ms",
              double(updates[updates.size() / 2]) / 1e6, double(updates.back()) / 1e6);
        std::sort(costs.begin(), costs.end());
        const double median = double(costs[costs.size() / 2]) / 1e6;
        const double worst = double(costs.back()) / 1e6;
        qInfo("with the view painting the rows that changed: median %.3f ms, worst %.3f ms", median, worst);
        QVERIFY2(double(updates[updates.size() / 2]) / 1e6 < 1.0, "the model and the tree");
        QVERIFY2(median < 5.0, qPrintable(QString::number(median)));
        QCOMPARE(reset.count(), 0);
        QVERIFY(view.isExpanded(tree.index(0, 0)) && !view.isExpanded(tree.index(1, 0)));
        QCOMPARE(view.selectionModel()->selectedRows().size(), 1);
        QCOMPARE(tree.environmentAt(view.selectionModel()->selectedRows().first()),
                 QStringLiteral("svc1.prod"));

        // The countdown's tick, once a second on every row.
        timer.restart();
        model.tick();
        const double tickMs = double(timer.nsecsElapsed()) / 1e6;
        qInfo("the countdown's tick at 10,000 environments: %.3f ms", tickMs);
        QVERIFY2(tickMs < 20.0, qPrintable(QString::number(tickMs)));

        // A search over all of them, typed.
        timer.restart();
        tree.setSearch(QStringLiteral("*.prod"));
        QCoreApplication::processEvents();
        const qint64 searchMs = timer.elapsed();
        qInfo("a search over 10,000 environments: %lld ms", searchMs);
        QCOMPARE(tree.shownCount(), 2000);
    }
};

QTEST_MAIN(TestEnvironmentsTree)
#include "test_environmentstree.moc"
