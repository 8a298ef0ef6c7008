#include "actiondialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>
#include <pwd.h>
#include <unistd.h>

namespace relctl::ui {

namespace {

// One console, one connection: the login is the process's.
QString& loginSlot()
{
    static QString login;
    return login;
}

} // namespace

void setConnectedLogin(const QString& login)
{
    loginSlot() = login;
}

QString connectedLogin()
{
    return loginSlot();
}

QString operatorName()
{
    // The OS account, whether or not the environment names it (CI and
    // service shells often have no $USER).
    QString fallback = qEnvironmentVariable("USER");
    if (fallback.isEmpty()) {
        if (const passwd* account = getpwuid(geteuid()))
            fallback = QString::fromLocal8Bit(account->pw_name);
    }
    if (!loginSlot().isEmpty())
        fallback = loginSlot();
    const QString saved = QSettings().value(QStringLiteral("operator/name")).toString();
    return saved.isEmpty() ? fallback : saved;
}

void setOperatorName(const QString& name)
{
    if (!name.trimmed().isEmpty())
        QSettings().setValue(QStringLiteral("operator/name"), name.trimmed());
}

bool ActionDialog::reasonRequired(ConsoleAction::Kind kind)
{
    return kind != ConsoleAction::Kind::Approve && kind != ConsoleAction::Kind::Unfreeze &&
           kind != ConsoleAction::Kind::ApprovePromotion;
}

ActionDialog::ActionDialog(ConsoleAction action, const QString& description, QWidget* parent,
                           const QString& details)
    : QDialog(parent), m_action(std::move(action)), m_operator(new QLineEdit(operatorName(), this)),
      m_reason(new QPlainTextEdit(this)), m_confirm(nullptr)
{
    setWindowTitle(tr("Confirm: %1").arg(description));
    auto* layout = new QVBoxLayout(this);
    auto* what = new QLabel(tr("<b>%1</b><br>Environment: <b>%2</b>")
                                .arg(description.toHtmlEscaped(), m_action.env.toHtmlEscaped()),
                            this);
    what->setTextFormat(Qt::RichText);
    layout->addWidget(what);
    if (!details.isEmpty()) {
        auto* changes = new QLabel(details, this);
        changes->setObjectName(QStringLiteral("actionDetails"));
        changes->setTextFormat(Qt::RichText);
        changes->setWordWrap(true);
        changes->setTextInteractionFlags(Qt::TextSelectableByMouse);
        layout->addWidget(changes);
    }
    auto* form = new QFormLayout;
    form->addRow(tr("&Operator:"), m_operator);
    // The name is what the operator says; the login is what the server
    // authenticated, and what four-eyes rules count.
    auto* login = new QLabel(connectedLogin().isEmpty()
                                 ? tr("the console's database login")
                                 : tr("<b>%1</b> (the database login; approvals count once per login)")
                                       .arg(connectedLogin().toHtmlEscaped()),
                             this);
    login->setObjectName(QStringLiteral("recordedLogin"));
    form->addRow(tr("Recorded as:"), login);
    m_reason->setPlaceholderText(
        reasonRequired(m_action.kind) ? tr("Required: why (recorded in the audit trail)") : tr("Optional"));
    m_reason->setTabChangesFocus(true);
    form->addRow(tr("&Reason:"), m_reason);
    layout->addLayout(form);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_confirm = buttons->button(QDialogButtonBox::Ok);
    m_confirm->setText(description);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_operator, &QLineEdit::textChanged, this, &ActionDialog::validate);
    connect(m_reason, &QPlainTextEdit::textChanged, this, &ActionDialog::validate);
    validate();
}

void ActionDialog::validate()
{
    const bool named = !m_operator->text().trimmed().isEmpty();
    const bool reasoned = !reasonRequired(m_action.kind) || !m_reason->toPlainText().trimmed().isEmpty();
    m_confirm->setEnabled(named && reasoned);
}

ConsoleAction ActionDialog::action() const
{
    ConsoleAction a = m_action;
    a.by = m_operator->text().trimmed();
    a.reason = m_reason->toPlainText().trimmed();
    return a;
}

} // namespace relctl::ui
