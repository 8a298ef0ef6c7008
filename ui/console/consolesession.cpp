#include "consolesession.h"

#include "auditmodel.h"
#include "environmentsmodel.h"

namespace relctl::ui {

ConsoleSession::ConsoleSession(const ConnectionTarget& target, bool seedDemo, QObject* parent)
    : QObject(parent), m_worker(new ConsoleWorker(target)), m_environments(new EnvironmentsModel(this)),
      m_audit(new AuditModel(this))
{
    m_worker->setSeedDemo(seedDemo);
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);

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
    connect(m_worker, &ConsoleWorker::requestFailed, this, [this](quint64 serial, const QString& message) {
        m_audit->requestFailed(serial);
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
    m_thread.quit();
    m_thread.wait();
}

void ConsoleSession::start()
{
    m_thread.start();
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
    QMetaObject::invokeMethod(m_worker, "loadEnvironments", Qt::QueuedConnection,
                              Q_ARG(quint64, m_environmentsRequests.next()));
    QMetaObject::invokeMethod(m_worker, "loadApprovals", Qt::QueuedConnection,
                              Q_ARG(quint64, m_approvalRequests.next()));
    if (m_timelineTo > m_timelineFrom)
        requestTimeline(m_timelineFrom, m_timelineTo);
    // The newest events are on top: re-read the first page under the same filter.
    m_audit->setFilter(m_audit->filter());
}

void ConsoleSession::setTarget(const ConnectionTarget& target)
{
    QMetaObject::invokeMethod(m_worker, "setTarget", Qt::QueuedConnection, Q_ARG(ConnectionTarget, target));
}

void ConsoleSession::requestTimeline(qint64 fromMs, qint64 toMs)
{
    m_timelineFrom = fromMs;
    m_timelineTo = toMs;
    QMetaObject::invokeMethod(m_worker, "loadTimeline", Qt::QueuedConnection,
                              Q_ARG(quint64, m_timelineRequests.next()), Q_ARG(qint64, fromMs),
                              Q_ARG(qint64, toMs));
}

void ConsoleSession::requestTrace(qint64 eventId)
{
    QMetaObject::invokeMethod(m_worker, "loadTrace", Qt::QueuedConnection,
                              Q_ARG(quint64, m_traceRequests.next()), Q_ARG(qint64, eventId));
}

void ConsoleSession::runAction(const ConsoleAction& action)
{
    QMetaObject::invokeMethod(m_worker, "runAction", Qt::QueuedConnection,
                              Q_ARG(quint64, m_actionRequests.next()), Q_ARG(ConsoleAction, action));
}

} // namespace relctl::ui
