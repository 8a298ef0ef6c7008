#include "timelinetext.h"

#include "timeformat.h"

#include <algorithm>
#include <cmath>

namespace relctl::ui {

namespace {

QString str(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

QString markerTitle(MarkerKind kind)
{
    switch (kind) {
    case MarkerKind::Publish:
        return QStringLiteral("Publish");
    case MarkerKind::Refusal:
        return QStringLiteral("Refusal");
    case MarkerKind::Superseded:
        return QStringLiteral("Superseded");
    case MarkerKind::Queued:
        return QStringLiteral("Queued");
    case MarkerKind::Rollback:
        return QStringLiteral("Rollback");
    case MarkerKind::Promotion:
        return QStringLiteral("Promotion decision");
    case MarkerKind::Operator:
    case MarkerKind::Count:
        break;
    }
    return QStringLiteral("Operator action");
}

QString endingTitle(LeaseEnding ending)
{
    switch (ending) {
    case LeaseEnding::Live:
        return QStringLiteral("Live");
    case LeaseEnding::Expired:
        return QStringLiteral("Expired");
    case LeaseEnding::Revoked:
        return QStringLiteral("Revoked");
    case LeaseEnding::Released:
    case LeaseEnding::Count:
        break;
    }
    return QStringLiteral("Released");
}

QString describeLease(const relctl::LeaseSpan& l, qint64 nowMs)
{
    const bool live = leaseEnding(l.ending) == LeaseEnding::Live;
    const QString head = str(l.job) + QLatin1Char('\n') +
                         QStringLiteral("release %1 \u00b7 generation %2 \u00b7 token #%3")
                             .arg(str(l.release))
                             .arg(l.generation)
                             .arg(l.token) +
                         QStringLiteral("\nacquired %1").arg(formatTime(l.acquiredAt, true));
    // A live lease has been held until now, not for the span it was granted
    // (its expiry is the end of that span, and moves with every renewal).
    if (live)
        return head + QStringLiteral("\nexpires %1").arg(formatTime(l.endsAt, true)) +
               QStringLiteral("\nheld %1 so far \u00b7 expires in %2 \u00b7 live")
                   .arg(formatDuration(std::max<qint64>(0, nowMs - l.acquiredAt.millis())),
                        formatDuration(std::max<qint64>(0, l.endsAt.millis() - nowMs)));
    return head + QStringLiteral("\nended %1").arg(formatTime(l.endsAt, true)) +
           QStringLiteral("\nheld %1 \u00b7 %2")
               .arg(formatDuration(l.endsAt.millis() - l.acquiredAt.millis()), str(l.ending));
}

QString describeMarkers(const std::vector<const relctl::TimelineMarker*>& markers)
{
    if (markers.empty())
        return {};
    if (markers.size() == 1) {
        const auto& m = *markers.front();
        QString text = markerTitle(markerKind(m.kind)) + QStringLiteral(" \u00b7 ") + str(m.env) +
                       QLatin1Char('\n') + formatTime(m.at, true);
        if (!m.label.empty())
            text += QLatin1Char('\n') + str(m.label);
        if (m.eventId == 0)
            return text + QStringLiteral("\na queued candidate, not an event");
        return text + QStringLiteral("\nevent #%1").arg(m.eventId);
    }
    // A group: one line per event, so a reviewer sees what the count hides
    // without zooming; long groups are cut, the keyboard reaches them all.
    constexpr std::size_t kListed = 12;
    const auto& first = *markers.front();
    const auto& last = *markers.back();
    QString text = QStringLiteral("%1 events on %2 within %3 (zoom in to separate them; . and , step "
                                  "through each)")
                       .arg(markers.size())
                       .arg(str(first.env), formatDuration(last.at.millis() - first.at.millis()));
    for (std::size_t i = 0; i < markers.size() && i < kListed; ++i) {
        const auto& m = *markers[i];
        text += QLatin1Char('\n') + markerTitle(markerKind(m.kind)) + QStringLiteral(" \u00b7 ") +
                formatTime(m.at, true) + QStringLiteral(" \u00b7 ") +
                (m.job.empty() ? QStringLiteral("no job") : str(m.job));
        if (m.eventId != 0)
            text += QStringLiteral(" \u00b7 #%1").arg(m.eventId);
    }
    if (markers.size() > kListed)
        text += QStringLiteral("\n\u2026 and %1 more").arg(markers.size() - kListed);
    return text;
}

QString describeFreeze(const relctl::FrozenSpan& f, double nowMs)
{
    const qint64 end = f.to ? f.to->millis() : static_cast<qint64>(std::llround(nowMs));
    QString text = QStringLiteral("Frozen \u00b7 %1\nby %2").arg(str(f.env), str(f.by));
    if (!f.reason.empty())
        text += QStringLiteral(": ") + str(f.reason);
    text += QStringLiteral("\nfrom %1").arg(formatTime(f.from));
    if (f.to)
        text +=
            QStringLiteral("\nto %1 \u00b7 %2").arg(formatTime(*f.to), formatDuration(end - f.from.millis()));
    else
        text += QStringLiteral("\nstill in force \u00b7 for %1 so far")
                    .arg(formatDuration(end - f.from.millis()));
    return text;
}

} // namespace relctl::ui
