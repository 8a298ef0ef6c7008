#pragma once

// The console's masked password prompt for its own connection: when the
// session cannot connect because the server wants a password (none found in
// ~/.pgpass, a service file or PGPASSWORD, or the one given was refused), it
// asks for one and connects again with it. The password is kept for this run
// only (ConnectionTarget::rememberPassword), never saved. The connection
// dialog asks the same way for its own tests.

#include <QObject>
#include <QPointer>
#include <QString>

class QInputDialog;
class QWidget;

namespace relctl::ui {

class ConsoleSession;
struct ConnectionState;

class PasswordPrompt final : public QObject
{
public:
    // Watches `session`; the prompt opens over `window`.
    PasswordPrompt(ConsoleSession* session, QWidget* window);

    // The prompt while it is open (null otherwise).
    QInputDialog* dialog() const;

private:
    void stateChanged(const ConnectionState& state);

    ConsoleSession* m_session;
    QWidget* m_window;
    QPointer<QInputDialog> m_dialog;
    // The target whose prompt was cancelled: not asked again until the
    // connection changes (the session retries on its own).
    QString m_declined;
};

} // namespace relctl::ui
