#include "timelinelegend.h"

#include "timelinegroups.h"
#include "timelinepainter.h"
#include "timelinetext.h"

#include <QFontMetrics>
#include <QPainter>
#include <algorithm>
#include <cmath>
#include <limits>

namespace relctl::ui {

namespace {

constexpr int kMargin = 8;
constexpr int kGap = 4;      // swatch to label
constexpr int kSpacing = 14; // entry to entry

LegendEntry caption(const QString& text)
{
    return {LegendEntry::Swatch::Caption, 0, text, {}, {}, {}};
}

LegendEntry ending(LeaseEnding e, const QString& help)
{
    return {LegendEntry::Swatch::Lease, static_cast<int>(e), endingTitle(e), help, {}, {}};
}

LegendEntry marker(MarkerKind k, const QString& help)
{
    return {LegendEntry::Swatch::Marker, static_cast<int>(k), markerTitle(k), help, {}, {}};
}

} // namespace

TimelineLegend::TimelineLegend()
{
    using S = LegendEntry::Swatch;
    m_entries = {
        caption(QStringLiteral("Leases")),
        ending(LeaseEnding::Live, QStringLiteral("Held now; the bar ends at its current expiry")),
        ending(LeaseEnding::Released, QStringLiteral("Released by its holder")),
        ending(LeaseEnding::Expired, QStringLiteral("Its holder stopped renewing and it ran out")),
        ending(LeaseEnding::Revoked, QStringLiteral("Revoked by an operator")),
        {S::Freeze,
         0,
         QStringLiteral("Frozen"),
         QStringLiteral("The environment was frozen: no lease or publish was granted"),
         {},
         {}},
        {S::GroupHeld,
         0,
         QStringLiteral("Group held"),
         QStringLiteral("A collapsed group's lane: shaded where its members held leases, darker the more "
                        "held one at once (1, 2, 3, 4 or more); freezes and refusals as on a member's lane"),
         {},
         {}},
        {S::Now, 0, QStringLiteral("Now"), QStringLiteral("The server's clock"), {}, {}},
        caption(QStringLiteral("Events")),
        marker(MarkerKind::Publish, QStringLiteral("A manifest was published")),
        marker(MarkerKind::Refusal,
               QStringLiteral("A write the protocol refused (red is kept for refusals)")),
        marker(MarkerKind::Superseded, QStringLiteral("A candidate superseded by a newer generation")),
        marker(MarkerKind::Queued, QStringLiteral("A candidate waiting in the queue (not an event)")),
        marker(MarkerKind::Operator,
               QStringLiteral("Revoke, freeze, unfreeze, approval, environment settings")),
        marker(MarkerKind::Rollback, QStringLiteral("An operator rolled the environment back")),
        marker(MarkerKind::Promotion, QStringLiteral("A promotion approved or denied")),
        // Badges: a colour names one kind, so a red fill is refusals alone.
        {S::Group,
         0,
         QStringLiteral("Several events"),
         QStringLiteral("Events a few pixels apart, all of one kind: a badge in that kind's colour with "
                        "their count. Zoom in to separate them, hover to list them"),
         {},
         {}},
        {S::Group,
         1,
         QStringLiteral("Several kinds"),
         QStringLiteral("Events of several kinds a few pixels apart: a grey badge with their count"),
         {},
         {}},
        {S::Group,
         2,
         QStringLiteral("With a refusal"),
         QStringLiteral("Events of several kinds, a refusal among them: a grey badge in a red ring (a badge "
                        "filled red holds refusals only)"),
         {},
         {}},
    };
}

int TimelineLegend::heightOf(const QFont& font, int rows)
{
    // A separator line above the rows and a pixel below them.
    return rows * (std::max(QFontMetrics(font).height(), 14) + 6) + 2;
}

int TimelineLegend::layout(const QFont& font, int width, int top, int maxRows, bool whole)
{
    const QFontMetrics metrics(font);
    QFont boldFont = font;
    boldFont.setBold(true);
    const QFontMetrics bold(boldFont);
    const int row = std::max(metrics.height(), 14) + 6;
    const int right = width - kMargin;
    const auto widthOf = [&](const LegendEntry& e) {
        if (e.swatch == LegendEntry::Swatch::Caption)
            return bold.horizontalAdvance(e.label);
        if (e.swatch == LegendEntry::Swatch::Toggle)
            return metrics.horizontalAdvance(e.label);
        return kSwatchWidth + kGap + metrics.horizontalAdvance(e.label);
    };
    int x = kMargin;
    int y = top + 1; // below the separator line
    // Flows the entries from the first into at most `rows` rows, keeping
    // `reserve` pixels free at the end of the last; returns how many it placed
    // (x and y then say where the next would go).
    const auto flow = [&](int rows, int reserve) {
        x = kMargin;
        y = top + 1;
        int r = 0;
        std::size_t placed = 0;
        for (auto& e : m_entries)
            e.rect = e.swatchRect = QRect();
        const auto limit = [&] { return r == rows - 1 ? right - reserve : right; };
        for (; placed < m_entries.size(); ++placed) {
            auto& e = m_entries[placed];
            const bool isCaption = e.swatch == LegendEntry::Swatch::Caption;
            const int w = widthOf(e);
            // A caption names what follows it: it never ends a row on its own.
            const int need = isCaption && placed + 1 < m_entries.size()
                                 ? w + kGap + 2 + widthOf(m_entries[placed + 1])
                                 : w;
            if (x > kMargin && x + need > limit()) {
                if (r + 1 >= rows)
                    break;
                x = kMargin;
                y += row;
                ++r;
            }
            // The last row's start, with no room left for the toggle after it.
            if (reserve > 0 && r == rows - 1 && x + need > limit())
                break;
            e.rect = QRect(x, y, w, row);
            e.swatchRect = isCaption ? QRect() : QRect(x, y + (row - 12) / 2, kSwatchWidth, 12);
            x += w + (isCaption ? kGap + 2 : kSpacing);
        }
        // Nor is a caption shown without anything of its own.
        if (placed > 0 && placed < m_entries.size() &&
            m_entries[placed - 1].swatch == LegendEntry::Swatch::Caption) {
            auto& caption = m_entries[--placed];
            x = caption.rect.left();
            caption.rect = QRect();
        }
        return placed;
    };

    m_toggle = {LegendEntry::Swatch::Toggle, 0, {}, {}, {}, {}};
    m_hidden = 0;
    flow(std::numeric_limits<int>::max(), 0);
    m_wholeHeight = y + row - top + 1;
    const bool tooTall = maxRows > 0 && (y - top - 1) / row + 1 > maxRows;
    if (tooTall && !whole) {
        // Room for the toggle with the largest count it could show.
        int explaining = 0;
        for (const auto& e : m_entries)
            explaining += e.swatch == LegendEntry::Swatch::Caption ? 0 : 1;
        m_toggle.label = QStringLiteral("+%1 more (L)").arg(explaining);
        const std::size_t placed = flow(maxRows, widthOf(m_toggle) + kSpacing);
        QString hidden;
        for (std::size_t i = placed; i < m_entries.size(); ++i) {
            const auto& e = m_entries[i];
            if (e.swatch == LegendEntry::Swatch::Caption)
                continue;
            ++m_hidden;
            hidden += QStringLiteral("\n%1: %2").arg(e.label, e.help);
        }
        m_toggle.label = QStringLiteral("+%1 more (L)").arg(m_hidden);
        m_toggle.help = QStringLiteral("Left out to give the lanes room:%1\n\nClick or press L to show the "
                                       "whole legend; Shift+L hides or shows the legend.")
                            .arg(hidden);
    } else if (tooTall) {
        m_toggle.label = QStringLiteral("Fewer (L)");
        m_toggle.help = QStringLiteral("Click or press L to show only what fits in a quarter of the "
                                       "timeline's height, giving the lanes the rest; Shift+L hides or "
                                       "shows the legend.");
        if (x > kMargin && x + widthOf(m_toggle) > right) {
            x = kMargin;
            y += row;
        }
    }
    if (tooTall)
        m_toggle.rect = QRect(x, y, widthOf(m_toggle), row);
    m_height = y + row - top + 1;
    return m_height;
}

std::vector<const LegendEntry*> TimelineLegend::drawn() const
{
    std::vector<const LegendEntry*> shown;
    shown.reserve(m_entries.size() + 1);
    for (const auto& e : m_entries)
        if (e.shown())
            shown.push_back(&e);
    if (const LegendEntry* t = toggle())
        shown.push_back(t);
    return shown;
}

const LegendEntry* TimelineLegend::entryAt(const QPoint& pos) const
{
    for (const auto& e : m_entries)
        if (e.swatch != LegendEntry::Swatch::Caption && e.shown() &&
            e.rect.adjusted(-2, 0, 2, 0).contains(pos))
            return &e;
    if (m_toggle.shown() && m_toggle.rect.adjusted(-2, 0, 2, 0).contains(pos))
        return &m_toggle;
    return nullptr;
}

void TimelinePainter::paintLegend(QPainter& painter, const QRect& strip, const TimelineLegend& legend,
                                  qreal dpr)
{
    // On the plot's own background, so every swatch has the contrast it has
    // on the lanes, on light and dark palettes alike.
    painter.save();
    painter.setClipRect(strip);
    painter.fillRect(strip, m_colors.base);
    painter.setPen(m_colors.grid);
    painter.drawLine(strip.left(), strip.top(), strip.right(), strip.top());
    QFont bold = painter.font();
    bold.setBold(true);
    const QFont normal = painter.font();
    // Underlined, as a link is: a click on it shows more (or fewer).
    QFont link = normal;
    link.setUnderline(true);
    for (const LegendEntry* entry : legend.drawn()) {
        const LegendEntry& e = *entry;
        const QRect& s = e.swatchRect;
        switch (e.swatch) {
        case LegendEntry::Swatch::Caption:
        case LegendEntry::Swatch::Toggle:
            break;
        case LegendEntry::Swatch::Lease:
            painter.fillRect(s.adjusted(0, 2, 0, -2), m_colors.ending(static_cast<LeaseEnding>(e.index)));
            break;
        case LegendEntry::Swatch::Freeze:
            paintFrozen(painter, QRectF(s), true);
            break;
        case LegendEntry::Swatch::Marker: {
            const QPixmap& pm = stamp(static_cast<MarkerKind>(e.index), dpr, 5);
            const int half = static_cast<int>(std::lround(pm.width() / dpr / 2 - 0.5));
            painter.drawPixmap(s.center().x() - half, s.center().y() - half, pm);
            break;
        }
        case LegendEntry::Swatch::Group:
            // 0: one kind (publish, as an example), 1: several kinds, 2: with a refusal.
            paintGroupBadge(painter, QPointF(s.center().x() + 0.5, s.center().y() + 0.5), 3,
                            e.index == 0 ? MarkerKind::Publish : MarkerKind::Count, e.index == 2, 5);
            break;
        case LegendEntry::Swatch::GroupHeld: {
            // As a collapsed group's bar is drawn: one shade per count of
            // members holding at once, 1 to 4 or more, lightest first.
            const QRect bar = s.adjusted(0, 2, 0, -2);
            for (int i = 0; i < 4; ++i) {
                const int x0 = bar.left() + bar.width() * i / 4;
                const int x1 = bar.left() + bar.width() * (i + 1) / 4;
                painter.fillRect(QRect(x0, bar.top(), x1 - x0, bar.height()), heldColour(i + 1));
            }
            break;
        }
        case LegendEntry::Swatch::Now:
            painter.setPen(QPen(m_colors.now, 1, Qt::DashLine));
            painter.drawLine(QPointF(s.center().x() + 0.5, s.top()),
                             QPointF(s.center().x() + 0.5, s.bottom()));
            break;
        }
        const bool isCaption = e.swatch == LegendEntry::Swatch::Caption;
        const bool isToggle = e.swatch == LegendEntry::Swatch::Toggle;
        painter.setFont(isCaption ? bold : isToggle ? link : normal);
        painter.setPen(isCaption ? m_colors.dimText : m_colors.text);
        const QRect text =
            isCaption || isToggle ? e.rect : e.rect.adjusted(TimelineLegend::kSwatchWidth + kGap, 0, 0, 0);
        painter.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, e.label);
    }
    painter.setFont(normal);
    painter.restore();
}

} // namespace relctl::ui
