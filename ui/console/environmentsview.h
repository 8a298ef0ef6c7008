#pragma once

#include "consoletypes.h"
#include "environmentstree.h"
#include "permissions.h"
#include "relctl/console.h"

#include <QSet>
#include <QString>
#include <QTableView>
#include <QTreeView>
#include <QWidget>

class QAction;
class QLabel;
class QLineEdit;
class QMenu;
class QToolButton;

namespace relctl::ui {

class EnvironmentsModel;

// Every environment with its current release, lease holder (how long held,
// counting down to expiry), queue and freeze, grouped (svc1.test, svc1.prod
// under svc1) in natural order, plus the operator actions on the selected
// one and on many at once. A search narrows the rows (and, through the main
// window, the timeline's lanes); "Needs attention" shows only what needs a
// person now, "Needs me" only what waits for this login's decision.
class EnvironmentsView final : public QWidget
{
    Q_OBJECT

public:
    using Mode = EnvironmentsTree::Mode;

    EnvironmentsView(EnvironmentsModel* model, QWidget* parent = nullptr);

    // Actions need protocol version 2 (queue, revoke, freeze) in the database.
    void setSchemaVersion(int version);
    // What the login may do: freeze, unfreeze and revoke (one or many) are
    // offered only to relctl_manager, and their tooltips say why not to
    // anyone else. The default (unknown) offers them all; the server decides anyway.
    void setPermissions(const Permissions& permissions);
    // The environments where a request waits for this login now (open
    // promotions it may decide and has not, supersessions it may decide):
    // counted on the "Needs me" toggle, bold in the table, and all the table
    // shows while the toggle is on.
    void setNeedsMe(const QSet<QString>& environments);
    // The modes' toggles (checkable, one checked at a time; unchecking
    // Needs me or Needs attention shows all again). A person's click emits
    // modeChosen.
    QAction* needsMeAction() const { return m_needsMe; }
    QAction* attentionAction() const { return m_attention; }
    QAction* allAction() const { return m_all; }
    Mode mode() const { return m_tree->mode(); }
    void setMode(Mode mode);
    // The search box above the rows (Esc clears it).
    QLineEdit* searchBox() const { return m_search; }
    // "N of M environments".
    QString countText() const;
    // The rows: groups and their environments, through the search and the mode.
    QTreeView* table() const { return m_table; }
    EnvironmentsTree* tree() const { return m_tree; }
    // Selects the environment's row (expanding its group); false when not shown.
    bool selectEnvironment(const QString& name);
    // Selects a group's row; false when not shown.
    bool selectGroup(const QString& group);

    // Groups shown collapsed (the timeline collapses the same ones).
    const QSet<QString>& collapsedGroups() const { return m_collapsed; }
    void setCollapsedGroups(const QSet<QString>& collapsed);

    // Freeze, unfreeze, revoke on the selected environment: the buttons, the
    // context menu (menu key, Shift+F10) and Enter on a row all show these.
    QList<QAction*> operatorActions() const;
    // Freeze and unfreeze every environment selected (a group row stands for
    // its members shown) or, with nothing selected, every one the search shows.
    QList<QAction*> bulkActions() const { return {m_freezeMany, m_unfreezeMany}; }
    // The environments a bulk action would act on, in the tree's order.
    QStringList bulkTargets() const;
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
    // The person collapsed or expanded groups (or a filter opened its matches).
    void collapsedGroupsChanged(const QSet<QString>& collapsed);
    // The search changed what it matches (tree()->searchMatches()).
    void searchChanged();
    // The person chose a mode (not emitted by setMode()).
    void modeChosen(Mode mode);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void updateActions();
    void updateCounts();
    void fitRows();
    int rowsHeight(int rows) const;
    const relctl::EnvironmentRow* selectedRow() const;
    void ask(ConsoleAction::Kind kind, const QString& description);
    void askMany(ConsoleAction::Kind kind);
    void applyCollapsed(int firstTop, int lastTop);
    void openMatches();
    void firstLoad();
    // The columns fitted to the rows, the names column to the longest name.
    void fitColumns();

    EnvironmentsModel* m_model;
    EnvironmentsTree* m_tree;
    QTreeView* m_table;
    QLineEdit* m_search;
    QLabel* m_count;
    QAction* m_freeze;
    QAction* m_unfreeze;
    QAction* m_revoke;
    QAction* m_history;
    QAction* m_freezeMany;
    QAction* m_unfreezeMany;
    QAction* m_all;
    QAction* m_attention;
    QAction* m_needsMe;
    QLabel* m_nothingForMe;
    QWidget* m_buttons;
    QWidget* m_searchBar;
    int m_schemaVersion = 0;
    Permissions m_permissions;
    QString m_selected; // as last announced by selectedEnvironmentChanged
    QSet<QString> m_collapsed;
    bool m_applying = false; // expanding or collapsing rows ourselves
    bool m_loaded = false;   // the first rows arrived
    bool m_switchingMode = false;
};

} // namespace relctl::ui
