#pragma once

// The lease timeline of the release console: one lane per environment,
// leases as bars, audit events as markers. It is fed a TimelineSlice and never
// fetches anything itself; when the view moves it says so through
// visibleRangeChanged(), and the owner decides when to ask for a new slice.
// Lanes are in natural order (svc2 before svc10). With groups set, a group of
// two or more sits under a header row (click its name, or Space, to collapse
// it: one lane then shows where its environments were held, refused and
// frozen); a lane filter draws only the lanes a search matched. Only the
// rows in view are painted, and a live update (updateEnvironments) costs the
// named lanes' items, not the number of lanes.
//
// Keyboard (the widget takes focus by click or Tab; Tab keeps moving focus on,
// so the timeline never traps it, which is why markers are stepped with . and ,):
//   Left / Right    pan by an eighth of the visible span
//   + (=) / -       zoom in / out around the pointer when it is over the
//                   plot, else around the selected marker when it is in
//                   view, else around the centre (the wheel, with or
//                   without Ctrl, zooms around the pointer). While following
//                   now, zooming (keys or wheel) keeps following: it zooms
//                   around the now line, which stays where it is.
//   Home            follow now ("now" sits a sixth of the span inside the
//                   right edge, so live leases' expiry and the queue show)
//   F               zoom to fit the selection: the selected marker's lease
//                   (or, without one, the marker and its neighbourhood)
//   Shift+F         zoom to fit the whole history (the audit trail's first to
//                   last event, and every item of the slice)
//   L               what the legend's last entry says: "+N more (L)" shows
//                   the whole legend, "Fewer (L)" what fits in a quarter of
//                   the widget's height again; with neither (it all fits),
//                   hide / show the legend (shown by default)
//   Shift+L         hide / show the legend
//   Up / Down       the previous / next lane becomes the current one (marked
//                   in the gutter while the widget has focus), scrolled into view
//   Page Up / Down  the same, a screenful of lanes at a time
//   Space           collapse / expand the current lane's group (a click on
//                   the group's header does the same)
//   . / ,           select the next / previous marker in time on the current lane
//   > / <           the same across all lanes (Shift+. / Shift+, on most layouts)
//   Enter           select the selected marker again (the audit browser and
//                   the trace panel follow, as after a click)
//   Escape          clear the selection
// Markers a few pixels apart are drawn as one glyph with their count; the
// tooltip lists them, a click selects the one nearest the pointer, zooming in
// separates them, and . , > < still step through each one.
// A tooltip belongs to the item it describes: it goes when the pointer
// leaves that item or the widget, when the view is panned, zoomed or
// scrolled, and when a new slice (or following now) takes the item away.
// When the lanes do not fit, they scroll: a scroll bar on the right, the
// wheel over the lane names (or with Shift), or a vertical drag; the axis and
// the legend stay in place.
// Markers step in (time, event id) order from the selected marker, or from the
// centre of the view when none is selected; queued candidates are not events
// and are passed over. Stepping selects exactly as a click does: it emits
// eventSelected(). Only markers of the current slice can be reached.

#include "relctl/console.h"
#include "timelinegeometry.h"
#include "timelinelanes.h"
#include "timelinerows.h"

#include <QElapsedTimer>
#include <QHash>
#include <QPoint>
#include <QSet>
#include <QStringList>
#include <QTimer>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

class QScrollBar;

namespace relctl::ui {

class TimelineLegend;
class TimelinePainter;

// What lies under a point. The pointers stay valid until the next setSlice()
// or updateEnvironments().
struct TimelineHit
{
    int lane = -1; // the row: a lane, or a group's header
    // On a collapsed group's row: the group, and the stretch of time the
    // tooltip describes (one of constant held and frozen counts, or the
    // refusal glyph's); its markers are the members' refusals.
    QString groupName;
    qint64 spanFrom = 0;
    qint64 spanTo = 0;
    const relctl::LeaseSpan* lease = nullptr;
    const relctl::TimelineMarker* marker = nullptr; // the one nearest the point
    // Every marker of the glyph under the point, in time order: one, or a
    // group's members.
    std::vector<const relctl::TimelineMarker*> group;
    const relctl::FrozenSpan* freeze = nullptr; // the lane is frozen there (with or without an item)
    // Where the item found is drawn (the glyph, the bar, the frozen
    // stretch), with the hit-testing's tolerance, in widget coordinates.
    QRect area;

