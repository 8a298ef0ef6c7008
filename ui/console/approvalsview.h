#pragma once

#include "consoletypes.h"

#include <QWidget>

class QListWidget;
class QPushButton;

namespace relctl::ui {

// Pending supersession requests: which candidate would skip which, with
// approve and deny (both confirmed, recorded with the operator's name).
class ApprovalsView final : public QWidget
{
    Q_OBJECT

public:
    explicit ApprovalsView(QWidget* parent = nullptr);
    void setApprovals(const QList<ApprovalRow>& approvals);
    // Approvals need protocol version 2 (the queue) in the database.
    void setSchemaVersion(int version);
    int count() const;

signals:
    void actionRequested(const ConsoleAction& action);

private:
    void decide(bool approve);

    QListWidget* m_list;
    QPushButton* m_approve;
    QPushButton* m_deny;
    void updateButtons();

    QList<ApprovalRow> m_rows;
    int m_schemaVersion = 0;
};

} // namespace relctl::ui
