// The timeline widget's layout (legend, lane viewport, scroll bar, size
// hints) and its zoom to fit, apart from timelinewidget.cpp's interaction
// code to keep each file small.

#include "timelinelegend.h"
#include "timelinepainter.h"
#include "timelinewidget.h"

#include <QFontMetrics>
#include <QScrollBar>
#include <QStyle>
#include <algorithm>
#include <cmath>

namespace relctl::ui {

QSize TimelineWidget::sizeHint() const
{
    // Room for the lanes up to a point: beyond eight they scroll, so a
    // console with many environments does not push the docks off the screen.
    // And for the whole legend: given less, it shortens to a quarter of the
    // height, and the lanes keep the rest.
    const int lanes = std::clamp(m_rows.count(), 3, 8);
    return {900, static_cast<int>(m_geometry.plotTop() + lanes * m_geometry.laneHeight()) +
                     m_legend->wholeHeight() + 2};
}

QSize TimelineWidget::minimumSizeHint() const
{
    // The axis, three lanes and a row of legend (it shortens to one, ending
    // in "+N more"): the rest scrolls, so the window can shrink and still
    // show a few lanes side by side.
    return {static_cast<int>(m_geometry.plotLeft()) + 200,
            static_cast<int>(m_geometry.plotTop() + 3 * m_geometry.laneHeight()) +
                (m_legendVisible ? TimelineLegend::heightOf(font(), 1) : 0)};
}

void TimelineWidget::setLegendVisible(bool on)
{
    if (m_legendVisible == on)
        return;
    m_legendVisible = on;
    hideTip();
    layoutLanes();
    updateGeometry();
    update();
}

void TimelineWidget::setLegendExpanded(bool on)
{
    if (m_legendExpanded == on)
        return;
    m_legendExpanded = on;
    hideTip(); // it described the entry that just changed
    layoutLanes();
    updateGeometry();
    update();
}

void TimelineWidget::stepLegend(bool hideOrShow)
{
    // L does what the legend's last entry offers; with none (it all fits),
    // and with Shift, it hides or shows the legend.
    if (!m_legendVisible) {
        setLegendVisible(true);
    } else if (!hideOrShow && m_legend->toggle()) {
        setLegendExpanded(!m_legendExpanded);
    } else {
        setLegendVisible(false);
    }
}

void TimelineWidget::measureLabels(const std::vector<int>& added, bool all)
{
    const QFontMetrics metrics(font());
    const auto measure = [&](const TimelineLane& lane) {
        m_labelWidth = std::max(m_labelWidth, metrics.horizontalAdvance(lane.name));
    };
    if (!all) {
        for (const int slot : added)
            measure(m_data.lanes[static_cast<std::size_t>(slot)]);
        return;
    }
    // Measuring 10,000 names costs tens of milliseconds: only the longest
    // (in characters) are measured, and the average letter's width stands in
    // for names almost as long with wider letters.
    m_labelWidth = 0;
    qsizetype longest = 0;
    for (const auto& lane : m_data.lanes)
        longest = std::max(longest, lane.name.size());
    int measured = 0;
    for (const auto& lane : m_data.lanes)
        if (lane.alive && lane.name.size() == longest && measured++ < 64)
            measure(lane);
    m_labelWidth = std::max(m_labelWidth, static_cast<int>(longest + 1) * metrics.averageCharWidth());
}

void TimelineWidget::layoutLanes()
{
    // The lane labels' column fits the longest name (indented under its
    // group's header), up to a third of the width; longer names are elided.
    const int indent = m_rows.grouped() ? kGroupIndent : 0;
    const int wanted = m_labelWidth + indent + 20;
    m_geometry.setGutterWidth(std::clamp(wanted, 120, std::max(120, width() / 3)));
    // The lanes are the data, the legend is help: it takes at most a quarter
    // of the height (and at least a row) unless the person asked for all of it.
    int legendRows = 1;
    while (TimelineLegend::heightOf(font(), legendRows + 1) <= height() / 4)
        ++legendRows;
    const int legendHeight =
        m_legendVisible ? m_legend->layout(font(), width(), 0, legendRows, m_legendExpanded) : 0;
    const int viewport = std::max(static_cast<int>(m_geometry.plotTop()), height() - legendHeight);
    if (m_legendVisible)
        m_legend->layout(font(), width(), viewport, legendRows, m_legendExpanded);
    m_geometry.setViewportHeight(viewport);
    const bool overflow = m_geometry.contentHeight() > viewport + 0.5;
    const int bar = overflow ? style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, this) : 0;
    // A narrower plot shows the same range: the range, not the scale, is what the owner asked for.
    m_geometry.setPlotWidth(width() - m_geometry.plotLeft() - bar);
    if (overflow) {
        const int top = static_cast<int>(m_geometry.plotTop());
        m_laneScroll->setGeometry(width() - bar, top, bar, viewport - top);
        m_laneScroll->setSingleStep(static_cast<int>(m_geometry.laneHeight()));
        m_laneScroll->setPageStep(std::max(1, viewport - top));
    }
    m_laneScroll->setVisible(overflow);
    syncLaneScrollBar();
    updateFollowInterval();
}

