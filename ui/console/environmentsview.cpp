#include "environmentsview.h"

#include "actiondialog.h"
#include "environmentsmodel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace relctl::ui {

EnvironmentsView::EnvironmentsView(EnvironmentsModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_table(new QTableView(this)), m_freeze(new QToolButton(this)),
      m_unfreeze(new QToolButton(this)), m_revoke(new QToolButton(this))
{
    m_table->setModel(model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    // A handful of rows: sizing every column to its contents is cheap here.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setWordWrap(false);
    m_table->setAlternatingRowColors(true);

    m_freeze->setText(tr("&Freeze…"));
    m_unfreeze->setText(tr("&Unfreeze…"));
    m_revoke->setText(tr("&Revoke lease…"));
    auto* actions = new QHBoxLayout;
    for (QToolButton* b : {m_freeze, m_unfreeze, m_revoke}) {
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
        actions->addWidget(b);
    }
    actions->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(actions);
    layout->addWidget(m_table);

    connect(m_freeze, &QToolButton::clicked, this,
            [this] { ask(ConsoleAction::Kind::Freeze, tr("Freeze dispatch")); });
    connect(m_unfreeze, &QToolButton::clicked, this,
            [this] { ask(ConsoleAction::Kind::Unfreeze, tr("Unfreeze dispatch")); });
    connect(m_revoke, &QToolButton::clicked, this,
            [this] { ask(ConsoleAction::Kind::Revoke, tr("Revoke the live lease")); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &EnvironmentsView::updateActions);
    connect(model, &QAbstractItemModel::dataChanged, this, &EnvironmentsView::updateActions);
    connect(model, &QAbstractItemModel::modelReset, this, &EnvironmentsView::updateActions);
    updateActions();
}

void EnvironmentsView::setSchemaVersion(int version)
{
    m_schemaVersion = version;
    updateActions();
}

QString EnvironmentsView::selectedEnvironment() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? QString() : rows.first().data(EnvironmentsModel::EnvironmentName).toString();
}

void EnvironmentsView::updateActions()
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    const bool supported = m_schemaVersion >= 2;
    const bool selected = !rows.isEmpty();
    const bool frozen = selected && rows.first().data(EnvironmentsModel::Frozen).toBool();
    const bool leased = selected && rows.first().data(EnvironmentsModel::HolderToken).isValid();
    m_freeze->setEnabled(supported && selected && !frozen);
    m_unfreeze->setEnabled(supported && selected && frozen);
    m_revoke->setEnabled(supported && selected && leased);
    const QString why = !supported
                            ? tr("The database's relctl schema (version %1) predates operator actions: "
                                 "run relctl migrate.")
                                  .arg(m_schemaVersion)
                        : !selected ? tr("Select an environment first.")
                                    : QString();
    for (QToolButton* b : {m_freeze, m_unfreeze, m_revoke})
        b->setToolTip(why.isEmpty() ? b->text().remove(QLatin1Char('&')) : why);
}

void EnvironmentsView::ask(ConsoleAction::Kind kind, const QString& description)
{
    ConsoleAction action;
    action.kind = kind;
    action.env = selectedEnvironment();
    if (action.env.isEmpty())
        return;
    ActionDialog dialog(action, description, this);
    if (dialog.exec() == QDialog::Accepted) {
        setOperatorName(dialog.action().by);
        emit actionRequested(dialog.action());
    }
}

} // namespace relctl::ui
