#pragma once

#include "connectiontarget.h"
#include "consoletypes.h"
#include "metatypes.h"
#include "requesttracker.h"
#include "sharedpromotions.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <memory>
#include <optional>

class QSocketNotifier;
class QTimer;

namespace relctl {
class Database;
class EventListener;
} // namespace relctl

namespace relctl::ui {

// Owns the console's database connections and runs every query, off the GUI
// thread: create it, move it to a QThread, then invoke start() there. Results
// come back as values through queued signals, tagged with the caller's serial
// (see RequestTracker); a failure names the request's kind as well
// (RequestId). Live updates: the event connection's socket is watched by a
// QSocketNotifier created in this thread; a lost connection is retried every
// two seconds and, once back, announced so views reload.
class ConsoleWorker final : public QObject
{
    Q_OBJECT

public:
    // The embedded database, when the target names it, is started by the worker.
    explicit ConsoleWorker(ConnectionTarget target, QObject* parent = nullptr);
    ~ConsoleWorker() override;

    // Seed the demo history after connecting (call before start()).
    void setSeedDemo(bool seed) { m_seedDemo = seed; }
    // Without live updates the worker opens no listening connection: a worker
    // that only exports needs none (call before start()).
    void setLive(bool live) { m_live = live; }
    // After connecting, read the page an audit browser asks for first (the
    // newest events, unfiltered; see auditPage()), so that the window's
    // first page does not wait for a query on a new session (call before
    // start()).
    void setPrefetchFirstAuditPage(bool prefetch) { m_prefetchFirstAuditPage = prefetch; }
    // How many pages were answered from a prefetched first page (tests).
    int prefetchedPagesServed() const { return m_prefetchedPagesServed.load(); }

public slots:
    void start();
    // Drops both connections and connects to the new target at once; views
    // hear connectionChanged() and then eventsArrived() as on a reconnect.
    void setTarget(const ConnectionTarget& target);
    // Every environment, or only those named (a live update).
    void loadEnvironments(quint64 serial, const std::optional<QStringList>& names = std::nullopt);
    void loadAuditPage(quint64 serial, const relctl::AuditPageRequest& request);
    void loadTimeline(quint64 serial, qint64 fromMs, qint64 toMs,
                      const std::optional<QStringList>& envs = std::nullopt);
    void loadTrace(quint64 serial, qint64 eventId);
    void loadSupersessions(quint64 serial);
    // The paths and requests (relctl.console_promotions): all, or a live
    // update of the environments named.
    void loadPromotions(quint64 serial, const std::optional<QStringList>& names = std::nullopt);
    void loadManifestHistory(quint64 serial, const QString& env);
    void loadStatus(quint64 serial, const StatusLookup& lookup);
    void runAction(quint64 serial, const ConsoleAction& action);
    // Writes every event matching the filter, in the sort's order, to `path`
    // (CSV or JSON), page by page; the file appears only once complete. It
    // holds this thread until done: run it on a worker of its own, so pages
    // and live updates are not held up behind it. Progress after each page;
    // `cancel`, set from any thread, stops it at the next page.
    void exportAudit(quint64 serial, const QString& path, bool json, const relctl::AuditFilter& filter,
                     const relctl::AuditSort& sort, const ExportCancelFlag& cancel);
    // Runs pg_sleep on the worker's connection: lets tests prove the GUI
    // thread is never blocked by a slow query.
    void sleepOnServer(quint64 serial, double seconds);

signals:
    void connectionChanged(const ConnectionState& state);
    void environmentsLoaded(quint64 serial, const relctl::ui::EnvironmentRows& rows);
    void auditPageLoaded(quint64 serial, const relctl::AuditPage& page);
    void timelineLoaded(quint64 serial, const relctl::TimelineSlice& slice);
    void traceLoaded(quint64 serial, const std::optional<relctl::RefusalTrace>& trace);
    void supersessionsLoaded(quint64 serial, const QList<SupersessionRow>& approvals);
    void promotionsLoaded(quint64 serial, const relctl::ui::PromotionsReadHandle& promotions);
    void manifestHistoryLoaded(quint64 serial, const relctl::ManifestHistory& history);
    void statusLoaded(quint64 serial, const StatusLookup& lookup, const relctl::JobStatus& status);
    void actionFinished(quint64 serial, bool ok, const QString& message);
    void exportProgress(quint64 serial, qint64 rows);
    // ok: `rows` were written to the file; otherwise the message says why
    // (cancelled: nothing was written).
    void exportFinished(quint64 serial, bool ok, qint64 rows, const QString& message);
    // A load failed; the request says which kind of load (serials are per
    // kind), so only its requester forgets it.
    void requestFailed(const RequestId& request, const QString& message);
    void slept(quint64 serial);
    // Events arrived for these environments (empty name: unknown).
    void eventsArrived(const QStringList& environments);

private:
    bool ensureConnected();
    void connectNow();
    void dropConnection(const QString& why);
    void readEvents();
    void followEvents();
    // Emits eventsArrived for the environments `read` returns (take or
    // follow); a failure drops the connection for the retry timer.
    template <typename Read> void relay(Read&& read);
    // Runs body on a live connection; a failure reaches fail(message), a lost
    // connection being dropped first so the retry timer takes over.
    template <typename F, typename Fail> void guarded(F&& body, Fail&& fail);
    // The same, answering a failure with requestFailed(request, ...).
    template <typename F> void guarded(RequestId request, F&& body);
    // A page of the trail: the prefetched first page, once, when it is the
    // one asked for and still current, else a query.
    relctl::AuditPage auditPage(const relctl::AuditPageRequest& request);

    struct PrefetchedPage
    {
        relctl::AuditPageRequest request;
        relctl::AuditPage page;
    };

    ConnectionTarget m_target;
    bool m_seedDemo = false;
    bool m_live = true;
    bool m_prefetchFirstAuditPage = false;
    std::optional<PrefetchedPage> m_prefetched; // read on connecting, kept until asked for
    std::atomic<int> m_prefetchedPagesServed = 0;
    std::unique_ptr<relctl::Database> m_db;
    std::unique_ptr<relctl::EventListener> m_listener;
    QSocketNotifier* m_notifier = nullptr;
    QTimer* m_retry = nullptr;
    QTimer* m_follow = nullptr;
    ConnectionState m_state;
};

} // namespace relctl::ui
