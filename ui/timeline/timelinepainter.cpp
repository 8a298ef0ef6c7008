#include "timelinepainter.h"

#include "relctl/timelinecolours.h"
#include "timelinegroups.h"

#include <QFontMetrics>
#include <QPaintEngine>
#include <QPainter>
#include <QPainterPath>
#include <QPalette>
#include <QPolygonF>
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

namespace relctl::ui {

namespace {

QColor mix(const QColor& a, const QColor& b, double t)
{
    // QColor's components are floats; the blend is computed in double.
    const auto blend = [t](float from, float to) {
        const double start = static_cast<double>(from);
        return static_cast<float>(start + (static_cast<double>(to) - start) * t);
    };
    return QColor::fromRgbF(blend(a.redF(), b.redF()), blend(a.greenF(), b.greenF()),
                            blend(a.blueF(), b.blueF()));
}

double luminance(const QColor& c)
{
    const auto linear = [](double v) {
        return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
}

// A hue at a lightness that stands out on the base color: darker on light
// themes, lighter on dark ones. The start is a pleasant lightness; hues that
// are bright by nature (green, amber) are moved further until they read.
QColor hue(int h, int s, const QColor& base)
{
    const bool dark = base.lightness() < 128;
    int lightness = dark ? 150 : 105;
    QColor color = QColor::fromHsl(h, s, lightness);
    while (contrastRatio(color, base) < TimelineColors::kMinContrast && lightness > 0 && lightness < 255) {
        lightness = std::clamp(lightness + (dark ? 5 : -5), 0, 255);
        color = QColor::fromHsl(h, s, lightness);
    }
    return color;
}

// A colour of the shared table (relctl/timelinecolours.h) on this palette.
// A grey is a share of the text colour over the base (on white with black
// text: itself), so quiet kinds stay quiet on dark themes; a hue is kept as
// it is where it reads, else made darker (light themes) or lighter (dark
// ones) until it reaches kMinContrast against the base.
QColor tableColour(std::string_view hex, const QColor& base, const QColor& text)
{
    const QColor colour(QLatin1String(hex.data(), static_cast<qsizetype>(hex.size())));
    if (colour.hslSaturation() == 0)
        return mix(base, text, 1.0 - static_cast<double>(colour.lightnessF()));
    if (contrastRatio(colour, base) >= TimelineColors::kMinContrast)
        return colour;
    const bool dark = base.lightness() < 128;
    int lightness = colour.lightness();
    QColor adjusted = colour;
    while (contrastRatio(adjusted, base) < TimelineColors::kMinContrast && lightness > 0 && lightness < 255) {
        lightness = std::clamp(lightness + (dark ? 5 : -5), 0, 255);
        adjusted = QColor::fromHsl(colour.hslHue(), colour.hslSaturation(), lightness);
    }
    return adjusted;
}

QColor readableOn(const QColor& background)
{
    return background.lightness() > 140 ? QColor(Qt::black) : QColor(Qt::white);
}

} // namespace

LeaseEnding leaseEnding(const std::string& ending)
{
    if (ending == "live")
        return LeaseEnding::Live;
    if (ending == "expired")
        return LeaseEnding::Expired;
    if (ending == "revoked")
        return LeaseEnding::Revoked;
    return LeaseEnding::Released;
}

MarkerKind markerKind(const std::string& kind)
{
    if (kind == "publish")
        return MarkerKind::Publish;
    if (kind == "refusal")
        return MarkerKind::Refusal;
    if (kind == "superseded")
        return MarkerKind::Superseded;
    if (kind == "queued")
        return MarkerKind::Queued;
    if (kind == "rollback")
        return MarkerKind::Rollback;
    if (kind == "promotion")
        return MarkerKind::Promotion;
    return MarkerKind::Operator;
}

double contrastRatio(const QColor& a, const QColor& b)
{
    const double la = luminance(a);
    const double lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QString leaseLabel(const relctl::LeaseSpan& lease)
{
    return QString::fromStdString(lease.job) + QStringLiteral(" \u00b7 ") +
           QString::fromStdString(lease.release) + QStringLiteral(" \u00b7 #") + QString::number(lease.token);
}

TimelineColors TimelineColors::fromPalette(const QPalette& palette)
{
    TimelineColors c;
    c.base = palette.color(QPalette::Base);
    c.alternateBase = palette.color(QPalette::AlternateBase);
    c.window = palette.color(QPalette::Window);
    c.text = palette.color(QPalette::Text);
    c.dimText = mix(c.base, c.text, 0.6);
    c.windowText = palette.color(QPalette::WindowText);
    c.dimWindowText = mix(c.window, c.windowText, 0.6);
    c.grid = mix(c.base, c.text, 0.12);
    c.selection = palette.color(QPalette::Highlight);
    c.now = palette.color(QPalette::Highlight);
    c.frozen = hue(200, 150, c.base);
    c.frozenFill = mix(c.base, c.frozen, 0.16);
    c.headerBand = mix(c.base, c.window, 0.7);
    namespace tc = relctl::timelinecolours;
    const auto table = [&c](std::string_view hex) { return tableColour(hex, c.base, c.text); };
    c.endings = {table(tc::kLive), table(tc::kReleased), table(tc::kExpired), table(tc::kRevoked)};
    // Red is kept for refusals alone, so they can be found at a glance.
    c.markers = {table(tc::kPublish),  table(tc::kRefusal),  table(tc::kSuperseded), table(tc::kQueued),
                 table(tc::kOperator), table(tc::kRollback), table(tc::kPromotion)};
    // Darker than the queued grey and lighter than the superseded one: a
    // badge's own grey, with room for a white count.
    c.mixed = mix(c.base, c.text, 0.62);
    return c;
}

void TimelinePainter::setColors(const TimelineColors& colors)
{
    m_colors = colors;
    m_stampDpr = 0; // re-render the stamps in the new colors
}

const QPixmap& TimelinePainter::stamp(MarkerKind kind, qreal dpr, double r)
{
    if (m_stampDpr != dpr) {
        m_stamps = {};
        m_stampDpr = dpr;
    }
    QPixmap& pm = m_stamps[static_cast<std::size_t>(kind)];
    if (!pm.isNull())
        return pm;
    const int side = static_cast<int>(2 * r + 3);
    pm = QPixmap(static_cast<int>(std::ceil(side * dpr)), static_cast<int>(std::ceil(side * dpr)));
    pm.setDevicePixelRatio(dpr);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    const QPointF c(side / 2.0, side / 2.0);
    const QColor color = m_colors.marker(kind);
    p.setPen(QPen(m_colors.base, 1));
    p.setBrush(color);
    switch (kind) {
    case MarkerKind::Publish:
        p.drawPolygon(
            QPolygonF{{c.x(), c.y() - r}, {c.x() + r, c.y()}, {c.x(), c.y() + r}, {c.x() - r, c.y()}});
        break;
    case MarkerKind::Refusal: // pointing down at the moment of the refusal
        p.drawPolygon(
            QPolygonF{{c.x() - r, c.y() - r * 0.8}, {c.x() + r, c.y() - r * 0.8}, {c.x(), c.y() + r}});
        break;
    case MarkerKind::Superseded:
        p.setPen(QPen(color, 1.6));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(c.x() - r + 1, c.y() - r + 1, 2 * r - 2, 2 * r - 2));
        break;
    case MarkerKind::Queued:
        p.setPen(QPen(color, 1.6));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(c, r - 1.5, r - 1.5);
        break;
    case MarkerKind::Rollback: // pointing back
        p.drawPolygon(
            QPolygonF{{c.x() + r * 0.8, c.y() - r}, {c.x() + r * 0.8, c.y() + r}, {c.x() - r, c.y()}});
        break;
    case MarkerKind::Promotion: // a square: a gate decided
        p.drawRect(QRectF(c.x() - r * 0.8, c.y() - r * 0.8, 1.6 * r, 1.6 * r));
        break;
    case MarkerKind::Operator:
    case MarkerKind::Count:
        p.drawEllipse(c, r - 0.5, r - 0.5);
        break;
    }
    return pm;
}

void TimelinePainter::paint(QPainter& painter, const QRect& area, const TimelineGeometry& g,
                            const TimelineLanes& data, const TimelineRows& rows,
                            const TimelinePaintState& state)
{
    painter.fillRect(area, m_colors.base);
    const auto ticks = g.niceTicks();
    const int left = static_cast<int>(g.plotLeft());
    const int top = static_cast<int>(g.plotTop());
    // The lanes end where the legend begins: it is never painted over.
    const int bottom = std::min(area.height(), static_cast<int>(g.viewportHeight()));
    const QRect plot(left, top, area.width() - left, bottom - top);
    const auto [firstRow, lastRow] = g.visibleLanes();
    const int shownRows = std::min(lastRow, rows.count());

    painter.save();
    painter.setClipRect(plot);
    for (int i = firstRow; i < shownRows; ++i) {
        const double y = g.laneTop(i);
        if (rows.isHeader(i) && !rows.isCollapsedGroup(i))
            painter.fillRect(QRectF(left, y, plot.width(), g.laneHeight()), m_colors.headerBand);
        else if (i % 2 == 1)
            painter.fillRect(QRectF(left, y, plot.width(), g.laneHeight()), m_colors.alternateBase);
    }
    painter.setPen(m_colors.grid);
    for (const auto& tick : ticks) {
        const double x = std::round(left + tick.x) + 0.5;
        painter.drawLine(QPointF(x, top), QPointF(x, bottom));
    }

    painter.translate(left, 0);
    // The engine's device is the real target: when a widget is rendered into
    // an image, painter.device() still names the widget, and stamps made for
    // its ratio would be blurred (or wrongly sized) on a 2x image.
    const QPaintDevice* target = painter.paintEngine() ? painter.paintEngine()->paintDevice() : nullptr;
    if (!target)
        target = painter.device();
    const qreal dpr = target ? target->devicePixelRatioF() : 1.0;
    for (int i = firstRow; i < shownRows; ++i) {
        const TimelineRow& row = rows.row(i);
        if (row.kind == TimelineRow::Kind::Group) {
            paintGroupRow(painter, g, data, rows, i, state.nowMs, dpr);
            continue;
        }
        const TimelineLane& lane = data.lanes[static_cast<std::size_t>(row.index)];
        // Under the leases: a freeze is the lane's state, the bars are what happened in it.
        paintFreezes(painter, g, lane, i, state.nowMs);
        paintLeases(painter, g, lane, i);
        paintMarkers(painter, g, lane, i, dpr);
    }
    const double nowX = g.xForTime(state.nowMs);
    if (state.nowMs > 0 && nowX >= 0 && nowX <= g.plotWidth()) {
        painter.setPen(QPen(m_colors.now, 1, Qt::DashLine));
        painter.drawLine(QPointF(nowX, top), QPointF(nowX, bottom));
    }
    if (state.selectedEvent != 0)
        paintSelection(painter, g, data, rows, state.selectedEvent);
    painter.restore();

    paintAxis(painter, area, g, ticks);
    paintGutter(painter, QRect(0, 0, area.width(), bottom), g, data, rows,
                state.focused ? state.currentLane : -1);
    if (state.legend && bottom < area.height())
        paintLegend(painter, QRect(0, bottom, area.width(), area.height() - bottom), *state.legend, dpr);
    if (state.focused)
        paintFocus(painter, area, g, state.currentLane);
}

QColor TimelinePainter::heldColour(int count) const
{
    const double share = std::min(1.0, std::max(1, count) / 4.0);
    return mix(m_colors.base, m_colors.ending(LeaseEnding::Released), 0.4 + 0.6 * share);
}

void TimelinePainter::paintGroupRow(QPainter& painter, const TimelineGeometry& g, const TimelineLanes& data,
                                    const TimelineRows& rows, int index, double nowMs, qreal dpr)
{
    if (!rows.isCollapsedGroup(index))
        return; // the band is the whole of an expanded header
    const GroupSummary& summary = rows.summary(rows.row(index).index, data);
    const double msPerPx = g.msPerPixel();
    const double from = g.startMs() - msPerPx;
    const double to = g.endMs() + msPerPx;
    const auto firstStep = [&](const std::vector<SummaryStep>& steps) {
        return std::upper_bound(steps.begin(), steps.end(), from,
                                [](double t, const SummaryStep& s) { return t < static_cast<double>(s.to); });
    };
    // Frozen: where any shown member was, shaded as a frozen lane is.
    for (auto it = firstStep(summary.frozen); it != summary.frozen.end(); ++it) {
        if (static_cast<double>(it->from) > to)
            break;
        const bool open = it->to == std::numeric_limits<qint64>::max();
        const double end = open ? std::max(nowMs, g.endMs()) + msPerPx : static_cast<double>(it->to);
        const double x0 = g.xForTime(static_cast<double>(it->from));
        const double x1 = std::min(g.plotWidth() + 2, g.xForTime(end));
        const double left = std::max(-2.0, std::round(x0));
        const bool continues = it != summary.frozen.begin() && std::prev(it)->to == it->from;
        paintFrozen(painter,
                    QRectF(left, g.laneTop(index), std::max(1.0, std::round(x1) - left), g.laneHeight()),
                    x0 >= -2 && !continues);
    }
    // Held: one bar, darker where more members held a lease at once. Steps
    // narrower than a pixel share it, at the largest count among them.
    const int itop = static_cast<int>(std::round(g.barTop(index)));
    const int iheight = static_cast<int>(g.barHeight());
    struct Run
    {
        int x0 = 0, x1 = 0, count = 0;
    } run;
    const auto flush = [&] {
        if (run.count > 0)
            painter.fillRect(QRect(run.x0, itop, run.x1 - run.x0, iheight), heldColour(run.count));
        run.count = 0;
    };
    for (auto it = firstStep(summary.held); it != summary.held.end(); ++it) {
        if (static_cast<double>(it->from) > to)
            break;
        const double x0 = std::max(-2.0, g.xForTime(static_cast<double>(it->from)));
        const double x1 = std::min(g.plotWidth() + 2, g.xForTime(static_cast<double>(it->to)));
        int ix0 = static_cast<int>(std::floor(x0));
        const int ix1 = std::max(ix0 + 1, static_cast<int>(std::ceil(x1)));
        if (run.count > 0 && ix0 < run.x1) {
            if (ix1 - ix0 <= 2 || run.x1 - run.x0 <= 2) {
                run.count = std::max(run.count, it->count);
                run.x1 = std::max(run.x1, ix1);
                continue;
            }
            ix0 = run.x1;
        } else if (run.count == it->count && ix0 == run.x1) {
            run.x1 = ix1;
            continue;
        }
        flush();
        run = {ix0, ix1, it->count};
    }
    flush();
    // Refusals: the members' own glyphs, merged as one lane's.
    paintMarkers(painter, g, summary.refusals, index, dpr);
}

void TimelinePainter::paintLeases(QPainter& painter, const TimelineGeometry& g, const TimelineLane& lane,
                                  int index)
{
    const double msPerPx = g.msPerPixel();
    const double from = g.startMs() - msPerPx;
    const double to = g.endMs() + msPerPx;
    const auto [first, last] = leasesOverlapping(lane, from, to);
    const double top = g.barTop(index);
    const double height = g.barHeight();
    const int itop = static_cast<int>(std::round(top));
    const int iheight = static_cast<int>(height);
    const QFontMetrics metrics(painter.font());

    // Bars narrower than a few pixels are merged into runs of one color, so
    // thousands of leases in a pixel column cost one fill, not thousands.
    struct Run
    {
        int x0 = 0, x1 = 0;
        LeaseEnding ending = LeaseEnding::Count;
    } run;
    auto flush = [&] {
        if (run.ending != LeaseEnding::Count)
            painter.fillRect(QRect(run.x0, itop, run.x1 - run.x0, iheight), m_colors.ending(run.ending));
        run.ending = LeaseEnding::Count;
    };

    for (std::size_t i = first; i < last; ++i) {
        const auto& lease = lane.leases[i];
        if (static_cast<double>(lease.endsAt.millis()) < from)
            continue; // ended before the window; only here because an earlier lease reaches into it
        const LeaseEnding ending = leaseEnding(lease.ending);
        const double x0 = std::max(-2.0, g.xForTime(static_cast<double>(lease.acquiredAt.millis())));
        const double x1 = std::min(g.plotWidth() + 2, g.xForTime(static_cast<double>(lease.endsAt.millis())));
        if (x1 - x0 < 4) {
            const int ix0 = static_cast<int>(std::floor(x0));
            const int ix1 = std::max(ix0 + 1, static_cast<int>(std::ceil(x1)));
            if (run.ending == ending && ix0 <= run.x1) {
                run.x1 = std::max(run.x1, ix1);
            } else {
                flush();
                run = {ix0, ix1, ending};
            }
            continue;
        }
        flush();
        // A one-pixel gap keeps back-to-back leases of the same color apart.
        const QRectF bar(x0, top, x1 - x0 - 1, height);
        const QColor& color = m_colors.ending(ending);
        painter.fillRect(bar, color);
        if (bar.width() >= 40) {
            const QString text =
                metrics.elidedText(leaseLabel(lease), Qt::ElideRight, static_cast<int>(bar.width()) - 8);
            // Two letters and an ellipsis say nothing; the tooltip has it all.
            if (text.size() >= 4) {
                painter.setPen(readableOn(color));
                painter.drawText(bar.adjusted(4, 0, -4, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
            }
        }
    }
    flush();
}

void TimelinePainter::paintMarkers(QPainter& painter, const TimelineGeometry& g, const TimelineLane& lane,
                                   int index, qreal dpr)
{
    const double r = g.markerRadius();
    const int y = static_cast<int>(std::round(g.markerY(index)));
    const auto groups = groupMarkers(lane, g);
    // Glyphs never overlap (groupMarkers keeps a gap between them); those
    // holding a refusal are still drawn last, so a selection ring or a
    // neighbour's antialiased edge never covers their red.
    for (const bool refusals : {false, true}) {
        for (const auto& group : groups) {
            if ((group.refusals > 0) != refusals)
                continue;
            if (glyphStyle(group) != GlyphStyle::Stamp) {
                paintGroupBadge(painter, QPointF(group.x, y), group.count(), group.kind, group.refusals > 0,
                                r);
                continue;
            }
            const QPixmap& pm = stamp(group.kind, dpr, r);
            const int half = static_cast<int>(std::lround(pm.width() / dpr / 2 - 0.5));
            const int x = static_cast<int>(group.x);
            painter.drawPixmap(x - half, y - half, pm);
        }
    }
}

void TimelinePainter::paintGroupBadge(QPainter& painter, const QPointF& centre, std::size_t count,
                                      MarkerKind kind, bool refusal, double radius)
{
    const double half = badgeHalfWidth(count, radius);
    const QRectF badge(centre.x() - half, centre.y() - radius - 1, 2 * half, 2 * radius + 2);
    const bool mixed = kind == MarkerKind::Count;
    // The hollow kinds (superseded, queued) stay hollow: an outline and a
    // count in their colour, as their stamps are drawn.
    const bool hollow = kind == MarkerKind::Superseded || kind == MarkerKind::Queued;
    const QColor& colour = mixed ? m_colors.mixed : m_colors.marker(kind);
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    if (hollow) {
        painter.setPen(QPen(colour, 1.6));
        painter.setBrush(m_colors.base);
        painter.drawRoundedRect(badge.adjusted(0.8, 0.8, -0.8, -0.8), radius, radius);
    } else if (mixed && refusal) {
        // A ring of the refusals' red inside the badge's bounds, so the
        // badge is as wide as any other and keeps its gap to its neighbours.
        painter.setPen(QPen(m_colors.marker(MarkerKind::Refusal), 1.5));
        painter.setBrush(colour);
        painter.drawRoundedRect(badge.adjusted(0.75, 0.75, -0.75, -0.75), radius - 0.75, radius - 0.75);
    } else {
        painter.setPen(QPen(m_colors.base, 1));
        painter.setBrush(colour);
        painter.drawRoundedRect(badge, radius, radius);
    }
    QFont font = painter.font();
    font.setPixelSize(static_cast<int>(2 * radius));
    font.setBold(true);
    painter.setFont(font);
    painter.setPen(hollow ? colour : readableOn(colour));
    painter.drawText(badge, Qt::AlignCenter, count > 9999 ? QStringLiteral("9999+") : QString::number(count));
    painter.restore();
}

void TimelinePainter::paintFrozen(QPainter& painter, const QRectF& rect, bool startEdge)
{
    painter.fillRect(rect, m_colors.frozenFill);
    QColor hatch = m_colors.frozen;
    hatch.setAlphaF(0.35f);
    painter.fillRect(rect, QBrush(hatch, Qt::BDiagPattern));
    if (startEdge)
        painter.fillRect(QRectF(rect.left(), rect.top(), 2, rect.height()), m_colors.frozen);
}

void TimelinePainter::paintFreezes(QPainter& painter, const TimelineGeometry& g, const TimelineLane& lane,
                                   int index, double nowMs)
{
    for (const auto& freeze : lane.freezes) {
        // Still in force: frozen up to now and, until someone unfreezes it,
        // beyond; shaded to the right edge.
        const double end = freeze.to ? static_cast<double>(freeze.to->millis())
                                     : std::max(nowMs, g.endMs()) + g.msPerPixel();
        if (end < g.startMs() || static_cast<double>(freeze.from.millis()) > g.endMs())
            continue;
        const double x0 = g.xForTime(static_cast<double>(freeze.from.millis()));
        const double x1 = std::min(g.plotWidth() + 2, g.xForTime(end));
        const double left = std::max(-2.0, std::round(x0));
        paintFrozen(painter,
                    QRectF(left, g.laneTop(index), std::max(1.0, std::round(x1) - left), g.laneHeight()),
                    x0 >= -2);
    }
}

void TimelinePainter::paintSelection(QPainter& painter, const TimelineGeometry& g, const TimelineLanes& data,
                                     const TimelineRows& rows, qint64 eventId)
{
    const auto found = data.markerIndex.constFind(eventId);
    if (found == data.markerIndex.cend())
        return;
    const auto [slot, index] = *found;
    // On its lane's row, or its collapsed group's; nowhere when filtered out.
    const int lane = rows.rowOfLane(slot);
    if (lane < 0)
        return;
    const auto& marker = data.lanes[static_cast<std::size_t>(slot)].markers[static_cast<std::size_t>(index)];
    const double x = std::round(g.xForTime(static_cast<double>(marker.at.millis())));
    const double y = std::round(g.markerY(lane));
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    QColor guide = m_colors.selection;
    guide.setAlphaF(0.5);
    painter.setPen(QPen(guide, 1));
    painter.drawLine(QPointF(x, g.laneTop(lane)), QPointF(x, y - g.markerRadius() - 3));
    painter.setPen(QPen(m_colors.selection, 2));
    painter.setBrush(Qt::NoBrush);
    painter.drawEllipse(QPointF(x, y), g.markerRadius() + 4, g.markerRadius() + 4);
    painter.restore();
}

void TimelinePainter::paintAxis(QPainter& painter, const QRect& area, const TimelineGeometry& g,
                                const std::vector<TimelineGeometry::Tick>& ticks)
{
    const int left = static_cast<int>(g.plotLeft());
    const int top = static_cast<int>(g.plotTop());
    painter.fillRect(QRect(left, 0, area.width() - left, top), m_colors.window);
    painter.save();
    painter.setClipRect(QRect(left, 0, area.width() - left, top));
    const int row = top / 2;
    QFont bold = painter.font();
    bold.setBold(true);
    const QFontMetrics boldMetrics(bold);
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        const auto& tick = ticks[i];
        const int x = static_cast<int>(std::round(left + tick.x));
        painter.setPen(m_colors.dimWindowText);
        painter.drawLine(x, top - 5, x, top - 1);
        painter.setPen(m_colors.windowText);
        painter.drawText(QRect(x + 3, row, 200, top - row - 2), Qt::AlignLeft | Qt::AlignVCenter, tick.label);
        if (tick.context.isEmpty())
            continue;
        // A date runs up to the next one at most (the first tick's date and
        // the next day's ran together at 1280 px): elided where it would
        // reach it, left out where not even a few letters fit.
        int room = 200;
        for (std::size_t j = i + 1; j < ticks.size(); ++j)
            if (!ticks[j].context.isEmpty()) {
                room = std::min(room, static_cast<int>(std::round(left + ticks[j].x)) - x - 8);
                break;
            }
        const QString text = boldMetrics.elidedText(tick.context, Qt::ElideRight, room);
        if (room < boldMetrics.horizontalAdvance(QStringLiteral("Mon…")) || text.isEmpty())
            continue;
        painter.save();
        painter.setFont(bold);
        painter.drawText(QRect(x + 3, 0, room, row), Qt::AlignLeft | Qt::AlignBottom, text);
        painter.restore();
    }
    painter.restore();
    painter.setPen(m_colors.grid);
    painter.drawLine(left, top - 1, area.width(), top - 1);
}

void TimelinePainter::paintGutter(QPainter& painter, const QRect& area, const TimelineGeometry& g,
                                  const TimelineLanes& data, const TimelineRows& rows, int currentLane)
{
    const int left = static_cast<int>(g.plotLeft());
    const int top = static_cast<int>(g.plotTop());
    painter.fillRect(QRect(0, 0, left, area.height()), m_colors.window);
    painter.setPen(m_colors.dimWindowText);
    // All times on the axis are UTC, as the server wrote them: say so once.
    painter.drawText(QRect(8, 0, left - 16, top), Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("UTC"));
    painter.save();
    painter.setClipRect(QRect(0, top, left, area.height() - top));
    const auto [firstRow, lastRow] = g.visibleLanes();
    const int shownRows = std::min(lastRow, rows.count());
    for (int i = firstRow; i < shownRows; ++i)
        if (rows.isHeader(i) && !rows.isCollapsedGroup(i))
            painter.fillRect(QRectF(0, g.laneTop(i), left, g.laneHeight()), m_colors.headerBand);
    if (currentLane >= 0 && currentLane < rows.count()) {
        // The lane the keyboard steps through: a bar at the edge, as a list
        // marks its current item, leaving the name itself plain to read.
        painter.fillRect(QRectF(0, g.laneTop(currentLane) + 2, 4, g.laneHeight() - 4), m_colors.selection);
    }
    const QFontMetrics metrics(painter.font());
    QFont bold = painter.font();
    bold.setBold(true);
    const QFontMetrics boldMetrics(bold);
    for (int i = firstRow; i < shownRows; ++i) {
        const TimelineRow& row = rows.row(i);
        const QRectF rect(8, g.laneTop(i), left - 16, g.laneHeight());
        if (row.kind == TimelineRow::Kind::Lane) {
            // A group's lanes are indented under its header.
            const QRectF text = rows.inGroup(i) ? rect.adjusted(kGroupIndent, 0, 0, 0) : rect;
            painter.setPen(m_colors.windowText);
            painter.drawText(text, Qt::AlignLeft | Qt::AlignVCenter,
                             metrics.elidedText(data.lanes[static_cast<std::size_t>(row.index)].name,
                                                Qt::ElideRight, static_cast<int>(text.width())));
            continue;
        }
        // A header: a disclosure triangle, the group's name in bold and how
        // many environments it has (of which the filter shows some).
        const TimelineGroup& group = rows.group(row.index);
        const auto members = static_cast<int>(group.members.size());
        const QString count = group.shown == members
                                  ? QString::number(members)
                                  : QStringLiteral("%1 of %2").arg(group.shown).arg(members);
        const double cy = rect.center().y();
        const double r = 4;
        painter.save();
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(Qt::NoPen);
        painter.setBrush(m_colors.dimWindowText);
        const double cx = rect.left() + r;
        if (group.collapsed) // pointing right: there is more inside
            painter.drawPolygon(
                QPolygonF{{cx - r * 0.6, cy - r}, {cx + r * 0.8, cy}, {cx - r * 0.6, cy + r}});
        else // pointing down: open
            painter.drawPolygon(
                QPolygonF{{cx - r, cy - r * 0.6}, {cx + r, cy - r * 0.6}, {cx, cy + r * 0.8}});
        painter.restore();
        const int countWidth = metrics.horizontalAdvance(count);
        const QRectF name = rect.adjusted(kGroupIndent, 0, -(countWidth + 6), 0);
        painter.setPen(m_colors.dimWindowText);
        painter.drawText(rect, Qt::AlignRight | Qt::AlignVCenter, count);
        painter.save();
        painter.setFont(bold);
        painter.setPen(m_colors.windowText);
        painter.drawText(name, Qt::AlignLeft | Qt::AlignVCenter,
                         boldMetrics.elidedText(group.name, Qt::ElideRight, static_cast<int>(name.width())));
        painter.restore();
    }
    painter.restore();
    painter.setPen(m_colors.grid);
    painter.drawLine(left - 1, 0, left - 1, area.height());
}

void TimelinePainter::paintFocus(QPainter& painter, const QRect& area, const TimelineGeometry& g,
                                 int currentLane)
{
    painter.save();
    // A two-pixel frame in the selection color: visible on any palette, and
    // drawn over everything so no lane or axis hides it.
    painter.setPen(QPen(m_colors.selection, 2));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(area).adjusted(1, 1, -1, -1));
    if (currentLane >= 0 && currentLane < g.laneCount()) {
        // The current lane, faintly across the plot, so a step's target is obvious.
        QColor band = m_colors.selection;
        band.setAlphaF(0.35f);
        painter.setPen(QPen(band, 1));
        const double top = std::max(g.plotTop(), g.laneTop(currentLane));
        const double bottom = g.laneTop(currentLane) + g.laneHeight() - 1;
        if (bottom > top) {
            painter.drawLine(QPointF(g.plotLeft(), top + 0.5), QPointF(area.width(), top + 0.5));
            painter.drawLine(QPointF(g.plotLeft(), bottom + 0.5), QPointF(area.width(), bottom + 0.5));
        }
    }
    painter.restore();
}

} // namespace relctl::ui
