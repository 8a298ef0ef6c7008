// The lease timeline at an organisation's scale: lanes in natural order,
// grouped under collapsible headers, a collapsed group summarised on one
// lane, the lane filter the search box drives, and live updates that replace
// only the lanes they name. No database: the widget is fed TimelineSlices.

#include "timelinelanes.h"
#include "timelinelegend.h"
#include "timelinepainter.h"
#include "timelinerows.h"
#include "timelinewidget.h"

#include <QImage>
#include <QScrollBar>
#include <QSignalSpy>
#include <QToolTip>
#include <QtTest>

using relctl::ui::TimelineColors;
using relctl::ui::TimelineGeometry;
using relctl::ui::TimelineWidget;

namespace {

constexpr std::int64_t kBase = 1'700'000'123'456;
constexpr std::int64_t kMinute = 60 * 1000;

relctl::Timestamp ms(std::int64_t n)
{
    return relctl::Timestamp::fromMillis(n);
}

relctl::LeaseSpan lease(const std::string& env, std::int64_t token, std::int64_t from, std::int64_t to)
{
    return {env, token, "deploy-" + std::to_string(token), "v1", token, ms(from), ms(to), "released"};
}

relctl::TimelineMarker marker(std::int64_t id, const std::string& env, std::int64_t at, const char* kind)
{
    return {id, env, ms(at), kind, "a label", "deploy-" + std::to_string(id)};
}

relctl::FrozenSpan freeze(const std::string& env, std::int64_t from, std::int64_t to)
{
    return {env, ms(from), ms(to), "alice", "holiday"};
}

// Two services of two and three stages, and one environment on its own.
relctl::TimelineSlice organisation()
{
    relctl::TimelineSlice slice;
    // As the server sorts text: svc10 before svc2.
    slice.environments = {"ops", "svc10.dev", "svc10.prod", "svc2.dev", "svc2.prod", "svc2.test"};
    slice.serverNow = ms(kBase + 60 * kMinute);
    slice.leases = {lease("svc10.dev", 1, kBase, kBase + 10 * kMinute),
                    lease("svc10.prod", 2, kBase + 5 * kMinute, kBase + 15 * kMinute),
                    lease("svc2.dev", 3, kBase, kBase + 2 * kMinute)};
    slice.markers = {marker(11, "svc10.prod", kBase + 20 * kMinute, "refusal"),
                     marker(12, "svc10.dev", kBase + 25 * kMinute, "publish"),
                     marker(13, "svc2.prod", kBase + 8 * kMinute, "publish"),
                     marker(14, "ops", kBase + 9 * kMinute, "operator")};
    slice.freezes = {freeze("svc10.prod", kBase + 30 * kMinute, kBase + 40 * kMinute)};
    return slice;
}

QStringList names(std::initializer_list<const char*> list)
{
    QStringList result;
    for (const char* name : list)
        result << QString::fromUtf8(name);
    return result;
}

QSet<QString> set(std::initializer_list<const char*> list)
{
    const QStringList all = names(list);
    return {all.begin(), all.end()};
}

QHash<QString, QString> noExplicitGroups()
{
    return {}; // every environment in its default group: the name up to its first '.'
}

} // namespace

class TestTimelineGroups : public QObject
{
    Q_OBJECT

private slots:
    // Items of an environment the slice does not list still get one lane:
    // its freeze, read after its leases were moved out, finds the same lane.
    void anUnlistedEnvironmentHasOneLane()
    {
        relctl::TimelineSlice slice;
        slice.environments = {"a.test"};
        for (int i = 0; i < 3; ++i) {
            relctl::LeaseSpan lease;
            lease.env = "b.test"; // short: kept inside the string itself
            lease.token = i + 1;
            lease.acquiredAt = relctl::Timestamp::fromMillis(1000 * i);
            lease.endsAt = relctl::Timestamp::fromMillis(1000 * i + 500);
            slice.leases.push_back(lease);
        }
        relctl::FrozenSpan freeze;
        freeze.env = "b.test";
        freeze.from = relctl::Timestamp::fromMillis(0);
        slice.freezes.push_back(freeze);
        const auto data = relctl::ui::TimelineLanes::fromSlice(slice);
        QCOMPARE(data.laneCount(), 2);
        const int b = data.slotOf.value(QStringLiteral("b.test"), -1);
        QVERIFY(b >= 0);
        QCOMPARE(data.lanes[std::size_t(b)].leases.size(), std::size_t(3));
        QCOMPARE(data.lanes[std::size_t(b)].freezes.size(), std::size_t(1));
    }

