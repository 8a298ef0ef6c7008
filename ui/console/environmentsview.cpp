#include "environmentsview.h"

#include "actiondialog.h"
#include "bulkfreezedialog.h"
#include "consequences.h"
#include "environmentsmodel.h"
#include "icons.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QScrollBar>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>

namespace relctl::ui {

namespace {

// Above this many environments groups open collapsed (one row each, as on
// the timeline), and a filter opens its matches only while it leaves at
// most this many groups: more rows than a person reads.
constexpr int kGroupsOpenUpTo = 50;

// The rows of a collapsed group are not on screen: a change to them has
// nothing to repaint, and QTreeView would look each one up among the rows it
// shows (a linear search) only to find it missing. "Needs me" set anew at
// 10,000 environments is one change per group: skipped, it costs nothing;
// looked up, it cost the first load 150 ms. Expanding a group reads its
// rows afresh.
class EnvironmentsTable final : public QTreeView
{
public:
    using QTreeView::QTreeView;

    void dataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight,
                     const QList<int>& roles = QList<int>()) override
    {
        if (const QModelIndex parent = topLeft.parent(); parent.isValid() && !isExpanded(parent))
            return;
        QTreeView::dataChanged(topLeft, bottomRight, roles);
    }
};

QToolButton* modeButton(QWidget* parent, QAction* action, Qt::ToolButtonStyle style)
{
    auto* b = new QToolButton(parent);
    b->setDefaultAction(action);
    b->setToolButtonStyle(style);
    b->setFocusPolicy(Qt::TabFocus);
    return b;
}

} // namespace

