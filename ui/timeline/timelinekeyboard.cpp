// The timeline widget's keyboard navigation: the keys (keyPressEvent and
// the shortcuts it takes from the window), the current lane and stepping
// from marker to marker, apart from timelinewidget.cpp's events and
// painting so that the keys and their help are read in one place.

#include "timelinewidget.h"

#include <QKeyEvent>
#include <algorithm>
#include <cmath>
#include <limits>

namespace relctl::ui {

namespace {

constexpr double kKeyZoom = 1.5;
// Left/Right move the view by this fraction of its span.
constexpr double kKeyPan = 1.0 / 8;

// Navigation keys act without Ctrl, Alt or Meta; with them the key belongs to
// the window's shortcuts.
bool plainKey(const QKeyEvent* event)
{
    return (event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)) == 0;
}

bool isNavigationKey(int key)
{
    switch (key) {
    case Qt::Key_Left:
    case Qt::Key_Right:
    case Qt::Key_Up:
    case Qt::Key_Down:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_Minus:
    case Qt::Key_Home:
    case Qt::Key_Period:
    case Qt::Key_Comma:
    case Qt::Key_Greater:
    case Qt::Key_Less:
    case Qt::Key_Return:
    case Qt::Key_Enter:
    case Qt::Key_Escape:
    case Qt::Key_F:
    case Qt::Key_L:
    case Qt::Key_Space:
    case Qt::Key_PageUp:
    case Qt::Key_PageDown:
        return true;
    default:
        return false;
    }
}

} // namespace

bool TimelineWidget::isNavigation(const QKeyEvent* event)
{
    return plainKey(event) && isNavigationKey(event->key());
}

void TimelineWidget::setCurrentLane(int lane)
{
    const int rows = m_rows.count();
    if (rows == 0)
        return;
    m_currentLane = std::clamp(lane, 0, rows - 1);
    m_currentRow = m_rows.identity(m_currentLane, m_data);
    m_geometry.ensureLaneVisible(m_currentLane);
    syncLaneScrollBar();
    update();
}

bool TimelineWidget::stepMarker(int direction, bool allLanes)
{
    // Markers are ordered by (time, event id): ids break ties between events
    // written in the same millisecond, so every event is reachable.
    using Key = std::pair<qint64, qint64>;
    Key from;
    if (const auto found = m_data.markerIndex.constFind(m_selectedEvent);
        m_selectedEvent != 0 && found != m_data.markerIndex.cend()) {
        const auto [slot, index] = *found;
        from = {
            m_data.lanes[static_cast<std::size_t>(slot)].markers[static_cast<std::size_t>(index)].at.millis(),
            m_selectedEvent};
    } else {
        // Nothing selected: start at the centre, including markers right on it.
        const auto centre =
            static_cast<qint64>(std::llround(m_geometry.timeForX(m_geometry.plotWidth() / 2)));
        from = {centre,
                direction > 0 ? std::numeric_limits<qint64>::min() : std::numeric_limits<qint64>::max()};
    }

    std::optional<Key> best;
    const auto better = [&](const Key& k) {
        if (direction > 0)
            return k > from && (!best || k < *best);
        return k < from && (!best || k > *best);
    };
    // Only what is drawn is reached: the shown lanes' markers, and on a
    // collapsed group's row its members' refusals.
    const int rows = m_rows.count();
    for (int l = 0; l < rows; ++l) {
        if (!allLanes && l != m_currentLane)
            continue;
        const TimelineRow& row = m_rows.row(l);
        if (row.kind == TimelineRow::Kind::Group && !m_rows.isCollapsedGroup(l))
            continue;
        const auto& markers = row.kind == TimelineRow::Kind::Lane
                                  ? m_data.lanes[static_cast<std::size_t>(row.index)].markers
                                  : m_rows.summary(row.index, m_data).refusals.markers;
        const auto byTime = [](const relctl::TimelineMarker& m, qint64 t) { return m.at.millis() < t; };
        // Markers are sorted by time only: those sharing a time are all
        // looked at, since any of them may be the next by id. A marker later
        // (earlier) than the best found so far cannot beat it: stop there.
        if (direction > 0) {
            for (auto it = std::lower_bound(markers.begin(), markers.end(), from.first, byTime);
                 it != markers.end(); ++it) {
                if (best && it->at.millis() > best->first)
                    break;
                if (it->eventId != 0 &&
                    better({it->at.millis(), it->eventId})) // 0: a queued candidate, not an event
                    best = Key{it->at.millis(), it->eventId};
            }
        } else {
            auto r =
                std::upper_bound(markers.begin(), markers.end(), from.first,
                                 [](qint64 t, const relctl::TimelineMarker& m) { return t < m.at.millis(); });
            while (r != markers.begin()) {
                --r;
                if (best && r->at.millis() < best->first)
                    break;
                if (r->eventId != 0 && better({r->at.millis(), r->eventId}))
                    best = Key{r->at.millis(), r->eventId};
            }
        }
    }
    if (!best)
        return false;
    selectByUser(best->second);
    return true;
}

