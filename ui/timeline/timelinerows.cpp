#include "timelinerows.h"

#include "relctl/naturalsort.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace relctl::ui {

namespace {

constexpr qint64 kOpenEnd = std::numeric_limits<qint64>::max();

// Edges (+1 where a member enters the state, -1 where it leaves) into
// disjoint steps of a constant count, merging neighbours of equal count.
std::vector<SummaryStep> sweep(std::vector<std::pair<qint64, int>>& edges)
{
    std::sort(edges.begin(), edges.end());
    std::vector<SummaryStep> steps;
    int count = 0;
    qint64 previous = 0;
    for (std::size_t i = 0; i < edges.size();) {
        const qint64 t = edges[i].first;
        if (count > 0 && t > previous) {
            if (!steps.empty() && steps.back().to == previous && steps.back().count == count)
                steps.back().to = t;
            else
                steps.push_back({previous, t, count});
        }
        while (i < edges.size() && edges[i].first == t)
            count += edges[i++].second;
        previous = t;
    }
    return steps;
}

// A member's spans as one union, so a member holding two overlapping
// leases counts once.
template <typename Spans, typename Bounds>
void addUnion(const Spans& spans, Bounds bounds, std::vector<std::pair<qint64, int>>& edges)
{
    bool open = false;
    qint64 from = 0;
    qint64 to = 0;
    for (const auto& span : spans) {
        const auto [first, second] = bounds(span);
        const auto a = static_cast<qint64>(first);
        const auto b = static_cast<qint64>(second);
        if (open && a <= to) {
            to = std::max(to, b);
            continue;
        }
        if (open && to > from) {
            edges.emplace_back(from, 1);
            edges.emplace_back(to, -1);
        }
        open = true;
        from = a;
        to = b;
    }
    if (open && to > from) {
        edges.emplace_back(from, 1);
        edges.emplace_back(to, -1);
    }
}

} // namespace

bool TimelineRows::NaturalLess::operator()(const std::string& a, const std::string& b) const
{
    return relctl::naturalLess(a, b);
}

SummaryStep stepAround(const std::vector<SummaryStep>& steps, double t)
{
    const auto after = std::upper_bound(steps.begin(), steps.end(), t, [](double time, const SummaryStep& s) {
        return time < static_cast<double>(s.from);
    });
    if (after != steps.begin() && t < static_cast<double>(std::prev(after)->to))
        return *std::prev(after);
    return {after != steps.begin() ? std::prev(after)->to : std::numeric_limits<qint64>::min(),
            after != steps.end() ? after->from : kOpenEnd, 0};
}

void TimelineRows::setGroups(const QHash<QString, QString>& groupOf)
{
    m_grouped = true;
    m_groupOf = groupOf;
}

void TimelineRows::setFilter(const std::optional<QSet<QString>>& shown)
{
    m_filter = shown;
    // A summary covers the members shown: all of them may have changed.
    for (auto& group : m_groups)
        group.summaryValid = false;
}

void TimelineRows::setCollapsed(const QSet<QString>& collapsed)
{
    m_collapsed = collapsed;
}

void TimelineRows::toggle(const QString& group)
{
    if (!m_collapsed.remove(group))
        m_collapsed.insert(group);
}

QString TimelineRows::groupName(const TimelineLane& lane) const
{
    if (!m_grouped)
        return {};
    QString set = m_groupOf.value(lane.name);
    if (!set.isEmpty())
        return set;
    // The server's default: the name up to its first '.'.
    const auto dot = lane.name.indexOf(QLatin1Char('.'));
    return dot < 0 ? lane.name : lane.name.left(dot);
}

int TimelineRows::groupId(const QString& name)
{
    const auto found = m_groupIds.constFind(name);
    if (found != m_groupIds.cend())
        return *found;
    const int id = static_cast<int>(m_groups.size());
    TimelineGroup group;
    group.name = name;
    group.key = name.toStdString();
    m_order.emplace(group.key, id);
    m_groups.push_back(std::move(group));
    m_groupIds.insert(name, id);
    return id;
}

