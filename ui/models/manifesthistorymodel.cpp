#include "manifesthistorymodel.h"

#include "timeformat.h"

#include <QFont>
#include <QPalette>

namespace relctl::ui {

ManifestHistoryModel::ManifestHistoryModel(QObject* parent) : QAbstractTableModel(parent) {}

void ManifestHistoryModel::setHistory(relctl::ManifestHistory history)
{
    // A history is short (one row per deploy) and read whole: a reset is
    // cheap, and the view keeps its selection by manifest id itself.
    beginResetModel();
    m_history = std::move(history);
    endResetModel();
}

const relctl::ManifestHistoryEntry* ManifestHistoryModel::entryAt(int row) const
{
    const auto n = static_cast<int>(m_history.history.size());
    if (row < 0 || row >= n)
        return nullptr;
    return &m_history.history[static_cast<std::size_t>(n - 1 - row)];
}

int ManifestHistoryModel::currentRow() const
{
    // A manifest appears again when a rollback restores it: the newest row
    // naming it is the one that made it current.
    if (!m_history.currentManifestId)
        return -1;
    for (int row = 0; row < rowCount(); ++row)
        if (entryAt(row)->manifest.id == m_history.currentManifestId)
            return row;
    return -1;
}

const relctl::ManifestHistoryEntry* ManifestHistoryModel::currentEntry() const
{
    return entryAt(currentRow());
}

int ManifestHistoryModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_history.history.size());
}

int ManifestHistoryModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(Column::Count);
}

QVariant ManifestHistoryModel::data(const QModelIndex& index, int role) const
{
    const relctl::ManifestHistoryEntry* e = entryAt(index.row());
    if (!e || !checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const relctl::Manifest& m = e->manifest;
    const bool rollback = e->rollback.has_value();
    const bool current = index.row() == currentRow();
    switch (role) {
    case ManifestId:
        return m.id ? QVariant(qint64(*m.id)) : QVariant();
    case IsCurrent:
        return current;
    case IsRollback:
        return rollback;
    case Qt::FontRole:
        if (current) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::ToolTipRole:
        if (rollback)
            return tr("Rolled back by %1 at %2: %3")
                .arg(QString::fromStdString(e->rollback->by), formatTime(e->rollback->at),
                     QString::fromStdString(e->rollback->reason));
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (static_cast<Column>(index.column())) {
    case Column::Manifest:
        return m.id ? QVariant(qint64(*m.id)) : QVariant();
    case Column::Kind:
        // Marked in words, not only by tint: the current row and the rollbacks.
        return (rollback ? tr("↩ rollback") : tr("publish")) + (current ? tr(" · current") : QString());
    case Column::Release:
        return QString::fromStdString(m.release);
    case Column::Generation:
        return qint64(m.generation);
    case Column::By:
        return QString::fromStdString(rollback ? e->rollback->by : m.job);
    case Column::At:
        return formatTime(rollback ? e->rollback->at : m.publishedAt);
    case Column::Note:
        if (rollback)
            return tr("replaced %1 (generation %2): %3")
                .arg(QString::fromStdString(e->rollback->replaced.release))
                .arg(e->rollback->replaced.generation)
                .arg(QString::fromStdString(e->rollback->reason));
        return QString();
    case Column::Count:
        break;
    }
    return {};
}

QVariant ManifestHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (static_cast<Column>(section)) {
    case Column::Manifest:
        return tr("Manifest");
    case Column::Kind:
        return tr("Kind");
    case Column::Release:
        return tr("Release");
    case Column::Generation:
        return tr("Generation");
    case Column::By:
        return tr("Job / by");
    case Column::At:
        return tr("At");
    case Column::Note:
        return tr("Note");
    case Column::Count:
        break;
    }
    return {};
}

} // namespace relctl::ui
