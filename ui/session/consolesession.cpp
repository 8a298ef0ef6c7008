#include "consolesession.h"

#include "auditmodel.h"
#include "environmentsmodel.h"

namespace relctl::ui {

namespace {

// Runs call(worker) on the worker's thread, queued behind what was asked
// before (the worker answers in order). The functor form is checked by the
// compiler, slot and arguments, where a misspelt name in the string form only
// printed a warning at run time and dropped the request. Arguments are
// captured by value: they cross threads. The worker is the call's context, so
// a call still queued when the worker is deleted is dropped, not run.
template <typename Call> void post(ConsoleWorker* worker, Call&& call)
{
    QMetaObject::invokeMethod(
        worker, [worker, call = std::forward<Call>(call)] { call(*worker); }, Qt::QueuedConnection);
}

} // namespace

ConsoleSession::ConsoleSession(const ConnectionTarget& target, bool seedDemo, QObject* parent)
    : QObject(parent), m_worker(new ConsoleWorker(target)), m_exporter(new ConsoleWorker(target)),
      m_environments(new EnvironmentsModel(this)), m_audit(new AuditModel(this))
{
    m_worker->setSeedDemo(seedDemo);
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    // It connects on its first export.
    m_exporter->setLive(false);
    m_exporter->moveToThread(&m_exportThread);
    connect(&m_exportThread, &QThread::finished, m_exporter, &QObject::deleteLater);
    connect(m_exporter, &ConsoleWorker::exportProgress, this, [this](quint64 serial, qint64 rows) {
        if (serial == m_exportSerial && m_exportCancel)
            emit exportProgress(rows);
    });
    connect(m_exporter, &ConsoleWorker::exportFinished, this,
            [this](quint64 serial, bool ok, qint64 rows, const QString& message) {
                if (serial != m_exportSerial)
                    return;
                m_exportCancel.reset();
                emit exportFinished(ok, rows, message);
            });

    connect(m_worker, &ConsoleWorker::connectionChanged, this, [this](const ConnectionState& state) {
        m_connection = state;
        emit connectionChanged(state);
    });
    connect(m_worker, &ConsoleWorker::eventsArrived, this, &ConsoleSession::scheduleReload);
    connect(m_worker, &ConsoleWorker::environmentsLoaded, this,
            [this](quint64 serial, const std::vector<relctl::EnvironmentRow>& rows) {
                if (!m_environmentsRequests.isCurrent(serial))
                    return;
                m_environments->setEnvironments(rows);
                emit environmentsLoaded();
            });
    connect(m_audit, &AuditModel::fetchRequested, m_worker, &ConsoleWorker::loadAuditPage);
    connect(m_worker, &ConsoleWorker::auditPageLoaded, m_audit,
            [this](quint64 serial, const relctl::AuditPage& page) { m_audit->appendPage(serial, page); });
    connect(m_worker, &ConsoleWorker::timelineLoaded, this,
            [this](quint64 serial, const relctl::TimelineSlice& slice) {
                if (m_timelineRequests.isCurrent(serial))
                    emit timelineReady(slice);
            });
    connect(m_worker, &ConsoleWorker::traceLoaded, this,
            [this](quint64 serial, const std::optional<relctl::RefusalTrace>& trace) {
                if (m_traceRequests.isCurrent(serial))
                    emit traceReady(trace);
            });
    connect(m_worker, &ConsoleWorker::approvalsLoaded, this,
            [this](quint64 serial, const QList<ApprovalRow>& rows) {
                if (m_approvalRequests.isCurrent(serial))
                    emit approvalsReady(rows);
            });
    connect(m_worker, &ConsoleWorker::actionFinished, this,
            [this](quint64, bool ok, const QString& message) { emit actionFinished(ok, message); });
    connect(m_worker, &ConsoleWorker::requestFailed, this,
            [this](const RequestId& request, const QString& message) {
                // Only the audit model holds a request open (one page at a
                // time, none other asked for until it is answered): it alone
                // must forget a failed one, and only one of its own. The other
                // views keep what they show; their next request asks again.
                switch (request.kind) {
                case RequestKind::AuditPage:
                    m_audit->requestFailed(request.serial);
                    break;
                case RequestKind::Environments:
                case RequestKind::Timeline:
                case RequestKind::Trace:
                case RequestKind::Approvals:
                case RequestKind::ServerSleep:
                    break;
                }
                emit failed(message);
            });

    // Many events in a burst (a queue handing over) cost one reload.
    m_reload.setSingleShot(true);
    m_reload.setInterval(150);
    connect(&m_reload, &QTimer::timeout, this, &ConsoleSession::reload);
    // Countdowns move locally between events; no query.
    m_countdown.setInterval(1000);
    connect(&m_countdown, &QTimer::timeout, m_environments, &EnvironmentsModel::tick);
}

ConsoleSession::~ConsoleSession()
{
    // An export in progress stops at its next page and removes its file.
    if (m_exportCancel)
        *m_exportCancel = true;
    m_exportThread.quit();
    m_thread.quit();
    m_exportThread.wait();
    m_thread.wait();
}

void ConsoleSession::start()
{
    m_thread.start();
    m_exportThread.start();
    QMetaObject::invokeMethod(m_worker, &ConsoleWorker::start, Qt::QueuedConnection);
    m_countdown.start();
}

void ConsoleSession::scheduleReload()
{
    if (!m_reload.isActive())
        m_reload.start();
}

void ConsoleSession::reload()
{
    post(m_worker,
         [serial = m_environmentsRequests.next()](ConsoleWorker& w) { w.loadEnvironments(serial); });
    post(m_worker, [serial = m_approvalRequests.next()](ConsoleWorker& w) { w.loadApprovals(serial); });
    if (m_timelineTo > m_timelineFrom)
        requestTimeline(m_timelineFrom, m_timelineTo);
    // The first time (connected): the first page. After that never a reset:
    // the reviewer keeps the selection and scroll position, and the model
    // fetches only what is new, or counts it (see AuditModel).
    if (!m_audit->isActive())
        m_audit->setFilter(m_audit->filter());
    else
        m_audit->eventsArrived();
}

void ConsoleSession::setTarget(const ConnectionTarget& target)
{
    post(m_worker, [target](ConsoleWorker& w) { w.setTarget(target); });
    post(m_exporter, [target](ConsoleWorker& w) { w.setTarget(target); });
    // Another database's ids say nothing about this one's: read it afresh.
    // Queued after setTarget, the first page comes from the new database.
    m_audit->reload();
}

bool ConsoleSession::exportAudit(const QString& path, bool json)
{
    if (m_exportCancel)
        return false;
    m_exportCancel = std::make_shared<std::atomic<bool>>(false);
    post(m_exporter, [serial = ++m_exportSerial, path, json, filter = m_audit->filter(),
                      sort = m_audit->auditSort(), cancel = m_exportCancel](ConsoleWorker& w) {
        w.exportAudit(serial, path, json, filter, sort, cancel);
    });
    return true;
}

void ConsoleSession::cancelExport()
{
    if (m_exportCancel)
        *m_exportCancel = true;
}

void ConsoleSession::requestTimeline(qint64 fromMs, qint64 toMs)
{
    m_timelineFrom = fromMs;
    m_timelineTo = toMs;
    post(m_worker, [serial = m_timelineRequests.next(), fromMs, toMs](ConsoleWorker& w) {
        w.loadTimeline(serial, fromMs, toMs);
    });
}

void ConsoleSession::requestTrace(qint64 eventId)
{
    post(m_worker,
         [serial = m_traceRequests.next(), eventId](ConsoleWorker& w) { w.loadTrace(serial, eventId); });
}

void ConsoleSession::runAction(const ConsoleAction& action)
{
    post(m_worker,
         [serial = m_actionRequests.next(), action](ConsoleWorker& w) { w.runAction(serial, action); });
}

} // namespace relctl::ui
