#pragma once

// The environments of an organisation as a tree: one row per group (the
// group set, else the name up to its first '.') holding its environments, in
// natural order (relctl::naturalLess: svc2 before svc10). It sits over
// EnvironmentsModel and follows its inserts, removes and changes row by row:
// a live event that touches one environment touches one row here, however
// many environments there are. It also filters (a search, "Needs attention",
// "Needs me"), so that a filter's rows and a group's summary agree.

#include "environmentsmodel.h"

#include <QAbstractItemModel>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QString>
#include <QStringList>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace relctl::ui {

class EnvironmentsTree final : public QAbstractItemModel
{
    Q_OBJECT

public:
    // Which environments show: all, those needing a person now
    // (relctl.environment_attention gave reasons), those waiting for this login.
    enum class Mode { All, Attention, NeedsMe };
    // The source's columns, then the attention summaries.
    static constexpr int kAttentionColumn = int(EnvironmentsModel::Column::Count);

    enum Roles : int {
        IsGroup = Qt::UserRole + 100, // bool: a group row (a group of one shows as its environment)
        GroupName,                    // QString, on every row
    };

    explicit EnvironmentsTree(EnvironmentsModel* source, QObject* parent = nullptr);
    ~EnvironmentsTree() override;

    EnvironmentsModel* source() const { return m_source; }

    // A substring of an environment's name or group, case-insensitive; with
    // * or ? a glob the whole name (or group) must match. Empty: everything.
    void setSearch(const QString& pattern);
    const QString& search() const { return m_search; }
    bool matches(const QString& name, const QString& group) const;
    void setMode(Mode mode);
    Mode mode() const { return m_mode; }

    int totalCount() const { return int(m_flags.size()); }
    int shownCount() const { return m_shownCount; }
    int attentionCount() const { return m_attentionCount; }
    // The environments the search matches (whatever the mode), nullopt
    // without a search: what the timeline's lanes show.
    std::optional<QSet<QString>> searchMatches() const;
    // Every environment's group, and every group's name.
    QHash<QString, QString> groupOf() const;
    QStringList groups() const;
    // Groups shown as group rows (more than one environment).
    QStringList groupRows() const;

    // The row of an environment (column 0), invalid when not shown.
    QModelIndex indexOfEnvironment(const QString& name) const;
    // The row of a group of several environments, invalid when not shown.
    QModelIndex indexOfGroup(const QString& group) const;
    bool isGroupRow(const QModelIndex& index) const;
    // The environment a row shows (empty on a group row).
    QString environmentAt(const QModelIndex& index) const;
    // The source's row behind an environment's row, -1 for a group row.
    int sourceRow(const QModelIndex& index) const;
    // The environments a row stands for: a group row's shown members, an
    // environment's row itself.
    QStringList environmentsAt(const QModelIndex& index) const;
    // Every environment shown, in the tree's order.
    QStringList shownEnvironments() const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    // The counts (shown, total, attention) changed.
    void countsChanged();
    // An environment came, went or changed group, or the rows were read
    // again from scratch (a reset of the source): the timeline's groups
    // (groupOf) and the search's matches may differ.
    void membershipChanged();

private:
    struct Summary
    {
        int held = 0;
        int queued = 0; // waiters, across the members
        int frozen = 0;
        int attention = 0;
        int pending = 0;
    };
    struct Group
    {
        QString name;
        std::string key;          // name, for naturalLess
        std::vector<int> members; // source rows, ascending (the source keeps natural order)
        std::vector<int> shown;   // the members the filter lets through, ascending
        int row = -1;             // among the top rows; -1 while nothing of it shows
        Summary summary;
        bool flat() const { return members.size() == 1; }
    };
    enum Flag : quint8 { FlagAttention = 1, FlagNeedsMe = 2, FlagSearch = 4 };

    QString groupNameOf(int sourceRow) const;
    quint8 flagsOf(int sourceRow) const;
    bool passes(quint8 flags) const;
    Group* groupNamed(const QString& name);
    // Groups every source row afresh; the shown groups, in natural order.
    std::vector<Group*> groupAll();
    void rebuild();
    void insertFirstRows();
    void summarise(Group* g);
    QModelIndex topIndex(const Group* g, int column = 0) const;
    void insertTop(Group* g);
    void removeTop(Group* g);
    void renumberTop(std::size_t from);
    void addMember(int sourceRow);
    void dropMember(int sourceRow);
    void showMember(int sourceRow, bool show);
    void emitRowChanged(int sourceRow);
    void emitEverythingChanged(int firstColumn, int lastColumn, const QList<int>& roles);
    void countFlags(quint8 flags, int sign);

    void onRowsInserted(const QModelIndex& parent, int first, int last);
    void onRowsAboutToBeRemoved(const QModelIndex& parent, int first, int last);
    void onRowsRemoved(const QModelIndex& parent, int first, int last);
    void onDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles);

    EnvironmentsModel* m_source;
    QString m_search;
    std::optional<QRegularExpression> m_glob;
    Mode m_mode = Mode::All;
    std::vector<std::unique_ptr<Group>> m_groups; // in no order
    QHash<QString, Group*> m_byName;
    std::vector<Group*> m_top;     // shown groups, natural order
    std::vector<Group*> m_groupOf; // by source row
    std::vector<quint8> m_flags;   // by source row
    int m_shownCount = 0;
    int m_attentionCount = 0;
};

} // namespace relctl::ui
