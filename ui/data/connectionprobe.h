#pragma once

#include "connectiontarget.h"

#include <QMetaType>
#include <QObject>
#include <QString>

namespace relctl::ui {

// What a connection test found: the server and schema behind a target, or why
// it could not be reached.
struct ProbeResult
{
    bool ok = false;
    QString target;        // ConnectionTarget::describe(): never a password
    QString serverVersion; // "15.x"
    QString database;
    int schemaVersion = 0; // a database without the schema fails ("run relctl migrate")
    double rttMs = 0;      // one serverInfo() round trip on the open connection
    QString message;       // why it failed
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ProbeResult)

namespace relctl::ui {

// Tests a connection target without blocking the GUI thread: each probe
// resolves the target (which may start the embedded cluster) and opens a
// relctl::Database on a short-lived thread of its own, and the result comes
// back by a queued signal. Only the newest probe reports: starting another
// one, or cancel(), supersedes whatever is still running. A thread outliving
// its probe (a dialog closed mid-test) finishes on its own and deletes itself.
class ConnectionProbe final : public QObject
{
    Q_OBJECT

public:
    explicit ConnectionProbe(QObject* parent = nullptr);

    // Returns the probe's serial, as finished() reports it.
    quint64 probe(const ConnectionTarget& target);
    void cancel();
    bool isRunning() const { return m_running; }

    // The probe itself, synchronous: for the worker thread only.
    static ProbeResult run(const ConnectionTarget& target);

signals:
    void started(quint64 serial);
    void finished(quint64 serial, const ProbeResult& result);

private:
    quint64 m_latest = 0;
    bool m_running = false;
};

} // namespace relctl::ui
