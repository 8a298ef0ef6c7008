// The Supersessions view: pending supersession requests, approved or denied
// from here by a login that may operate.
#include "supersessionsview.h"

#include "actiondialog.h"
#include "consequences.h"
#include "icons.h"

#include <QAction>
#include <QHBoxLayout>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace relctl::ui {

SupersessionsView::SupersessionsView(QWidget* parent)
    : QWidget(parent), m_list(new QListWidget(this)),
      m_approve(new QPushButton(tr("&Approve supersession…"), this)),
      m_deny(new QPushButton(tr("&Deny supersession…"), this)),
      m_approveAction(new QAction(tr("&Approve supersession…"), this)),
      m_denyAction(new QAction(tr("&Deny supersession…"), this))
{
    m_approveAction->setObjectName(QStringLiteral("approveSupersession"));
    m_denyAction->setObjectName(QStringLiteral("denySupersession"));
    m_approveAction->setIcon(consoleIcon(QStringLiteral("approve")));
    m_denyAction->setIcon(consoleIcon(QStringLiteral("deny")));
    // A request names a winner and what it skips: wrapped, it reads without
    // scrolling sideways in a narrow dock.
    m_list->setWordWrap(true);
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_list->setResizeMode(QListView::Adjust);
    m_list->setSpacing(2);
    m_approve->setIcon(consoleIcon(QStringLiteral("approve")));
    m_deny->setIcon(consoleIcon(QStringLiteral("deny")));
    // The list takes the focus (View ▸ Supersessions); Tab goes on to the buttons.
    setFocusProxy(m_list);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_approve);
    buttons->addWidget(m_deny);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_list);
    layout->addLayout(buttons);
    connect(m_approve, &QPushButton::clicked, this, [this] { decide(true); });
    connect(m_deny, &QPushButton::clicked, this, [this] { decide(false); });
    connect(m_approveAction, &QAction::triggered, this, [this] { decide(true); });
    connect(m_denyAction, &QAction::triggered, this, [this] { decide(false); });
    connect(m_list, &QListWidget::currentRowChanged, this, &SupersessionsView::updateButtons);
    setSupersessions({});
}

void SupersessionsView::setSupersessions(const QList<SupersessionRow>& approvals)
{
    const bool changed = approvals.size() != m_rows.size();
    // Keep the reader's selection across live reloads: by request id.
    const int current = m_list->currentRow();
    const qint64 selected = current >= 0 && current < m_rows.size() ? m_rows[current].id : 0;
    m_rows = approvals;
    m_list->clear();
    for (const SupersessionRow& a : approvals)
        m_list->addItem(tr("Supersession #%1 on %2: %3 (%4, generation %5) would go next\nand skip %6")
                            .arg(a.id)
                            .arg(a.env, a.winnerJob, a.winnerRelease)
                            .arg(a.winnerGeneration)
                            .arg(a.skipped.join(QStringLiteral(", "))));
    for (int i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].id == selected)
            m_list->setCurrentRow(i);
    }
    // The placeholder cannot be selected, but the list stays enabled so the
    // keyboard can still reach the view.
    if (approvals.isEmpty())
        m_list->addItem(tr("No supersession request awaits a decision."));
    if (approvals.isEmpty())
        m_list->item(0)->setFlags(Qt::NoItemFlags);
    updateButtons();
    if (changed)
        emit countChanged(int(m_rows.size()));
}

void SupersessionsView::setSchemaVersion(int version)
{
    m_schemaVersion = version;
    updateButtons();
}

void SupersessionsView::setPermissions(const Permissions& permissions)
{
    m_permissions = permissions;
    updateButtons();
}

void SupersessionsView::updateButtons()
{
    const bool supported = m_schemaVersion >= 2;
    const int row = m_list->currentRow();
    const bool selected = row >= 0 && row < m_rows.size();
    const bool allowed = m_permissions.canOperate();
    const QString why = !supported ? tr("The database's relctl schema (version %1) predates supersession "
                                        "approvals: run relctl migrate.")
                                         .arg(m_schemaVersion)
                        : !allowed  ? m_permissions.whyNotOperate()
                        : !selected ? tr("Select a supersession request first.")
                                    : QString();
    const bool enabled = supported && allowed && selected;
    for (QPushButton* b : {m_approve, m_deny}) {
        b->setEnabled(enabled);
        b->setToolTip(why);
    }
    for (QAction* a : {m_approveAction, m_denyAction}) {
        a->setEnabled(enabled);
        a->setToolTip(why.isEmpty() ? QString(a->text()).remove(QLatin1Char('&')) : why);
    }
}

int SupersessionsView::count() const
{
    return static_cast<int>(m_rows.size());
}

void SupersessionsView::decide(bool approve)
{
    const int row = m_list->currentRow();
    if (row < 0 || row >= m_rows.size())
        return;
    const SupersessionRow& a = m_rows[row];
    ConsoleAction action;
    action.kind = approve ? ConsoleAction::Kind::Approve : ConsoleAction::Kind::Deny;
    action.env = a.env;
    action.request = a.id;
    ActionDialog dialog(
        action, approve ? tr("Approve supersession #%1").arg(a.id) : tr("Deny supersession #%1").arg(a.id),
        this, supersessionConsequences(a, approve));
    if (dialog.exec() == QDialog::Accepted)
        emit actionRequested(dialog.action());
}

} // namespace relctl::ui
