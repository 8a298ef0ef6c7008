#pragma once

#include "connectiontarget.h"
#include "consoletypes.h"

#include <QDialog>

class QButtonGroup;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;

namespace relctl::ui {

class ConsoleSession;

// Where the console connects: relctl's default rule, the embedded default
// database, or a DSN. "Test connection" asks the session to probe the choice
// (off the GUI thread: the dialog stays usable; a second test supersedes the
// first). OK stores the choice with QSettings; applying it is the caller's
// (MainWindow switches the running session at once).
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

    void accept() override;

signals:
    void tested(const ProbeResult& result);

private:
    void showResult(const ProbeResult& result);
    void updateForm();

    ConsoleSession* m_session;
    ConnectionTarget m_saved;
    QRadioButton* m_default;
    QRadioButton* m_embedded;
    QRadioButton* m_dsnChoice;
    QRadioButton* m_demo; // only while the console shows the demo
    QLineEdit* m_dsn;
    QPushButton* m_test;
    QLabel* m_result;
};

} // namespace relctl::ui
