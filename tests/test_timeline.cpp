// Unit tests for the lease timeline: the geometry (time <-> pixels, zoom,
// pan, ticks, lanes) on its own, then the widget's hit-testing, selection,
// interaction and painting. No database: the widget is fed a TimelineSlice.
// With RELCTL_BENCH=1, benchmarkPaint() reports how long a full paint takes.

#include "relctl/timelinecolours.h"
#include "timeformat.h"
#include "timelinegeometry.h"
#include "timelinegroups.h"
#include "timelinelanes.h"
#include "timelinelegend.h"
#include "timelinepainter.h"
#include "timelinewidget.h"

#include <QImage>
#include <QScrollBar>
#include <QSignalSpy>
#include <QToolTip>
#include <QWheelEvent>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <random>

using relctl::ui::MarkerKind;
using relctl::ui::TimelineColors;
using relctl::ui::TimelineGeometry;
using relctl::ui::TimelineWidget;

namespace {

constexpr double kDay = 24.0 * 3600 * 1000;
constexpr std::int64_t kBase = 1'700'000'123'456; // 2023-11-14, an arbitrary odd time

// The fabricated slices count time in epoch milliseconds, as the console's functions send it.
relctl::Timestamp ms(std::int64_t n)
{
    return relctl::Timestamp::fromMillis(n);
}

TimelineGeometry geometry(double start, double span, double width)
{
    TimelineGeometry g;
    g.setPlotWidth(width);
    g.setRange(start, start + span);
    return g;
}

relctl::LeaseSpan lease(const std::string& env, std::int64_t token, std::int64_t from, std::int64_t to,
                        const char* ending = "released")
{
    return {env,    token, "deploy-" + std::to_string(token), "v1." + std::to_string(token), token, ms(from),
            ms(to), ending};
}

relctl::TimelineMarker marker(std::int64_t id, const std::string& env, std::int64_t at, const char* kind)
{
    return {id, env, ms(at), kind, "stale generation", "deploy-" + std::to_string(id)};
}

// `lanes` environments, each with `leasesPerLane` back-to-back leases and
// `markersPerLane` markers of every kind spread over [from, from + span].
relctl::TimelineSlice bigSlice(int lanes, int leasesPerLane, int markersPerLane, std::int64_t from,
                               std::int64_t span)
{
    static const char* endings[] = {"released", "released", "released", "expired", "revoked"};
    static const char* kinds[] = {"publish", "refusal", "superseded", "queued", "operator"};
    std::mt19937 random(42);
    relctl::TimelineSlice slice;
    slice.serverNow = ms(from + span);
    std::int64_t token = 1;
    std::int64_t eventId = 1;
    for (int l = 0; l < lanes; ++l) {
        const std::string env = "env-" + std::to_string(100 + l);
        slice.environments.push_back(env);
        const std::int64_t slot = span / leasesPerLane;
        for (int i = 0; i < leasesPerLane; ++i) {
            const std::int64_t start =
                from + i * slot +
                static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(slot / 4 + 1));
            const std::int64_t length =
                slot / 2 + static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(slot / 2 + 1));
            const bool last = i == leasesPerLane - 1;
            slice.leases.push_back(
                lease(env, token++, start, start + length, last ? "live" : endings[random() % 5]));
        }
        for (int i = 0; i < markersPerLane; ++i) {
            const std::int64_t at = from + static_cast<std::int64_t>(random() % static_cast<unsigned>(span));
            slice.markers.push_back(marker(eventId++, env, at, kinds[random() % 5]));
        }
        // As the query delivers them: by env, then time.
        std::sort(slice.markers.end() - markersPerLane, slice.markers.end(),
                  [](const auto& x, const auto& y) { return x.at < y.at; });
    }
    return slice;
}

// A dark theme as a user's desktop would set it: every role the timeline reads.
QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1c, 0x1c, 0x1e), text(0xec, 0xec, 0xec);
    for (auto group : {QPalette::Active, QPalette::Inactive, QPalette::Disabled}) {
        p.setColor(group, QPalette::Window, window);
        p.setColor(group, QPalette::WindowText, text);
        p.setColor(group, QPalette::Base, base);
        p.setColor(group, QPalette::AlternateBase, QColor(0x26, 0x26, 0x29));
        p.setColor(group, QPalette::Text, text);
        p.setColor(group, QPalette::Highlight, QColor(0x3d, 0x8e, 0xe6));
        p.setColor(group, QPalette::HighlightedText, Qt::white);
    }
    return p;
}

QPalette lightPalette()
{
    QPalette p;
    for (auto group : {QPalette::Active, QPalette::Inactive, QPalette::Disabled}) {
        p.setColor(group, QPalette::Window, QColor(0xef, 0xef, 0xef));
        p.setColor(group, QPalette::WindowText, Qt::black);
        p.setColor(group, QPalette::Base, Qt::white);
        p.setColor(group, QPalette::AlternateBase, QColor(0xf7, 0xf7, 0xf7));
        p.setColor(group, QPalette::Text, Qt::black);
        p.setColor(group, QPalette::Highlight, QColor(0x30, 0x8c, 0xc6));
        p.setColor(group, QPalette::HighlightedText, Qt::white);
    }
    return p;
}

// Colors compared with a little slack: antialiasing and premultiplication
// round by a unit or two.
bool near(QRgb a, const QColor& b, int slack = 3)
{
    return std::abs(qRed(a) - b.red()) <= slack && std::abs(qGreen(a) - b.green()) <= slack &&
           std::abs(qBlue(a) - b.blue()) <= slack;
}

int countNear(const QImage& image, const QRect& logical, const QColor& color, int slack = 3)
{
    const qreal dpr = image.devicePixelRatio();
    int n = 0;
    for (int y = static_cast<int>(logical.top() * dpr); y < static_cast<int>((logical.bottom() + 1) * dpr);
         ++y)
        for (int x = static_cast<int>(logical.left() * dpr);
             x < static_cast<int>((logical.right() + 1) * dpr); ++x)
            if (image.rect().contains(x, y) && near(image.pixel(x, y), color, slack))
                ++n;
    return n;
}

} // namespace

class TestTimeline final : public QObject
{
    Q_OBJECT

private slots:
    void mapping_data()
    {
        QTest::addColumn<double>("span");
        QTest::addColumn<double>("width");
        QTest::addColumn<double>("time");
        QTest::addRow("1 s over 800 px, start") << 1000.0 << 800.0 << 0.0;
        QTest::addRow("1 s over 800 px, inside") << 1000.0 << 800.0 << 123.456;
        QTest::addRow("1 h over 1600 px, end") << 3600e3 << 1600.0 << 3600e3;
        QTest::addRow("1 h, left of the view") << 3600e3 << 1600.0 << -7200e3;
        QTest::addRow("30 d over 333 px") << 30 * kDay << 333.0 << 17 * kDay + 1;
        QTest::addRow("1 y over 1 px") << 365 * kDay << 1.0 << 200 * kDay;
    }

    void mapping()
    {
        QFETCH(double, span);
        QFETCH(double, width);
        QFETCH(double, time);
        const auto g = geometry(static_cast<double>(kBase), span, width);
        const double t = static_cast<double>(kBase) + time;
        QCOMPARE(g.xForTime(g.startMs()), 0.0);
        QVERIFY(std::abs(g.xForTime(g.endMs()) - width) < 1e-9 * width);
        QVERIFY(std::abs(g.timeForX(g.xForTime(t)) - t) < 1e-3); // well below a millisecond
        const double x = width * 0.37;
        QVERIFY(std::abs(g.xForTime(g.timeForX(x)) - x) < 1e-6);
    }

    void zoomKeepsTimeUnderCursor_data()
    {
        QTest::addColumn<double>("fraction");
        QTest::addColumn<double>("factor");
        for (double fraction : {0.0, 0.25, 0.5, 0.9, 1.0})
            for (double factor : {0.1, 0.8, 1.25, 2.0, 50.0})
                QTest::addRow("x=%.2f factor=%.2f", fraction, factor) << fraction << factor;
    }

    void zoomKeepsTimeUnderCursor()
    {
        QFETCH(double, fraction);
        QFETCH(double, factor);
        auto g = geometry(static_cast<double>(kBase), kDay, 1200);
        const double x = fraction * g.plotWidth();
        const double before = g.timeForX(x);
        g.zoomAround(x, factor);
        QVERIFY(std::abs(g.spanMs() - kDay / factor) < 1e-6 * kDay);
        QVERIFY2(std::abs(g.timeForX(x) - before) <= 1e-6 * g.spanMs(),
                 qPrintable(QStringLiteral("moved by %1 ms").arg(g.timeForX(x) - before)));
    }

    void zoomStopsAtSpanLimits()
    {
        auto g = geometry(static_cast<double>(kBase), 60e3, 1000);
        const double anchor = g.timeForX(250);
        g.zoomAround(250, 1e6);
        QCOMPARE(g.spanMs(), TimelineGeometry::kMinSpanMs);
        QVERIFY(std::abs(g.timeForX(250) - anchor) < 1e-6 * g.spanMs());
        g.zoomAround(250, 1e-9);
        QCOMPARE(g.spanMs(), TimelineGeometry::kMaxSpanMs);
    }

    void panShiftsBothEnds()
    {
        auto g = geometry(static_cast<double>(kBase), 3600e3, 1200);
        const double start = g.startMs(), end = g.endMs(), msPerPx = g.msPerPixel();
        g.panByPixels(120); // dragging right shows earlier times
        QCOMPARE(g.startMs() - start, -120 * msPerPx);
        QCOMPARE(g.endMs() - end, -120 * msPerPx);
        g.panByPixels(-300);
        QCOMPARE(g.startMs() - start, 180 * msPerPx);
        QCOMPARE(g.endMs() - end, 180 * msPerPx);
    }

    void ticks_data()
    {
        QTest::addColumn<double>("span");
        QTest::addColumn<double>("width");
        QTest::addColumn<QString>("sample"); // a character the labels must contain at this zoom
        const double width = 1000;
        QTest::addRow("2 s") << 2e3 << width << QStringLiteral(".");
        QTest::addRow("15 s") << 15e3 << width << QStringLiteral(":");
        QTest::addRow("2 min") << 120e3 << width << QStringLiteral(":");
        QTest::addRow("45 min") << 2700e3 << width << QStringLiteral(":");
        QTest::addRow("6 h") << 6 * 3600e3 << width << QStringLiteral(":");
        QTest::addRow("1 d") << kDay << width << QStringLiteral(":");
        QTest::addRow("3 d, narrow") << 3 * kDay << 400.0 << QStringLiteral(" ");
        QTest::addRow("10 d") << 10 * kDay << width << QStringLiteral(" ");
        QTest::addRow("60 d") << 60 * kDay << width << QStringLiteral(" ");
        QTest::addRow("60 d, narrow (months)") << 60 * kDay << 200.0 << QString();
        QTest::addRow("1 y") << 365 * kDay << width << QString();
    }

