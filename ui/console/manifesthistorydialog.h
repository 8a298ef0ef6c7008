#pragma once

#include "consoletypes.h"
#include "permissions.h"

#include <QDialog>

class QLabel;
class QPushButton;
class QTableView;
class QTextBrowser;

namespace relctl::ui {

class ManifestHistoryModel;

// One environment's manifest history (Environments ▸ Manifest history…):
// every manifest it accepted, rollbacks marked, the high-water generation,
// and for the selected entry what rolling back to it would change. "Roll back
// to this…" asks for a reason, shows the release, generation and manifest diff
// it brings back, and runs a rollback to that manifest (relctl rollback
// --to-manifest). Not modal: the console keeps updating while it is open, and
// so does the history.
class ManifestHistoryDialog final : public QDialog
{
    Q_OBJECT

public:
    explicit ManifestHistoryDialog(const QString& env, QWidget* parent = nullptr);

    QString environment() const { return m_env; }
    void setHistory(const relctl::ManifestHistory& history);
    void setSchemaVersion(int version);
    // What the login may do: a rollback needs relctl_manager.
    void setPermissions(const Permissions& permissions);
    ManifestHistoryModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    QString summaryText() const;
    // Selects the row showing this manifest (the newest such row).
    bool selectManifest(qint64 manifestId);

    // What a rollback from `current` to `target` changes, as rich text.
    static QString rollbackHtml(const QString& env, const relctl::ManifestHistoryEntry& current,
                                const relctl::ManifestHistoryEntry& target, std::int64_t highWater);

signals:
    void actionRequested(const ConsoleAction& action);

private:
    const relctl::ManifestHistoryEntry* selectedEntry() const;
    void updateSelection();
    void rollBack();

    QString m_env;
    ManifestHistoryModel* m_model;
    QLabel* m_summary;
    QTableView* m_table;
    QTextBrowser* m_preview;
    QPushButton* m_rollback;
    int m_schemaVersion = 0;
    Permissions m_permissions;
};

} // namespace relctl::ui
