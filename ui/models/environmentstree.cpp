// The environments grouped (EnvironmentsTree): a proxy over EnvironmentsModel
// kept up to date change by change, so that one environment's live update
// costs the same at 50 environments as at 10,000.

#include "environmentstree.h"

#include "relctl/naturalsort.h"

#include <QFont>
#include <algorithm>

namespace relctl::ui {

namespace {

using Column = EnvironmentsModel::Column;

QString defaultGroup(const std::string& name)
{
    const auto dot = name.find('.');
    return QString::fromStdString(dot == std::string::npos ? name : name.substr(0, dot));
}

// Shifts every source row at or past `from` by `by` (an insert or a removal
// upstream): the order within a group is unchanged, so no row of this model moves.
void shift(std::vector<int>& rows, int from, int by)
{
    for (int& r : rows)
        if (r >= from)
            r += by;
}

} // namespace

EnvironmentsTree::EnvironmentsTree(EnvironmentsModel* source, QObject* parent)
    : QAbstractItemModel(parent), m_source(source)
{
    connect(source, &QAbstractItemModel::rowsInserted, this, &EnvironmentsTree::onRowsInserted);
    connect(source, &QAbstractItemModel::rowsAboutToBeRemoved, this,
            &EnvironmentsTree::onRowsAboutToBeRemoved);
    connect(source, &QAbstractItemModel::rowsRemoved, this, &EnvironmentsTree::onRowsRemoved);
    connect(source, &QAbstractItemModel::dataChanged, this, &EnvironmentsTree::onDataChanged);
    // The source resets when a full read does not merge by name (and is
    // not expected to re-sort): the tree is simply built again, and its
    // environments may have come, gone or moved, as after an insertion.
    const auto rebuilt = [this] {
        rebuild();
        emit membershipChanged();
    };
    connect(source, &QAbstractItemModel::modelReset, this, rebuilt);
    connect(source, &QAbstractItemModel::layoutChanged, this, rebuilt);
    rebuild();
}

EnvironmentsTree::~EnvironmentsTree() = default;

QString EnvironmentsTree::groupNameOf(int sourceRow) const
{
    const relctl::EnvironmentRow& row = m_source->environments()[std::size_t(sourceRow)];
    return row.group.empty() ? defaultGroup(row.name) : QString::fromStdString(row.group);
}

bool EnvironmentsTree::matches(const QString& name, const QString& group) const
{
    if (m_search.isEmpty())
        return true;
    if (m_glob)
        return m_glob->match(name).hasMatch() || m_glob->match(group).hasMatch();
    return name.contains(m_search, Qt::CaseInsensitive) || group.contains(m_search, Qt::CaseInsensitive);
}

quint8 EnvironmentsTree::flagsOf(int sourceRow) const
{
    const relctl::EnvironmentRow& row = m_source->environments()[std::size_t(sourceRow)];
    const QString name = QString::fromStdString(row.name);
    quint8 flags = 0;
    if (!row.attention.empty())
        flags |= FlagAttention;
    if (m_source->needsMe().contains(name))
        flags |= FlagNeedsMe;
    if (matches(name, groupNameOf(sourceRow)))
        flags |= FlagSearch;
    return flags;
}

bool EnvironmentsTree::passes(quint8 flags) const
{
    if (!(flags & FlagSearch))
        return false;
    switch (m_mode) {
    case Mode::All:
        return true;
    case Mode::Attention:
        return flags & FlagAttention;
    case Mode::NeedsMe:
        return flags & FlagNeedsMe;
    }
    return true;
}

void EnvironmentsTree::countFlags(quint8 flags, int sign)
{
    if (flags & FlagAttention)
        m_attentionCount += sign;
    if (passes(flags))
        m_shownCount += sign;
}

void EnvironmentsTree::setSearch(const QString& pattern)
{
    const QString trimmed = pattern.trimmed();
    if (trimmed == m_search)
        return;
    m_search = trimmed;
    m_glob.reset();
    if (m_search.contains(QLatin1Char('*')) || m_search.contains(QLatin1Char('?')))
        m_glob = QRegularExpression(QRegularExpression::wildcardToRegularExpression(m_search),
                                    QRegularExpression::CaseInsensitiveOption);
    // A new search reads every name once: linear, and only when typed.
    rebuild();
}

void EnvironmentsTree::setMode(Mode mode)
{
    if (mode == m_mode)
        return;
    m_mode = mode;
    rebuild();
}

EnvironmentsTree::Group* EnvironmentsTree::groupNamed(const QString& name)
{
    if (Group* g = m_byName.value(name))
        return g;
    auto g = std::make_unique<Group>();
    g->name = name;
    g->key = name.toStdString();
    Group* raw = g.get();
    m_groups.push_back(std::move(g));
    m_byName.insert(name, raw);
    return raw;
}

std::vector<EnvironmentsTree::Group*> EnvironmentsTree::groupAll()
{
    m_groups.clear();
    m_byName.clear();
    const int rows = int(m_source->environments().size());
    m_groupOf.assign(std::size_t(rows), nullptr);
    m_flags.assign(std::size_t(rows), 0);
    m_shownCount = 0;
    m_attentionCount = 0;
    // The source's rows are in natural order, so each group's members come
    // in order too: appending keeps them sorted.
    for (int r = 0; r < rows; ++r) {
        Group* g = groupNamed(groupNameOf(r));
        const quint8 flags = flagsOf(r);
        m_groupOf[std::size_t(r)] = g;
        m_flags[std::size_t(r)] = flags;
        countFlags(flags, +1);
        g->members.push_back(r);
        if (passes(flags))
            g->shown.push_back(r);
    }
    std::vector<Group*> top;
    for (const auto& g : m_groups) {
        if (g->shown.empty())
            continue;
        summarise(g.get());
        top.push_back(g.get());
    }
    std::sort(top.begin(), top.end(),
              [](const Group* a, const Group* b) { return relctl::naturalLess(a->key, b->key); });
    return top;
}

void EnvironmentsTree::rebuild()
{
    beginResetModel();
    m_top.clear();
    m_top = groupAll();
    renumberTop(0);
    endResetModel();
    emit countsChanged();
}

void EnvironmentsTree::insertFirstRows()
{
    // The first read (10,000 rows at once): grouped in one pass and inserted
    // as one run of top rows, not a member at a time (a group's second
    // member would replace its row, every insert renumbering the rows after).
    std::vector<Group*> top = groupAll();
    if (!top.empty()) {
        beginInsertRows({}, 0, int(top.size()) - 1);
        m_top = std::move(top);
        renumberTop(0);
        endInsertRows();
    }
    emit countsChanged();
    emit membershipChanged();
}

void EnvironmentsTree::summarise(Group* g)
{
    Summary s;
    const auto& rows = m_source->environments();
    for (const int r : g->shown) {
        const relctl::EnvironmentRow& row = rows[std::size_t(r)];
        s.held += row.holderToken.has_value() ? 1 : 0;
        s.queued += int(std::max<std::int64_t>(row.queueLength, std::int64_t(row.queue.size())));
        s.frozen += row.frozen ? 1 : 0;
        s.attention += row.attention.empty() ? 0 : 1;
        s.pending += int(row.pendingSupersessions + row.pendingPromotions);
    }
    g->summary = s;
}

void EnvironmentsTree::renumberTop(std::size_t from)
{
    for (std::size_t i = from; i < m_top.size(); ++i)
        m_top[i]->row = int(i);
}

QModelIndex EnvironmentsTree::topIndex(const Group* g, int column) const
{
    return g->row < 0 ? QModelIndex() : createIndex(g->row, column, nullptr);
}

void EnvironmentsTree::insertTop(Group* g)
{
    const auto at = std::lower_bound(m_top.begin(), m_top.end(), g, [](const Group* a, const Group* b) {
        return relctl::naturalLess(a->key, b->key);
    });
    const int row = int(at - m_top.begin());
    summarise(g);
    beginInsertRows({}, row, row);
    m_top.insert(at, g);
    renumberTop(std::size_t(row));
    endInsertRows();
}

void EnvironmentsTree::removeTop(Group* g)
{
    const int row = g->row;
    beginRemoveRows({}, row, row);
    m_top.erase(m_top.begin() + row);
    g->row = -1;
    renumberTop(std::size_t(row));
    endRemoveRows();
}

void EnvironmentsTree::addMember(int sourceRow)
{
    Group* g = groupNamed(groupNameOf(sourceRow));
    m_groupOf[std::size_t(sourceRow)] = g;
    const bool show = passes(m_flags[std::size_t(sourceRow)]);
    const auto insertSorted = [](std::vector<int>& v, int r) {
        v.insert(std::lower_bound(v.begin(), v.end(), r), r);
    };
    // A group of one shows as its environment; a second member makes it a
    // group row: the row is replaced, not edited.
    if (g->row >= 0 && g->members.size() == 1) {
        removeTop(g);
        insertSorted(g->members, sourceRow);
        if (show)
            insertSorted(g->shown, sourceRow);
        insertTop(g);
        return;
    }
    insertSorted(g->members, sourceRow);
    if (!show)
        return;
    if (g->row < 0) {
        insertSorted(g->shown, sourceRow);
        insertTop(g);
        return;
    }
    const auto at = std::lower_bound(g->shown.begin(), g->shown.end(), sourceRow);
    const int child = int(at - g->shown.begin());
    beginInsertRows(topIndex(g), child, child);
    g->shown.insert(at, sourceRow);
    endInsertRows();
    summarise(g);
    emit dataChanged(topIndex(g), topIndex(g, columnCount() - 1));
}

void EnvironmentsTree::dropMember(int sourceRow)
{
    Group* g = m_groupOf[std::size_t(sourceRow)];
    if (!g)
        return;
    m_groupOf[std::size_t(sourceRow)] = nullptr;
    const auto erase = [](std::vector<int>& v, int r) {
        if (const auto at = std::lower_bound(v.begin(), v.end(), r); at != v.end() && *at == r)
            v.erase(at);
    };
    const bool shown = std::binary_search(g->shown.begin(), g->shown.end(), sourceRow);
    if (g->row >= 0 && (g->members.size() <= 2 || (shown && g->shown.size() == 1))) {
        // The row goes, or turns from a group row into its one environment's.
        removeTop(g);
        erase(g->members, sourceRow);
        erase(g->shown, sourceRow);
        if (!g->shown.empty())
            insertTop(g);
    } else if (g->row >= 0 && shown) {
        const auto at = std::lower_bound(g->shown.begin(), g->shown.end(), sourceRow);
        const int child = int(at - g->shown.begin());
        beginRemoveRows(topIndex(g), child, child);
        g->shown.erase(at);
        endRemoveRows();
        erase(g->members, sourceRow);
        summarise(g);
        emit dataChanged(topIndex(g), topIndex(g, columnCount() - 1));
    } else {
        erase(g->members, sourceRow);
        erase(g->shown, sourceRow);
    }
    if (g->members.empty()) {
        m_byName.remove(g->name);
        const auto owned = std::find_if(m_groups.begin(), m_groups.end(),
                                        [g](const std::unique_ptr<Group>& p) { return p.get() == g; });
        // Swap and pop: m_groups has no order.
        std::iter_swap(owned, m_groups.end() - 1);
        m_groups.pop_back();
    }
}

void EnvironmentsTree::showMember(int sourceRow, bool show)
{
    Group* g = m_groupOf[std::size_t(sourceRow)];
    if (show) {
        if (g->row >= 0 && !g->flat()) {
            const auto at = std::lower_bound(g->shown.begin(), g->shown.end(), sourceRow);
            const int child = int(at - g->shown.begin());
            beginInsertRows(topIndex(g), child, child);
            g->shown.insert(at, sourceRow);
            endInsertRows();
            summarise(g);
            emit dataChanged(topIndex(g), topIndex(g, columnCount() - 1));
        } else {
            g->shown.insert(std::lower_bound(g->shown.begin(), g->shown.end(), sourceRow), sourceRow);
            insertTop(g);
        }
        return;
    }
    if (g->shown.size() == 1) {
        removeTop(g);
        g->shown.clear();
        return;
    }
    const auto at = std::lower_bound(g->shown.begin(), g->shown.end(), sourceRow);
    const int child = int(at - g->shown.begin());
    beginRemoveRows(topIndex(g), child, child);
    g->shown.erase(at);
    endRemoveRows();
    summarise(g);
    emit dataChanged(topIndex(g), topIndex(g, columnCount() - 1));
}

void EnvironmentsTree::onRowsInserted(const QModelIndex& parent, int first, int last)
{
    if (parent.isValid())
        return;
    if (m_flags.empty()) {
        insertFirstRows();
        return;
    }
    const int n = last - first + 1;
    for (const auto& g : m_groups) {
        shift(g->members, first, n);
        shift(g->shown, first, n);
    }
    m_groupOf.insert(m_groupOf.begin() + first, std::size_t(n), nullptr);
    m_flags.insert(m_flags.begin() + first, std::size_t(n), 0);
    for (int r = first; r <= last; ++r) {
        const quint8 flags = flagsOf(r);
        m_flags[std::size_t(r)] = flags;
        countFlags(flags, +1);
        addMember(r);
    }
    emit countsChanged();
    emit membershipChanged();
}

void EnvironmentsTree::onRowsAboutToBeRemoved(const QModelIndex& parent, int first, int last)
{
    if (parent.isValid())
        return;
    // The rows leave this model while the source still has them, so every
    // row this model shows meanwhile still reads the right source row.
    for (int r = last; r >= first; --r) {
        countFlags(m_flags[std::size_t(r)], -1);
        dropMember(r);
    }
}

void EnvironmentsTree::onRowsRemoved(const QModelIndex& parent, int first, int last)
{
    if (parent.isValid())
        return;
    const int n = last - first + 1;
    m_groupOf.erase(m_groupOf.begin() + first, m_groupOf.begin() + last + 1);
    m_flags.erase(m_flags.begin() + first, m_flags.begin() + last + 1);
    for (const auto& g : m_groups) {
        shift(g->members, last + 1, -n);
        shift(g->shown, last + 1, -n);
    }
    emit countsChanged();
    emit membershipChanged();
}

void EnvironmentsTree::emitRowChanged(int sourceRow)
{
    Group* g = m_groupOf[std::size_t(sourceRow)];
    if (!g || g->row < 0)
        return;
    if (g->flat()) {
        emit dataChanged(topIndex(g), topIndex(g, columnCount() - 1));
        return;
    }
    const auto at = std::lower_bound(g->shown.begin(), g->shown.end(), sourceRow);
    if (at == g->shown.end() || *at != sourceRow)
        return;
    const int child = int(at - g->shown.begin());
    emit dataChanged(createIndex(child, 0, g), createIndex(child, columnCount() - 1, g));
    summarise(g);
    emit dataChanged(topIndex(g), topIndex(g, columnCount() - 1));
}

void EnvironmentsTree::emitEverythingChanged(int firstColumn, int lastColumn, const QList<int>& roles)
{
    if (m_top.empty())
        return;
    emit dataChanged(index(0, firstColumn), index(int(m_top.size()) - 1, lastColumn), roles);
    for (Group* g : m_top)
        if (!g->flat() && !g->shown.empty())
            emit dataChanged(createIndex(0, firstColumn, g),
                             createIndex(int(g->shown.size()) - 1, lastColumn, g), roles);
}

void EnvironmentsTree::onDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight,
                                     const QList<int>& roles)
{
    if (!topLeft.isValid() || topLeft.parent().isValid())
        return;
    // The countdown's tick, every second on every row: nothing that groups,
    // filters or sums changes, only what two columns say.
    const bool countdownOnly = !roles.isEmpty() && std::all_of(roles.begin(), roles.end(), [](int role) {
        return role == Qt::DisplayRole || role == EnvironmentsModel::RemainingMs;
    });
    const int first = topLeft.row();
    const int last = bottomRight.row();
    // A wide change (the countdown, "Needs me" set anew, a full re-read with
    // the same names) is passed on once per parent; a narrow one (a live
    // event) row by row.
    const bool wide = last - first + 1 > 32;
    if (countdownOnly) {
        if (wide) {
            emitEverythingChanged(topLeft.column(), bottomRight.column(), roles);
        } else {
            for (int r = first; r <= last; ++r)
                emitRowChanged(r);
        }
        return;
    }
    bool moved = false;
    bool counts = false;
    for (int r = first; r <= last; ++r) {
        const quint8 before = m_flags[std::size_t(r)];
        const quint8 after = flagsOf(r);
        Group* g = m_groupOf[std::size_t(r)];
        if (!g || g->name != groupNameOf(r)) {
            // Another group: out of the old one, into the new.
            countFlags(before, -1);
            dropMember(r);
            m_flags[std::size_t(r)] = after;
            countFlags(after, +1);
            addMember(r);
            moved = counts = true;
            continue;
        }
        if (before != after) {
            countFlags(before, -1);
            m_flags[std::size_t(r)] = after;
            countFlags(after, +1);
            counts = true;
            if (passes(before) != passes(after)) {
                showMember(r, passes(after));
                continue;
            }
        }
        if (!wide)
            emitRowChanged(r);
    }
    if (wide) {
        for (Group* g : m_top)
            summarise(g);
        emitEverythingChanged(0, columnCount() - 1, {});
    }
    if (counts)
        emit countsChanged();
    if (moved)
        emit membershipChanged();
}

