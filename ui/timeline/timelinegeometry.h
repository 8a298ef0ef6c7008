#pragma once

// The timeline's coordinate system, apart from any widget so it can be tested
// on its own: a visible time range mapped onto the plot area's width, a fixed
// lane layout below an axis header, and tick marks readable at every zoom.

#include <QString>
#include <utility>
#include <vector>

namespace relctl::ui {

class TimelineGeometry final
{
public:
    // Below a second there is nothing left to review; above a year a pixel
    // spans hours and the slice query would return the whole audit trail.
    static constexpr double kMinSpanMs = 1000.0;
    static constexpr double kMaxSpanMs = 366.0 * 24 * 3600 * 1000;

    struct Tick
    {
        double ms = 0;   // the tick's time (a whole millisecond)
        double x = 0;    // its plot x
        QString label;   // the time, formatted for the step
        QString context; // on major ticks: the date (or year) the label belongs to
        bool major = false;
    };

    // Times are ms since the epoch, as doubles: exact for whole milliseconds
    // until the year 287396, and fractional while zooming keeps the time under
    // the cursor fixed without rounding drift.
    void setRange(double startMs, double endMs); // clamped to the span limits around its centre
    double startMs() const { return m_start; }
    double endMs() const { return m_end; }
    double spanMs() const { return m_end - m_start; }

    // The plot area: x in [0, widthPx] is [startMs, endMs]; it starts after
    // a gutter of lane labels and below an axis header, in widget pixels.
    void setPlotWidth(double widthPx);
    double plotWidth() const { return m_width; }
    double plotLeft() const { return m_gutter; }
    double plotTop() const { return m_header; }
    void setGutterWidth(double px) { m_gutter = px; }
    void setHeaderHeight(double px) { m_header = px; }

    double msPerPixel() const { return spanMs() / m_width; }
    double xForTime(double ms) const { return (ms - m_start) * m_width / spanMs(); }
    double timeForX(double x) const { return m_start + x * spanMs() / m_width; }

    // factor > 1 zooms in. The time under x stays under x, unless the span
    // limit stops the zoom, in which case the nearest allowed span is used.
    void zoomAround(double x, double factor);
    // Like dragging the content: dx > 0 moves it right, showing earlier times.
    void panByPixels(double dx);

    // Lanes: one per environment, of a fixed height, scrolled vertically when
    // there are more than fit in the viewport.
    void setLaneCount(int count);
    int laneCount() const { return m_lanes; }
    // The lanes' viewport ends here (the legend sits below it).
    void setViewportHeight(double px);
    double viewportHeight() const { return m_viewportHeight; }
    double contentHeight() const { return m_header + m_lanes * m_laneHeight; }
    double laneHeight() const { return m_laneHeight; }
    double laneTop(int lane) const { return m_header + lane * m_laneHeight - m_scrollY; }
    int laneAt(double y) const; // -1 outside every lane
    // The lanes [first, last) that show in the viewport: what a paint
    // touches, however many lanes there are.
    std::pair<int, int> visibleLanes() const;
    double laneScroll() const { return m_scrollY; }
    void scrollLanesBy(double dy);
    void ensureLaneVisible(int lane);

    // Inside a lane: leases are bars in the upper band, markers sit on a
    // line below them, so a marker is never hidden by the lease it concerns.
    double barTop(int lane) const { return laneTop(lane) + 4; }
    double barHeight() const { return 14; }
    double markerY(int lane) const { return laneTop(lane) + 25; }
    double markerRadius() const { return 5; }

    // Ticks at least minSpacingPx apart, on round times (UTC), from a ladder
    // of steps 1 ms .. 7 d and whole calendar months above that.
    std::vector<Tick> niceTicks(double minSpacingPx = 80) const;

private:
    void clampScroll();

    double m_start = 0;
    double m_end = 3600.0 * 1000;
    double m_width = 800;
    double m_gutter = 120;
    double m_header = 36;
    double m_laneHeight = 34;
    double m_viewportHeight = 400;
    double m_scrollY = 0;
    int m_lanes = 0;
};

} // namespace relctl::ui