    void ticks()
    {
        QFETCH(double, span);
        QFETCH(double, width);
        QFETCH(QString, sample);
        const auto g = geometry(static_cast<double>(kBase), span, width);
        const auto ticks = g.niceTicks(80);
        QVERIFY(!ticks.empty());
        QVERIFY(ticks.size() <= static_cast<std::size_t>(width / 80) + 1);
        QVERIFY2(ticks.front().major && !ticks.front().context.isEmpty(), "the first tick names the date");
        for (std::size_t i = 0; i < ticks.size(); ++i) {
            const auto& tick = ticks[i];
            QVERIFY(tick.ms >= g.startMs() && tick.ms <= g.endMs());
            QCOMPARE(tick.ms, std::round(tick.ms));
            QVERIFY(!tick.label.isEmpty());
            QVERIFY2(tick.label.contains(sample), qPrintable(tick.label));
            if (i > 0) {
                QVERIFY(tick.ms > ticks[i - 1].ms);
                QVERIFY2(tick.x - ticks[i - 1].x >= 80 - 1e-6,
                         qPrintable(QStringLiteral("%1 px apart").arg(tick.x - ticks[i - 1].x)));
            }
        }
    }

    void ticksMarkDayChanges()
    {
        // 23:00 to 01:00 UTC: the midnight tick carries the new date.
        const double midnight = std::floor(static_cast<double>(kBase) / kDay) * kDay + kDay;
        const auto g = geometry(midnight - 3600e3, 7200e3, 1000);
        const auto ticks = g.niceTicks(80);
        const auto atMidnight =
            std::find_if(ticks.begin(), ticks.end(), [&](const auto& t) { return t.ms == midnight; });
        QVERIFY(atMidnight != ticks.end());
        QVERIFY(atMidnight->major);
        QCOMPARE(atMidnight->context, QStringLiteral("Wed 2023-11-15")); // with its day of the week
        QCOMPARE(atMidnight->label, QStringLiteral("00:00"));
        QVERIFY(!(atMidnight - 1)->major);
    }

    // A week (the demo's, Shift+F) reads by its days, each named; the last
    // day by hours, the date with its weekday where the day changes.
    void aWeekReadsByItsDays()
    {
        const double monday = 1699833600e3; // 2023-11-13 00:00 UTC, a Monday
        const auto week = geometry(monday - 3600e3, 7 * kDay + 7200e3, 900).niceTicks(80);
        QStringList labels;
        for (const auto& tick : week)
            labels << tick.label;
        QCOMPARE(labels.size(), 8);
        QCOMPARE(labels.first(), QStringLiteral("Mon Nov 13"));
        QCOMPARE(labels.at(4), QStringLiteral("Fri Nov 17"));
        const auto day = geometry(monday + 10 * 3600e3, kDay, 900).niceTicks(80);
        QVERIFY(day.size() >= 6 && day.size() <= 12);
        const auto midnight =
            std::find_if(day.begin(), day.end(), [&](const auto& t) { return t.ms == monday + kDay; });
        QVERIFY(midnight != day.end());
        QCOMPARE(midnight->context, QStringLiteral("Tue 2023-11-14"));
        QCOMPARE(day.front().context, QStringLiteral("Mon 2023-11-13"));
    }

