#include "timelinewidget.h"

#include "timeformat.h"
#include "timelinelegend.h"
#include "timelinepainter.h"

#include <QApplication>
#include <QDateTime>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QStyle>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace relctl::ui {

namespace {

// In follow-now mode, "now" sits this fraction of the span inside the right
// edge: a live lease's expiry lies ahead of now (up to its TTL) and the
// queued candidates wait there, so the view keeps room for them.
constexpr double kFollowMargin = 1.0 / 6;

} // namespace

TimelineWidget::TimelineWidget(QWidget* parent)
    : QWidget(parent), m_painter(std::make_unique<TimelinePainter>()),
      m_legend(std::make_unique<TimelineLegend>()), m_laneScroll(new QScrollBar(Qt::Vertical, this))
{
    // Shown only while the lanes overflow; it scrolls the lanes alone, so the
    // axis and the legend stay where they are.
    m_laneScroll->hide();
    m_laneScroll->setFocusPolicy(Qt::NoFocus);
    m_laneScroll->setAccessibleName(tr("Scroll lanes"));
    connect(m_laneScroll, &QScrollBar::valueChanged, this, [this](int value) {
        hideTip();
        m_geometry.scrollLanesBy(value - m_geometry.laneScroll());
        update();
    });
    setFocusPolicy(Qt::StrongFocus);
    // Only to know where the pointer is, for + and - (mouseMoveEvent does
    // nothing else without a button down).
    setMouseTracking(true);
    setAccessibleName(tr("Lease timeline"));
    setWhatsThis(keyboardHelp());
    setAttribute(Qt::WA_OpaquePaintEvent); // the painter fills every pixel
    m_painter->setColors(TimelineColors::fromPalette(palette()));
    const auto now = static_cast<double>(QDateTime::currentMSecsSinceEpoch());
    m_geometry.setRange(now - 3600.0 * 1000, now);
    m_emittedFrom = visibleFrom();
    m_emittedTo = visibleTo();
    m_sinceSlice.start();
    connect(&m_followTimer, &QTimer::timeout, this, &TimelineWidget::followTick);
    updateFollowInterval();
}

TimelineWidget::~TimelineWidget() = default;

void TimelineWidget::setSlice(relctl::TimelineSlice slice)
{
    m_serverNow = slice.serverNow.millis();
    m_sinceSlice.restart();
    m_data = TimelineLanes::fromSlice(std::move(slice));
    m_rows.reset(m_data);
    measureLabels({}, true);
    rowsChanged();
    if (m_revealPending && revealSelected())
        m_revealPending = false;
    if (m_followNow)
        followTick();
}

void TimelineWidget::updateEnvironments(const QStringList& envs, const relctl::TimelineSlice& slice)
{
    if (slice.serverNow.millis() > 0) {
        m_serverNow = slice.serverNow.millis();
        m_sinceSlice.restart();
    }
    const TimelineLanes::Change change = m_data.replace(envs, slice);
    for (const auto& [slot, key] : change.removed)
        m_rows.removeLane(slot, key);
    for (const int slot : change.added)
        m_rows.addLane(m_data, slot);
    for (const int slot : change.replaced)
        m_rows.laneChanged(slot);
    if (!change.added.empty() || !change.removed.empty()) {
        // Lanes came or went: the rows below them move (one pass over the
        // rows, no sorting).
        measureLabels(change.added, false);
        rowsChanged();
    } else {
        // Only items changed: repaint when one of those lanes is in view.
        // Not a structured binding: C++20 lets a lambda capture one, but
        // clang (and so clang-tidy) 14 does not.
        const auto shown = m_geometry.visibleLanes();
        const bool visible = std::any_of(change.replaced.begin(), change.replaced.end(), [&](int slot) {
            const int row = m_rows.rowOfLane(slot);
            return row >= shown.first && row < shown.second;
        });
        if (visible) {
            refreshTip();
            update();
        }
    }
    if (m_revealPending && revealSelected())
        m_revealPending = false;
}

void TimelineWidget::setLaneFilter(const std::optional<QSet<QString>>& shown)
{
    // The owner may pass the same filter on every refresh: nothing to redo.
    if (shown == m_rows.filter())
        return;
    m_rows.setFilter(shown);
    rowsChanged();
}

void TimelineWidget::setGroups(const QHash<QString, QString>& groupOf)
{
    if (m_rows.grouped() && groupOf == m_rows.groupOf())
        return;
    m_rows.setGroups(groupOf);
    m_rows.reset(m_data);
    rowsChanged();
}

