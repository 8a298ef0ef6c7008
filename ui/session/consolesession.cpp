#include "consolesession.h"

#include "auditmodel.h"
#include "environmentsmodel.h"
#include "rehearsalrunner.h"

#include <algorithm>

namespace relctl::ui {

ConsoleSession::ConsoleSession(std::unique_ptr<ConsoleBackend> backend, QObject* parent)
    : QObject(parent), m_backend(std::move(backend)), m_environments(new EnvironmentsModel(this)),
      m_audit(new AuditModel(this))
{
    ConsoleBackend* b = m_backend.get();
    connect(b, &ConsoleBackend::exportProgress, this, [this](quint64 serial, qint64 rows) {
        if (serial == m_exportSerial && m_exportCancel)
            emit exportProgress(rows);
    });
    connect(b, &ConsoleBackend::exportFinished, this,
            [this](quint64 serial, bool ok, qint64 rows, const QString& message) {
                if (serial != m_exportSerial)
                    return;
                m_exportCancel.reset();
                emit exportFinished(ok, rows, message);
            });

    connect(b, &ConsoleBackend::connectionChanged, this, [this](const ConnectionState& state) {
        m_connection = state;
        emit connectionChanged(state);
    });
    connect(b, &ConsoleBackend::eventsArrived, this, [this] {
        // The first answer after connecting is not a burst to wait out: the
        // views have nothing yet (the audit browser has asked for nothing),
        // so they read at once.
        if (!m_audit->isActive())
            reload();
        else
            scheduleReload();
    });
    connect(b, &ConsoleBackend::environmentsLoaded, this,
            [this](quint64 serial, const std::vector<relctl::EnvironmentRow>& rows) {
                if (!m_environmentsRequests.isCurrent(serial))
                    return;
                m_environments->setEnvironments(rows);
                emit environmentsLoaded();
            });
    connect(m_audit, &AuditModel::fetchRequested, b, &ConsoleBackend::loadAuditPage);
    connect(b, &ConsoleBackend::auditPageLoaded, m_audit,
            [this](quint64 serial, const relctl::AuditPage& page) { m_audit->appendPage(serial, page); });
    connect(b, &ConsoleBackend::timelineLoaded, this,
            [this](quint64 serial, const relctl::TimelineSlice& slice) {
                if (m_timelineRequests.isCurrent(serial))
                    emit timelineReady(slice);
            });
    connect(b, &ConsoleBackend::traceLoaded, this,
            [this](quint64 serial, const std::optional<relctl::RefusalTrace>& trace) {
                if (m_traceRequests.isCurrent(serial))
                    emit traceReady(trace);
            });
    connect(b, &ConsoleBackend::supersessionsLoaded, this,
            [this](quint64 serial, const QList<SupersessionRow>& rows) {
                if (m_supersessionRequests.isCurrent(serial))
                    emit supersessionsReady(rows);
            });
    connect(b, &ConsoleBackend::promotionsLoaded, this,
            [this](quint64 serial, const PromotionsSnapshot& promotions) {
                if (m_promotionRequests.isCurrent(serial))
                    emit promotionsReady(promotions);
            });
    connect(b, &ConsoleBackend::manifestHistoryLoaded, this,
            [this](quint64 serial, const relctl::ManifestHistory& history) {
                if (m_historyRequests.isCurrent(serial))
                    emit manifestHistoryReady(history);
            });
    connect(b, &ConsoleBackend::statusLoaded, this,
            [this](quint64 serial, const StatusLookup& lookup, const relctl::JobStatus& status) {
                if (m_statusRequests.isCurrent(serial))
                    emit statusReady(lookup, status);
            });
    connect(b, &ConsoleBackend::actionFinished, this,
            [this](quint64 serial, bool ok, const QString& message) {
                const ConsoleAction action = m_actions.take(serial);
                if (ok)
                    emit actionSucceeded(action);
                emit actionFinished(ok, message);
            });
    connect(b, &ConsoleBackend::requestFailed, this,
            [this](const RequestId& request, const QString& message) {
                // Only the audit model holds a request open (one page at a
                // time, none other asked for until it is answered): it alone
                // must forget a failed one, and only one of its own. The other
                // views keep what they show; their next request asks again.
                switch (request.kind) {
                case RequestKind::AuditPage:
                    m_audit->requestFailed(request.serial);
                    break;
                case RequestKind::Status:
                    // The card says so rather than keep "looking up…": a
                    // status is what a retry decision waits for.
                    if (m_statusLookup && m_statusRequests.isCurrent(request.serial))
                        emit statusFailed(*m_statusLookup, message);
                    break;
                case RequestKind::Environments:
                case RequestKind::Timeline:
                case RequestKind::Trace:
                case RequestKind::Supersessions:
                case RequestKind::Promotions:
                case RequestKind::ManifestHistory:
                case RequestKind::ServerSleep:
                    break;
                }
                emit failed(message);
            });

    // A rehearsal's answers carry the serial of its run: only the newest
    // run's are passed on.
    connect(b, &ConsoleBackend::rehearsalScenarioStarted, this,
            [this](quint64 serial, const relctl::rehearsal::Scenario& scenario, int index, int count) {
                if (serial == m_rehearsalSerial)
                    emit rehearsalScenarioStarted(scenario, index, count);
            });
    connect(b, &ConsoleBackend::rehearsalStepLogged, this,
            [this](quint64 serial, const relctl::rehearsal::Step& step) {
                if (serial == m_rehearsalSerial)
                    emit rehearsalStepLogged(step);
            });
    connect(b, &ConsoleBackend::rehearsalTimelineUpdated, this,
            [this](quint64 serial, const QString& scenario, const relctl::TimelineSlice& slice) {
                if (serial == m_rehearsalSerial)
                    emit rehearsalTimelineUpdated(scenario, slice);
            });
    connect(b, &ConsoleBackend::rehearsalScenarioFinished, this,
            [this](quint64 serial, const relctl::rehearsal::ScenarioResult& result) {
                if (serial == m_rehearsalSerial)
                    emit rehearsalScenarioFinished(result);
            });
    connect(b, &ConsoleBackend::rehearsalFinished, this,
            [this](quint64 serial, const relctl::rehearsal::Report& report, const QString& error) {
                if (serial != m_rehearsalSerial)
                    return;
                m_rehearsing = false;
                emit rehearsalFinished(report, error);
            });
    connect(b, &ConsoleBackend::probeFinished, this, [this](quint64 serial, const ProbeResult& result) {
        if (!m_probeRequests.isCurrent(serial))
            return; // superseded by a newer test, or cancelled
        m_probing = false;
        emit probeFinished(result);
    });

    // Many events in a burst (a queue handing over) cost one reload.
    m_reload.setSingleShot(true);
    m_reload.setInterval(std::chrono::milliseconds(150));
    connect(&m_reload, &QTimer::timeout, this, &ConsoleSession::reload);
    // Countdowns move locally between events; no query.
    m_countdown.setInterval(1000);
    connect(&m_countdown, &QTimer::timeout, m_environments, &EnvironmentsModel::tick);
}

ConsoleSession::~ConsoleSession()
{
    // An export in progress stops at its next page and removes its file;
    // the backend, deleted next, waits for it.
    if (m_exportCancel)
        *m_exportCancel = true;
}

void ConsoleSession::start()
{
    m_backend->start();
    m_countdown.start();
}

void ConsoleSession::scheduleReload()
{
    if (!m_reload.isActive())
        m_reload.start();
}

void ConsoleSession::reload()
{
    // What the window opens on first (the backend answers in order): the
    // environments and the audit browser's page, then the timeline, then
    // the side views behind their tabs.
    m_backend->loadEnvironments(m_environmentsRequests.next());
    // The first time (connected): the first page. After that never a reset:
    // the reviewer keeps the selection and scroll position, and the model
    // fetches only what is new, or counts it (see AuditModel).
    if (!m_audit->isActive())
        m_audit->setFilter(m_audit->filter());
    else
        m_audit->eventsArrived();
    if (m_timelineTo > m_timelineFrom)
        requestTimeline(m_timelineFrom, m_timelineTo);
    m_backend->loadSupersessions(m_supersessionRequests.next());
    // An older schema has no promotions to read: asking would only fail.
    if (m_connection.schemaVersion >= kPromotionsSchemaVersion) {
        m_backend->loadPromotions(m_promotionRequests.next());
        if (!m_historyEnv.isEmpty())
            m_backend->loadManifestHistory(m_historyRequests.next(), m_historyEnv);
    }
    if (m_statusLookup)
        m_backend->loadStatus(m_statusRequests.next(), *m_statusLookup);
}

void ConsoleSession::setTarget(const ConnectionTarget& target)
{
    m_backend->setTarget(target);
    // Another database's ids say nothing about this one's: read it afresh.
    // Queued after setTarget, the first page comes from the new database.
    m_audit->reload();
}

bool ConsoleSession::exportAudit(const QString& path, bool json)
{
    if (m_exportCancel)
        return false;
    m_exportCancel = std::make_shared<std::atomic<bool>>(false);
    m_backend->exportAudit(++m_exportSerial, path, json, m_audit->filter(), m_audit->auditSort(),
                           m_exportCancel);
    return true;
}

void ConsoleSession::cancelExport()
{
    if (m_exportCancel)
        *m_exportCancel = true;
}

bool ConsoleSession::runRehearsal(const relctl::rehearsal::Options& options)
{
    if (m_rehearsing)
        return false;
    m_rehearsing = true;
    m_backend->runRehearsal(++m_rehearsalSerial, options);
    return true;
}

void ConsoleSession::cancelRehearsal()
{
    if (m_rehearsing)
        m_backend->cancelRehearsal();
}

RehearsalRunner* ConsoleSession::rehearsalRunner() const
{
    return m_backend->findChild<RehearsalRunner*>(QString(), Qt::FindDirectChildrenOnly);
}

void ConsoleSession::probeTarget(const ConnectionTarget& target)
{
    m_probing = true;
    m_backend->probeTarget(m_probeRequests.next(), target);
}

void ConsoleSession::cancelProbe()
{
    // A serial nobody asked with: the answer of the test running is not current.
    m_probeRequests.next();
    m_probing = false;
}

void ConsoleSession::requestTimeline(qint64 fromMs, qint64 toMs)
{
    m_timelineFrom = fromMs;
    m_timelineTo = toMs;
    m_backend->loadTimeline(m_timelineRequests.next(), fromMs, toMs);
}

void ConsoleSession::coverTimeline(qint64 fromMs, qint64 toMs)
{
    const qint64 span = std::max<qint64>(toMs - fromMs, 1);
    const bool asked = m_timelineTo > m_timelineFrom;
    const bool inside = asked && fromMs >= m_timelineFrom && toMs <= m_timelineTo;
    // A slice asked for this view spans twice the view.
    const bool closerLook = asked && m_timelineTo - m_timelineFrom > 4 * span;
    if (inside && !closerLook)
        return;
    if (!m_connection.connected) {
        // Kept for the reload that follows connecting (or reconnecting):
        // asked now, it would only go out first and hold up the rest.
        m_timelineFrom = fromMs - span / 2;
        m_timelineTo = toMs + span / 2;
        return;
    }
    requestTimeline(fromMs - span / 2, toMs + span / 2);
}

void ConsoleSession::requestTrace(qint64 eventId)
{
    m_backend->loadTrace(m_traceRequests.next(), eventId);
}

void ConsoleSession::requestManifestHistory(const QString& env)
{
    m_historyEnv = env;
    m_backend->loadManifestHistory(m_historyRequests.next(), env);
}

void ConsoleSession::requestStatus(const StatusLookup& lookup)
{
    m_statusLookup = lookup;
    m_backend->loadStatus(m_statusRequests.next(), lookup);
}

void ConsoleSession::runAction(const ConsoleAction& action)
{
    const quint64 serial = m_actionRequests.next();
    m_actions.insert(serial, action);
    m_backend->runAction(serial, action);
}

} // namespace relctl::ui
