#pragma once

// Markers too close to tell apart are shown as one glyph with a count. The
// same grouping serves painting and hit-testing, so what a click or a
// tooltip finds is what was drawn. Groups come apart as the view zooms in:
// they are made in pixels, not in time.

#include "timelinegeometry.h"
#include "timelinelanes.h"
#include "timelinepainter.h"

#include <cstddef>
#include <vector>

namespace relctl::ui {

struct MarkerGroup
{
    std::size_t first = 0; // [first, last): indices into the lane's markers
    std::size_t last = 0;
    double x = 0; // plot x of its glyph, on a whole pixel
    // The one kind all its markers share, or MarkerKind::Count when they
    // are of several kinds.
    MarkerKind kind = MarkerKind::Count;
    std::size_t refusals = 0; // how many of them are refusals

    std::size_t count() const { return last - first; }
    bool mixed() const { return kind == MarkerKind::Count; }
};

// How a glyph is drawn. A badge's colour names one kind only: a badge of
// several kinds is grey, and one that holds a refusal among other kinds
// carries a red ring, so it is never taken for a badge of refusals alone.
enum class GlyphStyle {
    Stamp,             // one marker: its kind's shape and colour
    KindBadge,         // several markers of one kind: a badge in its colour
    MixedBadge,        // several kinds, no refusal: a grey badge
    MixedRefusalBadge, // several kinds, a refusal among them: grey with a red ring
};
GlyphStyle glyphStyle(const MarkerGroup& group);

// Markers closer than this share a glyph: their stamps would overlap.
constexpr double kMarkerGroupPx = 10;
// At least this much background between two glyphs: badges side by side
// with less would read as one number ("6" and "3" as "63"). Glyphs that
// would come closer are merged into one.
constexpr double kGlyphGapPx = 4;

// The groups of the lane's markers within the visible range (and a glyph's
// width beyond it), in time order. A group starts at its first marker and
// takes every marker less than kMarkerGroupPx to its right; then neighbours
// whose glyphs would come closer than kGlyphGapPx are merged, so glyphs
// never overlap or touch however dense the lane.
std::vector<MarkerGroup> groupMarkers(const TimelineLane& lane, const TimelineGeometry& g);

// The group whose glyph is within `reach` pixels of plot x, or nullptr.
const MarkerGroup* groupAt(const std::vector<MarkerGroup>& groups, double x, double reach);

// Half the width of a group's glyph: a single marker's stamp, or the badge
// that carries the count.
double groupHalfWidth(const MarkerGroup& group, double markerRadius);
double badgeHalfWidth(std::size_t count, double markerRadius);

} // namespace relctl::ui
