#pragma once

#include "connectiontarget.h"
#include "consoletypes.h"
#include "metatypes.h"
#include "requesttracker.h"
#include "sharedpromotions.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <optional>

namespace relctl::ui {

// What the console's session asks of the data it shows: queries, operator
// actions, exports, rehearsals, connection tests and live events, all
// answered later through the signals below. A backend is created on and used
// from the GUI thread; where its answers come from is its own business: the
// PostgreSQL backend (PostgresBackend) hands every request to another thread
// (a query to a worker owning the connections), a test's fake answers from
// memory through the event loop. Either way a call never blocks and no
// answer arrives before the call returned, so the session's handling of
// superseded answers is the same for both.
//
// Every request carries its requester's serial (see RequestTracker); an
// answer repeats it. A failed load names its kind as well (RequestId).
class ConsoleBackend : public QObject
{
    Q_OBJECT

public:
    using QObject::QObject;

    // Connects; the answer is connectionChanged(), then eventsArrived({})
    // so views read everything.
    virtual void start() = 0;
    // Drops the connection and connects to the new target at once; views hear
    // connectionChanged() and then eventsArrived() as on a reconnect.
    virtual void setTarget(const ConnectionTarget& target) = 0;
    // Where it connects (the last setTarget, or where it started); a
    // rehearsal plays on this server. A backend without a database answers
    // the default.
    virtual ConnectionTarget target() const { return {}; }
    // Every environment, or only those named (a live update: a name absent
    // from the answer is an environment that no longer exists).
    virtual void loadEnvironments(quint64 serial, const std::optional<QStringList>& names = std::nullopt) = 0;
    virtual void loadAuditPage(quint64 serial, const relctl::AuditPageRequest& request) = 0;
    // Every lane of the window, or only those of envs (a live update).
    virtual void loadTimeline(quint64 serial, qint64 fromMs, qint64 toMs,
                              const std::optional<QStringList>& envs = std::nullopt) = 0;
    virtual void loadTrace(quint64 serial, qint64 eventId) = 0;
    virtual void loadSupersessions(quint64 serial) = 0;
    // Promotions and rollback need schema version kPromotionsSchemaVersion.
    // Every environment's, or a live update of those named (the answer's
    // `covers` says which part of the whole it replaces).
    virtual void loadPromotions(quint64 serial, const std::optional<QStringList>& names = std::nullopt) = 0;
    virtual void loadManifestHistory(quint64 serial, const QString& env) = 0;
    // What became of a job or an op id, from the database alone; an unknown
    // one is answered (state "unknown"), not failed.
    virtual void loadStatus(quint64 serial, const StatusLookup& lookup) = 0;
    // Answered with actionFinished() either way.
    virtual void runAction(quint64 serial, const ConsoleAction& action) = 0;
    // Writes every event matching the filter, in the sort's order, to `path`
    // (CSV or JSON); the file appears only once complete. Must not hold up the
    // other requests; progress as it goes; `cancel`, set from the GUI thread,
    // stops it (nothing written).
    virtual void exportAudit(quint64 serial, const QString& path, bool json,
                             const relctl::AuditFilter& filter, const relctl::AuditSort& sort,
                             const ExportCancelFlag& cancel) = 0;
    // Plays rehearsal scenarios on a scratch database of target()'s server,
    // off the GUI thread: the rehearsal signals below report the run as it
    // goes, and rehearsalFinished() ends it (a run that could not start
    // too). One at a time: the session asks for no other while one runs.
    virtual void runRehearsal(quint64 serial, const relctl::rehearsal::Options& options) = 0;
    // Stops the run at its next step; rehearsalFinished() follows, cancelled.
    virtual void cancelRehearsal() = 0;
    // Tests whether `target` (any, not only this backend's) can be reached:
    // answered by probeFinished(), an unreachable target with ok false.
    virtual void probeTarget(quint64 serial, const ConnectionTarget& target) = 0;

signals:
    void connectionChanged(const relctl::ui::ConnectionState& state);
    void environmentsLoaded(quint64 serial, const relctl::ui::EnvironmentRows& rows);
    void auditPageLoaded(quint64 serial, const relctl::AuditPage& page);
    void timelineLoaded(quint64 serial, const relctl::TimelineSlice& slice);
    void traceLoaded(quint64 serial, const std::optional<relctl::RefusalTrace>& trace);
    void supersessionsLoaded(quint64 serial, const QList<relctl::ui::SupersessionRow>& approvals);
    void promotionsLoaded(quint64 serial, const relctl::ui::PromotionsReadHandle& promotions);
    void manifestHistoryLoaded(quint64 serial, const relctl::ManifestHistory& history);
    void statusLoaded(quint64 serial, const relctl::ui::StatusLookup& lookup,
                      const relctl::JobStatus& status);
    void actionFinished(quint64 serial, bool ok, const QString& message);
    void exportProgress(quint64 serial, qint64 rows);
    // ok: `rows` were written to the file; otherwise the message says why
    // (cancelled: nothing was written).
    void exportFinished(quint64 serial, bool ok, qint64 rows, const QString& message);
    // A load failed; only the requester of that kind and serial forgets it.
    void requestFailed(const relctl::ui::RequestId& request, const QString& message);
    // Events were recorded for these environments (empty name: unknown).
    void eventsArrived(const QStringList& environments);
    void rehearsalScenarioStarted(quint64 serial, const relctl::rehearsal::Scenario& scenario, int index,
                                  int count);
    void rehearsalStepLogged(quint64 serial, const relctl::rehearsal::Step& step);
    // The scenario's environment as the scratch database has it now.
    void rehearsalTimelineUpdated(quint64 serial, const QString& scenario,
                                  const relctl::TimelineSlice& slice);
    void rehearsalScenarioFinished(quint64 serial, const relctl::rehearsal::ScenarioResult& result);
    // The run is over. `error` says why it could not start (the report is
    // then empty).
    void rehearsalFinished(quint64 serial, const relctl::rehearsal::Report& report, const QString& error);
    void probeFinished(quint64 serial, const relctl::ui::ProbeResult& result);
};

} // namespace relctl::ui