EnvironmentsView::EnvironmentsView(EnvironmentsModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_tree(new EnvironmentsTree(model, this)),
      m_table(new EnvironmentsTable(this)), m_search(new QLineEdit(this)), m_count(new QLabel(this)),
      m_freeze(new QAction(tr("&Freeze…"), this)), m_unfreeze(new QAction(tr("&Unfreeze…"), this)),
      m_revoke(new QAction(tr("&Revoke lease…"), this)),
      m_history(new QAction(tr("Manifest &history…"), this)),
      m_freezeMany(new QAction(tr("Freeze many…"), this)),
      m_unfreezeMany(new QAction(tr("Unfreeze many…"), this)), m_all(new QAction(tr("All"), this)),
      m_attention(new QAction(this)), m_needsMe(new QAction(this)),
      m_nothingForMe(new QLabel(tr("Nothing waits for you."), this)), m_buttons(new QWidget(this)),
      m_searchBar(new QWidget(this))
{
    m_table->setModel(m_tree);
    // Every row one line high: the view then lays out 10,000 rows without
    // asking each for its height.
    m_table->setUniformRowHeights(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setAllColumnsShowFocus(true);
    m_table->setWordWrap(false);
    m_table->setAlternatingRowColors(true);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->header()->setStretchLastSection(true);
    // Sized to the contents once the rows arrive, then left to the person:
    // re-measuring every column on every live update would cost with every row.
    m_table->header()->setSectionResizeMode(QHeaderView::Interactive);
    // The fit reads the rows shown and a hundred more, not a thousand: each
    // of 13 columns measured on 1,000 rows cost a first load 18 ms (the
    // names column is fitted to the longest name apart, see fitColumns).
    m_table->header()->setResizeContentsPrecision(100);
    m_table->setExpandsOnDoubleClick(false); // a double-click opens the actions, as Enter does
    setFocusProxy(m_table);

    m_freeze->setObjectName(QStringLiteral("freeze"));
    m_unfreeze->setObjectName(QStringLiteral("unfreeze"));
    m_revoke->setObjectName(QStringLiteral("revoke"));
    m_freeze->setIcon(consoleIcon(QStringLiteral("freeze")));
    m_unfreeze->setIcon(consoleIcon(QStringLiteral("unfreeze")));
    m_revoke->setIcon(consoleIcon(QStringLiteral("revoke")));
    m_history->setObjectName(QStringLiteral("manifestHistory"));
    m_history->setIcon(style()->standardIcon(QStyle::SP_FileDialogDetailedView));
    m_freezeMany->setObjectName(QStringLiteral("freezeMany"));
    m_unfreezeMany->setObjectName(QStringLiteral("unfreezeMany"));
    m_freezeMany->setIcon(consoleIcon(QStringLiteral("freeze")));
    m_unfreezeMany->setIcon(consoleIcon(QStringLiteral("unfreeze")));
    auto* actions = new QHBoxLayout(m_buttons);
    actions->setContentsMargins(0, 0, 0, 0);
    for (QAction* a : {m_freeze, m_unfreeze, m_revoke, m_history}) {
        // The buttons show the action's text without its mnemonic: Alt+F,
        // Alt+U and Alt+R belong to the menu bar and the toolbar; the
        // keyboard reaches these through the context menu instead.
        a->setIconText(QString(a->text()).remove(QLatin1Char('&')));
        actions->addWidget(modeButton(m_buttons, a, Qt::ToolButtonTextBesideIcon));
    }
    actions->addSpacing(12);
    for (QAction* a : {m_freezeMany, m_unfreezeMany})
        actions->addWidget(modeButton(m_buttons, a, Qt::ToolButtonTextBesideIcon));
    actions->addStretch();

    // What the rows show: a search, and the modes, apart from the operator
    // actions: they change what the table shows, not an environment.
    m_search->setObjectName(QStringLiteral("environmentSearch"));
    m_search->setClearButtonEnabled(true);
    m_search->setPlaceholderText(tr("Search environments and groups (Ctrl+F; * and ? match any)"));
    m_search->setAccessibleName(tr("Search environments"));
    m_search->setToolTip(tr("Shows the environments whose name or group contains the text; with * or ? the "
                            "whole name or group must match (svc1*.prod). The timeline shows the same. "
                            "Esc clears."));
    m_search->setMinimumWidth(220);
    m_search->setMaximumWidth(420);
    m_search->installEventFilter(this); // Esc clears it
    m_count->setObjectName(QStringLiteral("environmentCount"));
    m_all->setObjectName(QStringLiteral("showAll"));
    m_attention->setObjectName(QStringLiteral("needsAttention"));
    m_needsMe->setObjectName(QStringLiteral("needsMe"));
    m_all->setToolTip(tr("Show every environment"));
    m_attention->setToolTip(tr("Show only the environments that need a person now: frozen, a refusal in the "
                               "last hour, a decision pending, candidates waiting, a lease about to expire, "
                               "a promotion blocked"));
    m_needsMe->setToolTip(tr("Show only the environments where a request waits for your decision: "
                             "promotions you may decide and have not, supersessions you may decide"));
    for (QAction* a : {m_all, m_attention, m_needsMe})
        a->setCheckable(true);
    m_all->setChecked(true);
    auto* bar = new QHBoxLayout(m_searchBar);
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(m_search, 1);
    bar->addWidget(m_count);
    bar->addStretch();
    m_nothingForMe->setObjectName(QStringLiteral("nothingForMe"));
    m_nothingForMe->hide();
    bar->addWidget(m_nothingForMe);
    for (QAction* a : {m_all, m_attention, m_needsMe})
        bar->addWidget(modeButton(m_searchBar, a, Qt::ToolButtonTextOnly));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_searchBar);
    layout->addWidget(m_buttons);
    layout->addWidget(m_table);

    // Rows are added and removed as environments are; the height follows
    // (the model's rows, not the filter's: a filter does not resize the dock).
    connect(model, &QAbstractItemModel::rowsInserted, this, &EnvironmentsView::fitRows);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &EnvironmentsView::fitRows);
    connect(model, &QAbstractItemModel::modelReset, this, &EnvironmentsView::fitRows);
    fitRows();

    connect(m_search, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_tree->setSearch(text);
        openMatches();
        emit searchChanged();
    });
    // One mode at a time: checking one unchecks the others; unchecking the
    // one checked (by a click, or by code) goes back to All.
    for (QAction* a : {m_all, m_attention, m_needsMe}) {
        connect(a, &QAction::toggled, this, [this, a](bool on) {
            if (m_switchingMode)
                return;
            if (!on && !m_all->isChecked() && !m_attention->isChecked() && !m_needsMe->isChecked()) {
                m_all->setChecked(true);
                return;
            }
            if (on)
                setMode(a == m_needsMe ? Mode::NeedsMe : a == m_attention ? Mode::Attention : Mode::All);
        });
        connect(a, &QAction::triggered, this, [this] { emit modeChosen(mode()); });
    }

    // The tree's rows: a rebuild (a search, a mode) forgets which groups
    // were open, a new group row arrives closed: both are set from m_collapsed.
    // The first rows decide which groups open before any is opened: 2,000
    // groups opened and then closed one by one cost a first load 100 ms.
    connect(m_tree, &QAbstractItemModel::modelReset, this, [this] {
        if (!m_loaded && m_model->rowCount() > 0)
            firstLoad();
        applyCollapsed(0, m_tree->rowCount() - 1);
    });
    connect(m_tree, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex& under, int first, int last) {
                if (under.isValid())
                    return;
                if (!m_loaded && m_model->rowCount() > 0)
                    firstLoad();
                applyCollapsed(first, last);
            });
    connect(m_tree, &EnvironmentsTree::countsChanged, this, &EnvironmentsView::updateCounts);
    const auto toggled = [this](const QModelIndex& index, bool collapsed) {
        if (m_applying)
            return;
        const QString group = index.data(EnvironmentsTree::GroupName).toString();
        if (collapsed == m_collapsed.contains(group))
            return;
        if (collapsed)
            m_collapsed.insert(group);
        else
            m_collapsed.remove(group);
        emit collapsedGroupsChanged(m_collapsed);
    };
    connect(m_table, &QTreeView::expanded, this, [toggled](const QModelIndex& i) { toggled(i, false); });
    connect(m_table, &QTreeView::collapsed, this, [toggled](const QModelIndex& i) { toggled(i, true); });

    connect(m_freeze, &QAction::triggered, this,
            [this] { ask(ConsoleAction::Kind::Freeze, tr("Freeze dispatch")); });
    connect(m_unfreeze, &QAction::triggered, this,
            [this] { ask(ConsoleAction::Kind::Unfreeze, tr("Unfreeze dispatch")); });
    connect(m_revoke, &QAction::triggered, this,
            [this] { ask(ConsoleAction::Kind::Revoke, tr("Revoke the live lease")); });
    connect(m_freezeMany, &QAction::triggered, this, [this] { askMany(ConsoleAction::Kind::FreezeMany); });
    connect(m_unfreezeMany, &QAction::triggered, this,
            [this] { askMany(ConsoleAction::Kind::UnfreezeMany); });
    connect(m_history, &QAction::triggered, this, [this] {
        if (const QString env = selectedEnvironment(); !env.isEmpty())
            emit historyRequested(env);
    });
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        if (const QModelIndex under = m_table->indexAt(at);
            under.isValid() && !m_table->selectionModel()->isRowSelected(under.row(), under.parent()))
            m_table->selectionModel()->select(under, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
        auto* menu = new QMenu(this);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->addActions(operatorActions());
        menu->addSeparator();
        menu->addActions(bulkActions());
        menu->addSeparator();
        menu->addAction(m_history);
        menu->popup(m_table->viewport()->mapToGlobal(at));
    });
    // Enter on a row opens the same menu (activated also fires on double-click).
    connect(m_table, &QAbstractItemView::activated, this, [this] { showActionsMenu(); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &EnvironmentsView::updateActions);
    connect(m_tree, &QAbstractItemModel::dataChanged, this, &EnvironmentsView::updateActions);
    connect(m_tree, &QAbstractItemModel::rowsRemoved, this, &EnvironmentsView::updateActions);
    connect(m_tree, &QAbstractItemModel::modelReset, this, &EnvironmentsView::updateActions);
    applyCollapsed(0, m_tree->rowCount() - 1);
    updateActions();
    updateCounts();
}

