#pragma once

// The timeline's data, arranged for painting and hit-testing only what is
// visible: one lane per environment, its leases and markers sorted by time so
// a window is found by binary search instead of a scan of the whole slice.
// Lanes live in slots that stay put while the lane lives, so a live update
// replaces one environment's items without renumbering every other lane (or
// the marker index that points into them).

#include "relctl/console.h"

#include <QHash>
#include <QString>
#include <QStringList>
#include <cstddef>
#include <optional>
#include <string>
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
    std::string key;                             // the name as the slice spells it (for naturalLess)
    bool alive = true;                           // false: removed, the slot waits to be reused
};

struct TimelineLanes
{
    // By slot. fromSlice() fills them in the slice's order; later lanes take
    // a freed slot or the next one. The order lanes are shown in is
    // TimelineRows' business, not the slots'.
    std::vector<TimelineLane> lanes;
    std::vector<int> freeSlots;
    QHash<QString, int> slotOf;                     // environment -> slot, live lanes only
    QHash<qint64, std::pair<int, int>> markerIndex; // eventId -> (slot, index in its markers)
    // The audit trail's first and last events, beyond the slice's window.
    std::optional<relctl::Timestamp> historyFirst;
    std::optional<relctl::Timestamp> historyLast;

    static TimelineLanes fromSlice(relctl::TimelineSlice slice);

    // What replace() did, by slot. A removed lane's name and key are given
    // since its slot is already empty.
    struct Change
    {
        std::vector<int> added;
        std::vector<int> replaced;
        std::vector<std::pair<int, std::string>> removed;
    };
    // A live update: the named environments' items become the slice's (a
    // partial slice). A named environment missing from slice.environments
    // loses its lane; one in slice.environments without a lane gets one.
    // The work follows those lanes' items, old and new, not the whole slice.
    Change replace(const QStringList& envs, const relctl::TimelineSlice& slice);

    int laneCount() const { return static_cast<int>(slotOf.size()); }
};

// Index range [first, last) of the lane's leases that overlap [from, to].
// Leases inside it may still end before `from` when spans overlap; callers
// skip those cheaply.
std::pair<std::size_t, std::size_t> leasesOverlapping(const TimelineLane& lane, double from, double to);
// Index range [first, last) of the lane's markers with from <= at <= to.
std::pair<std::size_t, std::size_t> markersWithin(const TimelineLane& lane, double from, double to);

} // namespace relctl::ui
