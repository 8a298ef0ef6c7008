// The timeline widget's hit-testing: what lies under a point (for the
// tooltip and a click), where a marker is painted, and the tooltips: the
// words that describe a hit, and when a tooltip goes; apart from
// timelinewidget.cpp's event handling.

#include "timeformat.h"
#include "timelinegroups.h"
#include "timelinelegend.h"
#include "timelinepainter.h"
#include "timelinetext.h"
#include "timelinewidget.h"

#include <QToolTip>
#include <algorithm>
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
    if (lane < 0 || lane >= m_rows.count() || pos.x() < m_geometry.plotLeft() ||
        pos.y() >= m_geometry.viewportHeight() || pos.x() >= m_geometry.plotLeft() + m_geometry.plotWidth())
        return {};
    const TimelineRow& row = m_rows.row(lane);
    if (row.kind == TimelineRow::Kind::Group)
        return m_rows.isCollapsedGroup(lane) ? summaryAt(lane, pos) : TimelineHit{};
    const auto& laneData = m_data.lanes[static_cast<std::size_t>(row.index)];
    const double px = pos.x() - m_geometry.plotLeft();
    const double t = m_geometry.timeForX(px);
    const double msPerPx = m_geometry.msPerPixel();
    TimelineHit hit;
    hit.lane = lane;
    const double left = m_geometry.plotLeft();
    const QRectF plot(left, m_geometry.plotTop(), m_geometry.plotWidth(),
                      m_geometry.viewportHeight() - m_geometry.plotTop());
    // A freeze still in force is shaded to the right edge, and hit there too.
    for (const auto& freeze : laneData.freezes)
        if (t >= static_cast<double>(freeze.from.millis()) &&
            (!freeze.to || t <= static_cast<double>(freeze.to->millis()))) {
            hit.freeze = &freeze;
            const double x0 = m_geometry.xForTime(static_cast<double>(freeze.from.millis()));
            const double x1 = freeze.to ? m_geometry.xForTime(static_cast<double>(freeze.to->millis()))
                                        : m_geometry.plotWidth();
            hit.area = QRectF(left + x0, m_geometry.laneTop(lane), x1 - x0 + 1, m_geometry.laneHeight())
                           .intersected(plot)
                           .toAlignedRect();
        }

    // Markers first: they are drawn over the lane and are the smaller target.
    // The groups are the painter's, so a glyph is hit where it was drawn.
    const double reach = m_geometry.markerRadius() + kHitTolerance;
    if (std::abs(pos.y() - m_geometry.markerY(lane)) <= reach) {
        const auto groups = groupMarkers(laneData, m_geometry);
        if (const MarkerGroup* group = groupAt(groups, px, kHitTolerance + m_geometry.markerRadius())) {
            const double half = groupHalfWidth(*group, m_geometry.markerRadius()) + kHitTolerance;
            hit.area =
                QRectF(left + group->x - half, m_geometry.markerY(lane) - reach, 2 * half + 1, 2 * reach + 1)
                    .intersected(plot)
                    .toAlignedRect();
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
    if (hit.lease) {
        const double x0 = m_geometry.xForTime(static_cast<double>(hit.lease->acquiredAt.millis()));
        const double x1 = m_geometry.xForTime(static_cast<double>(hit.lease->endsAt.millis()));
        hit.area = QRectF(left + x0 - kHitTolerance, top - kHitTolerance, x1 - x0 + 2 * kHitTolerance + 1,
                          m_geometry.barHeight() + 2 * kHitTolerance + 1)
                       .intersected(plot)
                       .toAlignedRect();
    }
    if (hit.lease || hit.freeze)
        return hit;
    return {};
}

TimelineHit TimelineWidget::summaryAt(int lane, QPoint pos) const
{
    const int id = m_rows.row(lane).index;
    const GroupSummary& summary = m_rows.summary(id, m_data);
    const double left = m_geometry.plotLeft();
    const double px = pos.x() - left;
    const double t = m_geometry.timeForX(px);
    const QRectF plot(left, m_geometry.plotTop(), m_geometry.plotWidth(),
                      m_geometry.viewportHeight() - m_geometry.plotTop());
    TimelineHit hit;
    hit.lane = lane;
    hit.groupName = m_rows.group(id).name;
    // A refusal glyph: the members' refusals it holds.
    const double reach = m_geometry.markerRadius() + kHitTolerance;
    if (std::abs(pos.y() - m_geometry.markerY(lane)) <= reach) {
        const auto groups = groupMarkers(summary.refusals, m_geometry);
        if (const MarkerGroup* group = groupAt(groups, px, kHitTolerance + m_geometry.markerRadius())) {
            const double half = groupHalfWidth(*group, m_geometry.markerRadius()) + kHitTolerance;
            hit.area =
                QRectF(left + group->x - half, m_geometry.markerY(lane) - reach, 2 * half + 1, 2 * reach + 1)
                    .intersected(plot)
                    .toAlignedRect();
            double bestDistance = std::numeric_limits<double>::max();
            for (std::size_t i = group->first; i < group->last; ++i) {
                const auto& marker = summary.refusals.markers[i];
                hit.group.push_back(&marker);
                const double distance = std::abs(static_cast<double>(marker.at.millis()) - t);
                if (distance < bestDistance) {
                    bestDistance = distance;
                    hit.marker = &marker;
                }
            }
            hit.spanFrom = summary.refusals.markers[group->first].at.millis();
            hit.spanTo = summary.refusals.markers[group->last - 1].at.millis();
            return hit;
        }
    }
    // Elsewhere: the stretch around t in which as many members were held,
    // and as many frozen.
    const SummaryStep held = stepAround(summary.held, t);
    const SummaryStep frozen = stepAround(summary.frozen, t);
    if (held.count == 0 && frozen.count == 0)
        return {};
    hit.spanFrom = std::max(held.from, frozen.from);
    hit.spanTo = std::min(held.to, frozen.to);
    const double x0 = m_geometry.xForTime(static_cast<double>(hit.spanFrom));
    const double x1 = hit.spanTo == std::numeric_limits<qint64>::max()
                          ? m_geometry.plotWidth()
                          : m_geometry.xForTime(static_cast<double>(hit.spanTo));
    hit.area =
        QRectF(left + std::max(-1.0, x0), m_geometry.laneTop(lane),
               std::min(m_geometry.plotWidth() + 1, x1) - std::max(-1.0, x0) + 1, m_geometry.laneHeight())
            .intersected(plot)
            .toAlignedRect();
    return hit;
}

QString TimelineWidget::describeSummary(const TimelineHit& hit) const
{
    const int id = m_rows.row(hit.lane).index;
    const TimelineGroup& group = m_rows.group(id);
    const qint64 a = hit.spanFrom;
    const qint64 b = hit.spanTo;
    // Over a stretch: what overlaps it; at a moment (one refusal): what
    // was there then.
    const auto overlaps = [a, b](qint64 from, qint64 to) {
        return a < b ? from < b && to > a : from <= a && to >= a;
    };
    QStringList held;
    QStringList frozen;
    QStringList refused;
    int refusals = 0;
    for (const int slot : group.members) {
        const TimelineLane& lane = m_data.lanes[static_cast<std::size_t>(slot)];
        if (!m_rows.shows(lane))
            continue;
        const auto [first, last] = leasesOverlapping(lane, static_cast<double>(a), static_cast<double>(b));
        for (std::size_t i = first; i < last; ++i)
            if (overlaps(lane.leases[i].acquiredAt.millis(), lane.leases[i].endsAt.millis())) {
                held << lane.name;
                break;
            }
        for (const auto& freeze : lane.freezes)
            if (overlaps(freeze.from.millis(),
                         freeze.to ? freeze.to->millis() : std::numeric_limits<qint64>::max())) {
                frozen << lane.name;
                break;
            }
        const auto [mFirst, mLast] = markersWithin(lane, static_cast<double>(a), static_cast<double>(b));
        int here = 0;
        for (std::size_t i = mFirst; i < mLast; ++i)
            if (lane.markers[i].kind == "refusal")
                ++here;
        if (here > 0)
            refused << lane.name;
        refusals += here;
    }
    const auto members = static_cast<int>(group.members.size());
    // Spelled out: without a translation loaded, Qt's %n leaves "(s)" as written.
    QString text = group.shown == members ? QStringLiteral("%1 \u00b7 %2 environment%3, collapsed")
                                                .arg(group.name)
                                                .arg(members)
                                                .arg(members == 1 ? QString() : QStringLiteral("s"))
                                          : QStringLiteral("%1 \u00b7 %2 of %3 environments shown, collapsed")
                                                .arg(group.name)
                                                .arg(group.shown)
                                                .arg(members);
    if (b == std::numeric_limits<qint64>::max())
        text += QStringLiteral("\nfrom %1, still in force").arg(formatTime(a));
    else if (a == b)
        text += QLatin1Char('\n') + formatTime(a, true);
    else
        text +=
            QStringLiteral("\n%1 \u2013 %2 (%3)").arg(formatTime(a), formatTime(b), formatDuration(b - a));
    // Names, a few of them: the count says how many, expanding shows all.
    const auto line = [](const QString& what, const QStringList& names) {
        constexpr int kNamed = 6;
        QString names6 = QStringList(names.mid(0, kNamed)).join(QStringLiteral(", "));
        if (names.size() > kNamed)
            names6 += QStringLiteral(" and %1 more").arg(names.size() - kNamed);
        return QStringLiteral("\n%1: %2")
            .arg(what, names.isEmpty() ? QStringLiteral("none")
                                       : QString::number(names.size()) + QStringLiteral(" (") + names6 +
                                             QLatin1Char(')'));
    };
    text += line(QStringLiteral("Held"), held);
    text += line(QStringLiteral("Frozen"), frozen);
    text += line(QStringLiteral("Refused"), refused);
    if (refusals > refused.size())
        text += QStringLiteral(" \u00b7 %1 refusals").arg(refusals);
    if (!hit.group.empty()) {
        constexpr std::size_t kListed = 8;
        for (std::size_t i = 0; i < hit.group.size() && i < kListed; ++i) {
            const auto& m = *hit.group[i];
            text += QStringLiteral("\nRefusal \u00b7 %1 \u00b7 %2 \u00b7 %3 \u00b7 #%4")
                        .arg(formatTime(m.at, true), QString::fromStdString(m.env),
                             m.job.empty() ? QStringLiteral("no job") : QString::fromStdString(m.job))
                        .arg(m.eventId);
        }
        if (hit.group.size() > kListed)
            text += QStringLiteral("\n\u2026 and %1 more").arg(hit.group.size() - kListed);
    }
    return text + QStringLiteral("\nClick the group's name (or press Space) to expand it.");
}

std::optional<QPointF> TimelineWidget::markerPosition(qint64 eventId) const
{
    const auto found = m_data.markerIndex.constFind(eventId);
    if (found == m_data.markerIndex.cend())
        return std::nullopt;
    const auto [slot, index] = *found;
    // Its lane's row, or its collapsed group's; none while filtered out.
    const int lane = m_rows.rowOfLane(slot);
    if (lane < 0)
        return std::nullopt;
    const auto& marker =
        m_data.lanes[static_cast<std::size_t>(slot)].markers[static_cast<std::size_t>(index)];
    // The painter draws markers on whole pixels: report the same position.
    return QPointF(m_geometry.plotLeft() +
                       std::round(m_geometry.xForTime(static_cast<double>(marker.at.millis()))),
                   std::round(m_geometry.markerY(lane)));
}

QString TimelineWidget::describe(const TimelineHit& hit) const
{
    if (hit.isGroupSummary())
        return describeSummary(hit);
    QString text;
    if (hit.marker)
        text = describeMarkers(hit.group);
    else if (hit.lease)
        text = describeLease(*hit.lease, static_cast<qint64>(serverNowEstimate()));
    // A freeze is the lane's state around whatever else is there: said last.
    if (hit.freeze)
        text += (text.isEmpty() ? QString() : QStringLiteral("\n\n")) +
                describeFreeze(*hit.freeze, serverNowEstimate());
    return text;
}

TimelineWidget::Tip TimelineWidget::tipAt(QPoint pos) const
{
    if (pos.y() >= m_geometry.viewportHeight()) {
        if (const LegendEntry* entry = m_legendVisible ? m_legend->entryAt(pos) : nullptr) {
            // "+N more" lists what it stands for: its help says it all.
            if (entry->swatch == LegendEntry::Swatch::Toggle)
                return {entry->help, entry->rect, QStringLiteral("legend:") + entry->label};
            return {entry->label + QStringLiteral(": ") + entry->help, entry->rect,
                    QStringLiteral("legend:") + entry->label};
        }
        return {};
    }
    const TimelineHit hit = itemAt(pos);
    if (hit.isGroupSummary()) {
        // Its counts change with any member's update: the text is part of the key.
        const QString text = describe(hit);
        return {text, hit.area,
                QStringLiteral("group:%1 %2-%3 ").arg(hit.groupName).arg(hit.spanFrom).arg(hit.spanTo) +
                    text};
    }
    if (hit.marker || hit.lease || hit.freeze) {
        // What the tooltip is about, in values that outlive the slice: a new
        // slice keeps the tooltip only while the same item is under it.
        QString key = QStringLiteral("lane:%1").arg(hit.lane);
        if (hit.marker)
            key += QStringLiteral(" markers:%1@%2x%3")
                       .arg(hit.group.front()->eventId)
                       .arg(hit.group.front()->at.millis())
                       .arg(hit.group.size());
        if (hit.lease)
            key += QStringLiteral(" lease:%1").arg(hit.lease->token);
        if (hit.freeze)
            key += QStringLiteral(" freeze:%1").arg(hit.freeze->from.millis());
        return {describe(hit), hit.area, key};
    }
    // Over the lane names and the axis, where nothing else is to describe:
    // how to drive the timeline. The plot stays quiet.
    const int left = static_cast<int>(m_geometry.plotLeft());
    const int top = static_cast<int>(m_geometry.plotTop());
    if (pos.x() < left)
        return {keyboardHelp(), QRect(0, 0, left, static_cast<int>(m_geometry.viewportHeight())),
                QStringLiteral("help:lanes")};
    if (pos.y() < top)
        return {keyboardHelp(), QRect(left, 0, width() - left, top), QStringLiteral("help:axis")};
    return {};
}

void TimelineWidget::showTip(const QPoint& pos, const QPoint& globalPos, const Tip& tip)
{
    // With the item's area: QToolTip hides it as soon as the pointer leaves
    // that, instead of leaving it up for its whole display time (10 s and
    // more for a long list) over whatever is there by then.
    QToolTip::showText(globalPos, tip.text, this, tip.area);
    m_tipShown = true;
    m_tipText = tip.text;
    m_tipKey = tip.key;
    m_tipPos = pos;
}

void TimelineWidget::hideTip()
{
    if (m_tipShown && QToolTip::isVisible() && QToolTip::text() == m_tipText)
        QToolTip::hideText();
    m_tipShown = false;
}

void TimelineWidget::refreshTip()
{
    if (!m_tipShown)
        return;
    if (!QToolTip::isVisible() || QToolTip::text() != m_tipText) {
        m_tipShown = false; // gone already, or another widget's now
        return;
    }
    if (tipAt(m_tipPos).key != m_tipKey)
        hideTip();
}

} // namespace relctl::ui
