// The timeline widget's hit-testing: what lies under a point (for the
// tooltip and a click), where a marker is painted, and the words that
// describe a hit, apart from timelinewidget.cpp's event handling.

#include "timelinegroups.h"
#include "timelinepainter.h"
#include "timelinetext.h"
#include "timelinewidget.h"

#include <cmath>
#include <limits>

namespace relctl::ui {

namespace {

// Hit-testing forgives a few pixels: markers are small and people aim roughly.
constexpr double kHitTolerance = 4;

} // namespace

TimelineHit TimelineWidget::itemAt(QPoint pos) const
{
    const int lane = m_geometry.laneAt(pos.y());
    if (lane < 0 || lane >= static_cast<int>(m_data.lanes.size()) || pos.x() < m_geometry.plotLeft() ||
        pos.y() >= m_geometry.viewportHeight() || pos.x() >= m_geometry.plotLeft() + m_geometry.plotWidth())
        return {};
    const auto& laneData = m_data.lanes[static_cast<std::size_t>(lane)];
    const double px = pos.x() - m_geometry.plotLeft();
    const double t = m_geometry.timeForX(px);
    const double msPerPx = m_geometry.msPerPixel();
    TimelineHit hit;
    hit.lane = lane;
    // A freeze still in force is shaded to the right edge, and hit there too.
    for (const auto& freeze : laneData.freezes)
        if (t >= static_cast<double>(freeze.from.millis()) &&
            (!freeze.to || t <= static_cast<double>(freeze.to->millis())))
            hit.freeze = &freeze;

    // Markers first: they are drawn over the lane and are the smaller target.
    // The groups are the painter's, so a glyph is hit where it was drawn.
    const double reach = m_geometry.markerRadius() + kHitTolerance;
    if (std::abs(pos.y() - m_geometry.markerY(lane)) <= reach) {
        const auto groups = groupMarkers(laneData, m_geometry);
        if (const MarkerGroup* group = groupAt(groups, px, kHitTolerance + m_geometry.markerRadius())) {
            double bestDistance = std::numeric_limits<double>::max();
            for (std::size_t i = group->first; i < group->last; ++i) {
                const auto& marker = laneData.markers[i];
                hit.group.push_back(&marker);
                double distance = std::abs(static_cast<double>(marker.at.millis()) - t);
                // Refusals are painted on top: at equal distance, they win.
                if (markerKind(marker.kind) == MarkerKind::Refusal)
                    distance -= 0.5 * msPerPx;
                if (distance < bestDistance) {
                    bestDistance = distance;
                    hit.marker = &marker;
                }
            }
            return hit;
        }
    }

    const double top = m_geometry.barTop(lane);
    if (pos.y() < top - kHitTolerance || pos.y() > top + m_geometry.barHeight() + kHitTolerance)
        return hit.freeze ? hit : TimelineHit{};
    const double slack = kHitTolerance * msPerPx;
    const auto [first, last] = leasesOverlapping(laneData, t - slack, t + slack);
    double bestDistance = std::numeric_limits<double>::max();
    for (std::size_t i = first; i < last; ++i) {
        const auto& lease = laneData.leases[i];
        const double start = static_cast<double>(lease.acquiredAt.millis());
        const double end = static_cast<double>(lease.endsAt.millis());
        const double distance = t < start ? start - t : (t > end ? t - end : 0.0);
        // "<=": the later lease is painted over the earlier one.
        if (distance <= slack && distance <= bestDistance) {
            bestDistance = distance;
            hit.lease = &lease;
        }
    }
    if (hit.lease || hit.freeze)
        return hit;
    return {};
}

std::optional<QPointF> TimelineWidget::markerPosition(qint64 eventId) const
{
    const auto found = m_data.markerIndex.constFind(eventId);
    if (found == m_data.markerIndex.cend())
        return std::nullopt;
    const auto [lane, index] = *found;
    const auto& marker =
        m_data.lanes[static_cast<std::size_t>(lane)].markers[static_cast<std::size_t>(index)];
    // The painter draws markers on whole pixels: report the same position.
    return QPointF(m_geometry.plotLeft() +
                       std::round(m_geometry.xForTime(static_cast<double>(marker.at.millis()))),
                   std::round(m_geometry.markerY(lane)));
}

QString TimelineWidget::describe(const TimelineHit& hit) const
{
    QString text;
    if (hit.marker)
        text = describeMarkers(hit.group);
    else if (hit.lease)
        text = describeLease(*hit.lease);
    // A freeze is the lane's state around whatever else is there: said last.
    if (hit.freeze)
        text += (text.isEmpty() ? QString() : QStringLiteral("\n\n")) +
                describeFreeze(*hit.freeze, serverNowEstimate());
    return text;
}

} // namespace relctl::ui
