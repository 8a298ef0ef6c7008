// Unit tests for the console's item models, fed with synthetic values: no
// database. Every model is watched by QAbstractItemModelTester.

#include "auditcells.h"
#include "auditmodel.h"
#include "auditrange.h"
#include "environmentsmodel.h"
#include "jobstatus.h"
#include "manifestdiff.h"
#include "manifesthistorymodel.h"
#include "queuemodel.h"
#include "timeformat.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QElapsedTimer>
#include <QFont>
#include <QItemSelectionModel>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QtTest>

using relctl::ui::AuditModel;
using relctl::ui::EnvironmentsModel;
using EnvColumn = EnvironmentsModel::Column;
using AuditColumn = AuditModel::Column;

namespace {

// Times in these tests are epoch milliseconds, as the console's functions send them.
relctl::Timestamp ms(std::int64_t n)
{
    return relctl::Timestamp::fromMillis(n);
}

constexpr std::int64_t serverNow = 1'700'000'000'000; // 2023-11-14T22:13:20Z

relctl::EnvironmentRow environment(const std::string& name)
{
    relctl::EnvironmentRow r;
    r.name = name;
    r.policy = "ordered";
    r.supersede = "auto";
    r.serialization = "enforced";
    r.serverNow = ms(serverNow);
    return r;
}

// prod: published, leased (90 s left), queued, frozen. staging: nothing yet.
std::vector<relctl::EnvironmentRow> twoEnvironments()
{
    auto prod = environment("prod");
    prod.currentRelease = "1.4.2";
    prod.currentGeneration = 7;
    prod.publishedBy = "deploy-41";
    prod.publishedAt = ms(serverNow - 60'000);
    prod.holderJob = "deploy-42";
    prod.holderRelease = "1.4.3";
    prod.holderToken = 12;
    prod.leaseExpiresAt = ms(serverNow + 90'000);
    prod.queueLength = 3;
    prod.pendingSupersessions = 1;
    prod.pendingPromotions = 2;
    prod.frozen = true;
    prod.frozenBy = "alice";
    prod.frozenReason = "change freeze";
    return {prod, environment("staging")};
}

std::vector<relctl::EnvironmentRow> named(std::initializer_list<const char*> names)
{
    std::vector<relctl::EnvironmentRow> rows;
    for (const char* n : names)
        rows.push_back(environment(n));
    return rows;
}

QString cell(const QAbstractItemModel& m, int row, EnvColumn column, int role = Qt::DisplayRole)
{
    return m.data(m.index(row, int(column)), role).toString();
}

relctl::Event syntheticEvent(std::int64_t id)
{
    relctl::Event e;
    e.id = id;
    e.at = ms(serverNow + id);
    e.env = "prod";
    e.operation = "publish";
    e.outcome = id % 10 == 0 ? "rejected" : "accepted";
    if (id % 10 == 0) {
        e.reason = "stale_generation";
        e.currentRelease = "1.4.2";
        e.currentGeneration = 7;
        e.currentToken = 12;
    }
    e.job = "deploy-" + std::to_string(id);
    e.release = "1.4." + std::to_string(id % 100);
    e.generation = id;
    e.token = id;
    return e;
}

// Events firstId, firstId - 1, ...: newest first, like the server's pages.
relctl::AuditPage page(std::int64_t firstId, int count, bool more)
{
    relctl::AuditPage p;
    for (int i = 0; i < count; ++i)
        p.events.push_back(syntheticEvent(firstId - i));
    p.more = more;
    return p;
}

struct Request
{
    quint64 serial;
    relctl::AuditPageRequest request;
};

// Records fetchRequested without QSignalSpy, which would need the value type
// registered as a metatype just to copy it into a QVariant.
std::vector<Request>& record(AuditModel& model, std::vector<Request>& requests)
{
    QObject::connect(&model, &AuditModel::fetchRequested, &model,
                     [&requests](quint64 serial, const relctl::AuditPageRequest& r) {
                         requests.push_back({serial, r});
                     });
    return requests;
}

// Events with these ids, in this order, as one page.
relctl::AuditPage pageOf(std::initializer_list<std::int64_t> ids, bool more, std::int64_t horizon = 0)
{
    relctl::AuditPage p;
    for (const std::int64_t id : ids)
        p.events.push_back(syntheticEvent(id));
    p.more = more;
    p.horizon = horizon;
    return p;
}

constexpr auto fatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

} // namespace

class TestModels final : public QObject
{
    Q_OBJECT

private slots:
    void environmentsDisplay()
    {
        EnvironmentsModel model;
        QAbstractItemModelTester tester(&model, fatal);
        model.setEnvironments(twoEnvironments());

        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), 12);
        QCOMPARE(model.headerData(int(EnvColumn::ExpiresIn), Qt::Horizontal).toString(),
                 QStringLiteral("Expires in"));
        QCOMPARE(cell(model, 0, EnvColumn::Environment), QStringLiteral("prod"));
        QCOMPARE(cell(model, 0, EnvColumn::CurrentRelease), QStringLiteral("1.4.2"));
        QCOMPARE(model.data(model.index(0, int(EnvColumn::Generation))).toLongLong(), 7);
        QCOMPARE(cell(model, 0, EnvColumn::PublishedBy), QStringLiteral("deploy-41"));
        QCOMPARE(cell(model, 0, EnvColumn::PublishedAt),
                 QDateTime::fromMSecsSinceEpoch(serverNow - 60'000, Qt::UTC)
                         .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) +
                     QStringLiteral(" UTC"));
        QCOMPARE(cell(model, 0, EnvColumn::LeaseHolder), QStringLiteral("deploy-42"));
        QCOMPARE(cell(model, 0, EnvColumn::ExpiresIn), QStringLiteral("1 min 30 s"));
        QCOMPARE(model.data(model.index(0, int(EnvColumn::Queue))).toLongLong(), 3);
        QCOMPARE(cell(model, 0, EnvColumn::Policy), QStringLiteral("ordered"));
        QCOMPARE(cell(model, 0, EnvColumn::Frozen), QStringLiteral("frozen"));
        // What awaits a release manager: supersessions and promotions together.
        QCOMPARE(cell(model, 0, EnvColumn::Pending), QStringLiteral("3 to decide"));
        QCOMPARE(model.data(model.index(0, 0), EnvironmentsModel::Roles::PendingDecisions).toLongLong(), 3);
        QVERIFY(!model.data(model.index(1, int(EnvColumn::Pending))).isValid()); // none: blank, not "0"

        // Nothing published, no lease: blank cells, not zeros.
        QVERIFY(!model.data(model.index(1, int(EnvColumn::CurrentRelease))).isValid());
        QVERIFY(!model.data(model.index(1, int(EnvColumn::Generation))).isValid());
        QVERIFY(!model.data(model.index(1, int(EnvColumn::ExpiresIn))).isValid());
        QCOMPARE(cell(model, 1, EnvColumn::Frozen), QString());

        const QModelIndex anyCell = model.index(0, int(EnvColumn::Queue));
        QCOMPARE(model.data(anyCell, EnvironmentsModel::Roles::EnvironmentName).toString(),
                 QStringLiteral("prod"));
        QCOMPARE(model.data(anyCell, EnvironmentsModel::Roles::Frozen).toBool(), true);
        QCOMPARE(model.data(anyCell, EnvironmentsModel::Roles::ExpiresAtMs).toLongLong(), serverNow + 90'000);
        QCOMPARE(model.data(anyCell, EnvironmentsModel::Roles::HolderToken).toLongLong(), 12);
        QVERIFY(!model.data(model.index(1, 0), EnvironmentsModel::Roles::ExpiresAtMs).isValid());
    }

    void environmentsToolTips()
    {
        EnvironmentsModel model;
        QAbstractItemModelTester tester(&model, fatal);
        model.setEnvironments(twoEnvironments());

        QCOMPARE(cell(model, 0, EnvColumn::Frozen, Qt::ToolTipRole),
                 QStringLiteral("Frozen by alice: change freeze"));
        const QString holder = cell(model, 0, EnvColumn::LeaseHolder, Qt::ToolTipRole);
        QVERIFY2(holder.contains(QLatin1String("release 1.4.3")) &&
                     holder.contains(QLatin1String("token 12")),
                 qPrintable(holder));
        QVERIFY(cell(model, 0, EnvColumn::Queue, Qt::ToolTipRole).contains(QLatin1String("1 supersession")));
        QVERIFY(cell(model, 0, EnvColumn::Policy, Qt::ToolTipRole)
                    .contains(QLatin1String("Serialization: enforced")));
        QCOMPARE(cell(model, 1, EnvColumn::LeaseHolder, Qt::ToolTipRole), QStringLiteral("No live lease"));
        QCOMPARE(cell(model, 1, EnvColumn::Frozen, Qt::ToolTipRole), QStringLiteral("Not frozen"));
    }

    void environmentsUpdateInPlace()
    {
        EnvironmentsModel model;
        QAbstractItemModelTester tester(&model, fatal);
        model.setEnvironments(twoEnvironments());
        const QPersistentModelIndex selected = model.index(1, 0);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removes(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);

        auto rows = twoEnvironments();
        rows[1].currentRelease = "2.0.0";
        rows[0].frozen = false;
        model.setEnvironments(rows);

        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserts.count(), 0);
        QCOMPARE(removes.count(), 0);
        // Both rows changed: one signal over both, and prod's lease clocks.
        QCOMPARE(changes.count(), 2);
        QCOMPARE(changes.at(0).at(0).value<QModelIndex>(), model.index(0, 0));
        QCOMPARE(changes.at(0).at(1).value<QModelIndex>(), model.index(1, int(EnvColumn::Count) - 1));
        QCOMPARE(cell(model, 1, EnvColumn::CurrentRelease), QStringLiteral("2.0.0"));
        QCOMPARE(cell(model, 0, EnvColumn::Frozen), QString());
        QVERIFY(selected.isValid());
        QCOMPARE(selected.row(), 1);

        // A read where only staging changed signals staging's row (and the
        // clocks of the leased row), not every row.
        changes.clear();
        rows[1].currentRelease = "2.0.1";
        for (auto& r : rows)
            r.serverNow = ms(serverNow + 1'000);
        model.setEnvironments(rows);
        QCOMPARE(changes.count(), 2);
        QCOMPARE(changes.at(0).at(0).value<QModelIndex>(), model.index(1, 0));
        QCOMPARE(changes.at(0).at(1).value<QModelIndex>(), model.index(1, int(EnvColumn::Count) - 1));
        QCOMPARE(changes.at(1).at(0).value<QModelIndex>(), model.index(0, int(EnvColumn::HeldFor)));
        QCOMPARE(changes.at(1).at(1).value<QModelIndex>(), model.index(0, int(EnvColumn::ExpiresIn)));
        QCOMPARE(model.now(), serverNow + 1'000);
    }

    void environmentsAddAndRemove()
    {
        EnvironmentsModel model;
        QAbstractItemModelTester tester(&model, fatal);
        model.setEnvironments(named({"a", "b", "c"}));
        const QPersistentModelIndex c = model.index(2, 0);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removes(&model, &QAbstractItemModel::rowsRemoved);

        model.setEnvironments(named({"a", "c", "d"}));

        QCOMPARE(resets.count(), 0);
        QCOMPARE(removes.count(), 1);
        QCOMPARE(removes.at(0).at(1).toInt(), 1); // b
        QCOMPARE(inserts.count(), 1);
        QCOMPARE(inserts.at(0).at(1).toInt(), 2); // d
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(cell(model, 2, EnvColumn::Environment), QStringLiteral("d"));
        QVERIFY(c.isValid()); // the selection follows its environment
        QCOMPARE(c.row(), 1);
        QCOMPARE(c.data().toString(), QStringLiteral("c"));

        // New first row, emptied table.
        model.setEnvironments(named({"0", "a", "c", "d"}));
        QCOMPARE(cell(model, 0, EnvColumn::Environment), QStringLiteral("0"));
        QCOMPARE(c.row(), 2);
        model.setEnvironments({});
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(resets.count(), 0);

        // Rows are in natural order whatever order the read had (svc2
        // before svc10): the same names in another order change nothing.
        model.setEnvironments(named({"svc10", "svc2", "svc1"}));
        QCOMPARE(cell(model, 0, EnvColumn::Environment), QStringLiteral("svc1"));
        QCOMPARE(cell(model, 1, EnvColumn::Environment), QStringLiteral("svc2"));
        QCOMPARE(cell(model, 2, EnvColumn::Environment), QStringLiteral("svc10"));
        model.setEnvironments(named({"svc2", "svc1", "svc10"}));
        QCOMPARE(cell(model, 2, EnvColumn::Environment), QStringLiteral("svc10"));
        QCOMPARE(resets.count(), 0);
        QCOMPARE(model.rowOf(QStringLiteral("svc10")), 2);
        QCOMPARE(model.rowOf(QStringLiteral("nope")), -1);
        // A name twice: only a reset says that honestly.
        model.setEnvironments(named({"svc1", "svc1"}));
        QCOMPARE(resets.count(), 1);
    }

    // A live update replaces, inserts and removes only the rows named; the
    // other rows are neither signalled nor touched, nothing is reset, and
    // persistent indexes (a selection) follow their environments.
    void environmentsUpdateOnlyTheRowsNamed()
    {
        EnvironmentsModel model;
        QAbstractItemModelTester tester(&model, fatal);
        model.setEnvironments(named({"svc1.prod", "svc2.prod", "svc10.prod", "svc20.prod"}));
        const QPersistentModelIndex selected = model.index(2, 0); // svc10.prod
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removes(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
        const auto untouched = model.environments()[0];

        // One changed.
        auto prod2 = environment("svc2.prod");
        prod2.frozen = true;
        prod2.group = "svc2";
        prod2.attention = {{"frozen", "Frozen by erin: holiday", std::nullopt}};
        model.updateEnvironments({QStringLiteral("svc2.prod")}, {prod2});
        QCOMPARE(changes.count(), 1);
        QCOMPARE(changes.at(0).at(0).value<QModelIndex>(), model.index(1, 0));
        QCOMPARE(changes.at(0).at(1).value<QModelIndex>(), model.index(1, int(EnvColumn::Count) - 1));
        QCOMPARE(cell(model, 1, EnvColumn::Frozen), QStringLiteral("frozen"));
        QCOMPARE(model.index(1, 0).data(EnvironmentsModel::Roles::Group).toString(), QStringLiteral("svc2"));
        QCOMPARE(model.index(1, 0).data(EnvironmentsModel::Roles::Attention).toStringList(),
                 QStringList{QStringLiteral("Frozen by erin: holiday")});
        QCOMPARE(model.index(1, 0).data(EnvironmentsModel::Roles::AttentionReasons).toStringList(),
                 QStringList{QStringLiteral("frozen")});
        QCOMPARE(model.index(0, 0).data(EnvironmentsModel::Roles::Attention).toStringList(), QStringList());
        QVERIFY(relctl::sameExceptClock(model.environments()[0], untouched));
        // The same read again: nothing to signal.
        model.updateEnvironments({QStringLiteral("svc2.prod")}, {prod2});
        QCOMPARE(changes.count(), 1);

        // One added, at its place in natural order; one removed (named, not read).
        model.updateEnvironments({QStringLiteral("svc3.prod"), QStringLiteral("svc20.prod")},
                                 {environment("svc3.prod")});
        QCOMPARE(inserts.count(), 1);
        QCOMPARE(inserts.at(0).at(1).toInt(), 2);
        QCOMPARE(removes.count(), 1);
        QCOMPARE(model.rowCount(), 4);
        QStringList order;
        for (int row = 0; row < model.rowCount(); ++row)
            order << cell(model, row, EnvColumn::Environment);
        QCOMPARE(order, (QStringList{QStringLiteral("svc1.prod"), QStringLiteral("svc2.prod"),
                                     QStringLiteral("svc3.prod"), QStringLiteral("svc10.prod")}));
        for (int row = 0; row < model.rowCount(); ++row)
            QCOMPARE(model.rowOf(order[row]), row);
        QCOMPARE(model.rowOf(QStringLiteral("svc20.prod")), -1);
        QCOMPARE(resets.count(), 0);
        QVERIFY(selected.isValid());
        QCOMPARE(selected.data().toString(), QStringLiteral("svc10.prod"));
        QCOMPARE(selected.row(), 3);
        // An unknown name neither read nor held: nothing.
        model.updateEnvironments({QStringLiteral("gone")}, {});
        QCOMPARE(model.rowCount(), 4);
    }

    // "Needs me" set anew marks only the rows that gained or lost the mark,
    // a run of neighbours as one change: a decision taken touches its
    // environment's row, not every row of the organisation.
    void needsMeChangesOnlyTheRowsMarkedOrUnmarked()
    {
        EnvironmentsModel model;
        QAbstractItemModelTester tester(&model, fatal);
        model.setEnvironments(named({"a", "b", "c", "d", "e", "f"}));
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
        const auto rowsOf = [&](int signal) {
            return std::pair{changes.at(signal).at(0).value<QModelIndex>().row(),
                             changes.at(signal).at(1).value<QModelIndex>().row()};
        };
        model.setNeedsMe({QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("e")});
        QCOMPARE(changes.count(), 2);
        QCOMPARE(rowsOf(0), std::pair(1, 2));
        QCOMPARE(rowsOf(1), std::pair(4, 4));
        QVERIFY(changes.at(0).at(2).value<QList<int>>().contains(EnvironmentsModel::Roles::NeedsMe));
        QVERIFY(model.index(4, 0).data(EnvironmentsModel::Roles::NeedsMe).toBool());
        QVERIFY(model.index(4, 0).data(Qt::FontRole).value<QFont>().bold());
        changes.clear();
        // c no longer, f now; b and e unchanged; a name without a row changes no row.
        model.setNeedsMe(
            {QStringLiteral("b"), QStringLiteral("e"), QStringLiteral("f"), QStringLiteral("zz")});
        QCOMPARE(changes.count(), 2);
        QCOMPARE(rowsOf(0), std::pair(2, 2));
        QCOMPARE(rowsOf(1), std::pair(5, 5));
        QVERIFY(!model.index(2, 0).data(EnvironmentsModel::Roles::NeedsMe).toBool());
        changes.clear();
        model.setNeedsMe(model.needsMe());
        QCOMPARE(changes.count(), 0);
    }

    // The organisation's size: a first read of 10,000 rows, a read again of
    // them, and one live update, timed (printed; bounded generously so a
    // slow machine does not fail, but an accidental quadratic step does).
    void environmentsAtTenThousand()
    {
        std::vector<relctl::EnvironmentRow> rows;
        const char* stages[] = {"dev", "test", "staging", "prod", "prod-eu"};
        for (int svc = 1; svc <= 2000; ++svc) {
            for (const char* stage : stages) {
                auto r = environment("svc" + std::to_string(svc) + "." + stage);
                r.group = "svc" + std::to_string(svc);
                r.currentRelease = "1.0." + std::to_string(svc);
                r.publishedBy = "deploy-" + std::to_string(svc);
                r.publishedAt = ms(serverNow - 60'000);
                rows.push_back(std::move(r));
            }
        }
        // As the server sends them: in text order (svc1, svc10, svc100, ...).
        std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
        EnvironmentsModel model;
        QSortFilterProxyModel proxy; // as the views sit on it
        proxy.setSourceModel(&model);
        QElapsedTimer timer;
        timer.start();
        model.setEnvironments(rows);
        const qint64 first = timer.nsecsElapsed();
        QCOMPARE(model.rowCount(), 10'000);
        QCOMPARE(cell(model, 0, EnvColumn::Environment), QStringLiteral("svc1.dev"));
        QCOMPARE(cell(model, 5, EnvColumn::Environment), QStringLiteral("svc2.dev"));
        for (auto& r : rows)
            r.serverNow = ms(serverNow + 1'000);
        rows[4321].frozen = true;
        timer.restart();
        model.setEnvironments(rows);
        const qint64 again = timer.nsecsElapsed();
        auto one = environment("svc1234.prod");
        one.frozen = true;
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
        timer.restart();
        model.updateEnvironments({QStringLiteral("svc1234.prod")}, {one});
        const qint64 live = timer.nsecsElapsed();
        QCOMPARE(changes.count(), 1);
        timer.restart();
        model.tick();
        const qint64 tick = timer.nsecsElapsed();
        qInfo("10,000 environments: first read %.1f ms, read again %.1f ms, one live update %.3f ms, tick "
              "%.3f ms",
              double(first) / 1e6, double(again) / 1e6, double(live) / 1e6, double(tick) / 1e6);
        QVERIFY2(first < 2'000'000'000 && again < 2'000'000'000, "a full read of 10,000 rows took seconds");
        QVERIFY2(live < 50'000'000, "a live update of one row took more than 50 ms");
    }

    void countdownTicks()
    {
        EnvironmentsModel model;
        QAbstractItemModelTester tester(&model, fatal);
        auto rows = twoEnvironments();
        rows[0].leaseExpiresAt = ms(serverNow + 1'200);
        model.setEnvironments(rows);
        const QModelIndex expires = model.index(0, int(EnvColumn::ExpiresIn));
        QCOMPARE(expires.data().toString(), QStringLiteral("2 s"));
        const qint64 before = expires.data(EnvironmentsModel::Roles::RemainingMs).toLongLong();
        QCOMPARE(before, 1'200);

        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
        QTest::qSleep(300); // tick() follows the local steady clock
        model.tick();
        QCOMPARE(changes.count(), 1);
        const auto topLeft = changes.at(0).at(0).value<QModelIndex>();
        const auto bottomRight = changes.at(0).at(1).value<QModelIndex>();
        // Both lease clocks move: how long it has been held, and how long it has left.
        QCOMPARE(topLeft.column(), int(EnvColumn::HeldFor));
        QCOMPARE(bottomRight.column(), int(EnvColumn::ExpiresIn));
        // Only the leased row: a row without a lease has no clock to move.
        QCOMPARE(topLeft.row(), 0);
        QCOMPARE(bottomRight.row(), 0);
        QVERIFY(expires.data(EnvironmentsModel::Roles::RemainingMs).toLongLong() <= before - 300);
        QCOMPARE(expires.data().toString(), QStringLiteral("1 s"));

        model.setNow(serverNow + 1'200);
        QCOMPARE(expires.data().toString(), QStringLiteral("expired"));
        model.setNow(serverNow + 60'000);
        QCOMPARE(expires.data().toString(), QStringLiteral("expired"));
        QVERIFY(!model.index(1, int(EnvColumn::ExpiresIn)).data().isValid()); // no lease: blank
        QCOMPARE(changes.count(), 3);
    }

    void countdownFormat_data()
    {
        QTest::addColumn<qint64>("remainingMs");
        QTest::addColumn<QString>("text");
        QTest::addRow("past") << qint64(-5'000) << QStringLiteral("expired");
        QTest::addRow("zero") << qint64(0) << QStringLiteral("expired");
        QTest::addRow("1 ms rounds up") << qint64(1) << QStringLiteral("1 s");
        QTest::addRow("59 s") << qint64(59'000) << QStringLiteral("59 s");
        QTest::addRow("just over 59 s") << qint64(59'001) << QStringLiteral("1 min 0 s");
        QTest::addRow("61 s") << qint64(61'000) << QStringLiteral("1 min 1 s");
        QTest::addRow("one hour") << qint64(3'600'000) << QStringLiteral("1 h 00 min");
        QTest::addRow("over an hour")
            << qint64(3'725'000) << QStringLiteral("1 h 02 min"); // minutes truncate
    }

    void countdownFormat()
    {
        QFETCH(qint64, remainingMs);
        QFETCH(QString, text);
        QCOMPARE(EnvironmentsModel::formatCountdown(remainingMs), text);
    }

    void auditIdleUntilFiltered()
    {
        AuditModel model;
        std::vector<Request> requests;
        record(model, requests);
        QAbstractItemModelTester tester(&model, fatal); // calls fetchMore() itself
        QVERIFY(!model.canFetchMore({}));
        model.fetchMore({});
        QVERIFY(requests.empty());
    }

    void auditFirstPageRequest()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        relctl::AuditFilter filter;
        filter.env = "prod";
        filter.reason = "stale_generation";
        model.setFilter(filter);
        QVERIFY(model.canFetchMore({}));
        model.fetchMore({});
        model.fetchMore({});

        QCOMPARE(requests.size(), std::size_t(1));
        QCOMPARE(requests[0].request.filter.env, std::optional<std::string>("prod"));
        QCOMPARE(requests[0].request.filter.reason, std::optional<std::string>("stale_generation"));
        QVERIFY(!requests[0].request.filter.job);
        QVERIFY(!requests[0].request.after);
        QVERIFY(!requests[0].request.newerThan);
        QCOMPARE(requests[0].request.sort, relctl::AuditSort{}); // time, newest first
        QCOMPARE(requests[0].request.limit, 500);
    }

    void auditRequestQueued()
    {
        // The worker lives on another thread: the request must survive a queued connection.
        AuditModel model;
        std::vector<Request> requests;
        QObject::connect(
            &model, &AuditModel::fetchRequested, &model,
            [&requests](quint64 serial, const relctl::AuditPageRequest& r) {
                requests.push_back({serial, r});
            },
            Qt::QueuedConnection);
        relctl::AuditFilter filter;
        filter.text = "deploy";
        model.setFilter(filter);
        QVERIFY(requests.empty());
        QTRY_COMPARE(requests.size(), std::size_t(1));
        QCOMPARE(requests[0].request.filter.text, std::optional<std::string>("deploy"));
    }

    void auditAppendAndNextPage()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.setFilter({});
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);

        QVERIFY(model.appendPage(requests.back().serial, page(10'000, 500, true)));
        QCOMPARE(model.rowCount(), 500);
        QCOMPARE(inserts.count(), 1);
        QCOMPARE(inserts.at(0).at(1).toInt(), 0);
        QCOMPARE(inserts.at(0).at(2).toInt(), 499);
        QVERIFY(model.canFetchMore({}));

        model.fetchMore({});
        model.fetchMore({});
        QCOMPARE(requests.size(), std::size_t(2));
        QCOMPARE(requests[1].request.after, std::optional(relctl::AuditCursor{std::nullopt, 9'501}));
        QVERIFY(requests[1].serial != requests[0].serial);
        QVERIFY(!model.appendPage(requests[0].serial, page(9'500, 10, true))); // answered already
        QVERIFY(model.appendPage(requests[1].serial, page(9'500, 500, true)));
        QCOMPARE(model.rowCount(), 1'000);
    }

    void auditStalePageDropped()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        relctl::AuditFilter prod;
        prod.env = "prod";
        model.setFilter(prod);
        model.setFilter({});
        QCOMPARE(requests.size(), std::size_t(2));
        QVERIFY(!requests[1].request.filter.env);

        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        QVERIFY(!model.appendPage(requests[0].serial, page(100, 50, true))); // answers the prod filter
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(inserts.count(), 0);
        QVERIFY(model.hasPendingRequest());
        QVERIFY(model.appendPage(requests[1].serial, page(100, 50, true)));
        QCOMPARE(model.rowCount(), 50);
    }

    void auditEndOfList()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, page(100, 40, false)));
        QVERIFY(!model.canFetchMore({}));
        model.fetchMore({});
        QCOMPARE(requests.size(), std::size_t(1));

        // An empty page ends the list even if it claims more, or views would loop.
        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, relctl::AuditPage{{}, true}));
        QVERIFY(!model.canFetchMore({}));
    }

    // "No events match" is said only once the server said so, and unsaid as
    // soon as a filter changes or a matching event arrives.
    void auditEmptyResult()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        QSignalSpy changes(&model, &AuditModel::emptyResultChanged);
        QVERIFY(!model.isEmptyResult()); // idle
        model.setFilter({});
        QVERIFY(!model.isEmptyResult()); // asked, not answered
        model.requestFailed(requests.back().serial);
        QVERIFY(!model.isEmptyResult()); // a failure is no answer
        model.fetchMore({});
        QVERIFY(model.appendPage(requests.back().serial, pageOf({}, false, 40)));
        QVERIFY(model.isEmptyResult());
        QCOMPARE(changes.count(), 1);
        QCOMPARE(changes.last().at(0).toBool(), true);

        // A matching event arrives: shown, and the list is no longer empty.
        model.eventsArrived();
        QVERIFY(model.appendPage(requests.back().serial, pageOf({41}, false, 41)));
        QCOMPARE(model.rowCount(), 1);
        QVERIFY(!model.isEmptyResult());
        QCOMPARE(changes.last().at(0).toBool(), false);

        // Another filter: unknown until its page arrives, then rows.
        relctl::AuditFilter prod;
        prod.env = "prod";
        model.setFilter(prod);
        QVERIFY(model.appendPage(requests.back().serial, pageOf({}, false, 41)));
        QVERIFY(model.isEmptyResult());
        model.setFilter({});
        QVERIFY(!model.isEmptyResult());
        QVERIFY(model.appendPage(requests.back().serial, pageOf({41}, false, 41)));
        QVERIFY(!model.isEmptyResult());
        QCOMPARE(changes.count(), 4);
    }

    void auditDuplicateEventsDropped()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, page(100, 10, true)));
        model.fetchMore({});
        auto overlapping = page(91, 10, false); // 91 is loaded already
        overlapping.events.insert(overlapping.events.begin() + 5, syntheticEvent(99));
        QTest::ignoreMessage(QtWarningMsg, "AuditModel: dropped 2 audit event(s) already loaded");
        QVERIFY(model.appendPage(requests.back().serial, overlapping));
        QCOMPARE(model.rowCount(), 19);
        QCOMPARE(model.eventAt(10)->id, 90);
        QCOMPARE(model.rowForEvent(82), std::optional<int>(18));
        QCOMPARE(model.rowForEvent(99), std::optional<int>(1));
    }

    void auditRequestFailedAllowsRetry()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.setFilter({});
        model.fetchMore({});
        QCOMPARE(requests.size(), std::size_t(1));
        model.requestFailed(requests[0].serial);
        QVERIFY(!model.hasPendingRequest());
        model.fetchMore({});
        QCOMPARE(requests.size(), std::size_t(2));
        QVERIFY(!requests[1].request.after);
        QVERIFY(!model.appendPage(requests[0].serial, page(10, 10, false)));
    }

    void auditAccessorsAndRoles()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.setFilter({});
        auto p = page(100, 20, true);
        p.events.erase(p.events.begin() + 5); // a gap: id 95 does not exist
        QVERIFY(model.appendPage(requests.back().serial, p));

        QCOMPARE(model.rowForEvent(100), std::optional<int>(0));
        QCOMPARE(model.rowForEvent(94), std::optional<int>(5));
        QCOMPARE(model.rowForEvent(81), std::optional<int>(18));
        QVERIFY(!model.rowForEvent(95));
        QVERIFY(!model.rowForEvent(101));
        QVERIFY(!model.rowForEvent(80));
        QCOMPARE(model.eventAt(5)->id, 94);
        QVERIFY(!model.eventAt(-1));
        QVERIFY(!model.eventAt(19));

        const int refusal = *model.rowForEvent(90);
        const int accepted = *model.rowForEvent(91);
        const auto at = [&](int row, AuditColumn c) { return model.index(row, int(c)); };
        QCOMPARE(at(refusal, AuditColumn::Job).data(AuditModel::Roles::EventId).toLongLong(), 90);
        QCOMPARE(at(refusal, AuditColumn::Job).data(AuditModel::Roles::Rejected).toBool(), true);
        QCOMPARE(at(accepted, AuditColumn::Job).data(AuditModel::Roles::Rejected).toBool(), false);
        QVERIFY(at(refusal, AuditColumn::Outcome).data(Qt::ForegroundRole).canConvert<QBrush>());
        QVERIFY(at(refusal, AuditColumn::Reason).data(Qt::ForegroundRole).isValid());
        QVERIFY(!at(refusal, AuditColumn::Job).data(Qt::ForegroundRole).isValid());
        QVERIFY(!at(accepted, AuditColumn::Outcome).data(Qt::ForegroundRole).isValid());
        QCOMPARE(at(refusal, AuditColumn::Current).data().toString(),
                 QStringLiteral("release 1.4.2, generation 7, token 12"));
        QCOMPARE(at(accepted, AuditColumn::Current).data().toString(), QString());
        // An operator's revoke before any publish: the snapshot says there was none.
        {
            AuditModel lone;
            std::vector<Request> asked;
            record(lone, asked);
            lone.setFilter({});
            relctl::AuditPage revoked;
            revoked.events.push_back(syntheticEvent(7));
            revoked.events.back().operation = "revoke";
            revoked.events.back().currentRelease.reset();
            revoked.events.back().currentGeneration.reset();
            revoked.events.back().currentToken = 3;
            QVERIFY(lone.appendPage(asked.back().serial, revoked));
            QCOMPARE(lone.index(0, int(AuditColumn::Current)).data().toString(),
                     QStringLiteral("nothing published, token 3"));
        }
        QCOMPARE(at(refusal, AuditColumn::Time).data().toString(), QStringLiteral("2023-11-14 22:13:20 UTC"));
        QVERIFY(at(refusal, AuditColumn::Time)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .startsWith(QStringLiteral("Event 90 at 2023-11-14T22:13:20.090Z (UTC)\nLocal time: ")));
        QVERIFY(at(refusal, AuditColumn::Reason)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QLatin1String("stale_generation")));
        QCOMPARE(model.headerData(int(AuditColumn::OpId), Qt::Horizontal).toString(),
                 QStringLiteral("Op id"));
    }

    // Who acted, why, and from where: the operator's actor, the detail
    // readable in its cell and whole in its tooltip, the login and address.
    void auditActorDetailLoginAddress()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.setFilter({});
        auto p = pageOf({12, 11}, false);
        auto& revoke = p.events[0];
        revoke.operation = "revoke";
        revoke.actor = "alice";
        revoke.dbUser = "relctl_manager";
        revoke.clientAddr = "10.0.0.7";
        revoke.detail = R"({"reason":"canary failed"})";
        auto& local = p.events[1];
        local.dbUser = "relctl_job"; // over a local socket: no address
        QVERIFY(model.appendPage(requests.back().serial, p));

        const auto at = [&](int row, AuditColumn c, int role = Qt::DisplayRole) {
            return model.index(row, int(c)).data(role);
        };
        QCOMPARE(at(0, AuditColumn::Actor).toString(), QStringLiteral("alice"));
        QCOMPARE(at(0, AuditColumn::Detail).toString(), QStringLiteral("reason: canary failed"));
        QCOMPARE(at(0, AuditColumn::Detail, Qt::ToolTipRole).toString(),
                 QStringLiteral("{\n  \"reason\": \"canary failed\"\n}"));
        QCOMPARE(at(0, AuditColumn::Login).toString(), QStringLiteral("relctl_manager"));
        QCOMPARE(at(0, AuditColumn::Address).toString(), QStringLiteral("10.0.0.7"));
        QVERIFY(!at(1, AuditColumn::Detail).isValid()); // no detail: a blank cell
        QVERIFY(!at(1, AuditColumn::Address).isValid());
        QVERIFY(at(1, AuditColumn::Address, Qt::ToolTipRole).toString().contains(QLatin1String("local")));
        for (const auto& [column, title] :
             {std::pair{AuditColumn::Detail, "Detail"}, std::pair{AuditColumn::Login, "Login"},
              std::pair{AuditColumn::Address, "Address"}})
            QCOMPARE(model.headerData(int(column), Qt::Horizontal).toString(), QLatin1String(title));
    }

    void auditDetailReadable_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("text");
        // The operator's reason first (core's JSON sorts the keys by name),
        // then the others in the order they came.
        QTest::addRow("unfreeze") << R"({"frozen_by":"alice","reason":"canary failed"})"
                                  << QStringLiteral("reason: canary failed \u00b7 frozen_by: alice");
        QTest::addRow("no reason") << R"({"ttl_ms":600000,"max_ttl_ms":900000})"
                                   << QStringLiteral("ttl_ms: 600000 \u00b7 max_ttl_ms: 900000");
        QTest::addRow("a nested reason stays in its place")
            << R"({"denial":{"by":"bob","reason":"soak"},"a":1})"
            << QStringLiteral("denial.by: bob \u00b7 denial.reason: soak \u00b7 a: 1");
        QTest::addRow("nested keys joined with a dot")
            << R"({"upstream":{"env":"qa","soak_ms":600000},"promotion":7})"
            << QStringLiteral("upstream.env: qa \u00b7 upstream.soak_ms: 600000 \u00b7 promotion: 7");
        QTest::addRow("a list of values")
            << R"({"approved_by":["alice","bob"]})" << QStringLiteral("approved_by: alice, bob");
        QTest::addRow("nulls left out, bool, empty")
            << R"({"a":null,"b":true,"c":{},"d":[]})"
            << QStringLiteral("b: true \u00b7 c: none \u00b7 d: none");
        // Times as every console cell shows them (the server writes microseconds).
        QTest::addRow("a time") << R"({"frozen_at":"2026-12-01T20:09:29.501378+00:00"})"
                                << QStringLiteral("frozen_at: 2026-12-01 20:09:29.501 UTC");
        QTest::addRow("a whole second")
            << R"({"at":"2026-12-01T22:09:29+02:00"})" << QStringLiteral("at: 2026-12-01 20:09:29 UTC");
        QTest::addRow("not a time") << R"({"release":"2026-12-01Tnight"})"
                                    << QStringLiteral("release: 2026-12-01Tnight");
        QTest::addRow("one line") << R"({"reason":"line one\nline two"})"
                                  << QStringLiteral("reason: line one line two");
        // A release by relctl run after a cancel or a lost lease: what it
        // stopped, in words and first, with what that leaves uncertain; the
        // caveat is not repeated as a key (the tooltip has it whole).
        QTest::addRow("a cancelled run's release")
            << R"({"caveat":"external work started by the command is not known to have stopped",)"
               R"("note":"cancelled","state":"released","stopped":{"cause":"cancelled","command_started":true,)"
               R"("escalated":false,"exit_code":143,"killed_by":"SIGTERM","process_group":4242,"signal":"SIGTERM"}})"
            << QStringLiteral("stopped the command (process group 4242, SIGTERM, exit 143); external work it "
                              "started may still be running \u00b7 note: cancelled \u00b7 state: released");
        QTest::addRow("a lost lease, killed")
            << R"({"state":"expired","stopped":{"cause":"lease-lost","escalated":true,"exit_code":137,)"
               R"("killed_by":"SIGKILL","process_group":77,"signal":"SIGTERM"}})"
            << QStringLiteral(
                   "lost its lease and stopped the command (process group 77, SIGTERM then SIGKILL, "
                   "exit 137); external work it started may still be running \u00b7 state: expired");
        QTest::addRow("stopped before it started")
            << R"({"state":"released","stopped":{"cause":"cancelled","command_started":false}})"
            << QStringLiteral("stopped before the command started \u00b7 state: released");
        QTest::addRow("what there is of it")
            << R"({"reason":"ops","stopped":{"signal":"SIGTERM"}})"
            << QStringLiteral(
                   "reason: ops \u00b7 stopped the command (SIGTERM); external work it started may "
                   "still be running");
        QTest::addRow("a plain string") << R"("rolled back")" << QStringLiteral("rolled back");
        QTest::addRow("not JSON") << "not json" << QStringLiteral("not json");
    }

    void auditDetailReadable()
    {
        QFETCH(QString, json);
        QFETCH(QString, text);
        QCOMPARE(relctl::ui::auditcells::readableDetail(json.toStdString()), text);
    }

    // The Detail column of a release whose run was cancelled says what was
    // stopped and what may still be running.
    void auditDetailOfAStoppedCommand()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.setFilter({});
        auto p = pageOf({5}, false);
        p.events[0].operation = "release";
        p.events[0].detail = R"({"caveat":"external work is not known to have stopped","state":"released",)"
                             R"("stopped":{"cause":"cancelled","command_started":true,"exit_code":143,)"
                             R"("killed_by":"SIGTERM","process_group":4242,"signal":"SIGTERM"}})";
        QVERIFY(model.appendPage(requests.back().serial, p));
        const QString cell = model.index(0, int(AuditColumn::Detail)).data().toString();
        QVERIFY2(
            cell.startsWith(QStringLiteral("stopped the command (process group 4242, SIGTERM, exit 143); "
                                           "external work it started may still be running")),
            qPrintable(cell));
        // The server's caveat, whole, in the tooltip.
        QVERIFY(model.index(0, int(AuditColumn::Detail))
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("external work is not known to have stopped")));
    }

    // A status's evidence as the card lists it: the server's keys, values
    // made readable, nested objects below their key, nulls and the caveat
    // left out of the list.
    void jobStatusEvidenceReadable()
    {
        using relctl::ui::jobstatus::EvidenceRow;
        const auto evidence = nlohmann::json::parse(R"({
            "env": "prod", "release": "v2", "generation": 2, "current": false,
            "published_at": "2026-12-01T20:09:29.501378+00:00", "expires_in_ms": 28500,
            "superseded_by": {"job": "job-3", "generation": 3}, "lease": null,
            "stopped": {"signal": "SIGTERM", "exit_code": 143}, "caveat": "check the target"})");
        QStringList lines;
        for (const EvidenceRow& row : relctl::ui::jobstatus::evidenceRows(evidence))
            lines << QString(row.depth * 2, QLatin1Char(' ')) + row.key + QStringLiteral("=") + row.value;
        QCOMPARE(lines, (QStringList{
                            QStringLiteral("current=no"),
                            QStringLiteral("env=prod"),
                            QStringLiteral("expires_in_ms=28.5 s"),
                            QStringLiteral("generation=2"),
                            QStringLiteral("published_at=2026-12-01 20:09:29.501 UTC"),
                            QStringLiteral("release=v2"),
                            QStringLiteral("stopped=stopped the command (SIGTERM, exit 143)"),
                            QStringLiteral("  exit_code=143"),
                            QStringLiteral("  signal=SIGTERM"),
                            QStringLiteral("superseded_by="),
                            QStringLiteral("  generation=3"),
                            QStringLiteral("  job=job-3"),
                        }));
        QCOMPARE(relctl::ui::jobstatus::caveat(evidence), QStringLiteral("check the target"));
        QVERIFY(relctl::ui::jobstatus::evidenceRows(nlohmann::json::object()).isEmpty());
        QCOMPARE(relctl::ui::jobstatus::sentence("unknown: never seen"),
                 QStringLiteral("Unknown: never seen."));
    }

    void jobStatusColours()
    {
        using relctl::ui::jobstatus::stateColour;
        const QColor green = stateColour(QStringLiteral("completed"));
        const QColor blue = stateColour(QStringLiteral("accepted-running"));
        const QColor red = stateColour(QStringLiteral("rejected"));
        const QColor amber = stateColour(QStringLiteral("cancelled"));
        const QColor grey = stateColour(QStringLiteral("unknown"));
        QVERIFY(green.green() > green.red() && green.green() > green.blue());
        QVERIFY(blue.blue() > blue.red() && blue.blue() > blue.green());
        QVERIFY(red.red() > red.green() && red.red() > red.blue());
        QVERIFY(amber.red() > amber.green() && amber.green() > amber.blue());
        QCOMPARE(grey.red(), grey.blue());
        QCOMPARE(stateColour(QStringLiteral("queued")), blue);
        QCOMPARE(stateColour(QStringLiteral("ended-unpublished")), amber);
        // A state this console does not know yet: grey, not a guess.
        QCOMPARE(stateColour(QStringLiteral("some-new-state")), grey);
        QCOMPARE(QSet<QRgb>({green.rgb(), blue.rgb(), red.rgb(), amber.rgb(), grey.rgb()}).size(), 5);
    }

    void auditHundredThousandEvents()
    {
        AuditModel model;
        std::vector<Request> requests;
        record(model, requests);
        constexpr int total = 100'000;
        constexpr int pageSize = 500;
        QElapsedTimer timer;
        qint64 loadNs = 0; // the model's share only: building the synthetic pages is not timed
        model.setFilter({});
        // The worker's part: answer each request with the page below the cursor.
        while (model.canFetchMore({})) {
            const Request r = requests.back();
            const std::int64_t first = (r.request.after ? r.request.after->id : total + 1) - 1;
            const int count = int(std::min<std::int64_t>(pageSize, first));
            auto next = page(first, count, first - count > 0);
            timer.start();
            const bool appended = model.appendPage(r.serial, std::move(next));
            model.fetchMore({});
            loadNs += timer.nsecsElapsed();
            QVERIFY(appended);
        }
        const qint64 loadMs = loadNs / 1'000'000;
        QCOMPARE(model.rowCount(), total);
        QCOMPARE(requests.size(), std::size_t(total / pageSize));

        timer.start();
        for (std::int64_t id = 1; id <= total; id += 997) {
            const auto row = model.rowForEvent(id);
            QVERIFY(row);
            QCOMPARE(*row, int(total - id));
            QCOMPARE(model.eventAt(*row)->id, id);
        }
        QCOMPARE(model.rowForEvent(total), std::optional<int>(0));
        QCOMPARE(model.rowForEvent(1), std::optional<int>(total - 1));
        QVERIFY(!model.rowForEvent(total + 1));
        const qint64 lookupMs = timer.elapsed();

        // The tester walks every cell on every change; attached during the load
        // it would make the load quadratic. It checks the loaded state instead.
        timer.restart();
        QAbstractItemModelTester tester(&model, fatal);
        const qint64 testerMs = timer.elapsed();

        qInfo("%d events in %d pages: load %lld ms, %d lookups %lld ms, model tester pass %lld ms", total,
              total / pageSize, loadMs, total / 997 + 1, lookupMs, testerMs);

        model.setFilter({}); // a reset with the tester attached
        QCOMPARE(model.rowCount(), 0);
    }

    // A click on a sortable column asks the server for the first page under
    // that sort, after a reset; other columns change nothing.
    void auditSortAsksTheServer()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.sort(int(AuditColumn::Job), Qt::AscendingOrder); // before any filter: remembered, no request
        QVERIFY(requests.empty());
        model.setFilter({});
        QCOMPARE(requests.back().request.sort, (relctl::AuditSort{relctl::AuditSort::Column::Job, false}));
        QVERIFY(model.appendPage(requests.back().serial, page(100, 10, true)));
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);

        model.sort(int(AuditColumn::Generation), Qt::DescendingOrder);
        QCOMPARE(resets.count(), 1);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(requests.size(), std::size_t(2));
        QCOMPARE(requests[1].request.sort, (relctl::AuditSort{relctl::AuditSort::Column::Generation, true}));
        QVERIFY(!requests[1].request.after);
        QCOMPARE(model.sortColumn(), int(AuditColumn::Generation));
        QCOMPARE(model.sortOrder(), Qt::DescendingOrder);
        QVERIFY(!model.appendPage(requests[0].serial, page(90, 10, false))); // the old sort's page

        // The next page continues after the last row's key and id.
        auto first = page(50, 3, true);
        first.events.back().generation = 7;
        QVERIFY(model.appendPage(requests[1].serial, first));
        model.fetchMore({});
        QCOMPARE(requests.back().request.after, std::optional(relctl::AuditCursor{"7", 48}));
        QCOMPARE(requests.back().request.sort.column, relctl::AuditSort::Column::Generation);

        for (const AuditColumn c :
             {AuditColumn::Current, AuditColumn::OpId, AuditColumn::Pid, AuditColumn::JobUrl,
              AuditColumn::Login, AuditColumn::Address, AuditColumn::Detail}) {
            QVERIFY(!AuditModel::isSortable(int(c)));
            model.sort(int(c), Qt::AscendingOrder);
        }
        model.sort(int(AuditColumn::Generation), Qt::DescendingOrder); // unchanged
        QCOMPARE(resets.count(), 1);
        QCOMPARE(model.sortColumn(), int(AuditColumn::Generation));
        for (const AuditColumn c :
             {AuditColumn::Time, AuditColumn::Environment, AuditColumn::Operation, AuditColumn::Outcome,
              AuditColumn::Reason, AuditColumn::Job, AuditColumn::Release, AuditColumn::Generation,
              AuditColumn::Token, AuditColumn::Host, AuditColumn::Actor})
            QVERIFY(AuditModel::isSortable(int(c)));
    }

    // Newest first, new events are inserted on top (no reset): a persistent
    // index and the selection stay on the same event.
    void auditNewerEventsInsertedOnTop()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.setPageSize(3);
        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, pageOf({100, 98, 97}, true, 101)));
        QItemSelectionModel selection(&model);
        selection.select(model.index(1, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        const QPersistentModelIndex held(model.index(1, 0)); // event 98
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);

        model.eventsArrived();
        QCOMPARE(requests.size(), std::size_t(2));
        // From the first page's horizon (101), reaching back over ids that may commit late.
        QCOMPARE(requests[1].request.newerThan,
                 std::optional<std::int64_t>(std::max<std::int64_t>(0, 101 - AuditModel::lateCommitWindow)));
        // More than a page arrived: oldest first, page by page; loaded events are skipped,
        // and the next page continues from the last one read.
        QVERIFY(model.appendPage(requests[1].serial, pageOf({98, 100, 103}, true, 110)));
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(requests.size(), std::size_t(3));
        QCOMPARE(requests[2].request.newerThan, std::optional<std::int64_t>(103));
        QVERIFY(model.appendPage(requests[2].serial, pageOf({104, 106, 108}, false, 112)));
        QCOMPARE(requests.size(), std::size_t(3)); // caught up

        QCOMPARE(resets.count(), 0);
        std::vector<std::int64_t> order;
        for (int row = 0; row < model.rowCount(); ++row)
            order.push_back(model.eventAt(row)->id);
        QCOMPARE(order, (std::vector<std::int64_t>{108, 106, 104, 103, 100, 98, 97}));
        QCOMPARE(held.row(), 5);
        QCOMPARE(held.data(AuditModel::EventId).toLongLong(), 98);
        QCOMPARE(selection.selectedRows().size(), 1);
        QCOMPARE(selection.selectedRows().at(0).data(AuditModel::EventId).toLongLong(), 98);
        QCOMPARE(model.rowForEvent(98), std::optional<int>(5));
        QCOMPARE(model.rowForEvent(108), std::optional<int>(0));

        // Paging on at the bottom still continues after the oldest row.
        model.fetchMore({});
        QCOMPARE(requests.back().request.after, std::optional(relctl::AuditCursor{std::nullopt, 97}));
        QVERIFY(!requests.back().request.newerThan);
        // Events arriving while that page is out are asked for after it, from the horizon.
        model.eventsArrived();
        QCOMPARE(requests.size(), std::size_t(4));
        QVERIFY(model.appendPage(requests[3].serial, pageOf({96, 95}, false, 120)));
        QCOMPARE(requests.size(), std::size_t(5));
        QCOMPARE(requests[4].request.newerThan,
                 std::optional<std::int64_t>(std::max<std::int64_t>(0, 112 - AuditModel::lateCommitWindow)));
        QVERIFY(model.appendPage(requests[4].serial, pageOf({}, false, 120)));
        QCOMPARE(model.rowCount(), 9);
        QCOMPARE(model.rowForEvent(95), std::optional<int>(8));
        QCOMPARE(held.row(), 5);
    }

    // While the reviewer reads, new events are held, counted and offered,
    // not inserted above their row; they go on top when asked for (or when
    // holding ends), each once, in their place.
    void auditNewerEventsHeldWhileReading()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        QSignalSpy pending(&model, &AuditModel::newEventsPending);
        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, pageOf({100, 98, 97}, false, 100)));
        const QPersistentModelIndex held(model.index(1, 0)); // event 98, being read
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.setHoldNewEvents(true);
        QVERIFY(model.holdsNewEvents());

