#include "timelinegeometry.h"

#include <QDateTime>
#include <QTimeZone>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace relctl::ui {

namespace {

constexpr double kSecond = 1000;
constexpr double kMinute = 60 * kSecond;
constexpr double kHour = 60 * kMinute;
constexpr double kDay = 24 * kHour;

// Steps people count in: 1-2-5 below a second, then the clock's own divisions.
constexpr std::array kLadder{
    1.0,         2.0,         5.0,          10.0,         20.0,         50.0,         100.0,        200.0,
    500.0,       kSecond,     2 * kSecond,  5 * kSecond,  10 * kSecond, 15 * kSecond, 30 * kSecond, kMinute,
    2 * kMinute, 5 * kMinute, 10 * kMinute, 15 * kMinute, 30 * kMinute, kHour,        2 * kHour,    3 * kHour,
    6 * kHour,   12 * kHour,  kDay,         2 * kDay,     7 * kDay,
};

// 1970-01-01 was a Thursday: weekly ticks are shifted to fall on Mondays.
constexpr double kMondayOffset = 4 * kDay;

QDateTime utc(double ms)
{
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(ms), Qt::UTC);
}

QString labelFormat(double step)
{
    if (step < kSecond)
        return QStringLiteral("HH:mm:ss.zzz");
    if (step < kMinute)
        return QStringLiteral("HH:mm:ss");
    if (step < kDay)
        return QStringLiteral("HH:mm");
    // A week reads by its days: "Mon Nov 30"; weeks and longer by dates.
    if (step < 7 * kDay)
        return QStringLiteral("ddd MMM d");
    return QStringLiteral("MMM d");
}

} // namespace

void TimelineGeometry::setRange(double startMs, double endMs)
{
    if (!(endMs > startMs)) // also catches NaN
        endMs = startMs + kMinSpanMs;
    const double span = std::clamp(endMs - startMs, kMinSpanMs, kMaxSpanMs);
    const double centre = startMs + (endMs - startMs) / 2;
    if (span != endMs - startMs) {
        startMs = centre - span / 2;
        endMs = startMs + span;
    }
    m_start = startMs;
    m_end = endMs;
}

void TimelineGeometry::setPlotWidth(double widthPx)
{
    // A zero width would make every mapping divide by zero while the widget
    // is still being laid out.
    m_width = std::max(1.0, widthPx);
}

void TimelineGeometry::zoomAround(double x, double factor)
{
    if (!(factor > 0))
        return;
    const double anchor = timeForX(x);
    const double fraction = x / m_width;
    const double span = std::clamp(spanMs() / factor, kMinSpanMs, kMaxSpanMs);
    m_start = anchor - fraction * span;
    m_end = m_start + span;
}

void TimelineGeometry::panByPixels(double dx)
{
    const double dt = dx * msPerPixel();
    m_start -= dt;
    m_end -= dt;
}

void TimelineGeometry::setLaneCount(int count)
{
    m_lanes = std::max(0, count);
    clampScroll();
}

void TimelineGeometry::setViewportHeight(double px)
{
    m_viewportHeight = px;
    clampScroll();
}

int TimelineGeometry::laneAt(double y) const
{
    if (y < m_header)
        return -1;
    const double lane = std::floor((y - m_header + m_scrollY) / m_laneHeight);
    if (lane < 0 || lane >= m_lanes)
        return -1;
    return static_cast<int>(lane);
}

std::pair<int, int> TimelineGeometry::visibleLanes() const
{
    const int first = std::clamp(static_cast<int>(std::floor(m_scrollY / m_laneHeight)), 0, m_lanes);
    const int last =
        std::clamp(static_cast<int>(std::ceil((m_scrollY + m_viewportHeight - m_header) / m_laneHeight)),
                   first, m_lanes);
    return {first, last};
}

void TimelineGeometry::scrollLanesBy(double dy)
{
    m_scrollY += dy;
    clampScroll();
}

void TimelineGeometry::ensureLaneVisible(int lane)
{
    const double top = laneTop(lane);
    if (top < m_header)
        m_scrollY -= m_header - top;
    else if (top + m_laneHeight > m_viewportHeight)
        m_scrollY += top + m_laneHeight - m_viewportHeight;
    clampScroll();
}

void TimelineGeometry::clampScroll()
{
    m_scrollY = std::clamp(m_scrollY, 0.0, std::max(0.0, contentHeight() - m_viewportHeight));
}

std::vector<TimelineGeometry::Tick> TimelineGeometry::niceTicks(double minSpacingPx) const
{
    std::vector<Tick> ticks;
    const double minStep = minSpacingPx * msPerPixel();
    const auto uniform = std::find_if(kLadder.begin(), kLadder.end(), [&](double s) { return s >= minStep; });

    if (uniform != kLadder.end()) {
        const double step = *uniform;
        const double offset = step == 7 * kDay ? kMondayOffset : 0.0;
        const QString format = labelFormat(step);
        // Whole-ms multiples of the step, so ticks land on round times; all
        // values stay exact in a double.
        QDate previousDay;
        int previousYear = 0;
        // Counted in whole steps: a double counter would drift by its sums.
        for (auto k = static_cast<std::int64_t>(std::ceil((m_start - offset) / step));; ++k) {
            const double t = static_cast<double>(k) * step + offset;
            if (t > m_end)
                break;
            const QDateTime at = utc(t);
            Tick tick{t, xForTime(t), at.toString(format), {}, false};
            // The date is shown where the day changes (and at the first tick,
            // so the reader never has to guess it); above a day, the year.
            if (step < kDay) {
                tick.major = at.date() != previousDay;
                if (tick.major)
                    tick.context = at.toString(QStringLiteral("ddd yyyy-MM-dd"));
            } else {
                tick.major = at.date().year() != previousYear;
                if (tick.major)
                    tick.context = at.toString(QStringLiteral("yyyy"));
            }
            previousDay = at.date();
            previousYear = at.date().year();
            ticks.push_back(std::move(tick));
        }
        return ticks;
    }

    // Months have no fixed length, so they cannot be multiples of a step in
    // ms: count calendar months, sized by the shortest (28 days) so that even
    // February keeps the spacing.
    int months = 1;
    for (int candidate : {1, 2, 3, 6, 12}) {
        months = candidate;
        if (candidate * 28 * kDay >= minStep)
            break;
    }
    while (months * 28 * kDay < minStep)
        months += 12;
    const QDate first = utc(m_start).date();
    QDate day(first.year(), 1, 1);
    int previousYear = 0;
    for (int guard = 0; guard < 10000; ++guard, day = day.addMonths(months)) {
        const double t = static_cast<double>(QDateTime(day, QTime(0, 0), Qt::UTC).toMSecsSinceEpoch());
        if (t > m_end)
            break;
        if (t < m_start)
            continue;
        Tick tick{t, xForTime(t), day.toString(QStringLiteral("MMM")), {}, day.year() != previousYear};
        if (tick.major)
            tick.context = day.toString(QStringLiteral("yyyy"));
        previousYear = day.year();
        ticks.push_back(std::move(tick));
    }
    return ticks;
}

} // namespace relctl::ui
