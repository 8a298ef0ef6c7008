#include "environmentsview.h"

#include "actiondialog.h"
#include "consequences.h"
#include "environmentsmodel.h"
#include "icons.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace relctl::ui {

namespace {

// The table's rows: every environment, or (Needs me on) those the model marks
// Roles::NeedsMe. Filtering on that role means the countdown's once-a-second
// dataChanged (display roles only) never re-filters.
class NeedsMeFilter final : public QSortFilterProxyModel
{
public:
    explicit NeedsMeFilter(QObject* parent) : QSortFilterProxyModel(parent)
    {
        setFilterRole(EnvironmentsModel::NeedsMe);
    }

    void setOn(bool on)
    {
        if (on == m_on)
            return;
        m_on = on;
        invalidateFilter();
    }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override
    {
        return !m_on || sourceModel()->index(sourceRow, 0, sourceParent).data(filterRole()).toBool();
    }

private:
    bool m_on = false;
};

} // namespace

EnvironmentsView::EnvironmentsView(EnvironmentsModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_shown(new NeedsMeFilter(this)), m_table(new QTableView(this)),
      m_freeze(new QAction(tr("&Freeze…"), this)), m_unfreeze(new QAction(tr("&Unfreeze…"), this)),
      m_revoke(new QAction(tr("&Revoke lease…"), this)),
      m_history(new QAction(tr("Manifest &history…"), this)), m_needsMe(new QAction(this)),
      m_nothingForMe(new QLabel(tr("Nothing waits for you."), this)), m_buttons(new QWidget(this))
{
    m_shown->setSourceModel(model);
    m_table->setModel(m_shown);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    // A handful of rows: sizing every column to its contents is cheap here.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setWordWrap(false);
    m_table->setAlternatingRowColors(true);
    m_table->setTabKeyNavigation(false); // Tab leaves the table; arrows move in it
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    setFocusProxy(m_table);

    m_freeze->setObjectName(QStringLiteral("freeze"));
    m_unfreeze->setObjectName(QStringLiteral("unfreeze"));
    m_revoke->setObjectName(QStringLiteral("revoke"));
    m_freeze->setIcon(consoleIcon(QStringLiteral("freeze")));
    m_unfreeze->setIcon(consoleIcon(QStringLiteral("unfreeze")));
    m_revoke->setIcon(consoleIcon(QStringLiteral("revoke")));
    m_history->setObjectName(QStringLiteral("manifestHistory"));
    m_history->setIcon(style()->standardIcon(QStyle::SP_FileDialogDetailedView));
    auto* actions = new QHBoxLayout(m_buttons);
    actions->setContentsMargins(0, 0, 0, 0);
    for (QAction* a : {m_freeze, m_unfreeze, m_revoke, m_history}) {
        // The buttons show the action's text without its mnemonic: Alt+F,
        // Alt+U and Alt+R belong to the menu bar and the toolbar; the
        // keyboard reaches these through the context menu instead.
        a->setIconText(QString(a->text()).remove(QLatin1Char('&')));
        auto* b = new QToolButton(m_buttons);
        b->setDefaultAction(a);
        b->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        b->setFocusPolicy(Qt::TabFocus);
        actions->addWidget(b);
    }
    actions->addStretch();
    // Needs me sits apart from the operator actions: it changes what the
    // table shows, not an environment.
    m_needsMe->setObjectName(QStringLiteral("needsMe"));
    m_needsMe->setCheckable(true);
    m_needsMe->setToolTip(tr("Show only the environments where a request waits for your decision: "
                             "promotions you may decide and have not, supersessions you may decide"));
    auto* needsMe = new QToolButton(m_buttons);
    needsMe->setDefaultAction(m_needsMe);
    needsMe->setToolButtonStyle(Qt::ToolButtonTextOnly);
    needsMe->setFocusPolicy(Qt::TabFocus);
    m_nothingForMe->setObjectName(QStringLiteral("nothingForMe"));
    m_nothingForMe->hide();
    actions->addWidget(m_nothingForMe);
    actions->addWidget(needsMe);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_buttons);
    layout->addWidget(m_table);
    // Rows are added and removed as environments are; the height follows.
    // (The model's rows, not the filter's: Needs me does not resize the dock.)
    connect(model, &QAbstractItemModel::rowsInserted, this, &EnvironmentsView::fitRows);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &EnvironmentsView::fitRows);
    connect(model, &QAbstractItemModel::modelReset, this, &EnvironmentsView::fitRows);
    fitRows();
    connect(m_needsMe, &QAction::toggled, this, [this](bool on) {
        static_cast<NeedsMeFilter*>(m_shown)->setOn(on);
        updateNeedsMe();
    });
    // What the filter shows changes with the model's rows and marks too.
    connect(m_shown, &QAbstractItemModel::rowsInserted, this, &EnvironmentsView::updateNeedsMe);
    connect(m_shown, &QAbstractItemModel::rowsRemoved, this, &EnvironmentsView::updateNeedsMe);
    connect(m_shown, &QAbstractItemModel::modelReset, this, &EnvironmentsView::updateNeedsMe);
    connect(m_shown, &QAbstractItemModel::layoutChanged, this, &EnvironmentsView::updateNeedsMe);

    connect(m_freeze, &QAction::triggered, this,
            [this] { ask(ConsoleAction::Kind::Freeze, tr("Freeze dispatch")); });
    connect(m_unfreeze, &QAction::triggered, this,
            [this] { ask(ConsoleAction::Kind::Unfreeze, tr("Unfreeze dispatch")); });
    connect(m_revoke, &QAction::triggered, this,
            [this] { ask(ConsoleAction::Kind::Revoke, tr("Revoke the live lease")); });
    connect(m_history, &QAction::triggered, this, [this] {
        if (const QString env = selectedEnvironment(); !env.isEmpty())
            emit historyRequested(env);
    });
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        if (const QModelIndex under = m_table->indexAt(at); under.isValid())
            m_table->selectRow(under.row());
        auto* menu = new QMenu(this);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->addActions(operatorActions());
        menu->addSeparator();
        menu->addAction(m_history);
        menu->popup(m_table->viewport()->mapToGlobal(at));
    });
    // Enter on a row opens the same menu (activated also fires on double-click).
    connect(m_table, &QAbstractItemView::activated, this, [this] { showActionsMenu(); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &EnvironmentsView::updateActions);
    connect(model, &QAbstractItemModel::dataChanged, this, &EnvironmentsView::updateActions);
    connect(model, &QAbstractItemModel::modelReset, this, &EnvironmentsView::updateActions);
    updateActions();
    updateNeedsMe();
}