        model.eventsArrived();
        QVERIFY(model.appendPage(requests.back().serial, pageOf({97, 98, 100, 101, 102}, false, 102)));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(held.row(), 1);
        QCOMPARE(model.pendingNewEvents(), 2);
        QCOMPARE(pending.last().at(0).toInt(), 2);
        // The next round reaches back over the held ones and a late commit (99): counted once.
        model.eventsArrived();
        QCOMPARE(requests.back().request.newerThan,
                 std::optional<std::int64_t>(std::max<std::int64_t>(0, 102 - AuditModel::lateCommitWindow)));
        QVERIFY(model.appendPage(requests.back().serial, pageOf({99, 101, 102, 103}, false, 103)));
        QCOMPARE(model.pendingNewEvents(), 4);
        QCOMPARE(model.rowCount(), 3);

        model.showNewEvents();
        QCOMPARE(resets.count(), 0);
        QCOMPARE(model.pendingNewEvents(), 0);
        QCOMPARE(pending.last().at(0).toInt(), 0);
        std::vector<std::int64_t> order;
        for (int row = 0; row < model.rowCount(); ++row)
            order.push_back(model.eventAt(row)->id);
        QCOMPARE(order, (std::vector<std::int64_t>{103, 102, 101, 100, 99, 98, 97}));
        QCOMPARE(held.data(AuditModel::EventId).toLongLong(), 98);
        QCOMPARE(model.rowForEvent(99), std::optional<int>(4));
        QVERIFY(model.holdsNewEvents()); // showing them did not end the reading