void TimelineWidget::setCollapsedGroups(const QSet<QString>& collapsed)
{
    if (collapsed == m_rows.collapsed())
        return;
    m_rows.setCollapsed(collapsed);
    rowsChanged();
}

QSet<QString> TimelineWidget::collapsedGroups() const
{
    return m_rows.collapsed();
}

void TimelineWidget::toggleGroup(const QString& group)
{
    if (m_rows.rowOfGroup(group) < 0)
        return;
    m_rows.toggle(group);
    rowsChanged();
    emit collapsedGroupsChanged(m_rows.collapsed());
}

void TimelineWidget::rowsChanged()
{
    m_rows.rebuild(m_data);
    m_geometry.setLaneCount(m_rows.count());
    // The current row is an environment (or a group): keep it when rows
    // come and go; when it is gone, the row that took its place.
    const int rows = m_rows.count();
    // A lane inside a collapsed group is found on the group's row, and is
    // current again when the group opens.
    int current = m_rows.rowOfIdentity(m_currentRow, m_data);
    if (current < 0) {
        current = rows > 0 ? std::clamp(m_currentLane, 0, rows - 1) : -1;
        m_currentRow = m_rows.identity(current, m_data);
    }
    m_currentLane = current;
    layoutLanes();
    updateGeometry();
    refreshTip();
    update();
}

void TimelineWidget::setVisibleRange(qint64 from, qint64 to)
{
    // An explicit range is a decision about what to look at: following the
    // clock would immediately override it.
    viewMovedByUser();
    m_geometry.setRange(static_cast<double>(from), static_cast<double>(to));
    rangeChanged();
}

qint64 TimelineWidget::visibleFrom() const
{
    return static_cast<qint64>(std::floor(m_geometry.startMs()));
}

qint64 TimelineWidget::visibleTo() const
{
    return static_cast<qint64>(std::ceil(m_geometry.endMs()));
}

void TimelineWidget::setFollowNow(bool on)
{
    if (m_followNow == on)
        return;
    m_followNow = on;
    if (on) {
        followTick();
        m_followTimer.start();
    } else {
        m_followTimer.stop();
    }
    emit followNowChanged(on);
}

void TimelineWidget::setStale(bool stale)
{
    if (stale == m_stale)
        return;
    m_staleNow = serverNowEstimate();
    m_stale = stale;
    if (stale)
        m_followTimer.stop();
    else if (m_followNow)
        m_followTimer.start();
    update();
}

double TimelineWidget::serverNowEstimate() const
{
    if (m_stale)
        return m_staleNow;
    // Without a slice there is no server clock yet; the local one is the best guess.
    if (m_serverNow == 0)
        return static_cast<double>(QDateTime::currentMSecsSinceEpoch());
    return static_cast<double>(m_serverNow + m_sinceSlice.elapsed());
}

void TimelineWidget::followTick()
{
    const double span = m_geometry.spanMs();
    const double end = serverNowEstimate() + kFollowMargin * span;
    m_geometry.setRange(end - span, end);
    rangeChanged();
}

void TimelineWidget::updateFollowInterval()
{
    // About one pixel of movement per tick: smooth when zoomed in, and no
    // pointless repaints when a pixel is an hour.
    m_followTimer.setInterval(static_cast<int>(std::clamp(m_geometry.msPerPixel(), 40.0, 5000.0)));
}

void TimelineWidget::rangeChanged()
{
    updateFollowInterval();
    refreshTip(); // following now moves the items under a tooltip away
    update();
    const qint64 from = visibleFrom();
    const qint64 to = visibleTo();
    if (from == m_emittedFrom && to == m_emittedTo)
        return;
    m_emittedFrom = from;
    m_emittedTo = to;
    emit visibleRangeChanged(from, to);
}

void TimelineWidget::viewMovedByUser()
{
    setFollowNow(false);
}

void TimelineWidget::zoomBy(double plotX, double factor)
{
    hideTip();
    if (m_followNow) {
        // Zooming says how much to see, not where: following goes on, and
        // the now line is the one place that following keeps still.
        m_geometry.zoomAround(m_geometry.xForTime(serverNowEstimate()), factor);
        followTick();
        return;
    }
    m_geometry.zoomAround(plotX, factor);
    rangeChanged();
}

double TimelineWidget::keyZoomAnchor() const
{
    const double width = m_geometry.plotWidth();
    if (m_hoverPos && m_hoverPos->y() < m_geometry.viewportHeight()) {
        const double x = m_hoverPos->x() - m_geometry.plotLeft();
        if (x >= 0 && x <= width)
            return x;
    }
    if (const auto at = markerPosition(m_selectedEvent)) {
        const double x = at->x() - m_geometry.plotLeft();
        if (x >= 0 && x <= width)
            return x;
    }
    return width / 2;
}

