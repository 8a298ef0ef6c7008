#pragma once

// What the timeline shows top to bottom: its rows. Lanes (TimelineLanes'
// slots) are grouped by their environment's group under a header row per
// group, groups and lanes in natural order (svc2 before svc10); a collapsed
// group is its header row alone, drawn as a summary of its members over time
// (held, refused, frozen). A lane filter hides lanes (and groups left with
// none). The order is kept per group, so a lane that comes or goes costs a
// binary search and one pass over the rows, and an update of a lane's items
// costs nothing here but marking its group's summary stale.

#include "timelinelanes.h"

#include <QHash>
#include <QSet>
#include <QString>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace relctl::ui {

struct TimelineRow
{
    enum class Kind : std::uint8_t { Lane, Group };
    Kind kind = Kind::Lane;
    int index = -1; // Lane: the lane's slot; Group: the group's id
};

// A stretch of time with a constant number of members in some state.
struct SummaryStep
{
    qint64 from = 0;
    qint64 to = 0; // a freeze still in force: the largest qint64
    int count = 0; // members in that state (at least one)
};

// A collapsed group's lane: its shown members over time.
struct GroupSummary
{
    std::vector<SummaryStep> held;   // by time, disjoint: how many members held a lease
    std::vector<SummaryStep> frozen; // by time, disjoint: how many members were frozen
    // The members' refusals, by time, as one lane's markers: the painter's
    // and the hit-testing's glyph grouping work on them unchanged.
    TimelineLane refusals;
    int members = 0;
};

// The step under time t, or the gap around it (count 0, bounds the
// neighbouring steps' ends, else the qint64 limits).
SummaryStep stepAround(const std::vector<SummaryStep>& steps, double t);

struct TimelineGroup
{
    QString name;
    std::string key;
    std::vector<int> members; // slots, in natural order of their names
    int shown = 0;            // members the lane filter shows
    bool collapsed = false;   // as of the last rebuild
    bool header = false;      // as of the last rebuild: drawn under a header row
    mutable bool summaryValid = false;
    mutable GroupSummary summary;
};

class TimelineRows final
{
public:
    // Grouping is off until set: every lane in one list, in natural order.
    void setGroups(const QHash<QString, QString>& groupOf);
    bool grouped() const { return m_grouped; }
    const QHash<QString, QString>& groupOf() const { return m_groupOf; }
    const std::optional<QSet<QString>>& filter() const { return m_filter; }
    void setFilter(const std::optional<QSet<QString>>& shown);
    void setCollapsed(const QSet<QString>& collapsed);
    const QSet<QString>& collapsed() const { return m_collapsed; }
    void toggle(const QString& group);

    // Places every live lane anew (a new slice, new groups).
    void reset(const TimelineLanes& data);
    // A live update's lanes: placed, taken out, or their items changed.
    void addLane(const TimelineLanes& data, int slot);
    void removeLane(int slot, const std::string& key);
    void laneChanged(int slot);
    // The rows from the order, the filter and the collapsed groups: one pass.
    void rebuild(const TimelineLanes& data);

    const std::vector<TimelineRow>& rows() const { return m_rows; }
    int count() const { return static_cast<int>(m_rows.size()); }
    const TimelineRow& row(int r) const { return m_rows[static_cast<std::size_t>(r)]; }
    const TimelineGroup& group(int id) const { return m_groups[static_cast<std::size_t>(id)]; }
    // A lane's row: its own, or its collapsed group's; -1 when not shown.
    int rowOfLane(int slot) const;
    int rowOfGroup(const QString& name) const;
    int groupOfLane(int slot) const;
    bool isCollapsedGroup(int r) const;
    bool isHeader(int r) const
    {
        return m_rows[static_cast<std::size_t>(r)].kind == TimelineRow::Kind::Group;
    }
    // Whether the row's lane sits under a group header (indented).
    bool inGroup(int r) const;
    // What the row is, in values that outlive a rebuild ("lane:" or
    // "group:" and the name), to find it again.
    QString identity(int r, const TimelineLanes& data) const;
    int rowOfIdentity(const QString& identity, const TimelineLanes& data) const;
    bool shows(const TimelineLane& lane) const { return !m_filter || m_filter->contains(lane.name); }

    // The collapsed group's summary, made when first asked for after a change.
    const GroupSummary& summary(int id, const TimelineLanes& data) const;

private:
    QString groupName(const TimelineLane& lane) const;
    int groupId(const QString& name);
    void place(const TimelineLanes& data, int slot);

    bool m_grouped = false;
    QHash<QString, QString> m_groupOf;
    std::optional<QSet<QString>> m_filter;
    QSet<QString> m_collapsed;
    std::vector<TimelineGroup> m_groups; // by id; a group left empty stays, unshown, for reuse
    QHash<QString, int> m_groupIds;
    struct NaturalLess
    {
        bool operator()(const std::string& a, const std::string& b) const;
    };
    std::map<std::string, int, NaturalLess> m_order; // group key -> id
    std::vector<int> m_groupOfSlot;
    std::vector<TimelineRow> m_rows;
    std::vector<int> m_rowOfSlot;
    std::vector<int> m_rowOfGroup;
};

} // namespace relctl::ui