    bool isMarker() const { return marker != nullptr; }
    bool isGroupSummary() const { return !groupName.isEmpty(); }
    bool isLease() const { return lease != nullptr; }
    qint64 eventId() const { return marker ? marker->eventId : 0; }
};

class TimelineWidget final : public QWidget
{
    Q_OBJECT

public:
    explicit TimelineWidget(QWidget* parent = nullptr);
    ~TimelineWidget() override;

    void setSlice(relctl::TimelineSlice slice);
    // A live update: replaces the named environments' leases, markers and
    // freezes with the slice's (a partial slice holding only those lanes). A
    // named environment absent from slice.environments loses its lane; a new
    // one gets a lane in its place in natural order. The cost follows the
    // named lanes' items, not the number of lanes.
    void updateEnvironments(const QStringList& envs, const relctl::TimelineSlice& slice);
    // Only these environments' lanes are drawn (nullopt: every lane). A group
    // with no shown member disappears; one with some keeps its header.
    void setLaneFilter(const std::optional<QSet<QString>>& shown);
    // Environment -> group: lanes are grouped under a header lane per group
    // (its name and member count), groups and lanes in natural order. An
    // environment missing from the map is in the group named up to its first '.'.
    void setGroups(const QHash<QString, QString>& groupOf);
    // Collapsed groups are drawn as one lane summarising their members.
    void setCollapsedGroups(const QSet<QString>& collapsed);
    QSet<QString> collapsedGroups() const;

    void setVisibleRange(qint64 from, qint64 to);
    qint64 visibleFrom() const;
    qint64 visibleTo() const;
    const TimelineGeometry& timelineGeometry() const { return m_geometry; }

    // Follow now: the right edge tracks the server's clock, estimated as the
    // slice's serverNow plus the time elapsed locally since it arrived.
    bool followNow() const { return m_followNow; }
    void setFollowNow(bool on);
    double serverNowEstimate() const;

    // While the database is unreachable the slice is what was last read:
    // the clock stops (the now-line and follow-now no longer advance) and
    // the plot is veiled with a note saying so. Cleared by setStale(false).
    void setStale(bool stale);
    bool isStale() const { return m_stale; }

    // Highlights the event's marker and scrolls it into view (used by the
    // audit browser); 0 clears the selection. It does not emit
    // eventSelected(), so a browser and the timeline can follow each other
    // without echoing. When the event is not in the current slice, `at` (its
    // time, which the browser knows) centres the view on it, so the owner
    // fetches a slice holding it; the marker is revealed when that arrives.
    void selectEvent(qint64 eventId, std::optional<qint64> at = std::nullopt);
    qint64 selectedEvent() const { return m_selectedEvent; }

    // The rows shown: lanes and group headers, top to bottom; and the lanes'
    // data they show (by slot).
    const TimelineRows& timelineRows() const { return m_rows; }
    const TimelineLanes& timelineLanes() const { return m_data; }
    // The environment lanes there are (shown or not).
    int laneCount() const { return m_data.laneCount(); }
    // Collapses an expanded group, expands a collapsed one, as a click on its
    // header does (and emits collapsedGroupsChanged()).
    void toggleGroup(const QString& group);

    // The row the keyboard works on (-1 while there are none): a lane or a
    // group's header. It follows its environment (or group) when rows come
    // and go; a lane whose group is collapsed is found on the group's row.
    int currentLane() const { return m_currentLane; }
    void setCurrentLane(int lane);
    // Selects the next (direction > 0) or previous marker in time, on the
    // current lane or on all lanes, and emits eventSelected(); false when
    // there is none.
    bool stepMarker(int direction, bool allLanes);

    // The keys, as listed above, for the tooltip and "What's This?".
    static QString keyboardHelp();

    bool legendVisible() const { return m_legendVisible; }
    void setLegendVisible(bool on);
    // The legend takes at most a quarter of the height (at least a row), its
    // last entry "+N more (L)" when that leaves entries out; expanded, it is
    // whole, ending in "Fewer (L)" (a click on either, or L, switches).
    bool legendExpanded() const { return m_legendExpanded; }
    void setLegendExpanded(bool on);
    const TimelineLegend& legend() const { return *m_legend; }