void TimelineRows::reset(const TimelineLanes& data)
{
    m_groups.clear();
    m_groupIds.clear();
    m_order.clear();
    m_groupOfSlot.assign(data.lanes.size(), -1);
    for (int slot = 0; slot < static_cast<int>(data.lanes.size()); ++slot) {
        const TimelineLane& lane = data.lanes[static_cast<std::size_t>(slot)];
        if (!lane.alive)
            continue;
        const int id = groupId(groupName(lane));
        m_groups[static_cast<std::size_t>(id)].members.push_back(slot);
        m_groupOfSlot[static_cast<std::size_t>(slot)] = id;
    }
    const auto byName = [&data](int a, int b) {
        return relctl::naturalLess(data.lanes[static_cast<std::size_t>(a)].key,
                                   data.lanes[static_cast<std::size_t>(b)].key);
    };
    for (auto& group : m_groups)
        std::sort(group.members.begin(), group.members.end(), byName);
}

void TimelineRows::addLane(const TimelineLanes& data, int slot)
{
    const TimelineLane& lane = data.lanes[static_cast<std::size_t>(slot)];
    const int id = groupId(groupName(lane));
    auto& members = m_groups[static_cast<std::size_t>(id)].members;
    const auto at = std::lower_bound(members.begin(), members.end(), slot, [&data](int a, int b) {
        return relctl::naturalLess(data.lanes[static_cast<std::size_t>(a)].key,
                                   data.lanes[static_cast<std::size_t>(b)].key);
    });
    members.insert(at, slot);
    if (m_groupOfSlot.size() <= static_cast<std::size_t>(slot))
        m_groupOfSlot.resize(static_cast<std::size_t>(slot) + 1, -1);
    m_groupOfSlot[static_cast<std::size_t>(slot)] = id;
    m_groups[static_cast<std::size_t>(id)].summaryValid = false;
}

void TimelineRows::removeLane(int slot, const std::string& /*key*/)
{
    const int id = groupOfLane(slot);
    if (id < 0)
        return;
    auto& group = m_groups[static_cast<std::size_t>(id)];
    // A group's members are few; the one flat list (grouping off) is a
    // single pass over ints.
    group.members.erase(std::remove(group.members.begin(), group.members.end(), slot), group.members.end());
    group.summaryValid = false;
    m_groupOfSlot[static_cast<std::size_t>(slot)] = -1;
}

void TimelineRows::laneChanged(int slot)
{
    const int id = groupOfLane(slot);
    if (id >= 0)
        m_groups[static_cast<std::size_t>(id)].summaryValid = false;
}

void TimelineRows::rebuild(const TimelineLanes& data)
{
    m_rows.clear();
    m_rows.reserve(data.lanes.size() + m_order.size());
    m_rowOfSlot.assign(data.lanes.size(), -1);
    m_rowOfGroup.assign(m_groups.size(), -1);
    for (const auto& [key, id] : m_order) {
        TimelineGroup& group = m_groups[static_cast<std::size_t>(id)];
        group.shown = 0;
        for (const int slot : group.members)
            if (shows(data.lanes[static_cast<std::size_t>(slot)]))
                ++group.shown;
        // A group of one is its lane: a header would only repeat the name.
        // The header goes by the group's size, not by what the filter
        // leaves, so a search does not make headers come and go.
        group.header = m_grouped && group.members.size() >= 2;
        group.collapsed = group.header && m_collapsed.contains(group.name);
        if (group.shown == 0)
            continue;
        int groupRow = -1;
        if (group.header) {
            groupRow = static_cast<int>(m_rows.size());
            m_rowOfGroup[static_cast<std::size_t>(id)] = groupRow;
            m_rows.push_back({TimelineRow::Kind::Group, id});
        }
        for (const int slot : group.members) {
            if (!shows(data.lanes[static_cast<std::size_t>(slot)]))
                continue;
            if (group.collapsed) {
                m_rowOfSlot[static_cast<std::size_t>(slot)] = groupRow;
                continue;
            }
            m_rowOfSlot[static_cast<std::size_t>(slot)] = static_cast<int>(m_rows.size());
            m_rows.push_back({TimelineRow::Kind::Lane, slot});
        }
    }
}

