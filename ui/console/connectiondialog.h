#pragma once

#include "connectionprobe.h"
#include "connectiontarget.h"

#include <QDialog>

class QButtonGroup;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;

namespace relctl::ui {

// Where the console connects: relctl's default rule, the embedded default
// database, or a DSN. "Test connection" probes the choice off the GUI thread
// (the dialog stays usable; a second test supersedes the first). OK stores
// the choice with QSettings; applying it is the caller's (MainWindow switches
// the running session at once).
class ConnectionDialog final : public QDialog
{
    Q_OBJECT

public:
    ConnectionDialog(const ConnectionTarget& current, QWidget* parent = nullptr);

    // The target as the form stands (a masked saved password is restored).
    ConnectionTarget target() const;
    void testConnection();
    QString testResult() const; // what the last test said, as shown
    bool isTesting() const { return m_probe->isRunning(); }

    void accept() override;

signals:
    void tested(const ProbeResult& result);

private:
    void showResult(const ProbeResult& result);
    void updateForm();

    ConnectionTarget m_saved;
    ConnectionProbe* m_probe;
    QRadioButton* m_default;
    QRadioButton* m_embedded;
    QRadioButton* m_dsnChoice;
    QRadioButton* m_demo; // only while the console shows the demo
    QLineEdit* m_dsn;
    QPushButton* m_test;
    QLabel* m_result;
};

} // namespace relctl::ui