void TimelineWidget::syncLaneScrollBar()
{
    // The geometry owns the scroll position; the bar shows it.
    const QSignalBlocker blocker(m_laneScroll);
    const double max = std::max(0.0, m_geometry.contentHeight() - m_geometry.viewportHeight());
    m_laneScroll->setRange(0, static_cast<int>(std::ceil(max)));
    m_laneScroll->setValue(static_cast<int>(std::lround(m_geometry.laneScroll())));
}

void TimelineWidget::zoomToRange(double from, double to)
{
    // A little room either side, so the ends of what was fitted are not on the edge.
    const double pad = std::max(500.0, (to - from) * 0.04);
    setVisibleRange(static_cast<qint64>(std::floor(from - pad)), static_cast<qint64>(std::ceil(to + pad)));
}

bool TimelineWidget::zoomToSelection()
{
    const auto found = m_data.markerIndex.constFind(m_selectedEvent);
    if (m_selectedEvent == 0 || found == m_data.markerIndex.cend())
        return false;
    const auto [laneIndex, index] = *found; // the lane's slot
    const auto& lane = m_data.lanes[static_cast<std::size_t>(laneIndex)];
    const auto& marker = lane.markers[static_cast<std::size_t>(index)];
    const auto at = static_cast<double>(marker.at.millis());
    // The event's lease is its job's: the one it happened in or, for a
    // refused write that came after its lease ended (the usual refusal), the
    // job's last lease before it. Without one of its job's, the lease it
    // happened in (the latest acquired: the one painted on top).
    const relctl::LeaseSpan* own = nullptr;
    const relctl::LeaseSpan* around = nullptr;
    for (const auto& l : lane.leases) {
        if (static_cast<double>(l.acquiredAt.millis()) > at)
            break; // sorted by acquisition
        if (!marker.job.empty() && l.job == marker.job)
            own = &l;
        if (at <= static_cast<double>(l.endsAt.millis()))
            around = &l;
    }
    const relctl::LeaseSpan* lease = own ? own : around;
    // The marker stays in view too: a refusal may come well after its lease ended.
    if (lease)
        zoomToRange(std::min(static_cast<double>(lease->acquiredAt.millis()), at),
                    std::max(static_cast<double>(lease->endsAt.millis()), at));
    else
        zoomToRange(at - 30 * 1000.0, at + 30 * 1000.0);
    return true;
}

bool TimelineWidget::zoomToHistory()
{
    std::optional<double> from;
    std::optional<double> to;
    const auto take = [&](double t) {
        from = from ? std::min(*from, t) : t;
        to = to ? std::max(*to, t) : t;
    };
    if (m_data.historyFirst)
        take(static_cast<double>(m_data.historyFirst->millis()));
    if (m_data.historyLast)
        take(static_cast<double>(m_data.historyLast->millis()));
    // The slice may reach beyond the trail's ends: a live lease's expiry, a freeze's start.
    for (const auto& lane : m_data.lanes) {
        if (!lane.leases.empty()) {
            take(static_cast<double>(lane.leases.front().acquiredAt.millis()));
            take(static_cast<double>(lane.reach.back()));
        }
        if (!lane.markers.empty()) {
            take(static_cast<double>(lane.markers.front().at.millis()));
            take(static_cast<double>(lane.markers.back().at.millis()));
        }
        for (const auto& freeze : lane.freezes)
            take(static_cast<double>(freeze.from.millis()));
    }
    if (!from)
        return false;
    zoomToRange(*from, *to);
    return true;
}

} // namespace relctl::ui
