#include "timelinelanes.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace relctl::ui {

namespace {

// Sorts what binary searches depend on, builds the lease reach and indexes
// the lane's markers: the work is this lane's items.
void finish(TimelineLane& lane, int slot, QHash<qint64, std::pair<int, int>>& markerIndex)
{
    // The query orders them already: check (one pass), and sort only what is not.
    const auto byStart = [](const auto& a, const auto& b) { return a.acquiredAt < b.acquiredAt; };
    if (!std::is_sorted(lane.leases.begin(), lane.leases.end(), byStart))
        std::stable_sort(lane.leases.begin(), lane.leases.end(), byStart);
    const auto byTime = [](const auto& a, const auto& b) { return a.at < b.at; };
    if (!std::is_sorted(lane.markers.begin(), lane.markers.end(), byTime))
        std::stable_sort(lane.markers.begin(), lane.markers.end(), byTime);
    std::stable_sort(lane.freezes.begin(), lane.freezes.end(),
                     [](const auto& a, const auto& b) { return a.from < b.from; });
    lane.reach.clear();
    lane.reach.reserve(lane.leases.size());
    qint64 reach = std::numeric_limits<qint64>::min();
    for (const auto& lease : lane.leases) {
        reach = std::max<qint64>(reach, std::max(lease.endsAt, lease.acquiredAt).millis());
        lane.reach.push_back(reach);
    }
    for (int i = 0; i < static_cast<int>(lane.markers.size()); ++i)
        markerIndex.insert(lane.markers[static_cast<std::size_t>(i)].eventId, {slot, i});
}

// Empties a lane's items and takes its markers out of the index.
void clearItems(TimelineLane& lane, QHash<qint64, std::pair<int, int>>& markerIndex)
{
    for (const auto& marker : lane.markers)
        markerIndex.remove(marker.eventId);
    lane.leases.clear();
    lane.reach.clear();
    lane.markers.clear();
    lane.freezes.clear();
}

} // namespace

TimelineLanes TimelineLanes::fromSlice(relctl::TimelineSlice slice)
{
    TimelineLanes result;
    // Keyed by views of the slice's own strings: it outlives this function's
    // work, and 10,000 lanes need no copies of their names as keys.
    std::unordered_map<std::string_view, int> laneOf;
    laneOf.reserve(slice.environments.size() * 2);
    // Items arrive grouped by environment: remembering the last lane spares
    // a hash lookup per item.
    std::string_view lastEnv;
    int lastLane = -1;
    // An item's environment missing from the slice's list is keyed by a copy
    // of its own: the items are moved out below, and a view of a moved-from
    // string would change under the map. A deque never moves what it holds.
    std::deque<std::string> unlisted;
    bool listed = false; // the slice's own environments all have their lanes
    auto lane = [&](const std::string& env) -> int {
        if (lastLane < 0 || lastEnv != env) {
            std::string_view key = env;
            if (listed && laneOf.find(key) == laneOf.end())
                key = unlisted.emplace_back(env);
            auto [it, inserted] = laneOf.try_emplace(key, static_cast<int>(result.lanes.size()));
            if (inserted) {
                TimelineLane created;
                created.name = QString::fromStdString(env);
                created.key = env;
                result.slotOf.insert(created.name, it->second);
                result.lanes.push_back(std::move(created));
            }
            lastEnv = it->first;
            lastLane = it->second;
        }
        return lastLane;
    };
    // Lanes follow the slice's environment order; an item whose environment
    // is missing there still gets a lane rather than vanishing.
    result.slotOf.reserve(static_cast<qsizetype>(slice.environments.size()));
    result.lanes.reserve(slice.environments.size());
    for (const auto& env : slice.environments)
        lane(env);
    listed = true;
    // Each item's lane, found once: the lanes' vectors are then sized
    // exactly, one allocation each instead of a doubling series.
    std::vector<int> leaseLane(slice.leases.size());
    std::vector<int> markerLane(slice.markers.size());
    for (std::size_t i = 0; i < slice.leases.size(); ++i)
        leaseLane[i] = lane(slice.leases[i].env);
    for (std::size_t i = 0; i < slice.markers.size(); ++i)
        markerLane[i] = lane(slice.markers[i].env);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> sizes(result.lanes.size());
    for (const int l : leaseLane)
        ++sizes[static_cast<std::size_t>(l)].first;
    for (const int l : markerLane)
        ++sizes[static_cast<std::size_t>(l)].second;
    for (std::size_t l = 0; l < result.lanes.size(); ++l) {
        result.lanes[l].leases.reserve(sizes[l].first);
        result.lanes[l].markers.reserve(sizes[l].second);
    }
    result.markerIndex.reserve(static_cast<qsizetype>(slice.markers.size()));
    for (std::size_t i = 0; i < slice.leases.size(); ++i)
        result.lanes[static_cast<std::size_t>(leaseLane[i])].leases.push_back(std::move(slice.leases[i]));
    for (std::size_t i = 0; i < slice.markers.size(); ++i)
        result.lanes[static_cast<std::size_t>(markerLane[i])].markers.push_back(std::move(slice.markers[i]));
    for (auto& freeze : slice.freezes)
        result.lanes[static_cast<std::size_t>(lane(freeze.env))].freezes.push_back(std::move(freeze));
    result.historyFirst = slice.historyFirst;
    result.historyLast = slice.historyLast;
    for (int l = 0; l < static_cast<int>(result.lanes.size()); ++l)
        finish(result.lanes[static_cast<std::size_t>(l)], l, result.markerIndex);
    return result;
}