std::optional<QSet<QString>> EnvironmentsTree::searchMatches() const
{
    if (m_search.isEmpty())
        return std::nullopt;
    QSet<QString> names;
    const auto& rows = m_source->environments();
    for (std::size_t r = 0; r < m_flags.size(); ++r)
        if (m_flags[r] & FlagSearch)
            names.insert(QString::fromStdString(rows[r].name));
    return names;
}

QHash<QString, QString> EnvironmentsTree::groupOf() const
{
    QHash<QString, QString> groups;
    const auto& rows = m_source->environments();
    groups.reserve(qsizetype(rows.size()));
    for (std::size_t r = 0; r < m_groupOf.size(); ++r)
        if (m_groupOf[r])
            groups.insert(QString::fromStdString(rows[r].name), m_groupOf[r]->name);
    return groups;
}

QStringList EnvironmentsTree::groups() const
{
    QStringList names;
    for (const auto& g : m_groups)
        names << g->name;
    return names;
}

QStringList EnvironmentsTree::groupRows() const
{
    QStringList names;
    for (const Group* g : m_top)
        if (!g->flat())
            names << g->name;
    return names;
}

QModelIndex EnvironmentsTree::indexOfEnvironment(const QString& name) const
{
    const int r = m_source->rowOf(name);
    if (r < 0 || std::size_t(r) >= m_groupOf.size())
        return {};
    const Group* g = m_groupOf[std::size_t(r)];
    if (!g || g->row < 0)
        return {};
    if (g->flat())
        return topIndex(g);
    const auto at = std::lower_bound(g->shown.begin(), g->shown.end(), r);
    if (at == g->shown.end() || *at != r)
        return {};
    return createIndex(int(at - g->shown.begin()), 0, const_cast<Group*>(g));
}