    void lanesAreInNaturalOrder()
    {
        TimelineWidget w;
        show(w);
        w.setSlice(organisation());
        QCOMPARE(rows(w), (names({"lane:ops", "lane:svc2.dev", "lane:svc2.prod", "lane:svc2.test",
                                  "lane:svc10.dev", "lane:svc10.prod"})));
        // Groups too: svc2 before svc10, each environment under its group.
        w.setGroups(noExplicitGroups());
        QCOMPARE(rows(w), (names({"lane:ops", "group:svc2", "lane:svc2.dev", "lane:svc2.prod",
                                  "lane:svc2.test", "group:svc10", "lane:svc10.dev", "lane:svc10.prod"})));
        // A group set explicitly wins over the name's prefix.
        w.setGroups({{QStringLiteral("ops"), QStringLiteral("svc2")}});
        QCOMPARE(rows(w), (names({"group:svc2", "lane:ops", "lane:svc2.dev", "lane:svc2.prod",
                                  "lane:svc2.test", "group:svc10", "lane:svc10.dev", "lane:svc10.prod"})));
    }

    void aClickOnAHeaderCollapsesAndExpandsIt()
    {
        TimelineWidget w;
        show(w);
        w.setSlice(organisation());
        w.setGroups(noExplicitGroups());
        QSignalSpy changed(&w, &TimelineWidget::collapsedGroupsChanged);
        const int header = row(w, "group:svc2");
        QVERIFY(header >= 0);
        QTest::mouseClick(&w, Qt::LeftButton, {}, QPoint(20, laneCentre(w, header)));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.last().at(0).value<QSet<QString>>(), set({"svc2"}));
        QCOMPARE(w.collapsedGroups(), set({"svc2"}));
        // One row for the group: its three lanes are gone from view.
        QCOMPARE(rows(w),
                 (names({"lane:ops", "group:svc2", "group:svc10", "lane:svc10.dev", "lane:svc10.prod"})));
        QVERIFY(w.timelineRows().isCollapsedGroup(header));
        QTest::mouseClick(&w, Qt::LeftButton, {}, QPoint(20, laneCentre(w, header)));
        QCOMPARE(changed.count(), 2);
        QVERIFY(changed.last().at(0).value<QSet<QString>>().isEmpty());
        QCOMPARE(w.timelineRows().count(), 8);
        // An expanded header's band in the plot toggles it as well.
        QTest::mouseClick(
            &w, Qt::LeftButton, {},
            QPoint(static_cast<int>(g(w).plotLeft()) + 300, laneCentre(w, row(w, "group:svc10"))));
        QCOMPARE(w.collapsedGroups(), set({"svc10"}));
        QCOMPARE(changed.count(), 3);
        // Set by the owner (the environments view's state): no signal back.
        w.setCollapsedGroups(set({"svc2", "svc10"}));
        QCOMPARE(changed.count(), 3);
        QCOMPARE(rows(w), (names({"lane:ops", "group:svc2", "group:svc10"})));
        // A collapsed group's plot is its summary, not a toggle.
        QTest::mouseClick(
            &w, Qt::LeftButton, {},
            QPoint(static_cast<int>(g(w).plotLeft()) + 300, laneCentre(w, row(w, "group:svc2"))));
        QCOMPARE(w.collapsedGroups(), set({"svc2", "svc10"}));
        QCOMPARE(changed.count(), 3);
    }

    void spaceCollapsesTheCurrentLanesGroup()
    {
        TimelineWidget w;
        show(w);
        w.setSlice(organisation());
        w.setGroups(noExplicitGroups());
        QSignalSpy changed(&w, &TimelineWidget::collapsedGroupsChanged);
        w.setFocus();
        w.setCurrentLane(row(w, "lane:svc10.prod"));
        QTest::keyClick(&w, Qt::Key_Space);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(w.collapsedGroups(), set({"svc10"}));
        // The header stays the current row: Space again opens it.
        QCOMPARE(w.currentLane(), row(w, "group:svc10"));
        QTest::keyClick(&w, Qt::Key_Space);
        QCOMPARE(changed.count(), 2);
        QVERIFY(w.collapsedGroups().isEmpty());
        // A lane on its own has no group to collapse.
        w.setCurrentLane(row(w, "lane:ops"));
        QTest::keyClick(&w, Qt::Key_Space);
        QCOMPARE(changed.count(), 2);
        QVERIFY(TimelineWidget::keyboardHelp().contains(QStringLiteral("Space")));
    }

    void theCurrentLaneFollowsItsEnvironment()
    {
        TimelineWidget w;
        show(w);
        w.setSlice(organisation());
        w.setGroups(noExplicitGroups());
        w.setCurrentLane(row(w, "lane:svc10.dev"));
        w.setCollapsedGroups(set({"svc2"}));
        QCOMPARE(w.currentLane(), row(w, "lane:svc10.dev"));
        // Its own group collapsed: the group's row; expanded again: the lane.
        w.setCollapsedGroups(set({"svc2", "svc10"}));
        QCOMPARE(w.currentLane(), row(w, "group:svc10"));
        w.setCollapsedGroups({});
        QCOMPARE(w.currentLane(), row(w, "lane:svc10.dev"));
    }

    void aCollapsedGroupSummarisesItsMembers()
    {
        TimelineWidget w;
        show(w);
        w.setVisibleRange(kBase - 5 * kMinute, kBase + 55 * kMinute);
        w.setSlice(organisation());
        w.setGroups(noExplicitGroups());
        w.setCollapsedGroups(set({"svc10"}));
        const int lane = row(w, "group:svc10");
        const auto x = [&](std::int64_t t) {
            return static_cast<int>(g(w).plotLeft() + g(w).xForTime(static_cast<double>(t)));
        };
        const int bar = static_cast<int>(g(w).barTop(lane) + 5);

        // Held: svc10.dev from 0 to 10 min, svc10.prod from 5 to 15 min.
        auto hit = w.itemAt(QPoint(x(kBase + 2 * kMinute), bar));
        QVERIFY(hit.isGroupSummary());
        QCOMPARE(hit.groupName, QStringLiteral("svc10"));
        QCOMPARE(hit.spanFrom, kBase);
        QCOMPARE(hit.spanTo, kBase + 5 * kMinute);
        hit = w.itemAt(QPoint(x(kBase + 7 * kMinute), bar));
        QCOMPARE(hit.spanFrom, kBase + 5 * kMinute);
        QCOMPARE(hit.spanTo, kBase + 10 * kMinute);
        QString tip = tipAt(w, QPoint(x(kBase + 7 * kMinute), bar));
        QVERIFY2(tip.contains(QStringLiteral("Held: 2 (svc10.dev, svc10.prod)")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("Frozen: none")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("svc10 \u00b7 2 environments")), qPrintable(tip));
        // Nothing held or frozen there: no summary to give.
        QVERIFY(!w.itemAt(QPoint(x(kBase + 17 * kMinute), bar)).isGroupSummary());

        // The refusal, on the group's row, where it happened.
        const auto refusal = w.markerPosition(11);
        QVERIFY(refusal);
        QCOMPARE(g(w).laneAt(refusal->y()), lane);
        hit = w.itemAt(refusal->toPoint());
        QVERIFY(hit.isGroupSummary());
        QCOMPARE(hit.eventId(), qint64(11));
        tip = tipAt(w, refusal->toPoint());
        QVERIFY2(tip.contains(QStringLiteral("Refused: 1 (svc10.prod)")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("#11")), qPrintable(tip));
        // Only refusals are summarised: the publish on svc10.dev is not drawn there.
        QVERIFY(!w.markerPosition(12) || !w.itemAt(w.markerPosition(12)->toPoint()).isMarker());

        // Frozen: svc10.prod from 30 to 40 min.
        tip = tipAt(w, QPoint(x(kBase + 35 * kMinute), bar));
        QVERIFY2(tip.contains(QStringLiteral("Frozen: 1 (svc10.prod)")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("Held: none")), qPrintable(tip));

        // Drawn: darker where two were held than where one was, the
        // refusal in the refusals' red, the freeze shaded.
        const QImage image = w.grab().toImage();
        relctl::ui::TimelinePainter painter;
        painter.setColors(TimelineColors::fromPalette(w.palette()));
        QVERIFY(near(image.pixel(x(kBase + 2 * kMinute), bar), painter.heldColour(1)));
        QVERIFY(near(image.pixel(x(kBase + 7 * kMinute), bar), painter.heldColour(2)));
        QVERIFY(painter.heldColour(2).lightness() < painter.heldColour(1).lightness());
        const QColor red = painter.colors().marker(relctl::ui::MarkerKind::Refusal);
        QVERIFY(countNear(image, QRect(refusal->toPoint() - QPoint(4, 4), QSize(9, 9)), red) > 5);
        const QColor frozen = painter.colors().frozenFill;
        QVERIFY(countNear(image,
                          QRect(x(kBase + 32 * kMinute), static_cast<int>(g(w).laneTop(lane)) + 2, 20, 8),
                          frozen, 12) > 20);

        // The legend has an entry for that shading, drawn with the lane's
        // shades (one member holding to four or more), lightest first.
        const auto& entries = w.legend().entries();
        const auto held = std::find_if(entries.begin(), entries.end(), [](const auto& e) {
            return e.swatch == relctl::ui::LegendEntry::Swatch::GroupHeld;
        });
        QVERIFY(held != entries.end());
        QCOMPARE(held->label, QStringLiteral("Group held"));
        QVERIFY2(held->help.contains(QStringLiteral("collapsed group")), qPrintable(held->help));
        const QRect swatch = held->swatchRect;
        for (int count = 1; count <= 4; ++count)
            QVERIFY2(countNear(image, swatch, painter.heldColour(count)) >= 4,
                     qPrintable(QString::number(count)));
        QVERIFY(countNear(image, swatch.adjusted(0, 0, -swatch.width() / 2, 0), painter.heldColour(1)) >= 4);
        QVERIFY(countNear(image, swatch.adjusted(swatch.width() / 2, 0, 0, 0), painter.heldColour(4)) >= 4);
        // Its label is painted beside it, and it explains itself.
        QVERIFY(countNear(image, held->rect.adjusted(swatch.width(), 0, 0, 0), painter.colors().text, 60) >=
                3);
        QCOMPARE(w.legend().entryAt(held->rect.center()), &*held);
    }

    void aSummaryFollowsItsMembersUpdates()
    {
        TimelineWidget w;
        show(w);
        w.setVisibleRange(kBase - 5 * kMinute, kBase + 55 * kMinute);
        w.setSlice(organisation());
        w.setGroups(noExplicitGroups());
        w.setCollapsedGroups(set({"svc2"}));
        QVERIFY(!w.markerPosition(21));
        relctl::TimelineSlice update;
        update.environments = {"svc2.test"};
        update.markers = {marker(21, "svc2.test", kBase + 45 * kMinute, "refusal")};
        w.updateEnvironments(names({"svc2.test"}), update);
        const auto refusal = w.markerPosition(21);
        QVERIFY(refusal);
        QCOMPARE(g(w).laneAt(refusal->y()), row(w, "group:svc2"));
        QCOMPARE(w.itemAt(refusal->toPoint()).eventId(), qint64(21));
    }

    void theFilterShowsOnlyItsLanes()
    {
        TimelineWidget w;
        show(w);
        w.setSlice(organisation());
        w.setGroups(noExplicitGroups());
        w.setLaneFilter(set({"svc2.prod", "svc10.dev"}));
        // A group keeps its header for its shown members; ops has none shown.
        QCOMPARE(rows(w), (names({"group:svc2", "lane:svc2.prod", "group:svc10", "lane:svc10.dev"})));
        QCOMPARE(g(w).laneCount(), 4);
        QCOMPARE(w.timelineRows().group(w.timelineRows().row(0).index).shown, 1);
        // A hidden lane's markers are nowhere to be hit.
        QVERIFY(!w.markerPosition(14));
        QVERIFY(w.markerPosition(13));
        // A collapsed group sums up only what the filter shows.
        w.setCollapsedGroups(set({"svc10"}));
        QVERIFY(!w.markerPosition(11)); // svc10.prod is filtered out
        QCOMPARE(rows(w), (names({"group:svc2", "lane:svc2.prod", "group:svc10"})));
        w.setLaneFilter(set({"ops"}));
        QCOMPARE(rows(w), names({"lane:ops"}));
        w.setLaneFilter(QSet<QString>{});
        QCOMPARE(w.timelineRows().count(), 0);
        w.setLaneFilter(std::nullopt);
        QCOMPARE(rows(w), (names({"lane:ops", "group:svc2", "lane:svc2.dev", "lane:svc2.prod",
                                  "lane:svc2.test", "group:svc10"})));
    }

    void anUpdateReplacesOnlyTheLanesItNames()
    {
        TimelineWidget w;
        show(w);
        w.setVisibleRange(kBase - 5 * kMinute, kBase + 55 * kMinute);
        w.setSlice(organisation());
        w.setGroups(noExplicitGroups());
        const auto& data = w.timelineLanes();
        const int untouched = data.slotOf.value(QStringLiteral("svc10.prod"));
        const auto* refusal = &data.lanes[static_cast<std::size_t>(untouched)].markers.front();
        const auto* held = &data.lanes[static_cast<std::size_t>(untouched)].leases.front();
        const auto before = w.markerPosition(11);

        // svc2.dev: its publish replaced by a refusal, its lease by another.
        relctl::TimelineSlice update;
        update.environments = {"svc2.dev"};
        update.leases = {lease("svc2.dev", 30, kBase + 20 * kMinute, kBase + 22 * kMinute)};
        update.markers = {marker(31, "svc2.dev", kBase + 21 * kMinute, "refusal")};
        w.updateEnvironments(names({"svc2.dev"}), update);
        const int slot = data.slotOf.value(QStringLiteral("svc2.dev"));
        QCOMPARE(data.lanes[static_cast<std::size_t>(slot)].leases.size(), std::size_t(1));
        QCOMPARE(data.lanes[static_cast<std::size_t>(slot)].leases.front().token, std::int64_t(30));
        QVERIFY(w.markerPosition(31));
        QCOMPARE(g(w).laneAt(w.markerPosition(31)->y()), row(w, "lane:svc2.dev"));
        // The other lanes' items were not touched: not even moved in memory.
        QCOMPARE(&data.lanes[static_cast<std::size_t>(untouched)].markers.front(), refusal);
        QCOMPARE(&data.lanes[static_cast<std::size_t>(untouched)].leases.front(), held);
        QCOMPARE(w.markerPosition(11), before);
        QCOMPARE(w.markerPosition(13).has_value(), true);
        QCOMPARE(data.markerIndex.size(), qsizetype(5));

        // A new environment: a lane in natural order (svc2.stage before svc2.test).
        relctl::TimelineSlice added;
        added.environments = {"svc2.stage", "svc3.dev"};
        added.markers = {marker(41, "svc2.stage", kBase + 3 * kMinute, "publish")};
        w.updateEnvironments(names({"svc2.stage", "svc3.dev"}), added);
        QCOMPARE(rows(w), (names({"lane:ops", "group:svc2", "lane:svc2.dev", "lane:svc2.prod",
                                  "lane:svc2.stage", "lane:svc2.test", "lane:svc3.dev", "group:svc10",
                                  "lane:svc10.dev", "lane:svc10.prod"})));
        QCOMPARE(g(w).laneAt(w.markerPosition(41)->y()), row(w, "lane:svc2.stage"));
        QCOMPARE(&data.lanes[static_cast<std::size_t>(untouched)].markers.front(), refusal);

        // Named but absent from the slice: the environment is gone, with its items.
        w.setCurrentLane(row(w, "lane:svc10.dev"));
        relctl::TimelineSlice removed;
        w.updateEnvironments(names({"svc2.prod"}), removed);
        QVERIFY(!w.markerPosition(13));
        QVERIFY(!data.markerIndex.contains(13));
        QCOMPARE(row(w, "lane:svc2.prod"), -1);
        QCOMPARE(w.timelineRows().count(), 9);
        QCOMPARE(w.currentLane(), row(w, "lane:svc10.dev")); // the current lane moved with its environment
        QCOMPARE(g(w).laneCount(), 9);
        // Its slot is reused by the next lane that comes.
        relctl::TimelineSlice again;
        again.environments = {"svc4.dev"};
        w.updateEnvironments(names({"svc4.dev"}), again);
        QCOMPARE(data.lanes.size(), std::size_t(8));
    }

    void replaceLeavesOtherLanesIndexAlone()
    {
        auto data = relctl::ui::TimelineLanes::fromSlice(organisation());
        const auto ops = data.markerIndex.value(14);
        relctl::TimelineSlice update;
        update.environments = {"svc10.prod"};
        update.markers = {marker(51, "svc10.prod", kBase, "publish"),
                          marker(52, "svc10.prod", kBase - 1, "refusal")};
        const auto change = data.replace(names({"svc10.prod"}), update);
        QCOMPARE(change.replaced.size(), std::size_t(1));
        QVERIFY(change.added.empty() && change.removed.empty());
        QCOMPARE(data.markerIndex.value(14), ops);
        QVERIFY(!data.markerIndex.contains(11));
        // Sorted by time whatever order they came in, and indexed as sorted.
        const int slot = data.slotOf.value(QStringLiteral("svc10.prod"));
        QCOMPARE(data.markerIndex.value(52), std::make_pair(slot, 0));
        QCOMPARE(data.markerIndex.value(51), std::make_pair(slot, 1));
        QVERIFY(data.lanes[static_cast<std::size_t>(slot)].freezes.empty());
    }

    void onlyTheLanesInViewArePainted()
    {
        // The painter and the gutter walk visibleLanes(), not every lane.
        TimelineGeometry geometry;
        geometry.setLaneCount(10000);
        geometry.setViewportHeight(geometry.plotTop() + 10 * geometry.laneHeight());
        QCOMPARE(geometry.visibleLanes(), std::make_pair(0, 10));
        geometry.scrollLanesBy(5000 * geometry.laneHeight() + geometry.laneHeight() / 2);
        // Half of lane 5000 and half of lane 5010 show.
        QCOMPARE(geometry.visibleLanes(), std::make_pair(5000, 5011));
        geometry.scrollLanesBy(1e9);
        QCOMPARE(geometry.visibleLanes(), std::make_pair(9990, 10000));
        geometry.setLaneCount(3);
        QCOMPARE(geometry.visibleLanes(), std::make_pair(0, 3));
    }

    void manyLanesScrollAndKeepTheirNamesReadable()
    {
        TimelineWidget w;
        w.resize(1200, 600);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        relctl::TimelineSlice slice;
        const char* stages[] = {"dev", "test", "staging", "prod", "prod-eu"};
        for (int s = 1; s <= 400; ++s)
            for (const char* stage : stages)
                slice.environments.push_back("svc" + std::to_string(s) + "." + stage);
        w.setSlice(slice);
        w.setGroups(noExplicitGroups());
        QCOMPARE(w.laneCount(), 2000);
        QCOMPARE(w.timelineRows().count(), 2400); // and 400 headers
        auto* bar = w.findChild<QScrollBar*>();
        QVERIFY(bar && bar->isVisible());
        // The longest name fits beside its group's indent.
        const int longest = w.fontMetrics().horizontalAdvance(QStringLiteral("svc400.prod-eu"));
        QVERIFY(g(w).plotLeft() >= longest + relctl::ui::kGroupIndent + 16);
        // Page Down goes a screenful at a time, scrolling with it.
        w.setFocus();
        w.setCurrentLane(0);
        QTest::keyClick(&w, Qt::Key_PageDown);
        QVERIFY(w.currentLane() > 5);
        for (int i = 0; i < 200; ++i)
            QTest::keyClick(&w, Qt::Key_PageDown);
        QCOMPARE(w.currentLane(), 2399);
        QCOMPARE(bar->value(), bar->maximum());
        // Stages in natural order too: dev, prod, prod-eu, staging, test.
        QCOMPARE(rowName(w, w.currentLane()), QStringLiteral("lane:svc400.test"));
    }

