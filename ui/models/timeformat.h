#pragma once

// One way to show a moment everywhere in the console: UTC, like the server's
// audit trail, CI logs and the timeline axis, so a time read in one view can
// be found in another. Tooltips may add local time; cells never mix zones.

#include <QDateTime>
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

// The same moment on the operator's own clock, for tooltips.
inline QString formatLocalTime(qint64 epochMs)
{
    return QDateTime::fromMSecsSinceEpoch(epochMs).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss t"));
}

} // namespace relctl::ui
