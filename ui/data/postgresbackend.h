#pragma once

#include "consolebackend.h"

#include <QList>
#include <QThread>
#include <functional>

namespace relctl::ui {

class ConnectionProbe;
class ConsoleWorker;
class RehearsalRunner;

// The console's backend on PostgreSQL: every request goes to a ConsoleWorker
// on a thread of its own, which owns the connections, and every answer comes
// back as a queued signal; nothing here touches the database. The audit
// browser's pages have a worker and a connection of their own (without live
// updates), opened at start beside the main one: the first page is what
// the window waits for most, and it no longer queues behind the
// environments, the timeline and the side views (nor they behind a page),
// and the two run at once on the server. Exports run on a third worker with
// a connection of its own (opened on the first export, without live
// updates): an export of a million events holds its thread for half a
// minute, and pages and live updates must not wait for it. The full reads
// of the timeline and of the promotions have a fourth (opened on the first
// such read): at 10,000 environments each holds its connection for a
// fraction of a second, and a live update queued behind them on the main
// one was shown that much later. Asked while the environments' full read
// is in flight (on connecting), they wait for its answer: the window
// waits for the environments, and on two cores the full reads would only
// slow that answer down. Rehearsals and
// connection tests need none of the workers' connections and hold a thread
// for seconds: a RehearsalRunner and a ConnectionProbe run them on threads
// of their own.
class PostgresBackend final : public ConsoleBackend
{
    Q_OBJECT

public:
    // seedDemo: write the demo history after connecting, into a database
    // without environments (release-console --demo).
    PostgresBackend(const ConnectionTarget& target, bool seedDemo, QObject* parent = nullptr);
    // Stops the threads; an export in progress is cancelled by its owner first.
    ~PostgresBackend() override;

    void start() override;
    void setTarget(const ConnectionTarget& target) override;
    ConnectionTarget target() const override { return m_target; }
    void loadEnvironments(quint64 serial, const std::optional<QStringList>& names = std::nullopt) override;
    void loadAuditPage(quint64 serial, const relctl::AuditPageRequest& request) override;
    void loadTimeline(quint64 serial, qint64 fromMs, qint64 toMs,
                      const std::optional<QStringList>& envs = std::nullopt) override;
    void loadTrace(quint64 serial, qint64 eventId) override;
    void loadSupersessions(quint64 serial) override;
    void loadPromotions(quint64 serial, const std::optional<QStringList>& names = std::nullopt) override;
    void loadManifestHistory(quint64 serial, const QString& env) override;
    void loadStatus(quint64 serial, const StatusLookup& lookup) override;
    void runAction(quint64 serial, const ConsoleAction& action) override;
    void exportAudit(quint64 serial, const QString& path, bool json, const relctl::AuditFilter& filter,
                     const relctl::AuditSort& sort, const ExportCancelFlag& cancel) override;
    void runRehearsal(quint64 serial, const relctl::rehearsal::Options& options) override;
    void cancelRehearsal() override;
    void probeTarget(quint64 serial, const ConnectionTarget& target) override;

private:
    // A full read for m_full: held while the environments' full read is in
    // flight, else posted at once.
    void postFull(std::function<void(ConsoleWorker&)> call);
    void releaseHeldFullReads();

    ConnectionTarget m_target;
    QThread m_thread;
    ConsoleWorker* m_worker; // lives on m_thread, deleted there when it finishes
    QThread m_pagesThread;
    ConsoleWorker* m_pages; // lives on m_pagesThread: the audit browser's pages
    QThread m_exportThread;
    ConsoleWorker* m_exporter; // lives on m_exportThread
    QThread m_fullThread;
    ConsoleWorker* m_full; // lives on m_fullThread: the timeline's and the promotions' full reads
    // The environments' full read in flight (0: none), and the full reads
    // held until it is answered, in the order asked.
    quint64 m_environmentsFull = 0;
    QList<std::function<void(ConsoleWorker&)>> m_heldFull;
    // Children, on this thread: the runner's destructor cancels a run in
    // progress and waits for its scratch database to be dropped.
    RehearsalRunner* m_rehearsals;
    quint64 m_rehearsalSerial = 0; // the run in progress, or the last one
    ConnectionProbe* m_probe;
    quint64 m_probeSerial = 0; // the newest test: the only one the probe reports
};

} // namespace relctl::ui