    TimelineHit itemAt(QPoint pos) const;
    // Where the event's marker is painted, in widget coordinates.
    std::optional<QPointF> markerPosition(qint64 eventId) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

public slots:
    // Zoom to fit (F): the selected marker's lease, padded a little; a marker
    // outside any lease gets a minute around it. False when nothing is selected.
    bool zoomToSelection();
    // Zoom to fit (Shift+F): the whole history, from the trail's first event
    // (or the earliest item) to its last (or the latest item). False without data.
    bool zoomToHistory();

signals:
    void eventSelected(qint64 eventId);
    void visibleRangeChanged(qint64 from, qint64 to);
    void followNowChanged(bool on);
    // The person collapsed or expanded a group on the timeline (a click on
    // its header, or the keyboard); not emitted by setCollapsedGroups().
    void collapsedGroupsChanged(const QSet<QString>& collapsed);

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void focusInEvent(QFocusEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // User zoom around plot x; while following now, around the now line
    // instead, and following goes on.
    void zoomBy(double plotX, double factor);
    // Where + and - zoom: the pointer over the plot, else the selected
    // marker in view, else the centre (plot x).
    double keyZoomAnchor() const;
    void panBy(double dx); // user pan: leaves follow-now mode
    void viewMovedByUser();
    void selectByUser(qint64 eventId); // as a click does: select, reveal, emit
    void rangeChanged();
    void followTick();
    bool revealSelected(); // false: the selected event is not in the slice
    void updateFollowInterval();
    void layoutLanes(); // legend, viewport, gutter and plot width, scroll bar
    // L (more / fewer, or hide / show when the legend all fits) and Shift+L
    // (hideOrShow: hide / show).
    void stepLegend(bool hideOrShow);
    // The rows changed (lanes came or went, the filter, groups or collapsed
    // groups changed): lay them out again and keep the current row.
    void rowsChanged();
    // The lane labels' width: measured for every name (all) or the new ones.
    void measureLabels(const std::vector<int>& added, bool all);
    void syncLaneScrollBar();
    void zoomToRange(double from, double to);
    QString describe(const TimelineHit& hit) const;
    // On a collapsed group's row (timelinehits.cpp).
    TimelineHit summaryAt(int lane, QPoint pos) const;
    QString describeSummary(const TimelineHit& hit) const;
    // The tooltip at a point: its text, the area it belongs to and what it
    // is about (to tell whether a new slice still has that item).
    struct Tip
    {
        QString text;
        QRect area;
        QString key;
    };
    Tip tipAt(QPoint pos) const;
    void showTip(const QPoint& pos, const QPoint& globalPos, const Tip& tip);
    void hideTip();    // our tooltip, if it is the one showing
    void refreshTip(); // hides it when the item it describes is no longer under it
    // A navigation key without Ctrl, Alt or Meta: while the timeline has
    // focus it is the timeline's, not a window shortcut's.
    static bool isNavigation(const QKeyEvent* event);

    TimelineGeometry m_geometry;
    TimelineLanes m_data;
    TimelineRows m_rows;
    int m_labelWidth = 0; // the widest lane label, in pixels
    std::unique_ptr<TimelinePainter> m_painter;
    std::unique_ptr<TimelineLegend> m_legend;
    bool m_legendVisible = true;
    bool m_legendExpanded = false;
    QScrollBar* m_laneScroll = nullptr;
    qint64 m_serverNow = 0;
    QElapsedTimer m_sinceSlice;
    QTimer m_followTimer;
    bool m_followNow = false;
    bool m_stale = false;
    double m_staleNow = 0; // the clock as it stood when the view went stale
    qint64 m_selectedEvent = 0;
    int m_currentLane = -1;
    QString m_currentRow; // TimelineRows::identity() of the current row
    bool m_revealPending = false;
    qint64 m_emittedFrom = 0;
    qint64 m_emittedTo = 0;
    // Left button state: a press becomes a drag once it moves past the
    // platform's drag distance, otherwise its release is a click.
    bool m_pressed = false;
    bool m_dragging = false;
    QPoint m_pressPos;
    QPoint m_lastDragPos;
    std::optional<QPoint> m_hoverPos; // the pointer, while it is over the widget
    // The tooltip this widget shows (QToolTip is one for the application:
    // only ours is hidden), where it was asked for, and what it is about.
    bool m_tipShown = false;
    QString m_tipText;
    QString m_tipKey;
    QPoint m_tipPos;
};

} // namespace relctl::ui