    void lanes()
    {
        TimelineGeometry g;
        g.setLaneCount(3);
        g.setViewportHeight(1000);
        QCOMPARE(g.laneAt(g.plotTop() - 1), -1);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(g.laneAt(g.laneTop(i)), i);
            QCOMPARE(g.laneAt(g.laneTop(i) + g.laneHeight() - 0.5), i);
            QCOMPARE(g.laneAt(g.markerY(i)), i);
        }
        QCOMPARE(g.laneAt(g.laneTop(3)), -1);
        // Too many lanes for the viewport: scrolling moves them, clamped.
        g.setLaneCount(50);
        g.setViewportHeight(300);
        g.ensureLaneVisible(40);
        QVERIFY(g.laneTop(40) >= g.plotTop() && g.laneTop(40) + g.laneHeight() <= 300);
        QCOMPARE(g.laneAt(g.laneTop(40) + 1), 40);
        g.scrollLanesBy(-1e9);
        QCOMPARE(g.laneScroll(), 0.0);
    }

    void hitTesting()
    {
        TimelineWidget w;
        showSmall(w);
        const auto at = g(w).timeForX(400);
        // "prod" is the second lane; a refusal and a lease in it.
        w.setSlice(smallSlice(static_cast<std::int64_t>(at)));
        const auto pos = w.markerPosition(7);
        QVERIFY(pos);
        QCOMPARE(w.itemAt(pos->toPoint()).eventId(), qint64(7));
        QCOMPARE(w.itemAt(pos->toPoint() + QPoint(3, 2)).eventId(), qint64(7)); // a few px off still hits
        QVERIFY(w.itemAt(pos->toPoint() + QPoint(20, 0)).eventId() != 7);
        QVERIFY(w.itemAt(pos->toPoint() + QPoint(-20, 0)).eventId() != 7);
        QVERIFY(!w.itemAt(pos->toPoint() + QPoint(0, 20)).isMarker());

        const int lane = g(w).laneAt(pos->y());
        const QPoint onBar(static_cast<int>(g(w).plotLeft() + 200), static_cast<int>(g(w).barTop(lane) + 5));
        const auto hit = w.itemAt(onBar);
        QVERIFY(hit.isLease());
        QCOMPARE(hit.lease->token, std::int64_t(11));
        QCOMPARE(hit.lane, 1);
        QVERIFY(!w.itemAt(QPoint(5, onBar.y())).isLease()); // the gutter holds names, not items
    }

    void tooltipsDescribeTheItem()
    {
        TimelineWidget w;
        showSmall(w);
        w.setSlice(smallSlice(static_cast<std::int64_t>(g(w).timeForX(400))));
        const QPoint onMarker = w.markerPosition(7)->toPoint();
        QHelpEvent markerHelp(QEvent::ToolTip, onMarker, w.mapToGlobal(onMarker));
        QApplication::sendEvent(&w, &markerHelp);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(QToolTip::text().contains(QStringLiteral("Refusal")), qPrintable(QToolTip::text()));
        QVERIFY(QToolTip::text().contains(QStringLiteral("stale generation")));
        QVERIFY(QToolTip::text().contains(QStringLiteral("event #7")));

        const QPoint onBar(static_cast<int>(g(w).plotLeft() + 200), static_cast<int>(g(w).barTop(1) + 5));
        QHelpEvent leaseHelp(QEvent::ToolTip, onBar, w.mapToGlobal(onBar));
        QApplication::sendEvent(&w, &leaseHelp);
        QTRY_VERIFY(QToolTip::text().contains(QStringLiteral("deploy-11")));
        QVERIFY2(QToolTip::text().contains(QStringLiteral("generation 11 \u00b7 token #11")),
                 qPrintable(QToolTip::text()));
        QVERIFY(QToolTip::text().contains(QStringLiteral("live")));
    }

    void unorderedSliceStillHits()
    {
        TimelineWidget w;
        showSmall(w);
        auto slice = smallSlice(static_cast<std::int64_t>(g(w).timeForX(400)));
        std::reverse(slice.markers.begin(), slice.markers.end());
        std::reverse(slice.leases.begin(), slice.leases.end());
        slice.environments.clear(); // lanes then come from the items
        w.setSlice(slice);
        for (qint64 id : {5, 6, 7, 8})
            QCOMPARE(w.itemAt(w.markerPosition(id)->toPoint()).eventId(), id);
        // "prod" appeared first, but lanes are in natural order: dev, then prod.
        const QPoint onBar(static_cast<int>(g(w).plotLeft() + 200), static_cast<int>(g(w).barTop(1) + 5));
        QVERIFY(w.itemAt(onBar).isLease());
        QCOMPARE(w.itemAt(onBar).lease->token, std::int64_t(11));
    }

    void clickOnMarkerEmitsEventSelected()
    {
        TimelineWidget w;
        showSmall(w);
        w.setSlice(smallSlice(static_cast<std::int64_t>(g(w).timeForX(400))));
        QSignalSpy selected(&w, &TimelineWidget::eventSelected);
        QTest::mouseClick(&w, Qt::LeftButton, {}, w.markerPosition(7)->toPoint());
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(0).toLongLong(), qint64(7));
        QCOMPARE(w.selectedEvent(), qint64(7));
        // A click on empty space selects nothing.
        QTest::mouseClick(&w, Qt::LeftButton, {}, QPoint(w.width() - 5, w.height() - 5));
        QCOMPARE(selected.count(), 1);
        // Nor does one on a queued candidate: it is not an event (its id is 0).
        auto slice = smallSlice(static_cast<std::int64_t>(g(w).timeForX(400)));
        slice.markers = {marker(0, "staging", static_cast<std::int64_t>(g(w).timeForX(600)), "queued")};
        w.setSlice(slice);
        const QPoint queued(static_cast<int>(g(w).plotLeft() + 600), static_cast<int>(g(w).markerY(2)));
        QVERIFY(w.itemAt(queued).isMarker());
        QTest::mouseClick(&w, Qt::LeftButton, {}, queued);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(w.selectedEvent(), qint64(7));
    }

    void selectEventScrollsIntoView()
    {
        TimelineWidget w;
        showSmall(w);
        w.setVisibleRange(kBase, kBase + 3600 * 1000);
        auto slice = smallSlice(kBase + 1800 * 1000);
        const std::int64_t later = kBase + 5 * 3600 * 1000;
        slice.markers.push_back(marker(99, "staging", later, "publish"));
        w.setSlice(slice);
        QSignalSpy range(&w, &TimelineWidget::visibleRangeChanged);
        QSignalSpy selected(&w, &TimelineWidget::eventSelected);
        w.selectEvent(99);
        QCOMPARE(w.selectedEvent(), qint64(99));
        QVERIFY(w.visibleFrom() < later && later < w.visibleTo());
        QVERIFY(std::abs(g(w).xForTime(static_cast<double>(later)) - g(w).plotWidth() / 2) < 1);
        QCOMPARE(range.count(), 1);
        QCOMPARE(selected.count(), 0); // no echo back to the audit browser
        QCOMPARE(w.itemAt(w.markerPosition(99)->toPoint()).eventId(), qint64(99));

        // Not in the slice yet: centre on the time given, reveal when it arrives.
        const std::int64_t earlier = kBase - 10 * 3600 * 1000;
        w.selectEvent(123, earlier);
        QVERIFY(w.visibleFrom() < earlier && earlier < w.visibleTo());
        slice.markers.push_back(marker(123, "prod", earlier, "refusal"));
        w.setSlice(slice);
        QVERIFY(w.markerPosition(123));
    }

    void wheelZoomsAroundCursor()
    {
        TimelineWidget w;
        showSmall(w);
        const double x = 250;
        const double before = g(w).timeForX(x);
        const double span = g(w).spanMs();
        const QPointF pos(g(w).plotLeft() + x, 60);
        QSignalSpy range(&w, &TimelineWidget::visibleRangeChanged);
        QWheelEvent wheel(pos, w.mapToGlobal(pos), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(&w, &wheel);
        QVERIFY(g(w).spanMs() < span);
        QVERIFY(std::abs(g(w).timeForX(x) - before) <= 1e-6 * g(w).spanMs());
        QCOMPARE(range.count(), 1);
    }

    void manualPanLeavesFollowNow()
    {
        TimelineWidget w;
        showSmall(w);
        auto slice = smallSlice(kBase);
        slice.serverNow = ms(kBase + 60 * 1000);
        w.setSlice(slice);
        QSignalSpy follow(&w, &TimelineWidget::followNowChanged);
        w.setFollowNow(true);
        QVERIFY(w.followNow());
        QVERIFY(w.visibleFrom() < slice.serverNow.millis() && slice.serverNow.millis() < w.visibleTo());
        QVERIFY(static_cast<double>(w.visibleTo() - slice.serverNow.millis()) <
                g(w).spanMs() * 0.2); // now sits near the right edge
        const auto to = w.visibleTo();

        QTest::mousePress(&w, Qt::LeftButton, {}, QPoint(500, 80));
        QTest::mouseMove(&w, QPoint(560, 80));
        QTest::mouseMove(&w, QPoint(600, 80));
        QTest::mouseRelease(&w, Qt::LeftButton, {}, QPoint(600, 80));
        QVERIFY(!w.followNow());
        QCOMPARE(follow.count(), 2);
        QCOMPARE(follow.at(1).at(0).toBool(), false);
        QVERIFY(w.visibleTo() < to); // dragged right: earlier times

        QTest::keyClick(&w, Qt::Key_Home); // Home = follow now again
        QVERIFY(w.followNow());
        // Zooming says how much to see, not where: following goes on.
        QTest::keyClick(&w, Qt::Key_Minus);
        QVERIFY(w.followNow());
        QCOMPARE(follow.count(), 3);
        QTest::keyClick(&w, Qt::Key_Left); // a pan is a decision about where: it ends following
        QVERIFY(!w.followNow());
        QCOMPARE(follow.count(), 4);
    }

    void keyboard_data()
    {
        QTest::addColumn<int>("key");
        QTest::addColumn<double>("spanFactor"); // span after / span before
        QTest::addColumn<double>("shift");      // how far the centre moved, in spans before
        QTest::addColumn<bool>("following");    // follow now before the key (a pan ends it)
        QTest::addRow("Right pans later") << int(Qt::Key_Right) << 1.0 << 1.0 / 8 << true;
        QTest::addRow("Left pans earlier") << int(Qt::Key_Left) << 1.0 << -1.0 / 8 << true;
        // No pointer over the plot and no selection: around the centre.
        QTest::addRow("+ zooms in around the centre") << int(Qt::Key_Plus) << 1 / 1.5 << 0.0 << false;
        QTest::addRow("= zooms in (+ without Shift)") << int(Qt::Key_Equal) << 1 / 1.5 << 0.0 << false;
        QTest::addRow("- zooms out around the centre") << int(Qt::Key_Minus) << 1.5 << 0.0 << false;
    }

    void keyboard()
    {
        QFETCH(int, key);
        QFETCH(double, spanFactor);
        QFETCH(double, shift);
        QFETCH(bool, following);
        TimelineWidget w;
        showSmall(w);
        QCOMPARE(w.focusPolicy(), Qt::StrongFocus);
        w.setSlice(smallSlice(kBase + 1800 * 1000));
        w.setFollowNow(following);
        const double span = g(w).spanMs();
        const double centre = g(w).timeForX(g(w).plotWidth() / 2);
        QSignalSpy range(&w, &TimelineWidget::visibleRangeChanged);
        QTest::keyClick(&w, static_cast<Qt::Key>(key));
        QVERIFY2(std::abs(g(w).spanMs() - span * spanFactor) < 1e-6 * span,
                 qPrintable(QStringLiteral("span %1 -> %2").arg(span).arg(g(w).spanMs())));
        const double moved = g(w).timeForX(g(w).plotWidth() / 2) - centre;
        QVERIFY2(std::abs(moved - shift * span) < 1e-6 * span,
                 qPrintable(QStringLiteral("centre moved by %1 ms").arg(moved)));
        QCOMPARE(range.count(), 1);
        QVERIFY(!w.followNow()); // a pan ends following
        // With Ctrl the key is the window's (a shortcut), not navigation.
        const double before = g(w).startMs();
        QTest::keyClick(&w, static_cast<Qt::Key>(key), Qt::ControlModifier);
        QCOMPARE(g(w).startMs(), before);
    }

    void homeFollowsNow()
    {
        TimelineWidget w;
        showSmall(w);
        auto slice = smallSlice(kBase + 600 * 1000);
        slice.serverNow = ms(kBase + 40 * 3600 * 1000); // far right of the view
        w.setSlice(slice);
        QVERIFY(!w.followNow());
        QVERIFY(w.visibleTo() < slice.serverNow.millis());
        QSignalSpy follow(&w, &TimelineWidget::followNowChanged);
        QTest::keyClick(&w, Qt::Key_Home);
        QVERIFY(w.followNow());
        QCOMPARE(follow.count(), 1);
        QVERIFY(w.visibleFrom() < slice.serverNow.millis() && slice.serverNow.millis() < w.visibleTo());
    }

    void homeWinsOverAWindowShortcut()
    {
        // The console's toolbar has a checkable "Follow now" on Home: pressed
        // while it is checked, the shortcut would toggle following off. With
        // the timeline focused, Home is the timeline's and turns it on.
        QWidget window;
        auto* follow = new QAction(QStringLiteral("Follow now"), &window);
        follow->setCheckable(true);
        follow->setShortcut(Qt::Key_Home);
        window.addAction(follow);
        auto* w = new TimelineWidget(&window);
        window.resize(1000, 300);
        w->resize(1000, 300);
        QObject::connect(follow, &QAction::toggled, w, &TimelineWidget::setFollowNow);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        w->setFocus();
        QVERIFY(w->hasFocus());
        QTest::keyClick(w, Qt::Key_Home);
        QVERIFY(w->followNow());
        QVERIFY(!follow->isChecked()); // the shortcut never fired
        // Elsewhere in the window, Home is still the shortcut's.
        auto* other = new QWidget(&window);
        other->setFocusPolicy(Qt::StrongFocus);
        other->show();
        other->setFocus();
        QTest::keyClick(other, Qt::Key_Home);
        QVERIFY(follow->isChecked());
    }

    void upDownMoveTheCurrentLane()
    {
        TimelineWidget w;
        w.resize(1000, 36 + 3 * 34); // room for three lanes of ten
        w.setVisibleRange(kBase, kBase + 3600 * 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.setSlice(bigSlice(10, 2, 4, kBase, 3600 * 1000));
        QCOMPARE(w.currentLane(), 0);
        QTest::keyClick(&w, Qt::Key_Up);
        QCOMPARE(w.currentLane(), 0); // clamped
        for (int i = 1; i <= 9; ++i) {
            QTest::keyClick(&w, Qt::Key_Down);
            QCOMPARE(w.currentLane(), i);
            // Scrolled into view.
            QVERIFY(g(w).laneTop(i) >= g(w).plotTop() - 1e-9);
            QVERIFY(g(w).laneTop(i) + g(w).laneHeight() <= w.height() + 1e-9);
        }
        QTest::keyClick(&w, Qt::Key_Down);
        QCOMPARE(w.currentLane(), 9);
        QVERIFY(g(w).laneScroll() > 0);
        QTest::keyClick(&w, Qt::Key_Up);
        QCOMPARE(w.currentLane(), 8);
        // The lane is an environment: a new slice with a lane more before it keeps it.
        auto slice = bigSlice(10, 2, 4, kBase, 3600 * 1000);
        slice.environments.insert(slice.environments.begin(), "aaa");
        w.setSlice(slice);
        QCOMPARE(w.currentLane(), 9);
    }

    void markersAreSteppedInTime()
    {
        TimelineWidget w;
        showSmall(w);
        // prod: 6 at t-5min, 7 and 10 at t (the same millisecond), a queued
        // candidate (id 0) and 8 at t+5min; staging: 9 at t+1s; dev: 5 at t.
        const auto at = static_cast<std::int64_t>(g(w).timeForX(400));
        auto slice = smallSlice(at);
        slice.markers.push_back(marker(10, "prod", at, "publish"));
        slice.markers.push_back(marker(0, "prod", at + 100000, "queued"));
        slice.markers.push_back(marker(9, "staging", at + 1000, "operator"));
        w.setSlice(slice);
        QSignalSpy selected(&w, &TimelineWidget::eventSelected);
        auto step = [&](Qt::Key key, Qt::KeyboardModifiers modifiers = {}) {
            selected.clear();
            QTest::keyClick(&w, key, modifiers);
            return selected.isEmpty() ? qint64(-1) : selected.takeFirst().at(0).toLongLong();
        };

        QTest::keyClick(&w, Qt::Key_Down);
        QCOMPARE(w.currentLane(), 1); // prod
        // Nothing selected: from the view's centre (x = 440), the previous marker is at x = 400.
        QCOMPARE(step(Qt::Key_Comma), qint64(10));
        QCOMPARE(w.selectedEvent(), qint64(10));
        QCOMPARE(step(Qt::Key_Comma), qint64(7)); // same millisecond, lower id
        QCOMPARE(step(Qt::Key_Comma), qint64(6));
        QCOMPARE(step(Qt::Key_Comma), qint64(-1)); // the first: nothing happens
        QCOMPARE(w.selectedEvent(), qint64(6));
        QCOMPARE(step(Qt::Key_Period), qint64(7));
        QCOMPARE(step(Qt::Key_Period), qint64(10));
        QCOMPARE(step(Qt::Key_Period), qint64(8)); // past the queued candidate
        QCOMPARE(step(Qt::Key_Period), qint64(-1));
        QCOMPARE(w.selectedEvent(), qint64(8));
        QCOMPARE(w.currentLane(), 1);
        // Enter selects the selected marker again.
        QCOMPARE(step(Qt::Key_Return), qint64(8));
        QCOMPARE(step(Qt::Key_Enter), qint64(8));

        // Across all lanes ("<" and ">"), the current lane follows the marker.
        QCOMPARE(step(Qt::Key_Less), qint64(9)); // staging, t+1s
        QCOMPARE(w.currentLane(), 2);
        QCOMPARE(step(Qt::Key_Less), qint64(10)); // prod, t
        QCOMPARE(step(Qt::Key_Less), qint64(7));
        QCOMPARE(step(Qt::Key_Less), qint64(5)); // dev, t
        QCOMPARE(w.currentLane(), 0);
        QCOMPARE(step(Qt::Key_Greater), qint64(7));
        QCOMPARE(step(Qt::Key_Period, Qt::ShiftModifier), qint64(10)); // Shift+. is ">" too
        QCOMPARE(step(Qt::Key_Greater), qint64(9));
        // On the current lane only, staging has nothing later.
        QCOMPARE(step(Qt::Key_Period), qint64(-1));
        // A click selects, and the keyboard continues from there on its lane.
        QTest::mouseClick(&w, Qt::LeftButton, {}, w.markerPosition(6)->toPoint());
        QCOMPARE(w.currentLane(), 1);
        QCOMPARE(step(Qt::Key_Period), qint64(7));
    }

    void steppingRevealsTheMarker()
    {
        TimelineWidget w;
        showSmall(w);
        auto slice = smallSlice(kBase + 1800 * 1000);
        const std::int64_t later = kBase + 5 * 3600 * 1000; // far right of the view
        slice.markers.push_back(marker(99, "prod", later, "publish"));
        w.setSlice(slice);
        w.selectEvent(8);
        QSignalSpy range(&w, &TimelineWidget::visibleRangeChanged);
        QTest::keyClick(&w, Qt::Key_Period);
        QCOMPARE(w.selectedEvent(), qint64(99));
        QVERIFY(w.visibleFrom() < later && later < w.visibleTo());
        QCOMPARE(range.count(), 1);
    }

    void keysAreDocumented()
    {
        TimelineWidget w;
        for (const char* key :
             {"Left", "Right", "+", "Home", "Up", "Down", "Enter", "&gt;", "&lt;", "<b>F</b>", "Shift+F"})
            QVERIFY2(w.whatsThis().contains(QLatin1String(key)), key);
        QVERIFY(w.whatsThis().contains(QStringLiteral("<b>.</b> / <b>,</b>")));
        // Over the lane names, the tooltip lists the keys.
        showSmall(w);
        w.setSlice(smallSlice(kBase + 1800 * 1000));
        const QPoint inGutter(20, static_cast<int>(g(w).laneTop(1) + 5));
        QHelpEvent help(QEvent::ToolTip, inGutter, w.mapToGlobal(inGutter));
        QApplication::sendEvent(&w, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(QToolTip::text().contains(QStringLiteral("Home")), qPrintable(QToolTip::text()));
        QToolTip::hideText();
    }

    void focusIsVisible()
    {
        TimelineWidget w;
        w.setPalette(lightPalette());
        showSmall(w);
        w.setSlice(smallSlice(kBase + 1800 * 1000));
        const QColor highlight = w.palette().color(QPalette::Highlight);
        const int midLane1 = static_cast<int>(g(w).laneTop(1) + g(w).laneHeight() / 2);
        const int midLane2 = static_cast<int>(g(w).laneTop(2) + g(w).laneHeight() / 2);
        w.clearFocus();
        QVERIFY(!w.hasFocus());
        QImage unfocused = w.grab().toImage();
        QVERIFY(!near(unfocused.pixel(w.width() / 2, w.height() - 1), highlight));
        QVERIFY(!near(unfocused.pixel(2, midLane1), highlight));

        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        w.setFocus();
        QVERIFY(w.hasFocus());
        QTest::keyClick(&w, Qt::Key_Down);
        QImage focused = w.grab().toImage();
        // A frame along every edge, and the current lane marked in the gutter.
        QVERIFY(near(focused.pixel(w.width() / 2, w.height() - 1), highlight));
        QVERIFY(near(focused.pixel(w.width() / 2, 0), highlight));
        QVERIFY(near(focused.pixel(0, w.height() / 2), highlight));
        QVERIFY(near(focused.pixel(w.width() - 1, w.height() / 2), highlight));
        QVERIFY(near(focused.pixel(3, midLane1), highlight));
        QVERIFY(!near(focused.pixel(3, midLane2), highlight));
        QTest::keyClick(&w, Qt::Key_Down);
        focused = w.grab().toImage();
        QVERIFY(!near(focused.pixel(3, midLane1), highlight));
        QVERIFY(near(focused.pixel(3, midLane2), highlight));
    }

    void semanticColorsReadOnLightAndDark_data()
    {
        QTest::addColumn<QPalette>("palette");
        QTest::addRow("light") << lightPalette();
        QTest::addRow("dark") << darkPalette();
    }

    void semanticColorsReadOnLightAndDark()
    {
        QFETCH(QPalette, palette);
        const auto c = TimelineColors::fromPalette(palette);
        const QColor base = palette.color(QPalette::Base);
        for (MarkerKind kind : {MarkerKind::Publish, MarkerKind::Refusal, MarkerKind::Operator})
            QVERIFY2(relctl::ui::contrastRatio(c.marker(kind), base) >= TimelineColors::kMinContrast,
                     qPrintable(QStringLiteral("marker %1: %2 on %3, contrast %4")
                                    .arg(static_cast<int>(kind))
                                    .arg(c.marker(kind).name(), base.name())
                                    .arg(relctl::ui::contrastRatio(c.marker(kind), base))));
        for (auto ending : {relctl::ui::LeaseEnding::Expired, relctl::ui::LeaseEnding::Revoked})
            QVERIFY(relctl::ui::contrastRatio(c.ending(ending), base) >= TimelineColors::kMinContrast);
        // Red stays red, and stays the refusals' alone.
        const QColor refusal = c.marker(MarkerKind::Refusal);
        QVERIFY(refusal.hslHue() <= 10 || refusal.hslHue() >= 350);
        QVERIFY(refusal.hslSaturation() > 150);
        for (MarkerKind kind :
             {MarkerKind::Publish, MarkerKind::Superseded, MarkerKind::Queued, MarkerKind::Operator})
            QVERIFY(c.marker(kind) != refusal);
        QVERIFY(relctl::ui::contrastRatio(c.text, c.base) >= 4.5);
        QVERIFY(relctl::ui::contrastRatio(c.windowText, c.window) >= 4.5);
    }

    void paintsWithADarkPalette()
    {
        TimelineWidget w;
        w.setPalette(darkPalette());
        showSmall(w);
        w.setSlice(smallSlice(static_cast<std::int64_t>(g(w).timeForX(400))));
        const QImage image = w.grab().toImage();
        const QPalette& p = w.palette();
        // Backgrounds: the plot on Base, the gutter and axis on Window. Both dark.
        // (A row of lane 0 above its bars: only grid lines and the now line cross it.)
        const int left = static_cast<int>(g(w).plotLeft()) + 1;
        const QRect laneRow(left, static_cast<int>(g(w).laneTop(0)) + 1, w.width() - left - 2, 1);
        QVERIFY2(countNear(image, laneRow, p.color(QPalette::Base)) >= laneRow.width() * 9 / 10,
                 qPrintable(QColor(image.pixel(laneRow.center())).name()));
        QVERIFY(p.color(QPalette::Base).lightness() < 60);
        const QPoint emptyGutter(2, static_cast<int>(g(w).viewportHeight()) - 3); // above the legend
        QVERIFY(near(image.pixel(emptyGutter), p.color(QPalette::Window)));
        QVERIFY(QColor(image.pixel(emptyGutter)).lightness() < 60);
        // Lane names and axis labels are drawn in the palette's text color.
        const QColor text = p.color(QPalette::WindowText);
        for (int lane = 0; lane < 3; ++lane) {
            const QRect name(8, static_cast<int>(g(w).laneTop(lane)), static_cast<int>(g(w).plotLeft()) - 16,
                             static_cast<int>(g(w).laneHeight()));
            QVERIFY2(countNear(image, name, text, 8) >= 5, qPrintable(QStringLiteral("lane %1").arg(lane)));
        }
        const QRect axis(static_cast<int>(g(w).plotLeft()), 0, w.width() - static_cast<int>(g(w).plotLeft()),
                         static_cast<int>(g(w).plotTop()) - 2);
        QVERIFY(countNear(image, axis, text, 8) >= 20);
        QCOMPARE(countNear(image, axis, Qt::black, 30), 0); // no hard-coded dark text on the dark header
        // The refusal marker in its (dark-palette) red.
        const QColor red = TimelineColors::fromPalette(p).marker(MarkerKind::Refusal);
        QVERIFY(near(image.pixel(w.markerPosition(7)->toPoint()), red));
    }

    void rendersAtDevicePixelRatioTwo()
    {
        TimelineWidget w;
        showSmall(w);
        auto slice = smallSlice(static_cast<std::int64_t>(g(w).timeForX(400)));
        slice.serverNow =
            slice.serverNow + std::chrono::milliseconds(24 * 3600 * 1000); // the now line out of the way
        w.setSlice(slice);
        const QColor red = TimelineColors::fromPalette(w.palette()).marker(MarkerKind::Refusal);
        QImage one(w.size(), QImage::Format_ARGB32_Premultiplied);
        one.fill(Qt::transparent);
        w.render(&one);
        QImage two(w.size() * 2, QImage::Format_ARGB32_Premultiplied);
        two.setDevicePixelRatio(2);
        two.fill(Qt::transparent);
        w.render(&two);
        // Filled everywhere (the painter covers the whole logical area).
        QVERIFY(qAlpha(two.pixel(two.width() - 1, two.height() - 1)) == 255);
        // Each marker covers the same logical pixels at both ratios: compare
        // which pixels around it are its red, the 2x image sampled in the
        // middle of each logical pixel.
        for (qint64 id : {7}) {
            const QPoint c = w.markerPosition(id)->toPoint();
            int red1 = 0, agree = 0, total = 0;
            for (int dy = -8; dy <= 8; ++dy)
                for (int dx = -8; dx <= 8; ++dx) {
                    const QPoint q = c + QPoint(dx, dy);
                    const bool a = near(one.pixel(q), red, 10);
                    const bool b = near(two.pixel(q * 2 + QPoint(1, 1)), red, 10);
                    red1 += a;
                    agree += a == b;
                    ++total;
                }
            QVERIFY2(red1 >= 20, qPrintable(QString::number(red1)));
            QVERIFY2(agree >= total - total / 12,
                     qPrintable(QStringLiteral("%1 of %2").arg(agree).arg(total)));
            QVERIFY(near(two.pixel(c * 2), red, 10));
            // Drawn at the device's resolution, not a 1x stamp scaled up: the
            // slanted edges split some logical pixels into different device pixels.
            int detailed = 0;
            for (int dy = -8; dy <= 8; ++dy)
                for (int dx = -8; dx <= 8; ++dx) {
                    const QPoint q = (c + QPoint(dx, dy)) * 2;
                    const QRgb p = two.pixel(q);
                    if (!near(p, red, 60))
                        continue;
                    detailed += two.pixel(q + QPoint(1, 0)) != p || two.pixel(q + QPoint(0, 1)) != p ||
                                two.pixel(q + QPoint(1, 1)) != p;
                }
            QVERIFY2(detailed >= 4, qPrintable(QString::number(detailed)));
        }
        // The lane names land in the same place too.
        const QColor text = w.palette().color(QPalette::WindowText);
        const QRect name(8, static_cast<int>(g(w).laneTop(1)), static_cast<int>(g(w).plotLeft()) - 16,
                         static_cast<int>(g(w).laneHeight()));
        QVERIFY(countNear(two, name, text, 40) >= 4 * countNear(one, name, text, 40) / 2);
    }

    void legendExplainsEveryColourAndShape_data()
    {
        QTest::addColumn<QPalette>("palette");
        QTest::addRow("light") << lightPalette();
        QTest::addRow("dark") << darkPalette();
    }

    void legendExplainsEveryColourAndShape()
    {
        QFETCH(QPalette, palette);
        TimelineWidget w;
        w.setPalette(palette);
        showSmall(w);
        w.setSlice(smallSlice(kBase + 1800 * 1000));
        QVERIFY(w.legendVisible()); // by default
        w.setLegendExpanded(true);  // every entry, not only a quarter of the height's worth
        const auto colors = TimelineColors::fromPalette(palette);
        const QImage image = w.grab().toImage();
        QStringList labels;
        for (const auto& e : w.legend().entries()) {
            labels << e.label;
            QVERIFY2(e.shown(), qPrintable(e.label));
            if (e.swatch == relctl::ui::LegendEntry::Swatch::Caption)
                continue;
            // Below the lanes, inside the widget: it hides no data.
            QVERIFY2(w.rect().contains(e.rect), qPrintable(e.label));
            QVERIFY2(e.rect.top() >= g(w).viewportHeight(), qPrintable(e.label));
            QColor swatch;
            if (e.swatch == relctl::ui::LegendEntry::Swatch::Lease)
                swatch = colors.ending(static_cast<relctl::ui::LeaseEnding>(e.index));
            else if (e.swatch == relctl::ui::LegendEntry::Swatch::Marker)
                swatch = colors.marker(static_cast<MarkerKind>(e.index));
            else if (e.swatch == relctl::ui::LegendEntry::Swatch::Freeze)
                swatch = colors.frozen;
            if (swatch.isValid())
                QVERIFY2(countNear(image, e.swatchRect, swatch, 10) >= 4, qPrintable(e.label));
            // Its label is painted, in the plot's text colour.
            const QRect text = e.rect.adjusted(e.swatchRect.width(), 0, 0, 0);
            QVERIFY2(countNear(image, text, colors.text, 60) >= 3, qPrintable(e.label));
            // And it explains itself.
            QCOMPARE(w.legend().entryAt(e.rect.center()), &e);
            QVERIFY(!e.help.isEmpty());
        }
        for (const char* label :
             {"Live", "Released", "Expired", "Revoked", "Frozen", "Publish", "Refusal", "Superseded",
              "Queued", "Operator action", "Rollback", "Promotion decision"})
            QVERIFY2(labels.contains(QLatin1String(label)), label);
        const auto& entries = w.legend().entries();
        const auto refusal = std::find_if(entries.begin(), entries.end(),
                                          [](const auto& e) { return e.label == QStringLiteral("Refusal"); });
        QHelpEvent help(QEvent::ToolTip, refusal->rect.center(), w.mapToGlobal(refusal->rect.center()));
        QApplication::sendEvent(&w, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(QToolTip::text().contains(QStringLiteral("refused")), qPrintable(QToolTip::text()));
        QToolTip::hideText();
        // Shift+L hides it (the lanes get the room) and shows it again.
        QTest::keyClick(&w, Qt::Key_L, Qt::ShiftModifier);
        QVERIFY(!w.legendVisible());
        QCOMPARE(g(w).viewportHeight(), double(w.height()));
        QTest::keyClick(&w, Qt::Key_L, Qt::ShiftModifier);
        QVERIFY(w.legendVisible());
    }

    // The lanes are the data, the legend is help: it takes at most a quarter
    // of the height (at least a row). What does not fit is behind its last
    // entry, "+N more (L)", whose tooltip explains each entry left out; a
    // click on it, or L, shows the whole legend, which then ends in
    // "Fewer (L)" to go back. When it all fits, nothing of this shows and L
    // hides the legend, as it always did.
    void theLegendShowsMoreOnRequest()
    {
        using relctl::ui::LegendEntry;
        TimelineWidget w;
        showSmall(w);
        w.resize(800, 240); // the legend wants four rows, a quarter holds two
        w.setSlice(smallSlice(kBase + 1800 * 1000));
        const auto& legend = w.legend();
        const auto strip = [&] { return QRect(0, w.height() - legend.height(), w.width(), legend.height()); };
        // The shown entries and the toggle: inside the strip, none over another.
        const auto checkLaidOut = [&] {
            const std::vector<const LegendEntry*> shown = legend.drawn();
            for (std::size_t i = 0; i < shown.size(); ++i) {
                QVERIFY2(strip().contains(shown[i]->rect), qPrintable(shown[i]->label));
                for (std::size_t j = 0; j < i; ++j)
                    QVERIFY2(!shown[j]->rect.intersects(shown[i]->rect), qPrintable(shown[i]->label));
            }
            // The toggle is the last entry: on the last row, after every other.
            if (const LegendEntry* t = legend.toggle())
                for (const LegendEntry* e : shown)
                    QVERIFY2(e == t || e->rect.top() < t->rect.top() ||
                                 (e->rect.top() == t->rect.top() && e->rect.right() < t->rect.left()),
                             qPrintable(e->label));
            QCOMPARE(g(w).viewportHeight(), double(w.height() - legend.height()));
        };

        // The short legend.
        QVERIFY(!w.legendExpanded());
        QVERIFY2(legend.height() <= w.height() / 4, qPrintable(QString::number(legend.height())));
        QVERIFY(legend.height() >= relctl::ui::TimelineLegend::heightOf(w.font(), 1));
        checkLaidOut();
        const LegendEntry* more = legend.toggle();
        QVERIFY(more);
        QVERIFY(legend.hiddenCount() > 0);
        QCOMPARE(more->label, QStringLiteral("+%1 more (L)").arg(legend.hiddenCount()));
        // Its tooltip explains every entry left out, and how to see them.
        const QPoint onMore = more->rect.center();
        QHelpEvent help(QEvent::ToolTip, onMore, w.mapToGlobal(onMore));
        QApplication::sendEvent(&w, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        const QString tip = QToolTip::text();
        QToolTip::hideText();
        int hidden = 0;
        for (const auto& e : legend.entries()) {
            if (e.shown() || e.swatch == LegendEntry::Swatch::Caption)
                continue;
            ++hidden;
            QVERIFY2(tip.contains(e.label + QStringLiteral(": ") + e.help), qPrintable(tip));
        }
        QCOMPARE(hidden, legend.hiddenCount());
        QVERIFY2(tip.contains(QStringLiteral("press L")) && tip.contains(QStringLiteral("Shift+L")),
                 qPrintable(tip));
        // It is painted, as the other entries are.
        const auto colors = TimelineColors::fromPalette(w.palette());
        QVERIFY(countNear(w.grab().toImage(), more->rect, colors.text, 60) >= 3);
        const int shortHeight = legend.height();

        // L: the whole legend, ending in "Fewer (L)".
        QTest::keyClick(&w, Qt::Key_L);
        QVERIFY(w.legendExpanded());
        QVERIFY(w.legendVisible());
        for (const auto& e : legend.entries())
            QVERIFY2(e.shown(), qPrintable(e.label));
        QCOMPARE(legend.hiddenCount(), 0);
        QVERIFY(legend.toggle());
        QCOMPARE(legend.toggle()->label, QStringLiteral("Fewer (L)"));
        QVERIFY(legend.height() > shortHeight);
        checkLaidOut();
        // L again: the short one.
        QTest::keyClick(&w, Qt::Key_L);
        QVERIFY(!w.legendExpanded());
        QCOMPARE(legend.height(), shortHeight);
        QVERIFY(legend.toggle());
        QVERIFY(legend.toggle()->label.endsWith(QStringLiteral("more (L)")));

        // A click on the entry does the same, both ways.
        QTest::mouseClick(&w, Qt::LeftButton, {}, legend.toggle()->rect.center());
        QVERIFY(w.legendExpanded());
        QCOMPARE(legend.toggle()->label, QStringLiteral("Fewer (L)"));
        QTest::mouseClick(&w, Qt::LeftButton, {}, legend.toggle()->rect.center());
        QVERIFY(!w.legendExpanded());
        QCOMPARE(legend.height(), shortHeight);
        checkLaidOut();

        // Shift+L hides the legend whatever it shows, and shows it again.
        QTest::keyClick(&w, Qt::Key_L, Qt::ShiftModifier);
        QVERIFY(!w.legendVisible());
        QCOMPARE(g(w).viewportHeight(), double(w.height()));
        QTest::keyClick(&w, Qt::Key_L, Qt::ShiftModifier);
        QVERIFY(w.legendVisible());
        QCOMPARE(legend.height(), shortHeight);

        // It asks for the room to show it whole.
        QVERIFY(w.sizeHint().height() >= legend.wholeHeight() + g(w).plotTop());
        // Tall enough, the whole legend fits in its quarter: no toggle, and L
        // hides and shows the legend.
        w.resize(800, 700);
        QApplication::processEvents();
        QVERIFY(!legend.toggle());
        QCOMPARE(legend.hiddenCount(), 0);
        for (const auto& e : legend.entries())
            QVERIFY2(e.shown(), qPrintable(e.label));
        QVERIFY(legend.height() <= w.height() / 4);
        checkLaidOut();
        QTest::keyClick(&w, Qt::Key_L);
        QVERIFY(!w.legendVisible());
        QTest::keyClick(&w, Qt::Key_L);
        QVERIFY(w.legendVisible());
        QVERIFY(!legend.toggle());
    }

    void followNowLeavesRoomRightOfNow_data()
    {
        QTest::addColumn<double>("span");
        QTest::addRow("10 min") << 600e3;
        QTest::addRow("1 h") << 3600e3;
        QTest::addRow("1 d") << kDay;
    }

    void followNowLeavesRoomRightOfNow()
    {
        QFETCH(double, span);
        TimelineWidget w;
        showSmall(w);
        auto slice = smallSlice(kBase);
        slice.serverNow = ms(kBase + 60 * 1000);
        w.setSlice(slice);
        w.setVisibleRange(kBase - static_cast<std::int64_t>(span), kBase);
        w.setFollowNow(true);
        const double fraction = g(w).xForTime(w.serverNowEstimate()) / g(w).plotWidth();
        // Room for live leases' expiry and the queue, and the now line in view.
        QVERIFY2(fraction >= 0.75 && fraction <= 0.85, qPrintable(QString::number(fraction)));
        QVERIFY(std::abs(g(w).spanMs() - span) < 1e-6 * span);
    }

    void freezesAreShadedOnTheirLane()
    {
        TimelineWidget w;
        w.setPalette(lightPalette());
        showSmall(w); // kBase .. kBase + 1 h
        auto slice = smallSlice(kBase + 1800 * 1000);
        slice.serverNow = ms(kBase + 50 * 60 * 1000);
        // prod: begun two hours before the view, lifted 20 min into it;
        // staging: begun 40 min in, still in force.
        slice.freezes = {
            {"prod", ms(kBase - 2 * 3600 * 1000), ms(kBase + 20 * 60 * 1000), "alice", "incident 41"},
            {"staging", ms(kBase + 40 * 60 * 1000), std::nullopt, "bob", "quarter end"}};
        const auto lanes = relctl::ui::TimelineLanes::fromSlice(slice);
        QCOMPARE(lanes.lanes[1].freezes.size(), std::size_t(1)); // kept, on its environment's lane
        QCOMPARE(lanes.lanes[2].freezes.size(), std::size_t(1));
        QVERIFY(lanes.lanes[0].freezes.empty());
        w.setSlice(slice);
        const QImage image = w.grab().toImage();
        const auto background = [&](int lane) {
            return lane % 2 == 1 ? w.palette().color(QPalette::AlternateBase)
                                 : w.palette().color(QPalette::Base);
        };
        // A row below the bars and markers, 60 px of it at a time.
        const auto shaded = [&](int lane, std::int64_t at) {
            const int x = static_cast<int>(g(w).plotLeft() + g(w).xForTime(static_cast<double>(at)));
            const QRect row(x - 30, static_cast<int>(g(w).laneTop(lane) + g(w).laneHeight() - 2), 60, 1);
            return countNear(image, row, background(lane), 2) < 30;
        };
        QVERIFY(shaded(1, kBase + 10 * 60 * 1000));  // prod, begun before the view
        QVERIFY(!shaded(1, kBase + 30 * 60 * 1000)); // lifted by then
        QVERIFY(!shaded(2, kBase + 30 * 60 * 1000)); // staging, not yet
        QVERIFY(shaded(2, kBase + 45 * 60 * 1000));
        QVERIFY(shaded(2, kBase + 58 * 60 * 1000));  // in force: to the right edge
        QVERIFY(!shaded(0, kBase + 10 * 60 * 1000)); // dev was never frozen
        // Hovering a freeze says who and why.
        const QPoint inFreeze(static_cast<int>(g(w).plotLeft() + g(w).xForTime(kBase + 50.0 * 60 * 1000)),
                              static_cast<int>(g(w).laneTop(2) + g(w).laneHeight() - 3));
        const auto hit = w.itemAt(inFreeze);
        QVERIFY(hit.freeze);
        QCOMPARE(hit.freeze->by, std::string("bob"));
        QHelpEvent help(QEvent::ToolTip, inFreeze, w.mapToGlobal(inFreeze));
        QApplication::sendEvent(&w, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(QToolTip::text().contains(QStringLiteral("quarter end")), qPrintable(QToolTip::text()));
        QVERIFY(QToolTip::text().contains(QStringLiteral("still in force")));
        QToolTip::hideText();
    }

    void closeMarkersAreGroupedAndSeparateWhenZoomedIn()
    {
        TimelineWidget w;
        showSmall(w); // an hour over 880 px: about 4 s a pixel
        const std::int64_t t = kBase + 1800 * 1000;
        auto slice = smallSlice(t - 600 * 1000);
        slice.markers.push_back(marker(20, "prod", t, "publish"));
        slice.markers.push_back(marker(21, "prod", t + 2000, "refusal"));
        slice.markers.push_back(marker(22, "prod", t + 4000, "operator"));
        w.setSlice(slice);
        const auto hit = w.itemAt(w.markerPosition(21)->toPoint());
        QCOMPARE(hit.group.size(), std::size_t(3));
        for (qint64 id : {20, 22}) // every member hits the same glyph
            QCOMPARE(w.itemAt(w.markerPosition(id)->toPoint()).group.size(), std::size_t(3));
        // One glyph, with a count and the refusal's red (its ring: it holds one among other kinds).
        const QImage image = w.grab().toImage();
        const QColor red = TimelineColors::fromPalette(w.palette()).marker(MarkerKind::Refusal);
        const QPoint c = w.markerPosition(21)->toPoint();
        QVERIFY(countNear(image, QRect(c.x() - 8, c.y() - 6, 17, 13), red, 10) >= 20);
        // The tooltip lists each event: kind, time, job.
        QHelpEvent help(QEvent::ToolTip, c, w.mapToGlobal(c));
        QApplication::sendEvent(&w, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        const QString tip = QToolTip::text();
        QVERIFY2(tip.contains(QStringLiteral("3 events")), qPrintable(tip));
        for (const char* part :
             {"Publish", "Refusal", "Operator action", "deploy-20", "deploy-21", "deploy-22"})
            QVERIFY2(tip.contains(QLatin1String(part)), part);
        QVERIFY(tip.contains(relctl::ui::formatTime(t + 2000, true)));
        QToolTip::hideText();
        // A click selects one of them (the nearest), and the keyboard still reaches each.
        QSignalSpy selected(&w, &TimelineWidget::eventSelected);
        QTest::mouseClick(&w, Qt::LeftButton, {}, c);
        QCOMPARE(selected.count(), 1);
        QVERIFY(QList<qint64>({20, 21, 22}).contains(w.selectedEvent()));
        w.selectEvent(20);
        QTest::keyClick(&w, Qt::Key_Period);
        QCOMPARE(w.selectedEvent(), qint64(21));
        QTest::keyClick(&w, Qt::Key_Period);
        QCOMPARE(w.selectedEvent(), qint64(22));
        // Zoomed in, 2 s is some 70 px: each marker is its own glyph again.
        w.setVisibleRange(t - 10000, t + 14000);
        for (qint64 id : {20, 21, 22}) {
            const auto single = w.itemAt(w.markerPosition(id)->toPoint());
            QCOMPARE(single.group.size(), std::size_t(1));
            QCOMPARE(single.eventId(), id);
        }
    }

    void badgesNeverOverlapOrTouch()
    {
        TimelineWidget w;
        showSmall(w);
        // A second a pixel, so marker times are pixel positions.
        const double width = g(w).plotWidth();
        const std::int64_t from = kBase;
        w.setVisibleRange(from, from + static_cast<std::int64_t>(width * 1000));
        QCOMPARE(g(w).msPerPixel(), 1000.0);
        // Six markers over 9 px, then three over the next 8 px: grouped by
        // their first markers' distance alone, a "6" badge and a "3" badge
        // would sit 9 px apart, 14 px wide each: read as "63".
        auto slice = smallSlice(from + 600 * 1000);
        std::int64_t id = 100;
        for (int px : {300, 302, 304, 306, 308, 309, 310, 313, 318})
            slice.markers.push_back(marker(id++, "dev", from + px * 1000, "publish"));
        std::sort(slice.markers.begin(), slice.markers.end(),
                  [](const auto& a, const auto& b) { return std::tie(a.env, a.at) < std::tie(b.env, b.at); });
        w.setSlice(slice);
        const auto lanes = relctl::ui::TimelineLanes::fromSlice(slice);
        // Empty when every two neighbouring glyphs keep the gap, else what is wrong.
        const auto gapsIn = [&](const std::vector<relctl::ui::MarkerGroup>& groups, const char* what) {
            const double r = g(w).markerRadius();
            for (std::size_t i = 1; i < groups.size(); ++i) {
                const auto& a = groups[i - 1];
                const auto& b = groups[i];
                if (b.first != a.last) // every marker in exactly one glyph
                    return QStringLiteral("%1: markers %2 .. %3 in no glyph")
                        .arg(QLatin1String(what))
                        .arg(a.last)
                        .arg(b.first);
                const double gap =
                    (b.x - relctl::ui::groupHalfWidth(b, r)) - (a.x + relctl::ui::groupHalfWidth(a, r));
                if (gap < relctl::ui::kGlyphGapPx)
                    return QStringLiteral("%1: glyphs of %2 and %3 at %4 and %5 px, %6 px apart")
                        .arg(QLatin1String(what))
                        .arg(a.count())
                        .arg(b.count())
                        .arg(a.x)
                        .arg(b.x)
                        .arg(gap);
            }
            return QString();
        };
        const auto groups = relctl::ui::groupMarkers(lanes.lanes[0], g(w));
        QVERIFY2(gapsIn(groups, "dev").isEmpty(), qPrintable(gapsIn(groups, "dev")));
        const auto nine =
            std::find_if(groups.begin(), groups.end(), [](const auto& x) { return x.count() > 1; });
        QVERIFY(nine != groups.end());
        QCOMPARE(nine->count(), std::size_t(9)); // merged: one badge, one number
        // Hit-testing finds what was drawn: the one glyph, all nine in it.
        const QPoint centre(static_cast<int>(g(w).plotLeft() + nine->x), static_cast<int>(g(w).markerY(0)));
        QCOMPARE(w.itemAt(centre).group.size(), std::size_t(9));
        // And on the screen: between the badge and its neighbours, background.
        const QImage image = w.grab().toImage();
        const QColor base = w.palette().color(QPalette::Base);
        const double half = relctl::ui::groupHalfWidth(*nine, g(w).markerRadius());
        for (int dx : {-1, 1}) {
            const int x = static_cast<int>(centre.x() + dx * (half + 2));
            QVERIFY2(countNear(image, QRect(x, centre.y() - 4, 1, 9), base, 8) == 9,
                     qPrintable(QStringLiteral("column %1").arg(x)));
        }
        // Dense lanes at every zoom: never closer than the gap.
        const auto dense = relctl::ui::TimelineLanes::fromSlice(bigSlice(2, 20, 3000, kBase, 3600 * 1000));
        for (double span : {3600e3, 900e3, 300e3, 60e3, 20e3}) {
            w.setVisibleRange(kBase + 600 * 1000, kBase + 600 * 1000 + static_cast<std::int64_t>(span));
            for (const auto& lane : dense.lanes) {
                const auto glyphs = relctl::ui::groupMarkers(lane, g(w));
                QVERIFY2(gapsIn(glyphs, "dense").isEmpty(), qPrintable(gapsIn(glyphs, "dense")));
                QVERIFY(glyphs.size() > 3);
            }
        }
    }

    void aMixedBadgeIsNotARefusalBadge()
    {
        TimelineWidget w;
        w.setPalette(lightPalette());
        showSmall(w); // an hour over 880 px: about 4 s a pixel
        const std::int64_t t = kBase + 1800 * 1000;
        auto slice = smallSlice(t - 900 * 1000);
        // On prod: a refusal among operator actions; on staging: refusals alone.
        slice.markers.push_back(marker(30, "prod", t, "operator"));
        slice.markers.push_back(marker(31, "prod", t + 2000, "refusal"));
        slice.markers.push_back(marker(32, "prod", t + 4000, "operator"));
        slice.markers.push_back(marker(40, "staging", t, "refusal"));
        slice.markers.push_back(marker(41, "staging", t + 3000, "refusal"));
        std::sort(slice.markers.begin(), slice.markers.end(),
                  [](const auto& a, const auto& b) { return std::tie(a.env, a.at) < std::tie(b.env, b.at); });
        w.setSlice(slice);
        const auto lanes = relctl::ui::TimelineLanes::fromSlice(slice);
        const auto groupOf = [&](int lane, std::size_t count) {
            const auto groups = relctl::ui::groupMarkers(lanes.lanes[static_cast<std::size_t>(lane)], g(w));
            const auto found =
                std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.count() == count; });
            return found == groups.end() ? relctl::ui::MarkerGroup{} : *found;
        };
        using relctl::ui::GlyphStyle;
        const auto mixed = groupOf(1, 3);
        QCOMPARE(mixed.count(), std::size_t(3));
        QVERIFY(mixed.mixed());
        QVERIFY(mixed.kind != MarkerKind::Refusal);
        QCOMPARE(mixed.refusals, std::size_t(1));
        QCOMPARE(relctl::ui::glyphStyle(mixed), GlyphStyle::MixedRefusalBadge);
        const auto refusals = groupOf(2, 2);
        QCOMPARE(refusals.count(), std::size_t(2));
        QCOMPARE(refusals.kind, MarkerKind::Refusal);
        QCOMPARE(relctl::ui::glyphStyle(refusals), GlyphStyle::KindBadge);

        // On the screen: the refusals' badge is filled red; the mixed one is
        // grey inside, and its red is a ring around it. The whole legend
        // shows, its badges (the last entries) too.
        w.setLegendExpanded(true);
        const QImage image = w.grab().toImage();
        const auto colors = TimelineColors::fromPalette(w.palette());
        const QColor red = colors.marker(MarkerKind::Refusal);
        const auto badge = [&](int lane, const relctl::ui::MarkerGroup& group) {
            const double half = relctl::ui::groupHalfWidth(group, g(w).markerRadius());
            const QPoint c(static_cast<int>(g(w).plotLeft() + group.x), static_cast<int>(g(w).markerY(lane)));
            return QRect(c.x() - static_cast<int>(half), c.y() - 6, 2 * static_cast<int>(half) + 1, 13);
        };
        const QRect mixedRect = badge(1, mixed);
        const QRect inner = mixedRect.adjusted(3, 3, -3, -3);
        QVERIFY2(countNear(image, inner, red, 40) == 0, "the mixed badge is not filled red");
        QVERIFY2(countNear(image, inner, colors.mixed, 10) >= 10, "the mixed badge is grey");
        QVERIFY2(countNear(image, mixedRect, red, 10) >= 20, "its ring is red");
        const QRect refusalRect = badge(2, refusals);
        QVERIFY(countNear(image, refusalRect.adjusted(3, 3, -3, -3), red, 10) >= 10);
        // The legend shows the three badges, the refusal's ring on one only.
        int withRing = 0;
        int badges = 0;
        for (const auto& e : w.legend().entries()) {
            if (e.swatch != relctl::ui::LegendEntry::Swatch::Group)
                continue;
            ++badges;
            if (countNear(image, e.swatchRect, red, 10) >= 10) {
                ++withRing;
                QVERIFY2(e.help.contains(QStringLiteral("refusal")), qPrintable(e.help));
            }
        }
        QCOMPARE(badges, 3);
        QCOMPARE(withRing, 1);
    }

    void tooltipsGoWithTheirItem()
    {
        TimelineWidget w;
        showSmall(w);
        const auto slice = smallSlice(kBase + 1800 * 1000);
        w.setSlice(slice);
        const QPoint at = w.markerPosition(7)->toPoint();
        const auto show = [&] {
            QHelpEvent help(QEvent::ToolTip, at, w.mapToGlobal(at));
            QApplication::sendEvent(&w, &help);
            return QTest::qWaitFor([] { return QToolTip::isVisible(); }) &&
                   QToolTip::text().contains(QStringLiteral("Refusal"));
        };
        // QToolTip hides a tip 300 ms after it is told to; without the
        // widget telling it, one stayed 10 s and more (40 ms for every
        // character beyond 100), over whatever had moved under it by then.
        const auto hidden = [] { return QTest::qWaitFor([] { return !QToolTip::isVisible(); }, 1000); };
        // Leaving the widget hides it.
        QVERIFY(show());
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(&w, &leave);
        QVERIFY(hidden());
        // Panning and zooming by keys (no pointer event to hide it) hide it.
        QVERIFY(show());
        QTest::keyClick(&w, Qt::Key_Left);
        QVERIFY(hidden());
        QTest::keyClick(&w, Qt::Key_Right);
        QVERIFY(show());
        QTest::keyClick(&w, Qt::Key_Plus);
        QVERIFY(hidden());
        QTest::keyClick(&w, Qt::Key_Minus);
        // A new slice keeps it while the item is still there, and hides it
        // when the item is gone.
        w.setVisibleRange(kBase, kBase + 3600 * 1000);
        QVERIFY(show());
        w.setSlice(slice);
        QTest::qWait(400);
        QVERIFY(QToolTip::isVisible());
        auto without = slice;
        without.markers.erase(std::remove_if(without.markers.begin(), without.markers.end(),
                                             [](const auto& m) { return m.eventId == 7; }),
                              without.markers.end());
        w.setSlice(without);
        QVERIFY(hidden());
        // Following now moves the item away from under the pointer: gone with it.
        w.setSlice(slice);
        QVERIFY(show());
        w.setFollowNow(true);
        QVERIFY(hidden());
        w.setFollowNow(false);
        // It belongs to the glyph's area: moving off the item hides it.
        w.setVisibleRange(kBase, kBase + 3600 * 1000);
        QVERIFY(show());
        QTest::mouseMove(&w, at + QPoint(40, 0));
        QVERIFY(hidden());
    }

    void zoomKeysFollowThePointer()
    {
        TimelineWidget w;
        showSmall(w);
        w.setSlice(smallSlice(kBase + 1800 * 1000));
        // The pointer over the plot: the time under it stays under it.
        const QPoint pointer(static_cast<int>(g(w).plotLeft()) + 200, static_cast<int>(g(w).markerY(0)));
        QTest::mouseMove(&w, pointer);
        const double px = pointer.x() - g(w).plotLeft();
        for (auto key : {Qt::Key_Plus, Qt::Key_Plus, Qt::Key_Minus}) {
            const double before = g(w).timeForX(px);
            const double span = g(w).spanMs();
            QTest::keyClick(&w, key);
            QVERIFY(g(w).spanMs() != span);
            QVERIFY2(std::abs(g(w).xForTime(before) - px) <= 1.0,
                     qPrintable(QStringLiteral("moved to %1 px").arg(g(w).xForTime(before))));
        }
        // The pointer gone: around the selected marker, which stays in place.
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(&w, &leave);
        w.setVisibleRange(kBase + 600 * 1000, kBase + 4200 * 1000); // event 7 a third of the way in
        w.selectEvent(7);
        const double markerX = w.markerPosition(7)->x();
        QVERIFY(std::abs(markerX - (g(w).plotLeft() + g(w).plotWidth() / 2)) > 50); // not the centre
        QTest::keyClick(&w, Qt::Key_Plus);
        QVERIFY(std::abs(w.markerPosition(7)->x() - markerX) <= 1.0);
        // Following now: zooming keeps following, the now line where it was.
        auto slice = smallSlice(kBase + 1800 * 1000);
        w.setSlice(slice);
        w.setFollowNow(true);
        QSignalSpy follow(&w, &TimelineWidget::followNowChanged);
        QTest::mouseMove(&w, pointer);
        for (auto key : {Qt::Key_Plus, Qt::Key_Minus, Qt::Key_Minus}) {
            const double span = g(w).spanMs();
            QTest::keyClick(&w, key);
            QVERIFY(w.followNow());
            QVERIFY(g(w).spanMs() != span);
            const double fraction = g(w).xForTime(w.serverNowEstimate()) / g(w).plotWidth();
            QVERIFY2(std::abs(fraction - 5.0 / 6) < 0.01, qPrintable(QString::number(fraction)));
        }
        const QPointF pos(pointer);
        QWheelEvent wheel(pos, w.mapToGlobal(pos), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(&w, &wheel);
        QVERIFY(w.followNow());
        QCOMPARE(follow.count(), 0);
    }

    void coloursAreTheSharedTable()
    {
        namespace tc = relctl::timelinecolours;
        const auto light = TimelineColors::fromPalette(lightPalette());
        const auto dark = TimelineColors::fromPalette(darkPalette());
        for (const char* ending : {"live", "released", "expired", "revoked"}) {
            const auto e = relctl::ui::leaseEnding(ending);
            // On white with black text, exactly the table (shared with the rehearsal report).
            QCOMPARE(light.ending(e).name(), QString::fromLatin1(tc::forEnding(ending).data(), 7));
            // On a dark theme, the same hue.
            if (light.ending(e).hslSaturation() == 0) // a grey: a share of the theme's text colour
                QVERIFY(dark.ending(e).hslSaturation() < 30);
            else
                QCOMPARE(dark.ending(e).hslHue(), light.ending(e).hslHue());
        }
        for (const char* kind :
             {"publish", "refusal", "superseded", "queued", "operator", "rollback", "promotion"}) {
            const auto k = relctl::ui::markerKind(kind);
            QCOMPARE(light.marker(k).name(), QString::fromLatin1(tc::forMarker(kind).data(), 7));
            if (light.marker(k).hslSaturation() == 0)
                QVERIFY2(dark.marker(k).hslSaturation() < 30, kind);
            else
                QVERIFY2(std::abs(dark.marker(k).hslHue() - light.marker(k).hslHue()) <= 2, kind);
        }
        // Live is blue and released is grey, in the console as in the report.
        QVERIFY(std::abs(light.ending(relctl::ui::LeaseEnding::Live).hslHue() - 210) <= 20);
        QCOMPARE(light.ending(relctl::ui::LeaseEnding::Released).hslSaturation(), 0);
    }

    void zoomToFit()
    {
        TimelineWidget w;
        showSmall(w);
        const std::int64_t at = kBase + 1800 * 1000;
        auto slice = smallSlice(at);
        slice.historyFirst = ms(at - 30 * static_cast<std::int64_t>(kDay));
        slice.historyLast = ms(at + 600 * 1000);
        w.setSlice(slice);
        QVERIFY(!w.zoomToSelection()); // nothing selected
        w.selectEvent(7);              // the refusal inside lease 11: at - 3 h .. at + 60 s
        w.setFollowNow(true);
        QTest::keyClick(&w, Qt::Key_F);
        QVERIFY(!w.followNow());
        const std::int64_t from = at - 3 * 3600 * 1000, to = at + 60000;
        QVERIFY(w.visibleFrom() <= from && w.visibleTo() >= to);
        QVERIFY2(g(w).spanMs() <= 1.15 * static_cast<double>(to - from),
                 qPrintable(QString::number(g(w).spanMs())));
        // A refusal after its job's lease expired: that lease, not the view around it.
        slice.leases.push_back(lease("prod", 12, at + 120000, at + 180000, "expired"));
        slice.markers.push_back(marker(12, "prod", at + 200000, "refusal")); // job deploy-12
        w.setSlice(slice);
        w.selectEvent(12);
        QVERIFY(w.zoomToSelection());
        QVERIFY(w.visibleFrom() <= at + 120000 && w.visibleTo() >= at + 200000); // the lease and the refusal
        QVERIFY(g(w).spanMs() <= 1.15 * 80000);
        // Shift+F: the whole history, from the trail's first event to its last.
        QTest::keyClick(&w, Qt::Key_F, Qt::ShiftModifier);
        QVERIFY(w.visibleFrom() <= slice.historyFirst->millis() &&
                w.visibleTo() >= slice.historyLast->millis());
        QVERIFY(g(w).spanMs() <=
                1.15 * static_cast<double>(slice.historyLast->millis() - slice.historyFirst->millis()));
        // Without the trail's extent, the slice's items are the history.
        slice.historyFirst.reset();
        slice.historyLast.reset();
        w.setSlice(slice);
        QVERIFY(w.zoomToHistory());
        QVERIFY(w.visibleFrom() <= at - 3 * 3600 * 1000 && w.visibleTo() >= at + 300000);
        QVERIFY(g(w).spanMs() <= 1.15 * static_cast<double>(3 * 3600 * 1000 + 300000));
    }

    void durationsReadAsPeopleSayThem_data()
    {
        QTest::addColumn<qint64>("held");
        QTest::addColumn<QString>("text");
        QTest::addRow("under a second") << qint64(850) << QStringLiteral("held 850 ms");
        QTest::addRow("minutes") << qint64(103292) << QStringLiteral("held 1 min 43 s");
        QTest::addRow("hours") << qint64((2 * 60 + 5) * 60 * 1000) << QStringLiteral("held 2 h 05 min");
    }

    void durationsReadAsPeopleSayThem()
    {
        QFETCH(qint64, held);
        QFETCH(QString, text);
        TimelineWidget w;
        showSmall(w);
        const std::int64_t start = kBase + 600 * 1000;
        w.setVisibleRange(start - held / 4, start + held + held / 4);
        relctl::TimelineSlice slice;
        slice.environments = {"prod"};
        slice.serverNow = ms(start + 10 * held);
        slice.leases = {lease("prod", 3, start, start + held)};
        w.setSlice(slice);
        const QPoint onBar(static_cast<int>(g(w).plotLeft() + g(w).xForTime(static_cast<double>(start) +
                                                                            static_cast<double>(held) / 2)),
                           static_cast<int>(g(w).barTop(0) + 5));
        QHelpEvent help(QEvent::ToolTip, onBar, w.mapToGlobal(onBar));
        QApplication::sendEvent(&w, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(QToolTip::text().contains(text), qPrintable(QToolTip::text()));
        QToolTip::hideText();
    }

    // A live lease says how long it has been held until now, and how long
    // it has left: not the span it was granted (acquired to expiry).
    void aLiveLeaseSaysHowLongItHasBeenHeld()
    {
        TimelineWidget w;
        showSmall(w);
        const std::int64_t start = kBase + 600 * 1000;
        const std::int64_t now = start + 2 * 60 * 1000;
        w.setFollowNow(false);
        w.setVisibleRange(start - 60 * 1000, start + 10 * 60 * 1000);
        relctl::TimelineSlice slice;
        slice.environments = {"prod"};
        slice.serverNow = ms(now);
        slice.leases = {lease("prod", 3, start, now + 5 * 60 * 1000, "live")};
        w.setSlice(slice);
        const QPoint onBar(
            static_cast<int>(g(w).plotLeft() + g(w).xForTime(static_cast<double>(start + 30 * 1000))),
            static_cast<int>(g(w).barTop(0) + 5));
        QHelpEvent help(QEvent::ToolTip, onBar, w.mapToGlobal(onBar));
        QApplication::sendEvent(&w, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        const QString text = QToolTip::text();
        // The server's present moves on locally between slices: a second of slack.
        QVERIFY2(text.contains(QStringLiteral("held 2 min 0 s so far")) ||
                     text.contains(QStringLiteral("held 2 min 1 s so far")),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("expires in 5 min 0 s")) ||
                     text.contains(QStringLiteral("expires in 4 min 59 s")),
                 qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("held 7 min")), qPrintable(text));
        QToolTip::hideText();
    }

    void manyLanesScrollInASmallWidget()
    {
        TimelineWidget w;
        w.resize(800, 220);
        w.setVisibleRange(kBase, kBase + 3600 * 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.setSlice(bigSlice(20, 2, 4, kBase, 3600 * 1000));
        // It may be made this small (the axis, three lanes and a row of
        // legend), and asks for no more than a few lanes.
        QVERIFY(w.minimumSizeHint().height() <= 170);
        QVERIFY(w.minimumSizeHint().height() >=
                g(w).plotTop() + 3 * g(w).laneHeight() + relctl::ui::TimelineLegend::heightOf(w.font(), 1));
        QVERIFY(w.sizeHint().height() <=
                g(w).plotTop() + 8 * g(w).laneHeight() + w.legend().wholeHeight() + 2);
        auto* bar = w.findChild<QScrollBar*>();
        QVERIFY(bar);
        QVERIFY(bar->isVisible());
        QCOMPARE(bar->orientation(), Qt::Vertical);
        // The axis stays on top, the legend at the bottom, the lanes between.
        QVERIFY(g(w).viewportHeight() <= w.height() - w.legend().height() + 1);
        QVERIFY(bar->geometry().top() >= g(w).plotTop() && bar->geometry().bottom() < g(w).viewportHeight());
        // The scroll bar reaches the last lane.
        bar->setValue(bar->maximum());
        QVERIFY(g(w).laneTop(19) >= g(w).plotTop());
        QVERIFY(g(w).laneTop(19) + g(w).laneHeight() <= g(w).viewportHeight() + 1e-9);
        // The wheel over the lane names scrolls them (without a modifier) and the bar follows.
        const QPointF gutter(20, 100);
        QWheelEvent up(gutter, w.mapToGlobal(gutter), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                       Qt::NoScrollPhase, false);
        const double span = g(w).spanMs();
        QApplication::sendEvent(&w, &up);
        QCOMPARE(g(w).spanMs(), span); // not a zoom
        QCOMPARE(bar->value(), static_cast<int>(std::lround(g(w).laneScroll())));
        QVERIFY(bar->value() < bar->maximum());
        // Up/Down scroll the current lane into view, the bar with them.
        w.setCurrentLane(0);
        QCOMPARE(bar->value(), 0);
        for (int i = 1; i < 20; ++i)
            QTest::keyClick(&w, Qt::Key_Down);
        QCOMPARE(w.currentLane(), 19);
        QVERIFY(g(w).laneTop(19) + g(w).laneHeight() <= g(w).viewportHeight() + 1e-9);
        QCOMPARE(bar->value(), bar->maximum());
        // The lanes under the bar are not hit through it, and the plot ends at its edge.
        QVERIFY(g(w).plotLeft() + g(w).plotWidth() <= bar->geometry().left() + 1e-9);
    }

    void paintsTenThousandLeases()
    {
        TimelineWidget w;
        w.resize(1600, 900);
        const std::int64_t span = 6 * 3600 * 1000;
        w.setVisibleRange(kBase, kBase + span);
        w.setSlice(bigSlice(10, 1000, 2000, kBase, span));
        QImage image(1600, 900, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        w.render(&image);
        const QRgb first = image.pixel(0, 0);
        bool varied = false;
        for (int y = 0; y < image.height() && !varied; y += 3)
            for (int x = 0; x < image.width() && !varied; x += 3)
                varied = image.pixel(x, y) != first;
        QVERIFY(varied);
        // A live lease's color (the shared table's blue) made it into a lane.
        const QRgb live =
            TimelineColors::fromPalette(w.palette()).ending(relctl::ui::LeaseEnding::Live).rgb();
        bool liveSeen = false;
        for (int x = 120; x < image.width() && !liveSeen; ++x)
            liveSeen = image.pixel(x, static_cast<int>(g(w).barTop(0) + 5)) == live;
        QVERIFY(liveSeen);
    }

    void benchmarkPaint()
    {
        if (qEnvironmentVariable("RELCTL_BENCH") != QStringLiteral("1"))
            QSKIP("set RELCTL_BENCH=1 to measure paint time");
        TimelineWidget w;
        w.resize(1600, 900);
        const std::int64_t span = 6 * 3600 * 1000;
        auto slice = bigSlice(10, 1000, 2000, kBase, span);
        QElapsedTimer arranging;
        arranging.start();
        w.setSlice(std::move(slice));
        qInfo("setSlice (10,000 leases + 20,000 markers): %.2f ms",
              static_cast<double>(arranging.nsecsElapsed()) / 1e6);
        QImage image(1600, 900, QImage::Format_ARGB32_Premultiplied);
        int saved = 0;
        auto measure = [&](const char* what) {
            std::vector<double> ms;
            for (int i = 0; i < 30; ++i) {
                QElapsedTimer timer;
                timer.start();
                w.render(&image);
                ms.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
            }
            std::sort(ms.begin(), ms.end());
            qInfo("%s: median %.2f ms, min %.2f ms, max %.2f ms (30 renders, 1600x900)", what,
                  ms[ms.size() / 2], ms.front(), ms.back());
            // To look at what was measured: RELCTL_BENCH_PNG=prefix saves it.
            if (const QString prefix = qEnvironmentVariable("RELCTL_BENCH_PNG"); !prefix.isEmpty())
                image.save(prefix + QString::number(++saved) + QStringLiteral(".png"));
        };
        w.setVisibleRange(kBase, kBase + span);
        measure("10,000 leases + 20,000 markers in view");
        w.setVisibleRange(kBase + span / 2, kBase + span / 2 + span / 50);
        measure("zoomed in (labels drawn)");
    }

private:
    static const TimelineGeometry& g(const TimelineWidget& w) { return w.timelineGeometry(); }

    static void showSmall(TimelineWidget& w)
    {
        w.resize(1000, 300);
        w.setVisibleRange(kBase, kBase + 3600 * 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
    }

    // Three lanes; in "prod" a refusal (event 7) at `at`, and a lease around
    // it that starts well before, with other markers more than 20 px away.
    static relctl::TimelineSlice smallSlice(std::int64_t at)
    {
        relctl::TimelineSlice slice;
        slice.environments = {"dev", "prod", "staging"};
        slice.serverNow = ms(at);
        slice.leases = {lease("dev", 10, at - 600000, at - 500000),
                        lease("prod", 11, at - 3 * 3600 * 1000, at + 60000, "live")};
        slice.markers = {marker(5, "dev", at, "publish"), marker(6, "prod", at - 300000, "publish"),
                         marker(7, "prod", at, "refusal"), marker(8, "prod", at + 300000, "queued")};
        return slice;
    }
};

QTEST_MAIN(TestTimeline)
#include "test_timeline.moc"
