#pragma once

#include <QWidget>

class QComboBox;
class QLineEdit;
class QTableView;

namespace relctl::ui {

class AuditModel;

// The audit browser: filters (all applied by the server), the lazily loaded
// table, and export of the loaded rows.
class AuditView final : public QWidget
{
    Q_OBJECT

public:
    AuditView(AuditModel* model, QWidget* parent = nullptr);

    QTableView* table() const { return m_table; }
    // Selects the event's row when it is loaded (the timeline asks).
    void selectEvent(qint64 eventId);
    void setEnvironments(const QStringList& names);
    void applyFilter();

signals:
    void eventSelected(qint64 eventId, qint64 atMs, bool rejected);

private:
    void exportRows(bool json);

    AuditModel* m_model;
    QComboBox* m_env;
    QLineEdit* m_job;
    QComboBox* m_operation;
    QComboBox* m_reason;
    QLineEdit* m_text;
    QComboBox* m_since;
    QTableView* m_table;
    bool m_sized = false;
};

} // namespace relctl::ui
