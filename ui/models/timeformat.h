#pragma once

// One way to show a moment everywhere in the console: UTC, like the server's
// audit trail, CI logs and the timeline axis, so a time read in one view can
// be found in another. Tooltips may add local time; cells never mix zones.

#include "relctl/time.h"

#include <QDateTime>
#include <QRegularExpression>
#include <QString>
#include <QtGlobal>

namespace relctl::ui {

// "2026-11-30 12:04:05 UTC"; withMs adds ".123".
inline QString formatTime(qint64 epochMs, bool withMs = false)
{
    return QDateTime::fromMSecsSinceEpoch(epochMs, Qt::UTC)
               .toString(withMs ? QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")
                                : QStringLiteral("yyyy-MM-dd HH:mm:ss")) +
           QStringLiteral(" UTC");
}

inline QString formatTime(relctl::Timestamp at, bool withMs = false)
{
    return formatTime(at.millis(), withMs);
}

// A moment the server wrote, to the millisecond when it has any: a time
// recorded at 20:09:29.501378 reads "2026-12-01 20:09:29.501 UTC", one at a
// whole second "2026-12-01 20:09:00 UTC".
inline QString formatServerMoment(relctl::Timestamp at)
{
    const qint64 ms = at.millis();
    return formatTime(ms, ((ms % 1000) + 1000) % 1000 != 0);
}

// A server's sentence with every time in it as the console writes times:
// the status functions format a timestamptz into their words as PostgreSQL
// prints it ("at 2026-12-01 20:09:29.501378+00"); JSON's form ("…T…+00:00")
// is read too. Anything that is not a whole timestamp with its offset is
// left as it is.
inline QString formatTimesIn(const QString& text)
{
    static const QRegularExpression moment(QStringLiteral(
        R"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}(?::\d{2}){0,2})(?!\d))"));
    QString out;
    qsizetype done = 0;
    for (auto it = moment.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        const auto at = relctl::Timestamp::parse(m.captured().toStdString());
        if (!at)
            continue;
        out += text.mid(done, m.capturedStart() - done) + formatServerMoment(*at);
        done = m.capturedEnd();
    }
    return done == 0 ? text : out + text.mid(done);
}

// The same moment on the operator's own clock, for tooltips.
inline QString formatLocalTime(qint64 epochMs)
{
    return QDateTime::fromMSecsSinceEpoch(epochMs).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss t"));
}

inline QString formatLocalTime(relctl::Timestamp at)
{
    return formatLocalTime(at.millis());
}

// A span as a person reads it: "850 ms", "12.4 s", "1 min 43 s",
// "2 h 05 min", "3 d 4 h". One formatter for every duration the console
// shows (lease lengths, soak times, how long before a refusal), so the same
// span reads the same in the timeline, the trace and the confirmations.
inline QString formatDuration(qint64 ms)
{
    if (ms < 0)
        return QStringLiteral("-") + formatDuration(-ms);
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(ms);
    if (ms < 60 * 1000)
        return QStringLiteral("%1 s").arg(static_cast<double>(ms) / 1000.0, 0, 'f', ms < 10 * 1000 ? 2 : 1);
    const qint64 s = ms / 1000;
    if (s < 3600)
        return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60);
    if (s < 86400)
        return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s / 60) % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 d %2 h").arg(s / 86400).arg((s / 3600) % 24);
}

} // namespace relctl::ui
