#pragma once

#include "connectiontarget.h"
#include "consoletypes.h"
#include "metatypes.h"
#include "requesttracker.h"

#include <QObject>
#include <QString>
#include <QStringList>

namespace relctl::ui {

// What the console's session asks of the data it shows: queries, operator
// actions, exports and live events, all answered later through the signals
// below. A backend is created on and used from the GUI thread; where its
// answers come from is its own business: the PostgreSQL backend hands every
// request to a worker thread owning the connections (PostgresBackend), a
// test's fake answers from memory through the event loop. Either way a call
// never blocks and no answer arrives before the call returned, so the
// session's handling of superseded answers is the same for both.
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
    // Where it connects (the last setTarget, or where it started): pages that
    // reach the same server by other means (rehearsals) ask here. A backend
    // without a database answers the default.
    virtual ConnectionTarget target() const { return {}; }
    virtual void loadEnvironments(quint64 serial) = 0;
    virtual void loadAuditPage(quint64 serial, const relctl::AuditPageRequest& request) = 0;
    virtual void loadTimeline(quint64 serial, qint64 fromMs, qint64 toMs) = 0;
    virtual void loadTrace(quint64 serial, qint64 eventId) = 0;
    virtual void loadSupersessions(quint64 serial) = 0;
    // Promotions and rollback need schema version kPromotionsSchemaVersion.
    virtual void loadPromotions(quint64 serial) = 0;
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

signals:
    void connectionChanged(const relctl::ui::ConnectionState& state);
    void environmentsLoaded(quint64 serial, const std::vector<relctl::EnvironmentRow>& rows);
    void auditPageLoaded(quint64 serial, const relctl::AuditPage& page);
    void timelineLoaded(quint64 serial, const relctl::TimelineSlice& slice);
    void traceLoaded(quint64 serial, const std::optional<relctl::RefusalTrace>& trace);
    void supersessionsLoaded(quint64 serial, const QList<relctl::ui::SupersessionRow>& approvals);
    void promotionsLoaded(quint64 serial, const relctl::ui::PromotionsSnapshot& promotions);
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
};

} // namespace relctl::ui
