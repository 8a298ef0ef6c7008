// The audit browser's time ranges (see auditrange.h).
#include "auditrange.h"

#include <QCoreApplication>
#include <QDate>
#include <QDateTime>
#include <QRegularExpression>
#include <QTime>

namespace relctl::ui::auditrange {

namespace {

constexpr qint64 dayMs = 24 * 60 * 60 * 1000;

QString tr(const char* text)
{
    return QCoreApplication::translate("relctl::ui::auditrange", text);
}

qint64 startOfUtcDay(qint64 ms)
{
    return QDateTime(QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).date(), QTime(0, 0), Qt::UTC)
        .toMSecsSinceEpoch();
}

relctl::Timestamp at(qint64 ms)
{
    return relctl::Timestamp::fromMillis(ms);
}

} // namespace

QString name(Preset preset)
{
    switch (preset) {
    case Preset::AnyTime:
        return tr("Any time");
    case Preset::LastHour:
        return tr("Last hour");
    case Preset::Today:
        return tr("Today (UTC)");
    case Preset::Yesterday:
        return tr("Yesterday (UTC)");
    case Preset::Last7Days:
        return tr("Last 7 days");
    case Preset::AroundEvent:
        return tr("Around selected event (\u00b110 min)");
    case Preset::Custom:
        return tr("Custom\u2026");
    }
    return {};
}

bool followsClock(Preset preset)
{
    return preset == Preset::LastHour || preset == Preset::Today || preset == Preset::Yesterday ||
           preset == Preset::Last7Days;
}

void apply(Preset preset, qint64 nowMs, relctl::AuditFilter& filter)
{
    switch (preset) {
    case Preset::AnyTime:
        filter.from.reset();
        filter.to.reset();
        break;
    case Preset::LastHour:
        filter.from = at(nowMs - 60 * 60 * 1000);
        filter.to.reset(); // open: live events keep arriving
        break;
    case Preset::Today:
        filter.from = at(startOfUtcDay(nowMs));
        filter.to.reset();
        break;
    case Preset::Yesterday:
        filter.from = at(startOfUtcDay(nowMs) - dayMs);
        // Up to the last microsecond before midnight: the server's filter is inclusive.
        filter.to = relctl::Timestamp::fromMicros(startOfUtcDay(nowMs) * 1000 - 1);
        break;
    case Preset::Last7Days:
        filter.from = at(nowMs - 7 * dayMs);
        filter.to.reset();
        break;
    case Preset::AroundEvent:
    case Preset::Custom:
        break;
    }
}

void around(qint64 atMs, relctl::AuditFilter& filter)
{
    filter.from = at(atMs - aroundEventMs);
    filter.to = at(atMs + aroundEventMs);
}

std::optional<Typed> parseTyped(const QString& text)
{
    static const QRegularExpression form(
        QStringLiteral(R"(^\s*(\d{4}-\d{2}-\d{2})(?:[ T]+(\d{1,2}:\d{2})(?::(\d{2}))?)?\s*(?:UTC|Z)?\s*$)"),
        QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = form.match(text);
    if (!m.hasMatch())
        return std::nullopt;
    const QDate date = QDate::fromString(m.captured(1), QStringLiteral("yyyy-MM-dd"));
    if (!date.isValid())
        return std::nullopt;
    QTime time(0, 0);
    qint64 length = dayMs;
    if (m.hasCaptured(2)) {
        const QString hm = m.captured(2);
        const QString seconds = m.captured(3);
        time = QTime::fromString(seconds.isEmpty() ? hm : hm + QLatin1Char(':') + seconds,
                                 seconds.isEmpty() ? QStringLiteral("H:mm") : QStringLiteral("H:mm:ss"));
        if (!time.isValid())
            return std::nullopt;
        length = seconds.isEmpty() ? 60 * 1000 : 1000;
    }
    return Typed{QDateTime(date, time, Qt::UTC).toMSecsSinceEpoch(), length};
}

std::optional<std::pair<relctl::Timestamp, relctl::Timestamp>> typedRange(const QString& from,
                                                                          const QString& to)
{
    const auto start = parseTyped(from);
    const auto end = parseTyped(to);
    if (!start || !end)
        return std::nullopt;
    // The end includes all the time it names ("to 14:30": up to 14:30:59.999999).
    const relctl::Timestamp last = relctl::Timestamp::fromMicros((end->atMs + end->lengthMs) * 1000 - 1);
    const relctl::Timestamp first = at(start->atMs);
    if (last < first)
        return std::nullopt;
    return std::pair(first, last);
}

} // namespace relctl::ui::auditrange