        // Holding ends (back at the top): what was held goes on top at once.
        model.eventsArrived();
        QVERIFY(model.appendPage(requests.back().serial, pageOf({104}, false, 104)));
        QCOMPARE(model.rowCount(), 7);
        QCOMPARE(model.pendingNewEvents(), 1);
        model.setHoldNewEvents(false);
        QCOMPARE(model.pendingNewEvents(), 0);
        QCOMPARE(model.eventAt(0)->id, 104);
        // Not holding: in place at once, as before.
        model.eventsArrived();
        QVERIFY(model.appendPage(requests.back().serial, pageOf({105}, false, 105)));
        QCOMPARE(model.eventAt(0)->id, 105);
        QCOMPARE(model.pendingNewEvents(), 0);

        // A reset forgets what was held.
        model.setHoldNewEvents(true);
        model.eventsArrived();
        QVERIFY(model.appendPage(requests.back().serial, pageOf({106}, false, 106)));
        QCOMPARE(model.pendingNewEvents(), 1);
        model.reload();
        QCOMPARE(model.pendingNewEvents(), 0);
        model.setHoldNewEvents(false);
        QCOMPARE(model.rowCount(), 0);
    }

    // An event whose id was taken before the horizon but which committed after
    // the page was read (another environment's write, in flight) is found by
    // the next round and put in its place, not on top; rows keep their events.
    void auditLateCommitInsertedInPlace()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.setFilter({});
        // Event 99 was not yet committed when this page was read.
        QVERIFY(model.appendPage(requests.back().serial, pageOf({1000, 998, 997}, false, 1000)));
        QItemSelectionModel selection(&model);
        selection.select(model.index(1, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        const QPersistentModelIndex held(model.index(1, 0)); // event 998
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);

        model.eventsArrived();
        QCOMPARE(requests.back().request.newerThan,
                 std::optional<std::int64_t>(1000 - AuditModel::lateCommitWindow));
        QVERIFY(model.appendPage(requests.back().serial, pageOf({997, 998, 999, 1000, 1002}, false, 1002)));

        QCOMPARE(resets.count(), 0);
        std::vector<std::int64_t> order;
        for (int row = 0; row < model.rowCount(); ++row)
            order.push_back(model.eventAt(row)->id);
        QCOMPARE(order, (std::vector<std::int64_t>{1002, 1000, 999, 998, 997}));
        QCOMPARE(inserted.count(), 2); // 999 in its place, 1002 on top
        QCOMPARE(inserted.at(0).at(1).toInt(), 1);
        QCOMPARE(inserted.at(1).at(1).toInt(), 0);
        for (int row = 0; row < model.rowCount(); ++row)
            QCOMPARE(model.rowForEvent(order[std::size_t(row)]), std::optional<int>(row));
        QCOMPARE(held.row(), 3);
        QCOMPARE(held.data(AuditModel::EventId).toLongLong(), 998);
        QCOMPARE(selection.selectedRows().at(0).data(AuditModel::EventId).toLongLong(), 998);
        QCOMPARE(model.index(2, 0).data(AuditModel::EventId).toLongLong(), 999);
    }

    // Oldest first, new events belong after the last row: fetchMore() picks
    // them up once the list had ended.
    void auditNewerEventsOldestFirstFetchMore()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.sort(int(AuditColumn::Time), Qt::AscendingOrder);
        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, pageOf({1, 2, 3}, false, 3)));
        QVERIFY(!model.canFetchMore({}));
        model.eventsArrived();
        QCOMPARE(requests.size(), std::size_t(1)); // nothing asked yet: the view asks when it scrolls
        QVERIFY(model.canFetchMore({}));
        model.fetchMore({});
        QCOMPARE(requests.back().request.after, std::optional(relctl::AuditCursor{std::nullopt, 3}));
        QVERIFY(model.appendPage(requests.back().serial, pageOf({4}, false, 4)));
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.rowForEvent(4), std::optional<int>(3));
    }

    // Under other sorts new events are counted, not shown, until reload().
    void auditNewerEventsCountedUnderOtherSorts()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        QSignalSpy pending(&model, &AuditModel::newEventsPending);
        model.sort(int(AuditColumn::Job), Qt::AscendingOrder);
        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, pageOf({5, 9, 2}, true, 10)));
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.eventsArrived();
        QCOMPARE(requests.back().request.newerThan, std::optional<std::int64_t>(10));
        QVERIFY(model.appendPage(requests.back().serial, pageOf({11, 14}, false, 15)));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.pendingNewEvents(), 2);
        QCOMPARE(pending.count(), 1);
        QCOMPARE(pending.last().at(0).toInt(), 2);
        model.eventsArrived();
        QCOMPARE(requests.back().request.newerThan, std::optional<std::int64_t>(15));
        QVERIFY(model.appendPage(requests.back().serial, pageOf({16}, false, 16)));
        QCOMPARE(model.pendingNewEvents(), 3);
        QCOMPARE(resets.count(), 0);

        model.showNewEvents(); // under this sort, the list is read again
        QCOMPARE(resets.count(), 1);
        QCOMPARE(model.pendingNewEvents(), 0);
        QCOMPARE(pending.last().at(0).toInt(), 0);
        QVERIFY(!requests.back().request.after && !requests.back().request.newerThan);
        QCOMPARE(requests.back().request.sort.column, relctl::AuditSort::Column::Job);
    }

    // rowForEvent() under a sort whose ids are in no order.
    void auditRowForEventUnderAnySort()
    {
        AuditModel model;
        QAbstractItemModelTester tester(&model, fatal);
        std::vector<Request> requests;
        record(model, requests);
        model.sort(int(AuditColumn::Host), Qt::DescendingOrder);
        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, pageOf({7, 42, 3, 19}, true, 50)));
        model.fetchMore({});
        QVERIFY(model.appendPage(requests.back().serial, pageOf({1, 50, 8}, false, 50)));
        const std::int64_t ids[] = {7, 42, 3, 19, 1, 50, 8};
        for (int row = 0; row < 7; ++row) {
            QCOMPARE(model.rowForEvent(ids[row]), std::optional<int>(row));
            QCOMPARE(model.eventAt(row)->id, ids[row]);
        }
        QVERIFY(!model.rowForEvent(2));
        model.reload();
        QVERIFY(!model.rowForEvent(7));
    }

    void manifestDiffKeyByKey()
    {
        using relctl::ui::ManifestChange;
        const nlohmann::json before{
            {"image", "app:v1"}, {"replicas", 3}, {"features", {{"a", true}, {"b", 1}}}, {"gone", "x"}};
        const nlohmann::json after{
            {"image", "app:v2"}, {"replicas", 3}, {"features", {{"a", false}, {"b", 1}}}, {"new", {1, 2}}};
        const QList<ManifestChange> d = relctl::ui::diffManifests(before, after);
        QStringList seen;
        for (const ManifestChange& c : d)
            seen << QStringLiteral("%1 %2 %3 %4").arg(int(c.kind)).arg(c.key, c.before, c.after);
        const QStringList expected{
            QStringLiteral("%1 features.a true false").arg(int(ManifestChange::Kind::Changed)),
            QStringLiteral("%1 features.b 1 1").arg(int(ManifestChange::Kind::Unchanged)),
            QStringLiteral("%1 gone \"x\" ").arg(int(ManifestChange::Kind::Removed)),
            QStringLiteral("%1 image \"app:v1\" \"app:v2\"").arg(int(ManifestChange::Kind::Changed)),
            QStringLiteral("%1 new  [1,2]").arg(int(ManifestChange::Kind::Added)),
            QStringLiteral("%1 replicas 3 3").arg(int(ManifestChange::Kind::Unchanged)),
        };
        QCOMPARE(seen, expected);
        QCOMPARE(relctl::ui::changeCount(d), 4);
        // Nothing published: every leaf is added (image, replicas, features.a, features.b, new).
        QCOMPARE(relctl::ui::changeCount(relctl::ui::diffManifests(nullptr, after)), 5);
        QVERIFY(relctl::ui::manifestDiffHtml(relctl::ui::diffManifests(after, after), QStringLiteral("a"),
                                             QStringLiteral("b"))
                    .contains(QStringLiteral("the same")));
    }

    void manifestHistoryNewestFirstWithRollbacks()
    {
        relctl::ui::ManifestHistoryModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        relctl::ManifestHistory h;
        h.env = "staging";
        h.highWaterGeneration = 14;
        h.currentManifestId = 21;
        const auto entry = [](std::int64_t id, std::int64_t generation) {
            relctl::ManifestHistoryEntry e;
            e.manifest.id = id;
            e.manifest.release = "v1." + std::to_string(generation);
            e.manifest.generation = generation;
            e.manifest.job = "pipeline-" + std::to_string(100 + generation);
            e.manifest.publishedAt = *relctl::Timestamp::parse("2026-11-30T12:00:00.123456+00:00");
            e.kind = "publish";
            return e;
        };
        h.history = {entry(20, 11), entry(21, 13), entry(22, 14), entry(21, 13)};
        h.history.back().kind = "rollback";
        h.history.back().rollback = relctl::RollbackRecord{5,
                                                           "release-manager",
                                                           "smoke test",
                                                           *relctl::Timestamp::parse("2026-11-30T12:05:00Z"),
                                                           40,
                                                           relctl::ReplacedManifest{22, "v1.14", 14}};
        model.setHistory(h);
        QCOMPARE(model.rowCount(), 4);
        // Newest first: the rollback is on top and current; the publish of
        // the same manifest below it is not marked current.
        QVERIFY(model.index(0, 0).data(relctl::ui::ManifestHistoryModel::IsRollback).toBool());
        QVERIFY(model.index(0, 0).data(relctl::ui::ManifestHistoryModel::IsCurrent).toBool());
        QVERIFY(!model.index(2, 0).data(relctl::ui::ManifestHistoryModel::IsCurrent).toBool());
        QCOMPARE(model.currentEntry(), model.entryAt(0));
        const auto column = [&](int row, relctl::ui::ManifestHistoryModel::Column c) {
            return model.index(row, int(c)).data().toString();
        };
        using C = relctl::ui::ManifestHistoryModel::Column;
        QVERIFY(column(0, C::Kind).contains(QStringLiteral("rollback")));
        QVERIFY(column(0, C::Kind).contains(QStringLiteral("current")));
        QCOMPARE(column(0, C::By), QStringLiteral("release-manager"));
        QCOMPARE(column(0, C::Note), QStringLiteral("replaced v1.14 (generation 14): smoke test"));
        QCOMPARE(column(1, C::Release), QStringLiteral("v1.14"));
        QCOMPARE(column(3, C::At), QStringLiteral("2026-11-30 12:00:00 UTC"));
    }

    void environmentsGoStaleWhileTheDatabaseIsUnreachable()
    {
        EnvironmentsModel model;
        QAbstractItemModelTester tester(&model, fatal);
        auto rows = twoEnvironments();
        rows[0].leaseExpiresAt = ms(serverNow + 10'000);
        model.setEnvironments(rows);
        const QModelIndex expires = model.index(0, int(EnvColumn::ExpiresIn));
        QVERIFY(!expires.data(Qt::ForegroundRole).isValid());
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
        model.setStale(true);
        QCOMPARE(changes.count(), 1); // every cell: all of them are greyed
        QVERIFY(expires.data(Qt::ForegroundRole).value<QBrush>().color() != QColor(Qt::black));
        QVERIFY(expires.data(Qt::ToolTipRole).toString().contains(QLatin1String("unreachable")));
        // The countdown stops: what was read is not aged as if it were live.
        const QString shown = expires.data().toString();
        model.setNow(serverNow + 9'000);
        model.tick();
        QCOMPARE(expires.data().toString(), shown);
        QCOMPARE(changes.count(), 1);
        // The next read is current again.
        model.setEnvironments(rows);
        QVERIFY(!model.isStale());
        QVERIFY(!expires.data(Qt::ForegroundRole).isValid());
        model.setNow(serverNow + 9'000);
        QCOMPARE(expires.data().toString(), QStringLiteral("1 s"));
    }

    void queueListsWaitingCandidatesInServingOrder()
    {
        relctl::ui::QueueModel model;
        QAbstractItemModelTester tester(&model, fatal);
        auto rows = twoEnvironments();
        rows[0].policy = "newest";
        relctl::QueuedCandidate low;
        low.candidate = 41;
        low.position = 1;
        low.job = "deploy-43";
        low.release = "1.4.4";
        low.generation = 8;
        low.queuedAt = ms(serverNow - 103'000);
        low.skippedBy = 5;
        relctl::QueuedCandidate high = low;
        high.candidate = 42;
        high.position = 2;
        high.job = "deploy-44";
        high.release = "1.4.5";
        high.generation = 9;
        high.queuedAt = ms(serverNow - 2'500);
        high.skippedBy.reset();
        high.wins = 5;
        rows[0].queue = {low, high};
        relctl::QueuedCandidate only;
        only.candidate = 50;
        only.position = 1;
        only.job = "stage-1";
        only.release = "2.0";
        only.generation = 1;
        only.queuedAt = ms(serverNow);
        rows[1].queue = {only};
        model.setEnvironments(rows);

        using Q = relctl::ui::QueueModel::Column;
        const auto at = [&](int row, Q c) { return model.index(row, int(c)).data().toString(); };
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(at(0, Q::Environment), QStringLiteral("prod"));
        QCOMPARE(at(0, Q::Job), QStringLiteral("deploy-43"));
        QCOMPARE(at(0, Q::Position), QStringLiteral("1"));
        QCOMPARE(at(0, Q::Waiting), QStringLiteral("1 min 43 s"));
        QVERIFY2(at(0, Q::Standing).contains(QLatin1String("next")) &&
                     at(0, Q::Standing).contains(QLatin1String("#5")),
                 qPrintable(at(0, Q::Standing)));
        QCOMPARE(at(1, Q::Generation), QStringLiteral("9"));
        QVERIFY(at(1, Q::Standing).startsWith(QLatin1String("wins supersession #5")));
        QCOMPARE(at(2, Q::Environment), QStringLiteral("staging"));
        QCOMPARE(at(2, Q::Standing), QStringLiteral("next"));
        QCOMPARE(model.index(1, 0).data(relctl::ui::QueueModel::Candidate).toLongLong(), 42);

        // One environment's queue only.
        model.setEnvironmentFilter(QStringLiteral("staging"));
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(at(0, Q::Job), QStringLiteral("stage-1"));
        model.setEnvironmentFilter({});
        QCOMPARE(model.rowCount(), 3);

        // Waiting times follow the clock, and stop while stale.
        model.setNow(serverNow + 60'000);
        QCOMPARE(at(2, Q::Waiting), QStringLiteral("1 min 0 s"));
        model.setStale(true);
        model.setNow(serverNow + 120'000);
        QCOMPARE(at(2, Q::Waiting), QStringLiteral("1 min 0 s"));
        QVERIFY(model.index(2, 0).data(Qt::ForegroundRole).isValid());
    }

    void durationsReadAsAPersonSaysThem_data()
    {
        QTest::addColumn<qint64>("ms");
        QTest::addColumn<QString>("text");
        QTest::addRow("ms") << qint64(850) << QStringLiteral("850 ms");
        QTest::addRow("seconds") << qint64(1'250) << QStringLiteral("1.25 s");
        QTest::addRow("tens of seconds") << qint64(12'400) << QStringLiteral("12.4 s");
        QTest::addRow("minutes") << qint64(103'292) << QStringLiteral("1 min 43 s");
        QTest::addRow("hours") << qint64(2 * 3'600'000 + 5 * 60'000) << QStringLiteral("2 h 05 min");
        QTest::addRow("days") << qint64(3 * 86'400'000LL + 4 * 3'600'000) << QStringLiteral("3 d 4 h");
    }

    // A preset that follows the clock is computed from now on every read of
    // the trail: "last hour" chosen at 10:00 and reloaded at 11:30 reads
    // from 10:30, not from 09:00 (the hour before it was chosen).
    void auditRangeFollowsTheClockOnEveryRead()
    {
        using relctl::ui::auditrange::Preset;
        AuditModel model;
        std::vector<Request> requests;
        record(model, requests);
        qint64 now = 1'796'558'400'000; // 2026-12-06 12:00:00 UTC
        model.setClock([&now] { return now; });
        model.setFilter({}, Preset::LastHour);
        QCOMPARE(requests.back().request.filter.from, ms(now - 3'600'000));
        QVERIFY(!requests.back().request.filter.to);
        now += 90 * 60'000;
        model.reload();
        QCOMPARE(requests.back().request.filter.from, ms(now - 3'600'000));
        model.sort(int(AuditColumn::Environment), Qt::AscendingOrder); // a new sort reads again too
        QCOMPARE(requests.back().request.filter.from, ms(now - 3'600'000));

        model.setFilter({}, Preset::Last7Days);
        QCOMPARE(requests.back().request.filter.from, ms(now - 7 * 86'400'000LL));
        model.setFilter({}, Preset::Today);
        QCOMPARE(requests.back().request.filter.from, ms(1'796'515'200'000)); // 2026-12-06 00:00 UTC
        QVERIFY(!requests.back().request.filter.to);
        model.setFilter({}, Preset::Yesterday);
        QCOMPARE(requests.back().request.filter.from, ms(1'796'515'200'000 - 86'400'000));
        QCOMPARE(requests.back().request.filter.to, relctl::Timestamp::fromMicros(1'796'515'200'000'000 - 1));

        // Any time sets no range; a fixed range is kept as given, on reload too.
        model.setFilter({}, Preset::AnyTime);
        QVERIFY(!requests.back().request.filter.from && !requests.back().request.filter.to);
        relctl::AuditFilter fixed;
        fixed.from = ms(1000);
        fixed.to = ms(2000);
        model.setFilter(fixed);
        now += 3'600'000;
        model.reload();
        QCOMPARE(requests.back().request.filter.from, ms(1000));
        QCOMPARE(requests.back().request.filter.to, ms(2000));
    }

    void auditRangeReadsTypedTimesAsUtc()
    {
        using relctl::ui::auditrange::parseTyped;
        const qint64 at = 1'796'567'400'000; // 2026-12-06 14:30:00 UTC
        QCOMPARE(parseTyped(QStringLiteral("2026-12-06 14:30"))->atMs, at);
        QCOMPARE(parseTyped(QStringLiteral("2026-12-06 14:30"))->lengthMs, 60'000);
        QCOMPARE(parseTyped(QStringLiteral(" 2026-12-06 14:30:15 "))->atMs, at + 15'000);
        QCOMPARE(parseTyped(QStringLiteral("2026-12-06 14:30:15"))->lengthMs, 1000);
        QCOMPARE(parseTyped(QStringLiteral("2026-12-06T14:30:15Z"))->atMs, at + 15'000);
        QCOMPARE(parseTyped(QStringLiteral("2026-12-06 14:30:15 UTC"))->atMs, at + 15'000);
        QCOMPARE(parseTyped(QStringLiteral("2026-12-06 9:05"))->atMs, at - (5 * 60 + 25) * 60'000);
        QCOMPARE(parseTyped(QStringLiteral("2026-12-06"))->lengthMs, 86'400'000);
        for (const char* wrong : {"", "14:30", "2026-13-06 14:30", "2026-12-06 25:00", "2026-12-06 14:30:61",
                                  "yesterday", "2026-12-06 14:30 CET", "2026-12-06 14"})
            QVERIFY2(!parseTyped(QString::fromLatin1(wrong)), wrong);

        // Both ends inclusive: "to 14:31" holds the whole of that minute.
        const auto range = relctl::ui::auditrange::typedRange(QStringLiteral("2026-12-06 14:30"),
                                                              QStringLiteral("2026-12-06 14:31"));
        QVERIFY(range);
        QCOMPARE(range->first, ms(at));
        QCOMPARE(range->second, relctl::Timestamp::fromMicros((at + 120'000) * 1000 - 1));
        QVERIFY(!relctl::ui::auditrange::typedRange(QStringLiteral("2026-12-06 14:31"),
                                                    QStringLiteral("2026-12-06 14:30")));
        QVERIFY(!relctl::ui::auditrange::typedRange(QStringLiteral("2026-12-06 14:31"), QStringLiteral("x")));

        relctl::AuditFilter around;
        relctl::ui::auditrange::around(at, around);
        QCOMPARE(around.from, ms(at - 600'000));
        QCOMPARE(around.to, ms(at + 600'000));
    }

    // The count is never a guess: exact once the whole result is loaded, "at
    // least" while more pages remain, and the new events not shown said apart.
    void auditCountSaysOnlyWhatIsKnown()
    {
        AuditModel model;
        std::vector<Request> requests;
        record(model, requests);
        QSignalSpy changed(&model, &AuditModel::countChanged);
        model.setPageSize(500);
        model.setFilter({});
        QCOMPARE(model.countText(), QString()); // not answered yet
        QVERIFY(model.appendPage(requests.back().serial, page(10'000, 500, true)));
        QVERIFY(!model.isComplete());
        QCOMPARE(model.countText(), QStringLiteral("at least 500 events"));
        model.fetchMore({});
        QVERIFY(model.appendPage(requests.back().serial, page(9'500, 500, true)));
        model.fetchMore({});
        QVERIFY(model.appendPage(requests.back().serial, page(9'000, 234, false)));
        QVERIFY(model.isComplete());
        QCOMPARE(model.countText(), QStringLiteral("1,234 events"));
        QVERIFY(changed.count() >= 4);

        // Held while the reviewer reads: counted apart, not added.
        model.setHoldNewEvents(true);
        model.eventsArrived();
        relctl::AuditPage newer = pageOf({10'001, 10'002}, false, 10'002);
        QVERIFY(model.appendPage(requests.back().serial, newer));
        QCOMPARE(model.countText(), QStringLiteral("1,234 events (2 new not shown)"));
        model.setHoldNewEvents(false);
        QCOMPARE(model.countText(), QStringLiteral("1,236 events"));

        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, page(5, 1, false)));
        QCOMPARE(model.countText(), QStringLiteral("1 event"));
        model.setFilter({});
        QVERIFY(model.appendPage(requests.back().serial, relctl::AuditPage{}));
        QCOMPARE(model.countText(), QStringLiteral("0 events"));
    }

    // Copied rows paste as a table: a header line, then one line per event,
    // tab-separated, the cells as the table shows them.
    void auditRowsCopyAsTabSeparatedText()
    {
        relctl::Event e = syntheticEvent(20);
        e.at = ms(1'796'567'415'000); // 2026-12-06 14:30:15 UTC
        e.actor = "alice";
        e.detail = R"({"reason":"canary\tfailed\non two lines"})";
        const relctl::Event f = syntheticEvent(21);
        const QString text = relctl::ui::auditcells::tabSeparated({&e, &f});
        const QStringList lines = text.split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 4); // header, two rows, the final newline
        QVERIFY(lines[3].isEmpty());
        const QStringList header = lines[0].split(QLatin1Char('\t'));
        QCOMPARE(header.size(), int(AuditColumn::Count));
        QCOMPARE(header[0], QStringLiteral("Time"));
        QCOMPARE(header[int(AuditColumn::Actor)], QStringLiteral("Actor"));
        const QStringList cells = lines[1].split(QLatin1Char('\t'));
        QCOMPARE(cells.size(), int(AuditColumn::Count));
        QCOMPARE(cells[0], QStringLiteral("2026-12-06 14:30:15 UTC"));
        QCOMPARE(cells[int(AuditColumn::Outcome)], QStringLiteral("rejected"));
        QCOMPARE(cells[int(AuditColumn::Actor)], QStringLiteral("alice"));
        QCOMPARE(cells[int(AuditColumn::Detail)], QStringLiteral("reason: canary failed on two lines"));
        QCOMPARE(cells[int(AuditColumn::Generation)], QStringLiteral("20"));
        QCOMPARE(lines[2].split(QLatin1Char('\t')).value(int(AuditColumn::Job)), QStringLiteral("deploy-21"));
    }

    // The server's sentences name times as PostgreSQL prints them; the
    // console shows them as it shows every time.
    void serverTimesInSentencesReadAsTheConsolesTimes()
    {
        using relctl::ui::formatTimesIn;
        QCOMPARE(
            formatTimesIn(QStringLiteral("published at 2026-12-01 20:09:29.501378+00 and still current")),
            QStringLiteral("published at 2026-12-01 20:09:29.501 UTC and still current"));
        QCOMPARE(formatTimesIn(QStringLiteral("from 2026-12-01 20:09:29+00 to 2026-12-01T21:00:00.5+01:00")),
                 QStringLiteral("from 2026-12-01 20:09:29 UTC to 2026-12-01 20:00:00.500 UTC"));
        QCOMPARE(formatTimesIn(QStringLiteral("generation 9, no time 2026-12-01 20:09")),
                 QStringLiteral("generation 9, no time 2026-12-01 20:09"));
        QCOMPARE(relctl::ui::jobstatus::sentence("completed: recorded at 2026-12-01 20:09:29.501378+00"),
                 QStringLiteral("Completed: recorded at 2026-12-01 20:09:29.501 UTC."));
        // In evidence too, in either of the server's forms.
        QCOMPARE(relctl::ui::auditcells::readableText("2026-12-01 20:09:29+00"),
                 QStringLiteral("2026-12-01 20:09:29 UTC"));
        QCOMPARE(relctl::ui::auditcells::readableText("2026-12-01T20:09:29.501378+00:00"),
                 QStringLiteral("2026-12-01 20:09:29.501 UTC"));
    }

    void durationsReadAsAPersonSaysThem()
    {
        QFETCH(qint64, ms);
        QFETCH(QString, text);
        QCOMPARE(relctl::ui::formatDuration(ms), text);
    }
};

QTEST_GUILESS_MAIN(TestModels)
#include "test_models.moc"
