#pragma once

// What the timeline says in words: the names of lease endings and marker
// kinds (shared by the legend and the tooltips, so both use one name per
// concept) and the tooltips' descriptions. Every time is UTC and every
// duration goes through formatDuration (timeformat.h), as in the rest of the
// console.

#include "relctl/console.h"
#include "timelinepainter.h"

#include <QString>
#include <vector>

namespace relctl::ui {

QString markerTitle(MarkerKind kind);    // "Refusal", "Promotion decision", ...
QString endingTitle(LeaseEnding ending); // "Live", "Released", ...

// nowMs: the server's present, for how long a live lease has been held.
QString describeLease(const relctl::LeaseSpan& lease, qint64 nowMs);
// One marker in full; several (a group) as one line each: kind, time, job.
QString describeMarkers(const std::vector<const relctl::TimelineMarker*>& markers);
// nowMs ends an open freeze for the "for ..." duration.
QString describeFreeze(const relctl::FrozenSpan& freeze, double nowMs);

} // namespace relctl::ui
