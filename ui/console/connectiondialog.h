#pragma once

#include "connectiontarget.h"
#include "consoletypes.h"

#include <QDialog>

class QButtonGroup;
class QInputDialog;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;

namespace relctl::ui {

class ConsoleSession;

// Where the console connects: relctl's default rule, the embedded default
// database, a DSN, or the demo's own database. "Test connection" asks the
// session to probe the choice (off the GUI thread: the dialog stays usable; a
// second test supersedes the first) and shows who the connection is: the
// login, its relctl role and whether it is encrypted. A test starts nothing:
// an embedded cluster that is not running is said to be so. OK stores the
// choice with QSettings, without any password; applying it is the caller's
// (MainWindow switches the running session at once).
//
// Passwords are typed masked, in the password field or when a test finds the
// server wants one, and kept for this run only (ConnectionTarget::
// rememberPassword); left empty, libpq's own (~/.pgpass, a service file) is
// used.
class ConnectionDialog final : public QDialog
{
    Q_OBJECT

public:
    ConnectionDialog(ConsoleSession* session, const ConnectionTarget& current, QWidget* parent = nullptr);

    // The target as the form stands (a masked saved password is restored).
    ConnectionTarget target() const;
    void testConnection();
    QString testResult() const; // what the last test said, as shown
    bool isTesting() const;
    // The masked prompt open after a test the server refused for want of a
    // password (null otherwise).
    QInputDialog* passwordPrompt() const { return m_prompt; }

    void accept() override;

signals:
    void tested(const ProbeResult& result);

private:
    void showResult(const ProbeResult& result);
    void askForPassword(const ProbeResult& result);
    void updateForm();
    // The target, with the password field's password remembered for it.
    ConnectionTarget targetWithPassword() const;

    ConsoleSession* m_session;
    QRadioButton* m_default;
    QRadioButton* m_embedded;
    QRadioButton* m_dsnChoice;
    QRadioButton* m_demo;
    QLineEdit* m_dsn;
    QLineEdit* m_password;
    QInputDialog* m_prompt = nullptr;
    QPushButton* m_test;
    QLabel* m_result;
};

} // namespace relctl::ui
