#pragma once

// The audit browser's time ranges: the presets an incident review asks for
// (the last hour, today, yesterday, the last seven days, the minutes around
// one event) and the from/to a reviewer types. Pure functions of the clock
// they are given, so the model re-evaluates a preset that follows the clock
// each time it reads the trail again, and tests give it any clock.
// All in UTC, like every time in the console.

#include "relctl/console.h"

#include <QString>
#include <QtGlobal>
#include <optional>

namespace relctl::ui::auditrange {

enum class Preset { AnyTime, LastHour, Today, Yesterday, Last7Days, AroundEvent, Custom };

// The span either side of an event for Preset::AroundEvent.
constexpr qint64 aroundEventMs = 10 * 60 * 1000;

// The preset's name as the range box shows it.
QString name(Preset preset);

// True for the presets computed from now: they are computed again on every
// read of the trail (a reload an hour later reads the hour before it).
bool followsClock(Preset preset);

// Sets the filter's from and to for a preset that follows the clock, as of
// nowMs (epoch milliseconds, UTC); "today" and "yesterday" are UTC days.
// Other presets leave the filter as it is.
void apply(Preset preset, qint64 nowMs, relctl::AuditFilter& filter);

// From ten minutes before the event to ten minutes after it.
void around(qint64 atMs, relctl::AuditFilter& filter);

// A moment typed by the reviewer, read as UTC: "2026-12-06", "2026-12-06
// 14:30" or "2026-12-06 14:30:15" ('T' instead of the space and a trailing
// "UTC" or "Z" are accepted). `lengthMs` is how much time the text names: a
// day, a minute or a second, so that "to 14:30" includes the whole minute.
struct Typed
{
    qint64 atMs = 0;
    qint64 lengthMs = 0;
};
std::optional<Typed> parseTyped(const QString& text);

// The typed range as a filter's from and to, both inclusive; empty when
// either end does not parse or the range ends before it starts.
std::optional<std::pair<relctl::Timestamp, relctl::Timestamp>> typedRange(const QString& from,
                                                                          const QString& to);

} // namespace relctl::ui::auditrange