QModelIndex EnvironmentsTree::indexOfGroup(const QString& group) const
{
    const Group* g = m_byName.value(group);
    return g && !g->flat() ? topIndex(g) : QModelIndex();
}

bool EnvironmentsTree::isGroupRow(const QModelIndex& index) const
{
    if (!index.isValid() || index.internalPointer() || std::size_t(index.row()) >= m_top.size())
        return false;
    return !m_top[std::size_t(index.row())]->flat();
}

int EnvironmentsTree::sourceRow(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this)
        return -1;
    if (const auto* g = static_cast<const Group*>(index.internalPointer()))
        return std::size_t(index.row()) < g->shown.size() ? g->shown[std::size_t(index.row())] : -1;
    if (std::size_t(index.row()) >= m_top.size())
        return -1;
    const Group* g = m_top[std::size_t(index.row())];
    return g->flat() && !g->shown.empty() ? g->shown.front() : -1;
}

QString EnvironmentsTree::environmentAt(const QModelIndex& index) const
{
    const int r = sourceRow(index);
    return r < 0 ? QString() : QString::fromStdString(m_source->environments()[std::size_t(r)].name);
}

QStringList EnvironmentsTree::environmentsAt(const QModelIndex& index) const
{
    if (!isGroupRow(index)) {
        const QString env = environmentAt(index);
        return env.isEmpty() ? QStringList() : QStringList{env};
    }
    QStringList names;
    for (const int r : m_top[std::size_t(index.row())]->shown)
        names << QString::fromStdString(m_source->environments()[std::size_t(r)].name);
    return names;
}

