#pragma once

#include "consoletypes.h"
#include "permissions.h"
#include "relctl/console.h"

#include <QSet>
#include <QString>
#include <QWidget>

class QAction;
class QLabel;
class QMenu;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;

namespace relctl::ui {

class EnvironmentsModel;

// Every environment with its current release, lease holder (how long held,
// counting down to expiry), queue and freeze, plus the operator actions on the
// selected one. "Needs me" narrows the table to the environments where a
// request waits for this login's decision.
class EnvironmentsView final : public QWidget
{
    Q_OBJECT

public:
    EnvironmentsView(EnvironmentsModel* model, QWidget* parent = nullptr);

    // Actions need protocol version 2 (queue, revoke, freeze) in the database.
    void setSchemaVersion(int version);
    // What the login may do: freeze, unfreeze and revoke are offered only to
    // relctl_manager, and their tooltips say why not to anyone else. The
    // default (unknown) offers them all; the server decides anyway.
    void setPermissions(const Permissions& permissions);
    // The environments where a request waits for this login now (open
    // promotions it may decide and has not, supersessions it may decide):
    // counted on the "Needs me" toggle, bold in the table, and all the table
    // shows while the toggle is on.
    void setNeedsMe(const QSet<QString>& environments);
    // The "Needs me" toggle (checkable).
    QAction* needsMeAction() const { return m_needsMe; }
    // The table shows the model through a filter (Needs me): its rows are the
    // filter's, not the model's.
    QTableView* table() const { return m_table; }
    // Freeze, unfreeze, revoke on the selected environment: the buttons, the
    // context menu (menu key, Shift+F10) and Enter on a row all show these.
    QList<QAction*> operatorActions() const;
    // Pops the operator actions up at the current row (the keyboard's way in).
    QMenu* showActionsMenu();
    // Opens the selected environment's manifest history (where rollbacks start).
    QAction* historyAction() const { return m_history; }

    QString selectedEnvironment() const;
    // As tall as its rows and no taller: the timeline below gets the rest.
    QSize sizeHint() const override;
    // The confirmation an action asks for, with what it will do to the
    // selected environment as last read (revoke: whose lease and who is
    // next; freeze: whose publish is refused and who waits).
    QString consequences(ConsoleAction::Kind kind) const;

signals:
    void actionRequested(const ConsoleAction& action);
    void historyRequested(const QString& env);
    void selectedEnvironmentChanged(const QString& env);

private:
    void updateActions();
    void updateNeedsMe();
    void fitRows();
    int rowsHeight(int rows) const;
    const relctl::EnvironmentRow* selectedRow() const;
    void ask(ConsoleAction::Kind kind, const QString& description);

    EnvironmentsModel* m_model;
    QSortFilterProxyModel* m_shown;
    QTableView* m_table;
    QAction* m_freeze;
    QAction* m_unfreeze;
    QAction* m_revoke;
    QAction* m_history;
    QAction* m_needsMe;
    QLabel* m_nothingForMe;
    QWidget* m_buttons;
    int m_schemaVersion = 0;
    Permissions m_permissions;
    QString m_selected; // as last announced by selectedEnvironmentChanged
};

} // namespace relctl::ui