bool EnvironmentsView::eventFilter(QObject* watched, QEvent* event)
{
    // Esc in the search box clears it (and shows every row again); with
    // nothing to clear it goes on, to close a floating dock say.
    if (watched == m_search && event->type() == QEvent::KeyPress &&
        static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape && !m_search->text().isEmpty()) {
        m_search->clear();
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

void EnvironmentsView::firstLoad()
{
    // Groups open closed above a few dozen environments: one row per group,
    // its members summed up, as the timeline's lanes.
    // Called before the rows are opened or closed (applyCollapsed follows).
    m_loaded = true;
    if (m_tree->totalCount() > kGroupsOpenUpTo) {
        const QStringList groups = m_tree->groupRows();
        m_collapsed = QSet<QString>(groups.begin(), groups.end());
        emit collapsedGroupsChanged(m_collapsed);
    }
    // The columns fit what the first rows say; then they are the person's.
    // Once the tree has laid its rows out (a fit before that measures none).
    QTimer::singleShot(0, this, &EnvironmentsView::fitColumns);
}

void EnvironmentsView::fitColumns()
{
    m_table->header()->resizeSections(QHeaderView::ResizeToContents);
    // A tree's fit counts only the rows laid out, and collapsed groups hide
    // their members: the names column fits the longest name there is, with
    // the indentation of a member and a group's count after it.
    std::size_t longest = 0;
    QString widest;
    for (const relctl::EnvironmentRow& row : m_model->environments()) {
        if (row.name.size() > longest) {
            longest = row.name.size();
            widest = QString::fromStdString(row.name);
        }
    }
    const int names = m_table->fontMetrics().horizontalAdvance(widest + QStringLiteral(" (99 of 99)")) +
                      2 * m_table->indentation();
    if (m_table->header()->sectionSize(0) < names)
        m_table->header()->resizeSection(0, names);
}

void EnvironmentsView::applyCollapsed(int firstTop, int lastTop)
{
    m_applying = true;
    for (int row = firstTop; row <= lastTop; ++row) {
        const QModelIndex index = m_tree->index(row, 0);
        if (!m_tree->isGroupRow(index))
            continue;
        // Only a row whose state differs: QTreeView looks each expanded or
        // collapsed row up among those it shows, linearly, even when there is
        // nothing to do; new rows and rows after a reset arrive collapsed.
        const bool open = !m_collapsed.contains(index.data(EnvironmentsTree::GroupName).toString());
        if (open != m_table->isExpanded(index))
            m_table->setExpanded(index, open);
    }
    m_applying = false;
}

void EnvironmentsView::setCollapsedGroups(const QSet<QString>& collapsed)
{
    if (collapsed == m_collapsed)
        return;
    m_applying = true;
    for (const QString& group : (collapsed - m_collapsed) + (m_collapsed - collapsed))
        if (const QModelIndex index = m_tree->indexOfGroup(group);
            index.isValid() && m_table->isExpanded(index) == collapsed.contains(group))
            m_table->setExpanded(index, !collapsed.contains(group));
    m_collapsed = collapsed;
    m_applying = false;
}

void EnvironmentsView::openMatches()
{
    // A search or a mode that leaves a few groups opens them: what it found
    // is what the person wants to read. More, and they stay as they were.
    if (m_tree->search().isEmpty() && m_tree->mode() == Mode::All)
        return;
    const QStringList shown = m_tree->groupRows();
    if (shown.size() > kGroupsOpenUpTo)
        return;
    QSet<QString> collapsed = m_collapsed;
    for (const QString& group : shown)
        collapsed.remove(group);
    if (collapsed == m_collapsed)
        return;
    setCollapsedGroups(collapsed);
    emit collapsedGroupsChanged(m_collapsed);
}

void EnvironmentsView::setMode(Mode mode)
{
    QAction* which = mode == Mode::NeedsMe ? m_needsMe : mode == Mode::Attention ? m_attention : m_all;
    m_switchingMode = true;
    for (QAction* a : {m_all, m_attention, m_needsMe})
        a->setChecked(a == which);
    m_switchingMode = false;
    if (m_tree->mode() == mode)
        return;
    m_tree->setMode(mode);
    openMatches();
    updateCounts();
}

int EnvironmentsView::rowsHeight(int rows) const
{
    // A horizontal scroll bar is reserved for: in a narrow window it appears,
    // and must not cover the last row.
    const int row = std::max(m_table->fontMetrics().height() + 6, m_table->sizeHintForRow(0));
    return m_searchBar->sizeHint().height() + m_buttons->sizeHint().height() + 2 * layout()->spacing() +
           2 * m_table->frameWidth() + m_table->header()->sizeHint().height() + rows * row +
           m_table->horizontalScrollBar()->sizeHint().height();
}

QSize EnvironmentsView::sizeHint() const
{
    return {QWidget::sizeHint().width(), rowsHeight(std::max(1, m_model->rowCount()))};
}

void EnvironmentsView::fitRows()
{
    // Never taller than its rows; and the first few always show, however
    // small the window, so the release manager never scrolls to see test,
    // staging and prod. Beyond kAlwaysShown the table scrolls.
    constexpr int kAlwaysShown = 6;
    const int rows = std::max(1, m_model->rowCount());
    setMaximumHeight(rowsHeight(rows + int(m_tree->groupRows().size())));
    setMinimumHeight(rowsHeight(std::min(rows, kAlwaysShown)));
    updateGeometry();
    if (!m_loaded && m_model->rowCount() > 0)
        firstLoad();
}

QList<QAction*> EnvironmentsView::operatorActions() const
{
    return {m_freeze, m_unfreeze, m_revoke};
}

QMenu* EnvironmentsView::showActionsMenu()
{
    // The keyboard's current row is the one the actions are for: focus alone
    // makes a row current without selecting it.
    const QModelIndex current = m_table->currentIndex();
    if (current.isValid() && !m_table->selectionModel()->isRowSelected(current.row(), current.parent()))
        m_table->selectionModel()->select(current,
                                          QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    const QRect row = m_table->visualRect(current);
    auto* menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("environmentActions"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->addActions(operatorActions());
    menu->addSeparator();
    menu->addActions(bulkActions());
    menu->addSeparator();
    menu->addAction(m_history);
    menu->popup(m_table->viewport()->mapToGlobal(current.isValid() ? row.bottomLeft() : QPoint()));
    return menu;
}

void EnvironmentsView::setSchemaVersion(int version)
{
    m_schemaVersion = version;
    updateActions();
}

void EnvironmentsView::setPermissions(const Permissions& permissions)
{
    m_permissions = permissions;
    updateActions();
}

void EnvironmentsView::setNeedsMe(const QSet<QString>& environments)
{
    // The model marks the rows; the tree follows the marks.
    m_model->setNeedsMe(environments);
    updateCounts();
}

QString EnvironmentsView::countText() const
{
    const int total = m_tree->totalCount();
    const int shown = m_tree->shownCount();
    if (shown != total)
        return tr("%1 of %2 environments").arg(shown).arg(total);
    return total == 1 ? tr("1 environment") : tr("%1 environments").arg(total);
}

void EnvironmentsView::updateCounts()
{
    const qsizetype mine = m_model->needsMe().size();
    m_needsMe->setText(mine > 0 ? tr("Needs me (%1)").arg(mine) : tr("Needs me"));
    const int attention = m_tree->attentionCount();
    m_attention->setText(attention > 0 ? tr("Needs attention (%1)").arg(attention) : tr("Needs attention"));
    m_count->setText(countText());
    const bool empty = m_tree->shownCount() == 0 && m_tree->totalCount() > 0;
    m_nothingForMe->setText(mode() == Mode::Attention ? tr("Nothing needs attention.")
                            : mode() == Mode::NeedsMe ? tr("Nothing waits for you.")
                                                      : tr("No environment matches."));
    m_nothingForMe->setVisible(empty && (mode() != Mode::All || !m_tree->search().isEmpty()));
    // Rows the filter hid may have taken the selection with them.
    updateActions();
}

bool EnvironmentsView::selectEnvironment(const QString& name)
{
    const QModelIndex index = m_tree->indexOfEnvironment(name);
    if (!index.isValid())
        return false;
    if (index.parent().isValid())
        m_table->expand(index.parent());
    m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                          QItemSelectionModel::Rows);
    m_table->scrollTo(index);
    return true;
}

bool EnvironmentsView::selectGroup(const QString& group)
{
    const QModelIndex index = m_tree->indexOfGroup(group);
    if (!index.isValid())
        return false;
    m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                          QItemSelectionModel::Rows);
    return true;
}

QString EnvironmentsView::selectedEnvironment() const
{
    // One environment's row selected, and nothing else: the single actions' target.
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.size() != 1)
        return {};
    return m_tree->environmentAt(rows.first());
}

QStringList EnvironmentsView::bulkTargets() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return m_tree->search().isEmpty() ? QStringList() : m_tree->shownEnvironments();
    QStringList names;
    QSet<QString> seen;
    for (const QModelIndex& row : rows)
        for (const QString& env : m_tree->environmentsAt(row))
            if (!seen.contains(env)) {
                seen.insert(env);
                names << env;
            }
    // In natural order, whatever order the rows were selected in.
    std::sort(names.begin(), names.end(),
              [this](const QString& a, const QString& b) { return m_model->rowOf(a) < m_model->rowOf(b); });
    return names;
}

