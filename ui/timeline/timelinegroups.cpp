#include "timelinegroups.h"

#include <algorithm>
#include <cmath>

namespace relctl::ui {

namespace {

// The markers' kinds and the glyph's place, from its first and last member.
void describe(MarkerGroup& group, const TimelineLane& lane, const TimelineGeometry& g)
{
    group.kind = markerKind(lane.markers[group.first].kind);
    group.refusals = 0;
    for (std::size_t i = group.first; i < group.last; ++i) {
        const MarkerKind kind = markerKind(lane.markers[i].kind);
        if (kind != group.kind)
            group.kind = MarkerKind::Count;
        if (kind == MarkerKind::Refusal)
            ++group.refusals;
    }
    // The glyph sits between the group's first and last marker.
    const double firstX = g.xForTime(static_cast<double>(lane.markers[group.first].at.millis()));
    const double lastX = g.xForTime(static_cast<double>(lane.markers[group.last - 1].at.millis()));
    group.x = std::round((firstX + lastX) / 2);
}

} // namespace

GlyphStyle glyphStyle(const MarkerGroup& group)
{
    if (group.count() < 2)
        return GlyphStyle::Stamp;
    if (!group.mixed())
        return GlyphStyle::KindBadge;
    return group.refusals > 0 ? GlyphStyle::MixedRefusalBadge : GlyphStyle::MixedBadge;
}

std::vector<MarkerGroup> groupMarkers(const TimelineLane& lane, const TimelineGeometry& g)
{
    std::vector<MarkerGroup> groups;
    const double r = g.markerRadius();
    const double margin = (kMarkerGroupPx + 2 * r) * g.msPerPixel();
    const auto [first, last] = markersWithin(lane, g.startMs() - margin, g.endMs() + margin);
    double startX = 0;
    for (std::size_t i = first; i < last; ++i) {
        const double x = g.xForTime(static_cast<double>(lane.markers[i].at.millis()));
        if (groups.empty() || x - startX >= kMarkerGroupPx) {
            groups.push_back({i, i + 1});
            startX = x;
            continue;
        }
        groups.back().last = i + 1;
    }
    // Merged from the left: the merged glyph may have moved left or grown
    // (a wider count), so it is checked against its own left neighbour again.
    std::vector<MarkerGroup> merged;
    merged.reserve(groups.size());
    for (auto& group : groups) {
        describe(group, lane, g);
        merged.push_back(group);
        while (merged.size() >= 2) {
            MarkerGroup& left = merged[merged.size() - 2];
            const MarkerGroup& right = merged.back();
            const double gap = (right.x - groupHalfWidth(right, r)) - (left.x + groupHalfWidth(left, r));
            if (gap >= kGlyphGapPx)
                break;
            left.last = right.last;
            merged.pop_back();
            describe(merged.back(), lane, g);
        }
    }
    return merged;
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

double badgeHalfWidth(std::size_t count, double markerRadius)
{
    // Digits are about 6 px wide at the badge's size, plus its padding.
    const int digits = count < 10 ? 1 : count < 100 ? 2 : count < 1000 ? 3 : count < 10000 ? 4 : 5;
    return std::max(markerRadius + 2, (digits * 6.0 + 8) / 2);
}

double groupHalfWidth(const MarkerGroup& group, double markerRadius)
{
    if (group.count() < 2)
        return markerRadius;
    return badgeHalfWidth(group.count(), markerRadius);
}

} // namespace relctl::ui
