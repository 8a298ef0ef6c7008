#pragma once

#include "consoletypes.h"
#include "permissions.h"

#include <QWidget>

class QAction;
class QListWidget;
class QPushButton;

namespace relctl::ui {

// Pending supersession requests: which candidate would skip which, with
// approve and deny of the supersession (both confirmed, recorded with the
// operator's name), offered only to a login that may operate.
class SupersessionsView final : public QWidget
{
    Q_OBJECT

public:
    explicit SupersessionsView(QWidget* parent = nullptr);
    void setSupersessions(const QList<SupersessionRow>& approvals);
    // Supersession approvals need protocol version 2 (the queue) in the
    // database.
    void setSchemaVersion(int version);
    // What the login may do: approving and denying a supersession needs
    // relctl_manager.
    void setPermissions(const Permissions& permissions);
    int count() const;
    // Approve and deny the selected request: the buttons and the Actions menu.
    QAction* approveAction() const { return m_approveAction; }
    QAction* denyAction() const { return m_denyAction; }

signals:
    void actionRequested(const ConsoleAction& action);
    // The number of requests awaiting a decision changed.
    void countChanged(int count);

private:
    void decide(bool approve);

    QListWidget* m_list;
    QPushButton* m_approve;
    QPushButton* m_deny;
    QAction* m_approveAction;
    QAction* m_denyAction;
    void updateButtons();

    QList<SupersessionRow> m_rows;
    int m_schemaVersion = 0;
    Permissions m_permissions;
};

} // namespace relctl::ui