int TimelineRows::rowOfLane(int slot) const
{
    if (slot < 0 || static_cast<std::size_t>(slot) >= m_rowOfSlot.size())
        return -1;
    return m_rowOfSlot[static_cast<std::size_t>(slot)];
}

int TimelineRows::rowOfGroup(const QString& name) const
{
    const int id = m_groupIds.value(name, -1);
    if (id < 0 || static_cast<std::size_t>(id) >= m_rowOfGroup.size())
        return -1;
    return m_rowOfGroup[static_cast<std::size_t>(id)];
}

int TimelineRows::groupOfLane(int slot) const
{
    if (slot < 0 || static_cast<std::size_t>(slot) >= m_groupOfSlot.size())
        return -1;
    return m_groupOfSlot[static_cast<std::size_t>(slot)];
}

bool TimelineRows::isCollapsedGroup(int r) const
{
    const TimelineRow& row = m_rows[static_cast<std::size_t>(r)];
    return row.kind == TimelineRow::Kind::Group && m_groups[static_cast<std::size_t>(row.index)].collapsed;
}

bool TimelineRows::inGroup(int r) const
{
    const TimelineRow& row = m_rows[static_cast<std::size_t>(r)];
    if (row.kind == TimelineRow::Kind::Group)
        return false;
    const int id = groupOfLane(row.index);
    return id >= 0 && m_groups[static_cast<std::size_t>(id)].header;
}

QString TimelineRows::identity(int r, const TimelineLanes& data) const
{
    if (r < 0 || r >= count())
        return {};
    const TimelineRow& row = m_rows[static_cast<std::size_t>(r)];
    if (row.kind == TimelineRow::Kind::Group)
        return QStringLiteral("group:") + m_groups[static_cast<std::size_t>(row.index)].name;
    return QStringLiteral("lane:") + data.lanes[static_cast<std::size_t>(row.index)].name;
}

int TimelineRows::rowOfIdentity(const QString& identity, const TimelineLanes& data) const
{
    if (identity.startsWith(QLatin1String("group:")))
        return rowOfGroup(identity.mid(6));
    if (identity.startsWith(QLatin1String("lane:")))
        return rowOfLane(data.slotOf.value(identity.mid(5), -1));
    return -1;
}

const GroupSummary& TimelineRows::summary(int id, const TimelineLanes& data) const
{
    const TimelineGroup& group = m_groups[static_cast<std::size_t>(id)];
    if (group.summaryValid)
        return group.summary;
    GroupSummary s;
    s.refusals.name = group.name;
    s.refusals.key = group.key;
    std::vector<std::pair<qint64, int>> held;
    std::vector<std::pair<qint64, int>> frozen;
    for (const int slot : group.members) {
        const TimelineLane& lane = data.lanes[static_cast<std::size_t>(slot)];
        if (!shows(lane))
            continue;
        ++s.members;
        addUnion(
            lane.leases,
            [](const relctl::LeaseSpan& l) {
                return std::pair<qint64, qint64>{l.acquiredAt.millis(),
                                                 std::max(l.acquiredAt, l.endsAt).millis()};
            },
            held);
        addUnion(
            lane.freezes,
            [](const relctl::FrozenSpan& f) {
                return std::pair<qint64, qint64>{f.from.millis(),
                                                 f.to ? std::max(f.from, *f.to).millis() : kOpenEnd};
            },
            frozen);
        for (const auto& marker : lane.markers)
            if (marker.kind == "refusal")
                s.refusals.markers.push_back(marker);
    }
    s.held = sweep(held);
    s.frozen = sweep(frozen);
    std::stable_sort(s.refusals.markers.begin(), s.refusals.markers.end(),
                     [](const auto& a, const auto& b) { return a.at < b.at; });
    group.summary = std::move(s);
    group.summaryValid = true;
    return group.summary;
}

} // namespace relctl::ui
