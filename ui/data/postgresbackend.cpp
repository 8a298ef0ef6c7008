#include "postgresbackend.h"

#include "connectionprobe.h"
#include "consoleworker.h"
#include "rehearsalrunner.h"

#include <utility>

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

PostgresBackend::PostgresBackend(const ConnectionTarget& target, bool seedDemo, QObject* parent)
    : ConsoleBackend(parent), m_target(target), m_worker(new ConsoleWorker(target)),
      m_pages(new ConsoleWorker(target)), m_exporter(new ConsoleWorker(target)),
      m_full(new ConsoleWorker(target)), m_rehearsals(new RehearsalRunner(this)),
      m_probe(new ConnectionProbe(this))
{
    // Created here, on the GUI thread, then handed to their threads: each
    // creates its connections and socket notifier on its own thread.
    m_worker->setSeedDemo(seedDemo);
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    // The pages worker hears no events itself: the main worker's listener
    // tells the session, whose audit model asks for what is new.
    m_pages->setLive(false);
    m_pages->setPrefetchFirstAuditPage(true);
    m_pages->moveToThread(&m_pagesThread);
    connect(&m_pagesThread, &QThread::finished, m_pages, &QObject::deleteLater);
    m_exporter->setLive(false);
    m_exporter->moveToThread(&m_exportThread);
    connect(&m_exportThread, &QThread::finished, m_exporter, &QObject::deleteLater);
    // Hears no events either: the session asks it only for full reads.
    m_full->setLive(false);
    m_full->moveToThread(&m_fullThread);
    connect(&m_fullThread, &QThread::finished, m_full, &QObject::deleteLater);

    // Signal to signal: queued, so the answers arrive on this (the GUI) thread.
    connect(m_worker, &ConsoleWorker::connectionChanged, this, &ConsoleBackend::connectionChanged);
    connect(m_worker, &ConsoleWorker::eventsArrived, this, &ConsoleBackend::eventsArrived);
    connect(m_worker, &ConsoleWorker::environmentsLoaded, this, &ConsoleBackend::environmentsLoaded);
    connect(m_pages, &ConsoleWorker::auditPageLoaded, this, &ConsoleBackend::auditPageLoaded);
    connect(m_pages, &ConsoleWorker::requestFailed, this, &ConsoleBackend::requestFailed);
    connect(m_worker, &ConsoleWorker::timelineLoaded, this, &ConsoleBackend::timelineLoaded);
    connect(m_full, &ConsoleWorker::timelineLoaded, this, &ConsoleBackend::timelineLoaded);
    connect(m_full, &ConsoleWorker::promotionsLoaded, this, &ConsoleBackend::promotionsLoaded);
    connect(m_full, &ConsoleWorker::requestFailed, this, &ConsoleBackend::requestFailed);
    // The environments' full read answered, or failed: the full reads held
    // behind it go out.
    connect(m_worker, &ConsoleWorker::environmentsLoaded, this, [this](quint64 serial) {
        if (serial == m_environmentsFull)
            releaseHeldFullReads();
    });
    connect(m_worker, &ConsoleWorker::requestFailed, this, [this](const RequestId& request) {
        if (request.kind == RequestKind::Environments && request.serial == m_environmentsFull)
            releaseHeldFullReads();
    });
    connect(m_worker, &ConsoleWorker::traceLoaded, this, &ConsoleBackend::traceLoaded);
    connect(m_worker, &ConsoleWorker::supersessionsLoaded, this, &ConsoleBackend::supersessionsLoaded);
    connect(m_worker, &ConsoleWorker::promotionsLoaded, this, &ConsoleBackend::promotionsLoaded);
    connect(m_worker, &ConsoleWorker::manifestHistoryLoaded, this, &ConsoleBackend::manifestHistoryLoaded);
    connect(m_worker, &ConsoleWorker::statusLoaded, this, &ConsoleBackend::statusLoaded);
    connect(m_worker, &ConsoleWorker::actionFinished, this, &ConsoleBackend::actionFinished);
    connect(m_worker, &ConsoleWorker::requestFailed, this, &ConsoleBackend::requestFailed);
    connect(m_exporter, &ConsoleWorker::exportProgress, this, &ConsoleBackend::exportProgress);
    connect(m_exporter, &ConsoleWorker::exportFinished, this, &ConsoleBackend::exportFinished);

    // The runner and the probe answer on this thread already; each answer
    // gets the serial of the request it belongs to.
    connect(m_rehearsals, &RehearsalRunner::scenarioStarted, this,
            [this](const relctl::rehearsal::Scenario& scenario, int index, int count) {
                emit rehearsalScenarioStarted(m_rehearsalSerial, scenario, index, count);
            });
    connect(m_rehearsals, &RehearsalRunner::stepLogged, this, [this](const relctl::rehearsal::Step& step) {
        emit rehearsalStepLogged(m_rehearsalSerial, step);
    });
    connect(m_rehearsals, &RehearsalRunner::timelineUpdated, this,
            [this](const QString& scenario, const relctl::TimelineSlice& slice) {
                emit rehearsalTimelineUpdated(m_rehearsalSerial, scenario, slice);
            });
    connect(m_rehearsals, &RehearsalRunner::scenarioFinished, this,
            [this](const relctl::rehearsal::ScenarioResult& result) {
                emit rehearsalScenarioFinished(m_rehearsalSerial, result);
            });
    connect(m_rehearsals, &RehearsalRunner::finished, this,
            [this](const relctl::rehearsal::Report& report, const QString& error) {
                emit rehearsalFinished(m_rehearsalSerial, report, error);
            });
    connect(m_probe, &ConnectionProbe::finished, this,
            [this](quint64, const ProbeResult& result) { emit probeFinished(m_probeSerial, result); });
}

