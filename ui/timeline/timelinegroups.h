#pragma once

// Markers too close to tell apart are shown as one glyph with a count. The
// same grouping serves painting and hit-testing, so what a click or a
// tooltip finds is what was drawn. Groups come apart as the view zooms in:
// they are made in pixels, not in time.

#include "timelinegeometry.h"
#include "timelinelanes.h"

#include <cstddef>
#include <vector>

namespace relctl::ui {

struct MarkerGroup
{
    std::size_t first = 0; // [first, last): indices into the lane's markers
    std::size_t last = 0;
    double x = 0; // plot x of its glyph, on a whole pixel

    std::size_t count() const { return last - first; }
};

// Markers closer than this share a glyph: their stamps would overlap.
constexpr double kMarkerGroupPx = 10;

// The groups of the lane's markers within the visible range (and a glyph's
// width beyond it), in time order. A group starts at its first marker and
// takes every marker less than kMarkerGroupPx to its right, so no group is
// wider than a glyph however dense the lane.
std::vector<MarkerGroup> groupMarkers(const TimelineLane& lane, const TimelineGeometry& g);

// The group whose glyph is within `reach` pixels of plot x, or nullptr.
const MarkerGroup* groupAt(const std::vector<MarkerGroup>& groups, double x, double reach);

// Half the width of a group's glyph: a single marker's stamp, or the badge
// that carries the count.
double groupHalfWidth(const MarkerGroup& group, double markerRadius);

} // namespace relctl::ui