TimelineLanes::Change TimelineLanes::replace(const QStringList& envs, const relctl::TimelineSlice& slice)
{
    Change change;
    // The lanes the slice holds, by the name its items carry.
    std::unordered_map<std::string, int> touched;
    touched.reserve(slice.environments.size());
    for (const auto& env : slice.environments) {
        const QString name = QString::fromStdString(env);
        int slot = slotOf.value(name, -1);
        if (slot >= 0) {
            clearItems(lanes[static_cast<std::size_t>(slot)], markerIndex);
            change.replaced.push_back(slot);
        } else {
            if (!freeSlots.empty()) {
                slot = freeSlots.back();
                freeSlots.pop_back();
            } else {
                slot = static_cast<int>(lanes.size());
                lanes.emplace_back();
            }
            TimelineLane& lane = lanes[static_cast<std::size_t>(slot)];
            lane.name = name;
            lane.key = env;
            lane.alive = true;
            slotOf.insert(name, slot);
            change.added.push_back(slot);
        }
        touched.emplace(env, slot);
    }
    // Named, but no longer in the slice: the environment is gone.
    for (const QString& name : envs) {
        const std::string key = name.toStdString();
        if (touched.count(key) != 0)
            continue;
        const int slot = slotOf.value(name, -1);
        if (slot < 0)
            continue;
        TimelineLane& lane = lanes[static_cast<std::size_t>(slot)];
        clearItems(lane, markerIndex);
        change.removed.emplace_back(slot, lane.key);
        lane.alive = false;
        lane.name.clear();
        lane.key.clear();
        slotOf.remove(name);
        freeSlots.push_back(slot);
    }
    if (touched.empty())
        return change;
    // Items of environments the slice does not list as lanes are not this
    // update's: they are left out rather than given a lane by accident.
    const std::string* lastEnv = nullptr;
    TimelineLane* last = nullptr;
    auto lane = [&](const std::string& env) -> TimelineLane* {
        if (!lastEnv || *lastEnv != env) {
            const auto it = touched.find(env);
            lastEnv = &env;
            last = it == touched.end() ? nullptr : &lanes[static_cast<std::size_t>(it->second)];
        }
        return last;
    };
    for (const auto& lease : slice.leases)
        if (TimelineLane* l = lane(lease.env))
            l->leases.push_back(lease);
    lastEnv = nullptr;
    for (const auto& marker : slice.markers)
        if (TimelineLane* l = lane(marker.env))
            l->markers.push_back(marker);
    lastEnv = nullptr;
    for (const auto& freeze : slice.freezes)
        if (TimelineLane* l = lane(freeze.env))
            l->freezes.push_back(freeze);
    for (const auto& [env, slot] : touched)
        finish(lanes[static_cast<std::size_t>(slot)], slot, markerIndex);
    // The trail only grows: a partial slice may know of a later last event.
    if (slice.historyFirst && (!historyFirst || *slice.historyFirst < *historyFirst))
        historyFirst = slice.historyFirst;
    if (slice.historyLast && (!historyLast || *historyLast < *slice.historyLast))
        historyLast = slice.historyLast;
    return change;
}

std::pair<std::size_t, std::size_t> leasesOverlapping(const TimelineLane& lane, double from, double to)
{
    const auto first =
        std::lower_bound(lane.reach.begin(), lane.reach.end(), from,
                         [](qint64 reach, double t) { return static_cast<double>(reach) < t; });
    const auto last = std::upper_bound(
        lane.leases.begin(), lane.leases.end(), to,
        [](double t, const relctl::LeaseSpan& l) { return t < static_cast<double>(l.acquiredAt.millis()); });
    const auto begin = static_cast<std::size_t>(first - lane.reach.begin());
    const auto end = static_cast<std::size_t>(last - lane.leases.begin());
    return {begin, std::max(begin, end)};
}

std::pair<std::size_t, std::size_t> markersWithin(const TimelineLane& lane, double from, double to)
{
    const auto first = std::lower_bound(
        lane.markers.begin(), lane.markers.end(), from,
        [](const relctl::TimelineMarker& m, double t) { return static_cast<double>(m.at.millis()) < t; });
    const auto last =
        std::upper_bound(first, lane.markers.end(), to, [](double t, const relctl::TimelineMarker& m) {
            return t < static_cast<double>(m.at.millis());
        });
    return {static_cast<std::size_t>(first - lane.markers.begin()),
            static_cast<std::size_t>(last - lane.markers.begin())};
}

} // namespace relctl::ui