void EnvironmentsView::updateActions()
{
    const relctl::EnvironmentRow* row = selectedRow();
    const bool supported = m_schemaVersion >= 2;
    const bool permitted = m_permissions.canOperate();
    const bool selected = row != nullptr;
    const bool frozen = selected && row->frozen;
    const bool leased = selected && row->holderToken.has_value();
    m_freeze->setEnabled(supported && permitted && selected && !frozen);
    m_unfreeze->setEnabled(supported && permitted && selected && frozen);
    m_revoke->setEnabled(supported && permitted && selected && leased);
    const QString why = !supported
                            ? tr("The database's relctl schema (version %1) predates operator actions: "
                                 "run relctl migrate.")
                                  .arg(m_schemaVersion)
                        : !permitted ? m_permissions.whyNotOperate()
                        : !selected  ? tr("Select an environment first.")
                                     : QString();
    for (QAction* a : {m_freeze, m_unfreeze, m_revoke})
        a->setToolTip(why.isEmpty() ? a->iconText() : why);
    // Many at once: a selection (a group row is its members), else what the
    // search shows. Which of them would change is counted when asked, not on
    // every live update.
    // One environment selected is the single actions' business, not "many".
    const qsizetype selectedRows = m_table->selectionModel()->selectedRows().size();
    const bool many = selectedRows > 1 || (selectedRows == 1 && !selected) ||
                      (selectedRows == 0 && !m_tree->search().isEmpty());
    const QString whyNotMany = !supported   ? why
                               : !permitted ? m_permissions.whyNotOperate()
                               : !many      ? tr("Select a group or several environments, or search, first.")
                                            : QString();
    m_freezeMany->setEnabled(supported && permitted && many);
    m_unfreezeMany->setEnabled(supported && permitted && many);
    m_freezeMany->setToolTip(whyNotMany.isEmpty()
                                 ? tr("Freeze every environment selected (a group: its members), "
                                      "or with nothing selected every one the search shows")
                                 : whyNotMany);
    m_unfreezeMany->setToolTip(whyNotMany.isEmpty()
                                   ? tr("Unfreeze every environment selected (a group: its members), "
                                        "or with nothing selected every one the search shows")
                                   : whyNotMany);
    // The history is there to read (and to roll back from) on any schema
    // with rollback; reading it needs no lease and no thaw.
    const bool history = m_schemaVersion >= kPromotionsSchemaVersion;
    m_history->setEnabled(history && selected);
    m_history->setToolTip(!history ? tr("The database's relctl schema (version %1) predates manifest "
                                        "history and rollback: run relctl migrate.")
                                         .arg(m_schemaVersion)
                          : !selected ? tr("Select an environment first.")
                                      : tr("Every manifest the environment accepted, and rollback"));
    // Every change of what is selected passes here (a click, a row the
    // filter hid, a row removed), and is announced once.
    if (const QString env = selectedEnvironment(); env != m_selected) {
        m_selected = env;
        emit selectedEnvironmentChanged(env);
    }
}