int EnvironmentsView::rowsHeight(int rows) const
{
    // A horizontal scroll bar is reserved for: in a narrow window it appears,
    // and must not cover the last row.
    return m_buttons->sizeHint().height() + layout()->spacing() + 2 * m_table->frameWidth() +
           m_table->horizontalHeader()->sizeHint().height() +
           rows * m_table->verticalHeader()->defaultSectionSize() +
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
    setMaximumHeight(rowsHeight(rows));
    setMinimumHeight(rowsHeight(std::min(rows, kAlwaysShown)));
    updateGeometry();
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
    if (current.isValid())
        m_table->selectRow(current.row());
    const QRect row = m_table->visualRect(current);
    auto* menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("environmentActions"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->addActions(operatorActions());
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
    // The model marks the rows; the filter follows the marks (its role).
    m_model->setNeedsMe(environments);
    updateNeedsMe();
}

void EnvironmentsView::updateNeedsMe()
{
    const qsizetype count = m_model->needsMe().size();
    m_needsMe->setText(count > 0 ? tr("Needs me (%1)").arg(count) : tr("Needs me"));
    m_nothingForMe->setVisible(m_needsMe->isChecked() && m_shown->rowCount() == 0);
    // Rows the filter hid may have taken the selection with them.
    updateActions();
}

QString EnvironmentsView::selectedEnvironment() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return {};
    return m_shown->mapToSource(rows.first()).data(EnvironmentsModel::EnvironmentName).toString();
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
    // The table's rows are the filter's: map back to the model's.
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return nullptr;
    const QModelIndex source = m_shown->mapToSource(rows.first());
    if (!source.isValid() || std::size_t(source.row()) >= m_model->environments().size())
        return nullptr;
    return &m_model->environments()[std::size_t(source.row())];
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
    case ConsoleAction::Kind::Approve:
    case ConsoleAction::Kind::Deny:
    case ConsoleAction::Kind::ApprovePromotion:
    case ConsoleAction::Kind::DenyPromotion:
    case ConsoleAction::Kind::Rollback:
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

} // namespace relctl::ui