QStringList EnvironmentsTree::shownEnvironments() const
{
    QStringList names;
    const auto& rows = m_source->environments();
    for (const Group* g : m_top)
        for (const int r : g->shown)
            names << QString::fromStdString(rows[std::size_t(r)].name);
    return names;
}

QModelIndex EnvironmentsTree::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= columnCount())
        return {};
    if (!parent.isValid())
        return std::size_t(row) < m_top.size() ? createIndex(row, column, nullptr) : QModelIndex();
    if (parent.internalPointer() || std::size_t(parent.row()) >= m_top.size())
        return {};
    Group* g = m_top[std::size_t(parent.row())];
    if (g->flat() || std::size_t(row) >= g->shown.size())
        return {};
    return createIndex(row, column, g);
}

QModelIndex EnvironmentsTree::parent(const QModelIndex& child) const
{
    if (!child.isValid())
        return {};
    const auto* g = static_cast<const Group*>(child.internalPointer());
    return g ? topIndex(g) : QModelIndex();
}

int EnvironmentsTree::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return int(m_top.size());
    if (parent.column() != 0 || parent.internalPointer() || std::size_t(parent.row()) >= m_top.size())
        return 0;
    const Group* g = m_top[std::size_t(parent.row())];
    return g->flat() ? 0 : int(g->shown.size());
}

