#include "passwordprompt.h"

#include "connectiontarget.h"
#include "consolesession.h"

#include <QInputDialog>
#include <QLineEdit>

namespace relctl::ui {

PasswordPrompt::PasswordPrompt(ConsoleSession* session, QWidget* window)
    : QObject(window), m_session(session), m_window(window)
{
    connect(session, &ConsoleSession::connectionChanged, this, &PasswordPrompt::stateChanged);
}

QInputDialog* PasswordPrompt::dialog() const
{
    return m_dialog;
}

void PasswordPrompt::stateChanged(const ConnectionState& state)
{
    if (state.connected) {
        m_declined.clear();
        return;
    }
    if (!ConnectionTarget::needsPassword(state.message) || m_dialog)
        return;
    const ConnectionTarget target = m_session->target();
    if (target.describe() == m_declined)
        return;
    m_dialog = new QInputDialog(m_window);
    m_dialog->setObjectName(QStringLiteral("passwordPrompt"));
    m_dialog->setWindowTitle(tr("Password"));
    m_dialog->setLabelText(
        tr("The server wants a password for %1.\nIt is kept for this run only, never saved.")
            .arg(target.describe()));
    m_dialog->setTextEchoMode(QLineEdit::Password);
    m_dialog->setOkButtonText(tr("&Connect"));
    connect(m_dialog, &QInputDialog::textValueSelected, this, [this, target](const QString& password) {
        target.rememberPassword(password);
        m_session->setTarget(target); // connects again, now with the password
    });
    connect(m_dialog, &QDialog::rejected, this, [this, target] { m_declined = target.describe(); });
    // Gone at once: a failure that comes before it is deleted asks anew.
    connect(m_dialog, &QDialog::finished, this, [this] {
        m_dialog->deleteLater();
        m_dialog = nullptr;
    });
    m_dialog->open();
}

} // namespace relctl::ui