void TimelineWidget::panBy(double dx)
{
    hideTip();
    viewMovedByUser();
    m_geometry.panByPixels(dx);
    rangeChanged();
}

void TimelineWidget::selectEvent(qint64 eventId, std::optional<qint64> at)
{
    m_selectedEvent = eventId;
    m_revealPending = false;
    if (eventId != 0 && !revealSelected()) {
        m_revealPending = true;
        if (at) {
            viewMovedByUser();
            const double span = m_geometry.spanMs();
            m_geometry.setRange(static_cast<double>(*at) - span / 2, static_cast<double>(*at) + span / 2);
            rangeChanged();
        }
    }
    update();
}

bool TimelineWidget::revealSelected()
{
    const auto found = m_data.markerIndex.constFind(m_selectedEvent);
    if (found == m_data.markerIndex.cend())
        return false;
    const auto [slot, index] = *found;
    const auto at = static_cast<double>(
        m_data.lanes[static_cast<std::size_t>(slot)].markers[static_cast<std::size_t>(index)].at.millis());
    // The keyboard continues from where the selection is: its lane's row, or
    // its collapsed group's. A lane the filter hides has none; the view
    // still moves to the time.
    if (const int lane = m_rows.rowOfLane(slot); lane >= 0) {
        m_currentLane = lane;
        m_currentRow = m_rows.identity(lane, m_data);
        m_geometry.ensureLaneVisible(lane);
        syncLaneScrollBar();
    }
    // Leave the view alone when the marker is already well inside it; a
    // marker at the very edge is as good as hidden, so centre that too.
    const double span = m_geometry.spanMs();
    if (at < m_geometry.startMs() + 0.05 * span || at > m_geometry.endMs() - 0.05 * span) {
        viewMovedByUser();
        m_geometry.setRange(at - span / 2, at + span / 2);
        rangeChanged();
    }
    update();
    return true;
}

bool TimelineWidget::event(QEvent* event)
{
    if (event->type() == QEvent::ShortcutOverride) {
        // With focus here, the timeline's keys are navigation, not the
        // window's shortcuts (e.g. a checkable "Follow now" on Home would
        // toggle it off instead of turning it on).
        auto* key = static_cast<QKeyEvent*>(event);
        if (isNavigation(key)) {
            event->accept();
            return true;
        }
    }
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const Tip tip = tipAt(help->pos());
        if (tip.text.isEmpty()) {
            // Nothing here to describe (the plot stays quiet): whatever
            // tooltip is up belongs to what the pointer left.
            QToolTip::hideText();
            m_tipShown = false;
            event->ignore();
        } else {
            showTip(help->pos(), help->globalPos(), tip);
        }
        return true;
    }
    return QWidget::event(event);
}

void TimelineWidget::paintEvent(QPaintEvent* /*event*/)
{
    QPainter painter(this);
    m_painter->paint(painter, rect(), m_geometry, m_data, m_rows,
                     {serverNowEstimate(), m_selectedEvent, hasFocus(), m_currentLane,
                      m_legendVisible ? m_legend.get() : nullptr});
    if (m_stale) {
        QColor veil = palette().color(QPalette::Window);
        veil.setAlpha(150);
        painter.fillRect(rect(), veil);
        const QString note = tr("Not current: the database is unreachable. Last read at %1.")
                                 .arg(formatTime(static_cast<qint64>(m_staleNow)));
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(rect().adjusted(8, 4, -8, -4), Qt::AlignTop | Qt::AlignRight, note);
    }
}

void TimelineWidget::resizeEvent(QResizeEvent* event)
{
    // A wider window shows the same time range in more detail, so the range
    // (and thus the slice) stays as it is.
    layoutLanes();
    refreshTip();
    QWidget::resizeEvent(event);
}

