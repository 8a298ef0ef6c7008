#pragma once

#include "connectiontarget.h"
#include "consoletypes.h"

#include <QObject>
#include <QString>

namespace relctl::ui {

// Tests a connection target without blocking the GUI thread: each probe
// resolves the target and opens a
// relctl::Database on a short-lived thread of its own, and the result comes
// back by a queued signal. Only the newest probe reports: starting another
// one, or cancel(), supersedes whatever is still running. A thread outliving
// its probe (a dialog closed mid-test) finishes on its own and deletes itself.
// PostgresBackend answers the session's connection tests with it.
class ConnectionProbe final : public QObject
{
    Q_OBJECT

public:
    explicit ConnectionProbe(QObject* parent = nullptr);

    // Returns the probe's serial, as finished() reports it.
    quint64 probe(const ConnectionTarget& target);
    void cancel();
    bool isRunning() const { return m_running; }

    // The probe itself, synchronous: for the worker thread only. It has no
    // side effect: an embedded (or demo) cluster that does not exist or does
    // not run is left so, and the result says so (notStarted).
    static ProbeResult run(const ConnectionTarget& target);
    // The result says the embedded or demo cluster is not running (or not
    // created), which connecting would change: not a failure.
    static bool notStarted(const ProbeResult& result);

signals:
    void started(quint64 serial);
    void finished(quint64 serial, const ProbeResult& result);

private:
    quint64 m_latest = 0;
    bool m_running = false;
};

} // namespace relctl::ui