private:
    static const TimelineGeometry& g(const TimelineWidget& w) { return w.timelineGeometry(); }

    static void show(TimelineWidget& w)
    {
        w.resize(1000, 400);
        w.setVisibleRange(kBase - 5 * kMinute, kBase + 55 * kMinute);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
    }

    static QString rowName(const TimelineWidget& w, int r)
    {
        return w.timelineRows().identity(r, w.timelineLanes());
    }

    static QStringList rows(const TimelineWidget& w)
    {
        QStringList names;
        for (int r = 0; r < w.timelineRows().count(); ++r)
            names << rowName(w, r);
        return names;
    }

    static int row(const TimelineWidget& w, const char* identity)
    {
        return w.timelineRows().rowOfIdentity(QString::fromUtf8(identity), w.timelineLanes());
    }

    static int laneCentre(const TimelineWidget& w, int lane)
    {
        return static_cast<int>(g(w).laneTop(lane) + g(w).laneHeight() / 2);
    }

    static QString tipAt(TimelineWidget& w, QPoint pos)
    {
        QToolTip::hideText();
        QHelpEvent help(QEvent::ToolTip, pos, w.mapToGlobal(pos));
        QApplication::sendEvent(&w, &help);
        if (!QTest::qWaitFor([] { return QToolTip::isVisible(); }, 2000))
            return {};
        return QToolTip::text();
    }

    static bool near(QRgb a, const QColor& b, int slack = 3)
    {
        return std::abs(qRed(a) - b.red()) <= slack && std::abs(qGreen(a) - b.green()) <= slack &&
               std::abs(qBlue(a) - b.blue()) <= slack;
    }

    static int countNear(const QImage& image, const QRect& rect, const QColor& colour, int slack = 3)
    {
        int n = 0;
        for (int y = rect.top(); y <= rect.bottom(); ++y)
            for (int x = rect.left(); x <= rect.right(); ++x)
                if (image.rect().contains(x, y) && near(image.pixel(x, y), colour, slack))
                    ++n;
        return n;
    }
};

QTEST_MAIN(TestTimelineGroups)
#include "test_timeline_groups.moc"
