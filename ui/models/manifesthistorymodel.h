#pragma once

// One environment's manifest history for the console: every manifest it
// accepted and every rollback, newest first, the current one marked. Fed with
// the reply a worker read (relctl::Database::manifestHistory()).

#include "relctl/replies.h"

#include <QAbstractTableModel>

namespace relctl::ui {

class ManifestHistoryModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum class Column : int { Manifest, Kind, Release, Generation, By, At, Note, Count };

    // Unscoped so views can pass them straight to data(); qualify them as Roles::X.
    enum Roles : int {
        ManifestId = Qt::UserRole + 1, // qint64 on every column: what a rollback to this row restores
        IsCurrent,                     // bool: this row's manifest is current (the newest such row)
        IsRollback,                    // bool
    };

    explicit ManifestHistoryModel(QObject* parent = nullptr);

    void setHistory(relctl::ManifestHistory history);
    const relctl::ManifestHistory& history() const { return m_history; }
    // The entry shown in `row` (rows are newest first), or nullptr.
    const relctl::ManifestHistoryEntry* entryAt(int row) const;
    // The entry that is current: the newest whose manifest is current.
    const relctl::ManifestHistoryEntry* currentEntry() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    int currentRow() const;

    relctl::ManifestHistory m_history;
};

} // namespace relctl::ui
