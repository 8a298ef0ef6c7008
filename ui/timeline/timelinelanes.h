#pragma once

// The timeline's data, arranged for painting and hit-testing only what is
// visible: one lane per environment, its leases and markers sorted by time so
// a window is found by binary search instead of a scan of the whole slice.

#include "relctl/console.h"

#include <QHash>
#include <QString>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace relctl::ui {

struct TimelineLane
{
    QString name;
    std::vector<relctl::LeaseSpan> leases; // by acquiredAt
    // reach[i] = the latest endsAt among leases[0..i]. Sorting by start alone
    // cannot find the first lease overlapping a window (an early, long lease
    // may still be running); this running maximum is monotonic, so it can.
    std::vector<qint64> reach;
    std::vector<relctl::TimelineMarker> markers; // by at
    std::vector<relctl::FrozenSpan> freezes;     // by from; a handful, so scanned, not searched
};

struct TimelineLanes
{
    std::vector<TimelineLane> lanes;
    QHash<qint64, std::pair<int, int>> markerIndex; // eventId -> (lane, index in its markers)
    // The audit trail's first and last events, beyond the slice's window.
    std::optional<relctl::Timestamp> historyFirst;
    std::optional<relctl::Timestamp> historyLast;

    static TimelineLanes fromSlice(relctl::TimelineSlice slice);
};

// Index range [first, last) of the lane's leases that overlap [from, to].
// Leases inside it may still end before `from` when spans overlap; callers
// skip those cheaply.
std::pair<std::size_t, std::size_t> leasesOverlapping(const TimelineLane& lane, double from, double to);
// Index range [first, last) of the lane's markers with from <= at <= to.
std::pair<std::size_t, std::size_t> markersWithin(const TimelineLane& lane, double from, double to);

} // namespace relctl::ui
