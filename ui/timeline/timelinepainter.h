#pragma once

// Painting the timeline, apart from the widget's interaction code. Only what
// is visible is painted, and sub-pixel items are merged per pixel column, so
// the cost follows the widget's width rather than the slice's size.

#include "timelinegeometry.h"
#include "timelinelanes.h"
#include "timelinerows.h"

#include <QColor>
#include <QPixmap>
#include <array>
#include <string>

class QFont;
class QPainter;
class QRectF;
class QPointF;
class QPalette;
class QRect;

namespace relctl::ui {

class TimelineLegend;

enum class LeaseEnding { Live, Released, Expired, Revoked, Count };
// Rollback and Promotion (a promotion approved or denied) are operator
// actions too, but they change what an environment runs or may run: each has
// its own shape and colour.
enum class MarkerKind { Publish, Refusal, Superseded, Queued, Operator, Rollback, Promotion, Count };

// A group's lanes' names (and its header's name, after the triangle) start
// this far right in the gutter.
constexpr int kGroupIndent = 14;

LeaseEnding leaseEnding(const std::string& ending);
MarkerKind markerKind(const std::string& kind);
QString leaseLabel(const relctl::LeaseSpan& lease); // "job · release · #token"

// Colors derived from the widget's palette, so the timeline follows light
// and dark themes. The plot is drawn on Base (with Text), the axis and the
// lane names on Window (with WindowText), as Qt's own views do. The colours
// that carry meaning (red = refusal, blue = live) are relctl/timelinecolours.h's,
// shared with the rehearsal report: on a light Base exactly those, elsewhere
// the same hue at a lightness that gives a contrast of at least kMinContrast
// against Base; its greys are the same share of Text on any palette.
struct TimelineColors
{
    // WCAG's minimum for graphical objects that must be recognised.
    static constexpr double kMinContrast = 3.0;

    QColor base, alternateBase, window, text, dimText, windowText, dimWindowText, grid, selection, now;
    // A frozen period: a light wash of ice blue with a hatch, so it reads as
    // "closed" under the bars and is not mistaken for the alternate lane.
    QColor frozen, frozenFill;
    // A badge of several kinds: a grey that is no kind's colour.
    QColor mixed;
    // An expanded group's header row, across the gutter and the plot.
    QColor headerBand;
    std::array<QColor, static_cast<int>(LeaseEnding::Count)> endings;
    std::array<QColor, static_cast<int>(MarkerKind::Count)> markers;

    static TimelineColors fromPalette(const QPalette& palette);
    const QColor& ending(LeaseEnding e) const { return endings[static_cast<std::size_t>(e)]; }
    const QColor& marker(MarkerKind k) const { return markers[static_cast<std::size_t>(k)]; }
};

// The WCAG contrast ratio of two colors (1 .. 21).
double contrastRatio(const QColor& a, const QColor& b);

struct TimelinePaintState
{
    double nowMs = 0;
    qint64 selectedEvent = 0; // 0: none
    // Keyboard focus: the frame around the widget and the current lane's
    // mark in the gutter are drawn only while the widget has it.
    bool focused = false;
    int currentLane = -1;
    const TimelineLegend* legend = nullptr; // painted below the lanes; none: hidden
};

class TimelinePainter final
{
public:
    void setColors(const TimelineColors& colors);
    const TimelineColors& colors() const { return m_colors; }

    // Only the rows in the viewport are painted: the cost follows the
    // visible lanes' visible items, not the number of lanes.
    void paint(QPainter& painter, const QRect& area, const TimelineGeometry& geometry,
               const TimelineLanes& data, const TimelineRows& rows, const TimelinePaintState& state);

    // A collapsed group's held stretch, darker the more members held a lease
    // at once (1, 2, 3, 4 or more).
    QColor heldColour(int count) const;

private:
    // timelinelegend.cpp
    void paintLegend(QPainter& painter, const QRect& strip, const TimelineLegend& legend, qreal dpr);
    void paintFrozen(QPainter& painter, const QRectF& rect, bool startEdge);
    void paintFreezes(QPainter& painter, const TimelineGeometry& g, const TimelineLane& lane, int index,
                      double nowMs);
    // Several markers in one glyph, carrying their count: a badge in their
    // kind's colour when they share one (kind), else grey, with a red ring
    // when a refusal is among them (kind == MarkerKind::Count).
    void paintGroupBadge(QPainter& painter, const QPointF& centre, std::size_t count, MarkerKind kind,
                         bool refusal, double radius);
    void paintLeases(QPainter& painter, const TimelineGeometry& g, const TimelineLane& lane, int index);
    void paintMarkers(QPainter& painter, const TimelineGeometry& g, const TimelineLane& lane, int index,
                      qreal dpr);
    // A group's header row: a band while expanded; collapsed, the summary
    // of its members (held, frozen, refusals).
    void paintGroupRow(QPainter& painter, const TimelineGeometry& g, const TimelineLanes& data,
                       const TimelineRows& rows, int index, double nowMs, qreal dpr);
    void paintSelection(QPainter& painter, const TimelineGeometry& g, const TimelineLanes& data,
                        const TimelineRows& rows, qint64 eventId);
    void paintAxis(QPainter& painter, const QRect& area, const TimelineGeometry& g,
                   const std::vector<TimelineGeometry::Tick>& ticks);
    void paintGutter(QPainter& painter, const QRect& area, const TimelineGeometry& g,
                     const TimelineLanes& data, const TimelineRows& rows, int currentLane);
    void paintFocus(QPainter& painter, const QRect& area, const TimelineGeometry& g, int currentLane);
    // Markers are drawn as pre-rendered stamps: one blit each instead of an
    // antialiased path fill, which is what keeps 20,000 of them cheap.
    const QPixmap& stamp(MarkerKind kind, qreal dpr, double radius);

    TimelineColors m_colors;
    std::array<QPixmap, static_cast<int>(MarkerKind::Count)> m_stamps;
    qreal m_stampDpr = 0;
};

} // namespace relctl::ui
