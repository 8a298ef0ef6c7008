#pragma once

#include "consolebackend.h"
#include "requesttracker.h"

#include <QHash>
#include <QObject>
#include <QSet>
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
// name the environments they touched: the session collects those names and
// reads only those environments, their timeline lanes and their promotions
// (a live update, whose cost follows the environments touched, not the
// organisation). Each kind of data has at most one live read in flight: names
// arriving meanwhile wait for its answer and then go out together, at most
// kLiveChunk to a request, so a slow answer batches the next names instead of
// queueing requests behind it; a short debounce delays only the first read of
// a burst. A connection (or a reconnection), an event of an unknown
// environment, or names pending for more than half the organisation (and more
// than a chunk) read everything again. Nothing is reloaded periodically.
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
    // How long after the first event of a burst the views read, so that a
    // burst (a queue handing over) costs one read: 150 ms unless set (tests
    // shorten it). Events arriving while a live read is in flight are read
    // as soon as it answers, without this delay.
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
    // Reads everything again (what connecting does).
    void reload();
    // Reads again only what concerns these environments (what a burst of
    // events does): their rows, their timeline lanes, their promotion paths
    // and requests, and what follows every event (the audit's newer rows,
    // the pending supersessions, an open status card; an open manifest
    // history of one of them). At once for each kind of data with no live
    // read in flight; for the others, with the names that follow its answer.
    void liveUpdate(const QStringList& envs);
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
    // A whole slice: every lane of the range asked for.
    void timelineReady(const relctl::TimelineSlice& slice);
    // A live update of some lanes: `slice` holds these environments' lanes and
    // items of the current range only (a lane of envs absent from it was removed).
    void timelineUpdated(const QStringList& envs, const relctl::TimelineSlice& slice);
    // A live update was applied: kind "environments" (the model's update and
    // the views' synchronous reactions), "timeline" (timelineUpdated and its
    // slots) or "promotions" (the merge into the whole, and promotionsReady's
    // slots: the Promotions view, the decisions waiting), for envs, costing
    // the GUI thread guiNanoseconds.
    void liveUpdateApplied(const QString& kind, const QStringList& envs, qint64 guiNanoseconds);
    void traceReady(const std::optional<relctl::RefusalTrace>& trace);
    void supersessionsReady(const QList<SupersessionRow>& approvals);
    void promotionsReady(const relctl::ui::SharedPromotions& promotions);
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

public:
    // A live read names at most this many environments; the rest wait for
    // its answer. Bounded so that one answer, and its application on the
    // GUI thread, stays short whatever the burst.
    static constexpr int kLiveChunk = 500;

private:
    // Names waiting for a live read of one kind, in the order they arrived:
    // the oldest go out first, so none waits behind a steady stream of newer ones.
    class PendingNames
    {
    public:
        void add(const QString& name);
        // The `most` oldest names, no longer pending.
        QStringList take(int most);
        int size() const { return int(m_order.size()); }
        bool isEmpty() const { return m_order.isEmpty(); }
        void clear() { m_names.clear(), m_order.clear(); }

    private:
        QSet<QString> m_names;
        QStringList m_order;
    };

    // Which answers of one kind of data are still current when full reads
    // and live updates of some names interleave. Serials grow with every
    // request of the kind. A live update's answer is current for a name when
    // no full read was asked after it and nothing newer was applied for the
    // name; a full read's answer when it is the newest full read asked, and
    // then the names a newer live update already applied keep what it
    // applied (newerThan).
    struct LiveSerials
    {
        quint64 fullAsked = 0;
        QHash<quint64, QStringList> partials; // live updates asked, not answered
        QHash<QString, quint64> applied;      // name -> live update applied after the last full read
        PendingNames pending;                 // events' names not asked for yet
        // A live read asked and not answered: the next names wait for it.
        bool inFlight() const { return !partials.isEmpty(); }
        // A full read covers every name pending and every live read before it.
        quint64 askFull(RequestTracker& tracker);
        quint64 askPartial(RequestTracker& tracker, const QStringList& names);
        bool isPartial(quint64 serial) const { return partials.contains(serial); }
        // The answer's names still current (the answer is forgotten).
        QStringList takePartial(quint64 serial);
        void appliedPartial(quint64 serial, const QStringList& names);
        // The full answer applied: the names a newer live update holds are returned.
        QSet<QString> appliedFull(quint64 serial);
        void forget() { partials.clear(), applied.clear(); }
    };

    void scheduleReload();
    // The names go to each kind's pending names (the timeline's once a range
    // is asked for, the promotions' on a schema that has them).
    void queueLive(const QStringList& envs);
    // True when what is pending is better read as a whole.
    bool pendingIsMostOfAll() const;
    // Each asks for its kind's next pending names unless a live read of the
    // kind is in flight (or everything is to be read again).
    void sendLive();
    void sendEnvironments();
    void sendTimeline();
    void sendPromotions();
    void applyEnvironments(quint64 serial, std::vector<relctl::EnvironmentRow> rows);
    void applyTimeline(quint64 serial, const relctl::TimelineSlice& slice);
    void applyPromotions(quint64 serial, const PromotionsReadHandle& read);

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
    LiveSerials m_environmentsLive, m_timelineLive, m_promotionsLive;
    // The whole, live updates merged into it; the views share it.
    SharedPromotions m_promotions;
    // Read everything at the debounce (the names pending are then dropped).
    bool m_pendingAll = false;
    QTimer m_reload;
    QTimer m_countdown;
    ConnectionState m_connection;
};

} // namespace relctl::ui