const relctl::EnvironmentRow* EnvironmentsView::selectedRow() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.size() != 1)
        return nullptr;
    const int source = m_tree->sourceRow(rows.first());
    if (source < 0 || std::size_t(source) >= m_model->environments().size())
        return nullptr;
    return &m_model->environments()[std::size_t(source)];
}

QString EnvironmentsView::consequences(ConsoleAction::Kind kind) const
{
    const relctl::EnvironmentRow* row = selectedRow();
    if (!row)
        return {};
    switch (kind) {
    case ConsoleAction::Kind::Revoke:
        return revokeConsequences(*row, m_model->now());
    case ConsoleAction::Kind::Freeze:
        return freezeConsequences(*row);
    case ConsoleAction::Kind::Unfreeze:
        return unfreezeConsequences(*row, m_model->now());
    default:
        break;
    }
    return {};
}

void EnvironmentsView::ask(ConsoleAction::Kind kind, const QString& description)
{
    ConsoleAction action;
    action.kind = kind;
    action.env = selectedEnvironment();
    if (action.env.isEmpty())
        return;
    ActionDialog dialog(action, description, this, consequences(kind));
    // The operator's name is saved once the server has accepted the action,
    // not here on confirming it.
    if (dialog.exec() == QDialog::Accepted)
        emit actionRequested(dialog.action());
}

void EnvironmentsView::askMany(ConsoleAction::Kind kind)
{
    const QStringList targets = bulkTargets();
    if (targets.isEmpty())
        return;
    // Which would change and which are already as asked, as last read; the
    // server decides again in one transaction.
    const bool freezing = kind == ConsoleAction::Kind::FreezeMany;
    QStringList change, unchanged;
    for (const QString& env : targets) {
        const int row = m_model->rowOf(env);
        const bool frozen = row >= 0 && m_model->environments()[std::size_t(row)].frozen;
        (frozen == freezing ? unchanged : change) << env;
    }
    BulkFreezeDialog dialog(kind, change, unchanged, this);
    if (dialog.exec() == QDialog::Accepted)
        emit actionRequested(dialog.action());
}

} // namespace relctl::ui
