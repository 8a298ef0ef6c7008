#include "bulkfreezedialog.h"

#include "actiondialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace relctl::ui {

BulkFreezeDialog::BulkFreezeDialog(ConsoleAction::Kind kind, const QStringList& change,
                                   const QStringList& unchanged, QWidget* parent)
    : QDialog(parent), m_change(new QListWidget(this)), m_unchanged(new QListWidget(this)),
      m_operator(new QLineEdit(operatorName(), this)), m_reason(new QPlainTextEdit(this))
{
    m_action.kind = kind;
    m_action.envs = change;
    const bool freezing = kind == ConsoleAction::Kind::FreezeMany;
    setWindowTitle(freezing ? tr("Confirm: freeze %n environment(s)", nullptr, int(change.size()))
                            : tr("Confirm: unfreeze %n environment(s)", nullptr, int(change.size())));
    auto* layout = new QVBoxLayout(this);
    auto* what = new QLabel(
        freezing ? tr("<b>Freeze dispatch of %n environment(s)</b>: their publishes are refused until "
                      "unfrozen. One event per environment records the reason.",
                      nullptr, int(change.size()))
                 : tr("<b>Unfreeze dispatch of %n environment(s)</b>: their publishes are accepted again. "
                      "One event per environment records it.",
                      nullptr, int(change.size())),
        this);
    what->setWordWrap(true);
    layout->addWidget(what);
    m_change->setObjectName(QStringLiteral("bulkChange"));
    m_change->addItems(change);
    m_change->setSelectionMode(QAbstractItemView::NoSelection);
    layout->addWidget(m_change, 1);
    m_unchanged->setObjectName(QStringLiteral("bulkUnchanged"));
    m_unchanged->addItems(unchanged);
    m_unchanged->setSelectionMode(QAbstractItemView::NoSelection);
    m_unchanged->setMaximumHeight(6 * m_unchanged->fontMetrics().height() + 8);
    if (!unchanged.isEmpty()) {
        auto* already =
            new QLabel(freezing ? tr("Already frozen, left as they are (%1):").arg(unchanged.size())
                                : tr("Not frozen, left as they are (%1):").arg(unchanged.size()),
                       this);
        layout->addWidget(already);
        layout->addWidget(m_unchanged);
    } else {
        m_unchanged->hide();
    }
    if (change.isEmpty()) {
        auto* nothing = new QLabel(freezing ? tr("Every one of them is frozen already: nothing to do.")
                                            : tr("None of them is frozen: nothing to do."),
                                   this);
        nothing->setObjectName(QStringLiteral("bulkNothing"));
        layout->addWidget(nothing);
    }
    auto* form = new QFormLayout;
    form->addRow(tr("&Operator:"), m_operator);
    auto* login = new QLabel(connectedLogin().isEmpty()
                                 ? tr("the console's database login")
                                 : tr("<b>%1</b> (the database login)").arg(connectedLogin().toHtmlEscaped()),
                             this);
    login->setObjectName(QStringLiteral("recordedLogin"));
    form->addRow(tr("Recorded as:"), login);
    m_reason->setPlaceholderText(freezing ? tr("Required: why (recorded for every environment)")
                                          : tr("Optional (recorded for every environment)"));
    m_reason->setTabChangesFocus(true);
    m_reason->setMaximumHeight(4 * m_reason->fontMetrics().height() + 12);
    form->addRow(tr("&Reason:"), m_reason);
    layout->addLayout(form);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_confirm = buttons->button(QDialogButtonBox::Ok);
    m_confirm->setText(freezing ? tr("Freeze %n", nullptr, int(change.size()))
                                : tr("Unfreeze %n", nullptr, int(change.size())));
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_operator, &QLineEdit::textChanged, this, &BulkFreezeDialog::validate);
    connect(m_reason, &QPlainTextEdit::textChanged, this, &BulkFreezeDialog::validate);
    resize(460, 520);
    validate();
}

void BulkFreezeDialog::validate()
{
    const bool named = !m_operator->text().trimmed().isEmpty();
    const bool reasoned =
        m_action.kind != ConsoleAction::Kind::FreezeMany || !m_reason->toPlainText().trimmed().isEmpty();
    m_confirm->setEnabled(named && reasoned && !m_action.envs.isEmpty());
}

ConsoleAction BulkFreezeDialog::action() const
{
    ConsoleAction a = m_action;
    a.by = m_operator->text().trimmed();
    a.reason = m_reason->toPlainText().trimmed();
    return a;
}

} // namespace relctl::ui