void TimelineWidget::selectByUser(qint64 eventId)
{
    m_selectedEvent = eventId;
    m_revealPending = false;
    revealSelected();
    update();
    emit eventSelected(eventId);
}

QString TimelineWidget::keyboardHelp()
{
    return tr("<p><b>Lease timeline</b>: one lane per environment; leases are bars, audit events are "
              "markers (red: refused writes), shaded stretches are freezes; the legend below says what each "
              "colour and shape means. Click a marker to trace it; drag to pan; the wheel zooms around "
              "the pointer, and over the lane names scrolls the lanes. While following now, zooming keeps "
              "following.</p>"
              "<table>"
              "<tr><td><b>Left</b> / <b>Right</b></td><td>pan</td></tr>"
              "<tr><td><b>+</b> / <b>-</b></td><td>zoom in / out around the pointer (or the selected "
              "marker)</td></tr>"
              "<tr><td><b>Home</b></td><td>follow now</td></tr>"
              "<tr><td><b>F</b></td><td>zoom to fit the selection (the selected marker's lease)</td></tr>"
              "<tr><td><b>Shift+F</b></td><td>zoom to fit the whole history</td></tr>"
              "<tr><td><b>L</b></td><td>what the legend's last entry says: <i>+N more</i> shows the "
              "whole legend, <i>Fewer</i> only what fits in a quarter of the timeline; with neither (it "
              "all fits), show / hide the legend</td></tr>"
              "<tr><td><b>Shift+L</b></td><td>show / hide the legend</td></tr>"
              "<tr><td><b>Up</b> / <b>Down</b></td><td>previous / next lane</td></tr>"
              "<tr><td><b>Page Up</b> / <b>Page Down</b></td><td>a screenful of lanes up / down</td></tr>"
              "<tr><td><b>Space</b></td><td>collapse / expand the current lane's group (a collapsed "
              "group is one lane: where its environments were held, refused, frozen)</td></tr>"
              "<tr><td><b>.</b> / <b>,</b></td><td>next / previous marker on the lane</td></tr>"
              "<tr><td><b>&gt;</b> / <b>&lt;</b></td><td>next / previous marker on any lane</td></tr>"
              "<tr><td><b>Enter</b></td><td>trace the selected marker again</td></tr>"
              "<tr><td><b>Esc</b></td><td>clear the selection</td></tr>"
              "</table>");
}

void TimelineWidget::keyPressEvent(QKeyEvent* event)
{
    if (!plainKey(event))
        return QWidget::keyPressEvent(event);
    const double step = m_geometry.plotWidth() * kKeyPan;
    const bool shift = event->modifiers() & Qt::ShiftModifier;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: // "+" without Shift on most layouts
        zoomBy(keyZoomAnchor(), kKeyZoom);
        break;
    case Qt::Key_Minus:
        zoomBy(keyZoomAnchor(), 1 / kKeyZoom);
        break;
    case Qt::Key_Left:
        panBy(step);
        break;
    case Qt::Key_Right:
        panBy(-step);
        break;
    case Qt::Key_Up:
        setCurrentLane(m_currentLane - 1);
        break;
    case Qt::Key_Down:
        setCurrentLane(m_currentLane + 1);
        break;
    case Qt::Key_PageUp:
    case Qt::Key_PageDown: {
        const int page = std::max(1, static_cast<int>((m_geometry.viewportHeight() - m_geometry.plotTop()) /
                                                      m_geometry.laneHeight()) -
                                         1);
        setCurrentLane(m_currentLane + (event->key() == Qt::Key_PageUp ? -page : page));
        break;
    }
    case Qt::Key_Space:
        // The current row's group: its header, or the group of the lane.
        if (m_currentLane >= 0 && m_currentLane < m_rows.count()) {
            const TimelineRow& row = m_rows.row(m_currentLane);
            const int group =
                row.kind == TimelineRow::Kind::Group ? row.index : m_rows.groupOfLane(row.index);
            if (group >= 0 && m_rows.group(group).header) {
                const QString name = m_rows.group(group).name;
                m_currentRow = QStringLiteral("group:") + name; // the header stays current
                toggleGroup(name);
            }
        }
        break;
    case Qt::Key_Home:
        setFollowNow(true);
        break;
    case Qt::Key_Period:
    case Qt::Key_Greater:
        stepMarker(+1, shift || event->key() == Qt::Key_Greater);
        break;
    case Qt::Key_Comma:
    case Qt::Key_Less:
        stepMarker(-1, shift || event->key() == Qt::Key_Less);
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (m_selectedEvent != 0)
            selectByUser(m_selectedEvent);
        break;
    case Qt::Key_Escape:
        selectEvent(0);
        break;
    case Qt::Key_F:
        if (shift)
            zoomToHistory();
        else
            zoomToSelection();
        break;
    case Qt::Key_L:
        stepLegend(shift);
        break;
    default:
        QWidget::keyPressEvent(event);
    }
}

} // namespace relctl::ui
