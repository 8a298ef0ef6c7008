#include "approvalsview.h"

#include "actiondialog.h"
#include "icons.h"

#include <QHBoxLayout>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace relctl::ui {

ApprovalsView::ApprovalsView(QWidget* parent)
    : QWidget(parent), m_list(new QListWidget(this)), m_approve(new QPushButton(tr("&Approve…"), this)),
      m_deny(new QPushButton(tr("&Deny…"), this))
{
    m_approve->setIcon(consoleIcon(QStringLiteral("approve")));
    m_deny->setIcon(consoleIcon(QStringLiteral("deny")));
    // The list takes the focus (View ▸ Approvals); Tab goes on to the buttons.
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
    connect(m_list, &QListWidget::currentRowChanged, this, &ApprovalsView::updateButtons);
    setApprovals({});
}

void ApprovalsView::setApprovals(const QList<ApprovalRow>& approvals)
{
    m_rows = approvals;
    m_list->clear();
    for (const ApprovalRow& a : approvals)
        m_list->addItem(tr("#%1 %2: %3 (%4, generation %5) would skip %6")
                            .arg(a.id)
                            .arg(a.env, a.winnerJob, a.winnerRelease)
                            .arg(a.winnerGeneration)
                            .arg(a.skipped.join(QStringLiteral(", "))));
    // The placeholder cannot be selected, but the list stays enabled so the
    // keyboard can still reach the view.
    if (approvals.isEmpty())
        m_list->addItem(tr("No supersession request awaits a decision."));
    if (approvals.isEmpty())
        m_list->item(0)->setFlags(Qt::NoItemFlags);
    updateButtons();
}

void ApprovalsView::setSchemaVersion(int version)
{
    m_schemaVersion = version;
    updateButtons();
}

void ApprovalsView::updateButtons()
{
    const bool supported = m_schemaVersion >= 2;
    const int row = m_list->currentRow();
    const bool selected = row >= 0 && row < m_rows.size();
    const QString why = !supported ? tr("The database's relctl schema (version %1) predates supersession "
                                        "approvals: run relctl migrate.")
                                         .arg(m_schemaVersion)
                        : !selected ? tr("Select a request first.")
                                    : QString();
    for (QPushButton* b : {m_approve, m_deny}) {
        b->setEnabled(supported && selected);
        b->setToolTip(why);
    }
}

int ApprovalsView::count() const
{
    return static_cast<int>(m_rows.size());
}

void ApprovalsView::decide(bool approve)
{
    const int row = m_list->currentRow();
    if (row < 0 || row >= m_rows.size())
        return;
    const ApprovalRow& a = m_rows[row];
    ConsoleAction action;
    action.kind = approve ? ConsoleAction::Kind::Approve : ConsoleAction::Kind::Deny;
    action.env = a.env;
    action.request = a.id;
    ActionDialog dialog(
        action, approve ? tr("Approve supersession #%1").arg(a.id) : tr("Deny supersession #%1").arg(a.id),
        this);
    if (dialog.exec() == QDialog::Accepted) {
        setOperatorName(dialog.action().by);
        emit actionRequested(dialog.action());
    }
}

} // namespace relctl::ui