int EnvironmentsTree::columnCount(const QModelIndex&) const
{
    return kAttentionColumn + 1;
}

QVariant EnvironmentsTree::data(const QModelIndex& index, int role) const
{
    if (!index.isValid())
        return {};
    if (role == GroupName) {
        const auto* g = static_cast<const Group*>(index.internalPointer());
        return g ? g->name : m_top[std::size_t(index.row())]->name;
    }
    if (role == IsGroup)
        return isGroupRow(index);
    if (const int r = sourceRow(index); r >= 0) {
        if (index.column() == kAttentionColumn) {
            const relctl::EnvironmentRow& row = m_source->environments()[std::size_t(r)];
            if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
                QStringList summaries;
                for (const relctl::AttentionItem& item : row.attention)
                    summaries << QString::fromStdString(item.summary);
                return summaries.join(role == Qt::DisplayRole ? QStringLiteral("; ") : QStringLiteral("\n"));
            }
            // Everything else (the name, the marks, the font) as on the row's first cell.
            return m_source->index(r, 0).data(role);
        }
        return m_source->index(r, index.column()).data(role);
    }
    // A group row: its name and count, and what its members add up to.
    const Group* g = m_top[std::size_t(index.row())];
    const Summary& s = g->summary;
    if (role == Qt::FontRole) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (role == Qt::ToolTipRole) {
        QStringList parts;
        parts << tr("Group %1: %n environment(s)", nullptr, int(g->members.size())).arg(g->name);
        if (g->shown.size() != g->members.size())
            parts << tr("%1 shown").arg(g->shown.size());
        if (s.held)
            parts << tr("%1 held").arg(s.held);
        if (s.queued)
            parts << tr("%1 queued").arg(s.queued);
        if (s.frozen)
            parts << tr("%1 frozen").arg(s.frozen);
        if (s.attention)
            parts << tr("%1 need attention").arg(s.attention);
        return parts.join(QStringLiteral(", "));
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case int(Column::Environment):
        return g->shown.size() == g->members.size()
                   ? tr("%1 (%2)").arg(g->name).arg(g->members.size())
                   : tr("%1 (%2 of %3)").arg(g->name).arg(g->shown.size()).arg(g->members.size());
    case int(Column::LeaseHolder):
        return s.held ? tr("%1 held").arg(s.held) : QString();
    case int(Column::Queue):
        return s.queued ? tr("%1 queued").arg(s.queued) : QString();
    case int(Column::Pending):
        return s.pending ? QString::number(s.pending) : QString();
    case int(Column::Frozen):
        return s.frozen ? tr("%1 frozen").arg(s.frozen) : QString();
    case kAttentionColumn:
        return s.attention == 0   ? QString()
               : s.attention == 1 ? tr("1 needs attention")
                                  : tr("%1 need attention").arg(s.attention);
    default:
        return {};
    }
}

QVariant EnvironmentsTree::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && section == kAttentionColumn) {
        if (role == Qt::DisplayRole)
            return tr("Needs attention");
        if (role == Qt::ToolTipRole)
            return tr("Why the environment needs a person now: frozen, a refusal in the last hour, a "
                      "decision pending, candidates waiting, a lease about to expire, a promotion blocked");
        return {};
    }
    return m_source->headerData(section, orientation, role);
}

} // namespace relctl::ui