PostgresBackend::~PostgresBackend()
{
    m_fullThread.quit();
    m_exportThread.quit();
    m_pagesThread.quit();
    m_thread.quit();
    m_fullThread.wait();
    m_exportThread.wait();
    m_pagesThread.wait();
    m_thread.wait();
}

void PostgresBackend::start()
{
    m_thread.start();
    m_pagesThread.start();
    m_exportThread.start();
    // Not connected now: on connecting its first read waits for the
    // environments' answer anyway, and a fourth new session would only
    // compete with theirs.
    m_fullThread.start();
    QMetaObject::invokeMethod(m_worker, &ConsoleWorker::start, Qt::QueuedConnection);
    // Connected now, at the same time as the main worker, so the first page
    // is asked on an open connection.
    QMetaObject::invokeMethod(m_pages, &ConsoleWorker::start, Qt::QueuedConnection);
}

void PostgresBackend::setTarget(const ConnectionTarget& target)
{
    m_target = target;
    post(m_worker, [target](ConsoleWorker& w) { w.setTarget(target); });
    post(m_pages, [target](ConsoleWorker& w) { w.setTarget(target); });
    post(m_exporter, [target](ConsoleWorker& w) { w.setTarget(target); });
    post(m_full, [target](ConsoleWorker& w) { w.setTarget(target); });
}

void PostgresBackend::loadEnvironments(quint64 serial, const std::optional<QStringList>& names)
{
    if (!names)
        m_environmentsFull = serial;
    post(m_worker, [serial, names](ConsoleWorker& w) { w.loadEnvironments(serial, names); });
}

void PostgresBackend::loadAuditPage(quint64 serial, const relctl::AuditPageRequest& request)
{
    post(m_pages, [serial, request](ConsoleWorker& w) { w.loadAuditPage(serial, request); });
}

void PostgresBackend::loadTimeline(quint64 serial, qint64 fromMs, qint64 toMs,
                                   const std::optional<QStringList>& envs)
{
    // A live update's lanes go to the main worker, in order with the
    // environments' rows of the same event.
    if (envs)
        post(m_worker,
             [serial, fromMs, toMs, envs](ConsoleWorker& w) { w.loadTimeline(serial, fromMs, toMs, envs); });
    else
        postFull([serial, fromMs, toMs](ConsoleWorker& w) { w.loadTimeline(serial, fromMs, toMs); });
}

void PostgresBackend::postFull(std::function<void(ConsoleWorker&)> call)
{
    if (m_environmentsFull)
        m_heldFull.append(std::move(call));
    else
        post(m_full, std::move(call));
}

void PostgresBackend::releaseHeldFullReads()
{
    m_environmentsFull = 0;
    for (auto& call : std::exchange(m_heldFull, {}))
        post(m_full, std::move(call));
}

void PostgresBackend::loadTrace(quint64 serial, qint64 eventId)
{
    post(m_worker, [serial, eventId](ConsoleWorker& w) { w.loadTrace(serial, eventId); });
}

void PostgresBackend::loadSupersessions(quint64 serial)
{
    post(m_worker, [serial](ConsoleWorker& w) { w.loadSupersessions(serial); });
}

void PostgresBackend::loadPromotions(quint64 serial, const std::optional<QStringList>& names)
{
    if (names)
        post(m_worker, [serial, names](ConsoleWorker& w) { w.loadPromotions(serial, names); });
    else
        postFull([serial](ConsoleWorker& w) { w.loadPromotions(serial); });
}

void PostgresBackend::loadManifestHistory(quint64 serial, const QString& env)
{
    post(m_worker, [serial, env](ConsoleWorker& w) { w.loadManifestHistory(serial, env); });
}

void PostgresBackend::loadStatus(quint64 serial, const StatusLookup& lookup)
{
    post(m_worker, [serial, lookup](ConsoleWorker& w) { w.loadStatus(serial, lookup); });
}

void PostgresBackend::runAction(quint64 serial, const ConsoleAction& action)
{
    post(m_worker, [serial, action](ConsoleWorker& w) { w.runAction(serial, action); });
}

void PostgresBackend::exportAudit(quint64 serial, const QString& path, bool json,
                                  const relctl::AuditFilter& filter, const relctl::AuditSort& sort,
                                  const ExportCancelFlag& cancel)
{
    post(m_exporter, [serial, path, json, filter, sort, cancel](ConsoleWorker& w) {
        w.exportAudit(serial, path, json, filter, sort, cancel);
    });
}

void PostgresBackend::runRehearsal(quint64 serial, const relctl::rehearsal::Options& options)
{
    // start() only starts the run's thread: the server is reached from there.
    if (!m_rehearsals->start(m_target, options)) {
        // Answered through the event loop, as every answer is.
        QMetaObject::invokeMethod(
            this,
            [this, serial] {
                emit rehearsalFinished(serial, {}, QStringLiteral("another rehearsal is running"));
            },
            Qt::QueuedConnection);
        return;
    }
    m_rehearsalSerial = serial;
}

void PostgresBackend::cancelRehearsal()
{
    m_rehearsals->cancel();
}

void PostgresBackend::probeTarget(quint64 serial, const ConnectionTarget& target)
{
    m_probeSerial = serial;
    m_probe->probe(target);
}

} // namespace relctl::ui
