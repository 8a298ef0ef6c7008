#pragma once

#include "consoletypes.h"
#include "relctl/console.h"

#include <QWidget>

class QAction;
class QMenu;
class QTableView;
class QToolButton;

namespace relctl::ui {

class EnvironmentsModel;

// Every environment with its current release, lease holder (counting down),
// queue and freeze, plus the operator actions on the selected one.
class EnvironmentsView final : public QWidget
{
    Q_OBJECT

public:
    EnvironmentsView(EnvironmentsModel* model, QWidget* parent = nullptr);

    // Actions need protocol version 2 (queue, revoke, freeze) in the database.
    void setSchemaVersion(int version);
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
    void fitRows();
    int rowsHeight(int rows) const;
    const relctl::EnvironmentRow* selectedRow() const;
    void ask(ConsoleAction::Kind kind, const QString& description);

    EnvironmentsModel* m_model;
    QTableView* m_table;
    QAction* m_freeze;
    QAction* m_unfreeze;
    QAction* m_revoke;
    QAction* m_history;
    QWidget* m_buttons;
    int m_schemaVersion = 0;
};

} // namespace relctl::ui
