#pragma once

#include "consolebackend.h"
#include "requesttracker.h"

#include <QHash>
#include <QObject>
#include <QTimer>
#include <chrono>
#include <memory>
#include <optional>

namespace relctl::ui {

class AuditModel;
class EnvironmentsModel;
class RehearsalRunner;

// Wires a backend (PostgresBackend in the console, a fake in tests) to the
// models and views, all on the GUI thread: every request carries a serial,
// and only the newest answer for a view is applied. Events from the database
// trigger a debounced reload of what is on screen; nothing is reloaded
// periodically.
class ConsoleSession final : public QObject
{
    Q_OBJECT

public:
    explicit ConsoleSession(std::unique_ptr<ConsoleBackend> backend, QObject* parent = nullptr);
    ~ConsoleSession() override;

    EnvironmentsModel* environments() const { return m_environments; }
    AuditModel* audit() const { return m_audit; }
    const ConnectionState& connection() const { return m_connection; }

    void start();
    // How long after an event the views reload, so that a burst of events
    // (a queue handing over) costs one reload: 150 ms unless set (tests
    // shorten it).
    void setReloadDelay(std::chrono::milliseconds delay) { m_reload.setInterval(delay); }
    void requestTimeline(qint64 fromMs, qint64 toMs);
    // The timeline now shows [fromMs, toMs]: asks for a slice of it with half
    // its span of margin either side, unless the slice last asked for covers
    // it already at about this zoom (the view is inside it, and no more than
    // twice as fine as what it was asked for: a slice is capped, so a closer
    // look may hold more). Following now moves the view by a pixel per tick
    // and after every slice; each such move asking again would keep the
    // worker busy with timelines, behind which every other request waits.
    // Events that change what the slice holds reload it anyway. Until the
    // session is connected the range is only kept: the reload on connecting
    // asks for it.
    void coverTimeline(qint64 fromMs, qint64 toMs);
    void requestTrace(qint64 eventId);
    void runAction(const ConsoleAction& action);
    // The environment's manifest history, answered by manifestHistoryReady
    // and read again on every reload until another environment is asked for
    // (or clearManifestHistory), so an open history follows live events.
    void requestManifestHistory(const QString& env);
    void clearManifestHistory() { m_historyEnv.clear(); }
    // What became of a job or an op id, answered by statusReady (or
    // statusFailed) and, like a manifest history, read again on every reload
    // until another is asked for (or clearStatus): an open status card
    // follows the job from running to completed.
    void requestStatus(const StatusLookup& lookup);
    void clearStatus() { m_statusLookup.reset(); }
    void reload();
    // Connects to another database now; the views reload once it answers.
    void setTarget(const ConnectionTarget& target);
    ConnectionTarget target() const { return m_backend->target(); }

    // Exports every event the audit table's filter matches, in its sort
    // order, to `path` (the backend keeps answering meanwhile). One at a time: false if one is running.
    bool exportAudit(const QString& path, bool json);
    void cancelExport();
    bool isExporting() const { return m_exportCancel != nullptr; }

    // Plays rehearsal scenarios on a scratch database of the server the
    // session reads (target()), reported by the rehearsal signals below until
    // rehearsalFinished. One at a time: false, and nothing asked, while one runs.
    bool runRehearsal(const relctl::rehearsal::Options& options);
    // The run stops at its next step; rehearsalFinished says it was cancelled.
    void cancelRehearsal();
    bool isRehearsing() const { return m_rehearsing; }
    // The runner behind the rehearsals when the backend has one (the
    // PostgreSQL backend's; none on a test's fake): for tests that drive the
    // real engine or watch it directly.
    RehearsalRunner* rehearsalRunner() const;

    // Tests whether `target` can be reached (any target, not only the one
    // the session reads): the newest test answers with probeFinished; a
    // newer test, or cancelProbe, drops the answer of one still running.
    void probeTarget(const ConnectionTarget& target);
    void cancelProbe();
    bool isProbing() const { return m_probing; }

signals:
    void connectionChanged(const ConnectionState& state);
    void timelineReady(const relctl::TimelineSlice& slice);
    void traceReady(const std::optional<relctl::RefusalTrace>& trace);
    void supersessionsReady(const QList<SupersessionRow>& approvals);
    void promotionsReady(const relctl::ui::PromotionsSnapshot& promotions);
    void manifestHistoryReady(const relctl::ManifestHistory& history);
    void statusReady(const relctl::ui::StatusLookup& lookup, const relctl::JobStatus& status);
    // The newest status lookup failed (the database, not the key: an unknown
    // key is answered as such).
    void statusFailed(const relctl::ui::StatusLookup& lookup, const QString& message);
    void actionFinished(bool ok, const QString& message);
    // The server accepted `action` (emitted just before its actionFinished):
    // what the operator typed is kept only once it was accepted.
    void actionSucceeded(const relctl::ui::ConsoleAction& action);
    void environmentsLoaded();
    void failed(const QString& message);
    void exportProgress(qint64 rows);
    void exportFinished(bool ok, qint64 rows, const QString& message);
    void rehearsalScenarioStarted(const relctl::rehearsal::Scenario& scenario, int index, int count);
    void rehearsalStepLogged(const relctl::rehearsal::Step& step);
    // The scenario's environment as the scratch database has it now.
    void rehearsalTimelineUpdated(const QString& scenario, const relctl::TimelineSlice& slice);
    void rehearsalScenarioFinished(const relctl::rehearsal::ScenarioResult& result);
    // The run is over (isRehearsing() is already false). `error` says why it
    // could not start (the report is then empty).
    void rehearsalFinished(const relctl::rehearsal::Report& report, const QString& error);
    void probeFinished(const relctl::ui::ProbeResult& result);

private:
    void scheduleReload();

    std::unique_ptr<ConsoleBackend> m_backend;
    ExportCancelFlag m_exportCancel;
    quint64 m_exportSerial = 0;
    EnvironmentsModel* m_environments;
    AuditModel* m_audit;
    RequestTracker m_environmentsRequests, m_timelineRequests, m_traceRequests, m_supersessionRequests,
        m_promotionRequests, m_historyRequests, m_statusRequests, m_actionRequests, m_probeRequests;
    // The rehearsal asked for last; its answers alone are passed on.
    quint64 m_rehearsalSerial = 0;
    bool m_rehearsing = false;
    bool m_probing = false;
    QString m_historyEnv;
    std::optional<StatusLookup> m_statusLookup;
    // Actions asked for and not answered yet, by serial: every answer counts
    // (an action is not superseded by a newer one).
    QHash<quint64, ConsoleAction> m_actions;
    qint64 m_timelineFrom = 0, m_timelineTo = 0;
    QTimer m_reload;
    QTimer m_countdown;
    ConnectionState m_connection;
};

} // namespace relctl::ui
