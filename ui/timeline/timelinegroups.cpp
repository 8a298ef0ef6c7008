#include "timelinegroups.h"

#include <algorithm>
#include <cmath>

namespace relctl::ui {

std::vector<MarkerGroup> groupMarkers(const TimelineLane& lane, const TimelineGeometry& g)
{
    std::vector<MarkerGroup> groups;
    const double margin = (kMarkerGroupPx + 2 * g.markerRadius()) * g.msPerPixel();
    const auto [first, last] = markersWithin(lane, g.startMs() - margin, g.endMs() + margin);
    double startX = 0;
    for (std::size_t i = first; i < last; ++i) {
        const double x = g.xForTime(static_cast<double>(lane.markers[i].at.millis()));
        if (groups.empty() || x - startX >= kMarkerGroupPx) {
            groups.push_back({i, i + 1, x});
            startX = x;
            continue;
        }
        groups.back().last = i + 1;
        groups.back().x = x;
    }
    // The glyph sits between the group's first and last marker.
    for (auto& group : groups) {
        const double firstX = g.xForTime(static_cast<double>(lane.markers[group.first].at.millis()));
        group.x = std::round((firstX + group.x) / 2);
    }
    return groups;
}

const MarkerGroup* groupAt(const std::vector<MarkerGroup>& groups, double x, double reach)
{
    const MarkerGroup* best = nullptr;
    double bestDistance = 0;
    for (const auto& group : groups) {
        const double distance = std::abs(group.x - x);
        if (distance <= reach + groupHalfWidth(group, 0) && (!best || distance < bestDistance)) {
            best = &group;
            bestDistance = distance;
        }
    }
    return best;
}

double groupHalfWidth(const MarkerGroup& group, double markerRadius)
{
    if (group.count() < 2)
        return markerRadius;
    // Digits are about 6 px wide at the badge's size, plus its padding.
    const int digits = group.count() < 10 ? 1 : group.count() < 100 ? 2 : group.count() < 1000 ? 3 : 4;
    return std::max(markerRadius + 2, (digits * 6.0 + 8) / 2);
}

} // namespace relctl::ui
