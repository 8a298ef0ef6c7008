#include "timelinelanes.h"

#include <algorithm>
#include <limits>
#include <map>

namespace relctl::ui {

TimelineLanes TimelineLanes::fromSlice(relctl::TimelineSlice slice)
{
    TimelineLanes result;
    std::map<std::string, int> laneOf;
    // Items arrive grouped by environment: remembering the last lane spares
    // a map lookup (a string compare chain) per item.
    const std::string* lastEnv = nullptr;
    std::size_t lastLane = 0;
    auto lane = [&](const std::string& env) -> TimelineLane& {
        if (!lastEnv || *lastEnv != env) {
            auto [it, inserted] = laneOf.try_emplace(env, static_cast<int>(result.lanes.size()));
            if (inserted)
                result.lanes.push_back(TimelineLane{QString::fromStdString(env), {}, {}, {}, {}});
            lastEnv = &it->first;
            lastLane = static_cast<std::size_t>(it->second);
        }
        return result.lanes[lastLane];
    };
    // Lanes follow the slice's environment order; an item whose environment
    // is missing there still gets a lane rather than vanishing.
    for (const auto& env : slice.environments)
        lane(env);
    result.markerIndex.reserve(static_cast<qsizetype>(slice.markers.size()));
    for (auto& lease : slice.leases)
        lane(lease.env).leases.push_back(std::move(lease));
    for (auto& marker : slice.markers)
        lane(marker.env).markers.push_back(std::move(marker));
    for (auto& freeze : slice.freezes)
        lane(freeze.env).freezes.push_back(std::move(freeze));
    result.historyFirst = slice.historyFirst;
    result.historyLast = slice.historyLast;

    for (int l = 0; l < static_cast<int>(result.lanes.size()); ++l) {
        auto& current = result.lanes[static_cast<std::size_t>(l)];
        // The query orders them already, but every binary search depends on
        // it: check (one pass), and sort only what is not.
        const auto byStart = [](const auto& a, const auto& b) { return a.acquiredAt < b.acquiredAt; };
        if (!std::is_sorted(current.leases.begin(), current.leases.end(), byStart))
            std::stable_sort(current.leases.begin(), current.leases.end(), byStart);
        const auto byTime = [](const auto& a, const auto& b) { return a.at < b.at; };
        if (!std::is_sorted(current.markers.begin(), current.markers.end(), byTime))
            std::stable_sort(current.markers.begin(), current.markers.end(), byTime);
        std::stable_sort(current.freezes.begin(), current.freezes.end(),
                         [](const auto& a, const auto& b) { return a.from < b.from; });
        current.reach.reserve(current.leases.size());
        qint64 reach = std::numeric_limits<qint64>::min();
        for (const auto& lease : current.leases) {
            reach = std::max<qint64>(reach, std::max(lease.endsAt, lease.acquiredAt).millis());
            current.reach.push_back(reach);
        }
        for (int i = 0; i < static_cast<int>(current.markers.size()); ++i)
            result.markerIndex.insert(current.markers[static_cast<std::size_t>(i)].eventId, {l, i});
    }
    return result;
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