void TimelineWidget::wheelEvent(QWheelEvent* event)
{
    const QPointF pos = event->position();
    const QPoint angle = event->angleDelta();
    const double steps = angle.y() / 120.0;
    if (pos.x() < m_geometry.plotLeft() || event->modifiers() & Qt::ShiftModifier) {
        // Over the lane names (or with Shift): scroll the lanes, not time.
        hideTip();
        m_geometry.scrollLanesBy(-steps * m_geometry.laneHeight());
        syncLaneScrollBar();
        update();
    } else if (angle.y() != 0) {
        zoomBy(pos.x() - m_geometry.plotLeft(), std::pow(1.25, steps));
    }
    if (angle.x() != 0)
        panBy(angle.x() / 120.0 * 60);
    event->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return QWidget::mousePressEvent(event);
    m_pressed = true;
    m_dragging = false;
    m_pressPos = m_lastDragPos = event->position().toPoint();
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint pos = event->position().toPoint();
    m_hoverPos = pos;
    if (!m_pressed) {
        // The legend's "+N more" and "Fewer" are clicked, as links are.
        const LegendEntry* entry =
            m_legendVisible && pos.y() >= m_geometry.viewportHeight() ? m_legend->entryAt(pos) : nullptr;
        if (entry && entry == m_legend->toggle())
            setCursor(Qt::PointingHandCursor);
        else
            unsetCursor();
        return QWidget::mouseMoveEvent(event);
    }
    if (!m_dragging && (pos - m_pressPos).manhattanLength() >= QApplication::startDragDistance()) {
        m_dragging = true;
        setCursor(Qt::ClosedHandCursor);
    }
    if (!m_dragging)
        return;
    const QPoint delta = pos - m_lastDragPos;
    m_lastDragPos = pos;
    if (delta.y() != 0) {
        hideTip();
        m_geometry.scrollLanesBy(-delta.y());
        syncLaneScrollBar();
        update();
    }
    if (delta.x() != 0)
        panBy(delta.x());
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton || !m_pressed)
        return QWidget::mouseReleaseEvent(event);
    const bool click = !m_dragging;
    m_pressed = m_dragging = false;
    unsetCursor();
    if (!click)
        return;
    const QPoint pos = event->position().toPoint();
    // The legend's "+N more (L)" or "Fewer (L)".
    if (const LegendEntry* entry =
            m_legendVisible && pos.y() >= m_geometry.viewportHeight() ? m_legend->entryAt(pos) : nullptr;
        entry && entry == m_legend->toggle()) {
        setLegendExpanded(!m_legendExpanded);
        return;
    }
    // A group's header: its name in the gutter, or the band of an expanded
    // one, collapses or expands it (a collapsed group's plot is its summary).
    if (const int row = m_geometry.laneAt(pos.y());
        row >= 0 && row < m_rows.count() && pos.y() < m_geometry.viewportHeight() && m_rows.isHeader(row) &&
        (pos.x() < m_geometry.plotLeft() || !m_rows.isCollapsedGroup(row))) {
        m_currentLane = row;
        m_currentRow = m_rows.identity(row, m_data);
        toggleGroup(m_rows.group(m_rows.row(row).index).name);
        return;
    }
    const TimelineHit hit = itemAt(pos);
    // In a group, the event nearest the pointer; a queued candidate is no
    // event, so the nearest event beside it is taken instead.
    const relctl::TimelineMarker* chosen = hit.marker && hit.marker->eventId != 0 ? hit.marker : nullptr;
    if (hit.marker && !chosen) {
        const double at = static_cast<double>(hit.marker->at.millis());
        for (const auto* m : hit.group)
            if (m->eventId != 0 && (!chosen || std::abs(static_cast<double>(m->at.millis()) - at) <
                                                   std::abs(static_cast<double>(chosen->at.millis()) - at)))
                chosen = m;
    }
    if (chosen) {
        // Not selectByUser(): the marker is where the pointer is; the view stays.
        m_selectedEvent = chosen->eventId;
        m_revealPending = false;
        m_currentLane = hit.lane;
        m_currentRow = m_rows.identity(hit.lane, m_data);
        update();
        emit eventSelected(m_selectedEvent);
    }
}

void TimelineWidget::focusInEvent(QFocusEvent* event)
{
    update(); // the focus frame and the current lane's mark
    QWidget::focusInEvent(event);
}

void TimelineWidget::focusOutEvent(QFocusEvent* event)
{
    update();
    QWidget::focusOutEvent(event);
}

void TimelineWidget::leaveEvent(QEvent* event)
{
    // The pointer is gone: + and - zoom around the selection or the centre,
    // and the tooltip goes with it (QToolTip would hide it as well).
    m_hoverPos.reset();
    hideTip();
    QWidget::leaveEvent(event);
}

void TimelineWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) {
        m_painter->setColors(TimelineColors::fromPalette(palette()));
        update();
    }
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
        layoutLanes(); // the legend's rows follow the font
        updateGeometry();
    }
    QWidget::changeEvent(event);
}

} // namespace relctl::ui
