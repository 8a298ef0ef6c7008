#include "consolesession.h"

#include "auditmodel.h"
#include "environmentsmodel.h"
#include "rehearsalrunner.h"

#include <QElapsedTimer>
#include <algorithm>
#include <utility>

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
    connect(b, &ConsoleBackend::eventsArrived, this, [this](const QStringList& envs) {
        // No name (connecting, reconnecting) or an unknown one: everything.
        if (envs.isEmpty() || envs.contains(QString())) {
            m_pendingAll = true;
        } else if (!m_pendingAll) {
            queueLive(envs);
            if (pendingIsMostOfAll())
                m_pendingAll = true;
        }
        // The first answer after connecting is not a burst to wait out: the
        // views have nothing yet (the audit browser has asked for nothing),
        // so they read at once.
        if (!m_audit->isActive())
            reload();
        else
            scheduleReload();
    });
    connect(b, &ConsoleBackend::environmentsLoaded, this,
            [this](quint64 serial, const EnvironmentRows& rows) { applyEnvironments(serial, rows.take()); });
    connect(m_audit, &AuditModel::fetchRequested, b, &ConsoleBackend::loadAuditPage);
    connect(b, &ConsoleBackend::auditPageLoaded, m_audit,
            [this](quint64 serial, const relctl::AuditPage& page) { m_audit->appendPage(serial, page); });
    connect(b, &ConsoleBackend::timelineLoaded, this, &ConsoleSession::applyTimeline);
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
    connect(b, &ConsoleBackend::promotionsLoaded, this, &ConsoleSession::applyPromotions);
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
                case RequestKind::Promotions: {
                    // A live update that failed: its names go with the next one.
                    LiveSerials& live = request.kind == RequestKind::Environments ? m_environmentsLive
                                        : request.kind == RequestKind::Timeline   ? m_timelineLive
                                                                                  : m_promotionsLive;
                    // Not asked again at once (a refusal would only repeat):
                    // they wait for the next event.
                    for (const QString& env : live.partials.take(request.serial))
                        live.pending.add(env);
                    break;
                }
                case RequestKind::Trace:
                case RequestKind::Supersessions:
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

    // Many events in a burst (a queue handing over) cost one read.
    m_reload.setSingleShot(true);
    m_reload.setInterval(std::chrono::milliseconds(150));
    connect(&m_reload, &QTimer::timeout, this, [this] {
        if (m_pendingAll)
            reload();
        else
            sendLive();
    });
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
    m_pendingAll = false;
    // The full reads below cover the names pending (without a timeline
    // range or a promotions schema, none were queued for those).
    m_timelineLive.pending.clear();
    m_promotionsLive.pending.clear();
    // What the window opens on first (the backend answers in order): the
    // environments and the audit browser's page, then the timeline, then
    // the side views behind their tabs.
    m_backend->loadEnvironments(m_environmentsLive.askFull(m_environmentsRequests));
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
        m_backend->loadPromotions(m_promotionsLive.askFull(m_promotionRequests));
        if (!m_historyEnv.isEmpty())
            m_backend->loadManifestHistory(m_historyRequests.next(), m_historyEnv);
    }
    if (m_statusLookup)
        m_backend->loadStatus(m_statusRequests.next(), *m_statusLookup);
}

void ConsoleSession::liveUpdate(const QStringList& envs)
{
    queueLive(envs);
    sendLive();
}

void ConsoleSession::queueLive(const QStringList& envs)
{
    for (const QString& env : envs) {
        m_environmentsLive.pending.add(env);
        if (m_timelineTo > m_timelineFrom)
            m_timelineLive.pending.add(env);
        if (m_connection.schemaVersion >= kPromotionsSchemaVersion)
            m_promotionsLive.pending.add(env);
    }
}

bool ConsoleSession::pendingIsMostOfAll() const
{
    // Below a chunk one live read does it; past half the organisation, a
    // full read costs less than the lists of names. The model's row count
    // is known without a walk, so an event's cost does not grow with it.
    const int pending = m_environmentsLive.pending.size();
    return pending > kLiveChunk && 2 * qint64(pending) > m_environments->rowCount();
}

void ConsoleSession::sendLive()
{
    // In the order reload() asks, for the same reasons.
    sendEnvironments();
    sendTimeline();
    sendPromotions();
}

void ConsoleSession::sendEnvironments()
{
    if (m_pendingAll || m_environmentsLive.inFlight() || m_environmentsLive.pending.isEmpty())
        return;
    const QStringList envs = m_environmentsLive.pending.take(kLiveChunk);
    m_backend->loadEnvironments(m_environmentsLive.askPartial(m_environmentsRequests, envs), envs);
    // What follows every event goes with the environments' read, so it too
    // is asked at most once per answer however fast events come. The audit
    // model holds one request at a time itself.
    m_audit->eventsArrived();
    // Pending requests only: their number follows what waits for a decision,
    // not the organisation.
    m_backend->loadSupersessions(m_supersessionRequests.next());
    if (m_connection.schemaVersion >= kPromotionsSchemaVersion && !m_historyEnv.isEmpty() &&
        envs.contains(m_historyEnv))
        m_backend->loadManifestHistory(m_historyRequests.next(), m_historyEnv);
    // A job's or an operation's state is not filed under an environment the
    // session knows: read again on every update, one small call.
    if (m_statusLookup)
        m_backend->loadStatus(m_statusRequests.next(), *m_statusLookup);
}

void ConsoleSession::sendTimeline()
{
    if (m_pendingAll || m_timelineLive.inFlight() || m_timelineLive.pending.isEmpty() ||
        m_timelineTo <= m_timelineFrom)
        return;
    const QStringList envs = m_timelineLive.pending.take(kLiveChunk);
    m_backend->loadTimeline(m_timelineLive.askPartial(m_timelineRequests, envs), m_timelineFrom, m_timelineTo,
                            envs);
}

void ConsoleSession::sendPromotions()
{
    if (m_pendingAll || m_promotionsLive.inFlight() || m_promotionsLive.pending.isEmpty() ||
        m_connection.schemaVersion < kPromotionsSchemaVersion)
        return;
    const QStringList envs = m_promotionsLive.pending.take(kLiveChunk);
    m_backend->loadPromotions(m_promotionsLive.askPartial(m_promotionRequests, envs), envs);
}

void ConsoleSession::applyEnvironments(quint64 serial, std::vector<relctl::EnvironmentRow> rows)
{
    if (m_environmentsLive.isPartial(serial)) {
        const QStringList names = m_environmentsLive.takePartial(serial);
        // The names that arrived while this read was in flight go out now,
        // together, before this answer is applied: the worker reads them
        // while the GUI thread applies.
        sendEnvironments();
        if (names.isEmpty())
            return;
        // Only the names still current: a newer answer applied for the others.
        const QSet<QString> current(names.begin(), names.end());
        std::erase_if(rows, [&](const relctl::EnvironmentRow& r) {
            return !current.contains(QString::fromStdString(r.name));
        });
        QElapsedTimer timer;
        timer.start();
        m_environments->updateEnvironments(names, std::move(rows));
        const qint64 ns = timer.nsecsElapsed();
        m_environmentsLive.appliedPartial(serial, names);
        emit liveUpdateApplied(QStringLiteral("environments"), names, ns);
        return;
    }
    if (serial != m_environmentsLive.fullAsked)
        return;
    // Out of order only (a test's backend): a live update asked after this
    // read and already applied is newer for its names; they keep its rows.
    const QSet<QString> newer = m_environmentsLive.appliedFull(serial);
    if (!newer.isEmpty()) {
        std::erase_if(rows, [&](const relctl::EnvironmentRow& r) {
            return newer.contains(QString::fromStdString(r.name));
        });
        for (const QString& name : newer) {
            const int row = m_environments->rowOf(name);
            if (row >= 0)
                rows.push_back(m_environments->environments()[std::size_t(row)]);
        }
    }
    m_environments->setEnvironments(std::move(rows));
    emit environmentsLoaded();
}

void ConsoleSession::applyTimeline(quint64 serial, const relctl::TimelineSlice& slice)
{
    if (m_timelineLive.isPartial(serial)) {
        const QStringList envs = m_timelineLive.takePartial(serial);
        sendTimeline(); // as for the environments
        if (envs.isEmpty())
            return;
        // Only the lanes still current: a newer answer was shown for the others.
        relctl::TimelineSlice part = slice;
        const QSet<QString> current(envs.begin(), envs.end());
        const auto other = [&](const std::string& env) {
            return !current.contains(QString::fromStdString(env));
        };
        std::erase_if(part.environments, other);
        std::erase_if(part.leases, [&](const relctl::LeaseSpan& l) { return other(l.env); });
        std::erase_if(part.markers, [&](const relctl::TimelineMarker& m) { return other(m.env); });
        std::erase_if(part.freezes, [&](const relctl::FrozenSpan& f) { return other(f.env); });
        QElapsedTimer timer;
        timer.start();
        emit timelineUpdated(envs, part);
        const qint64 ns = timer.nsecsElapsed();
        m_timelineLive.appliedPartial(serial, envs);
        emit liveUpdateApplied(QStringLiteral("timeline"), envs, ns);
        return;
    }
    if (serial != m_timelineLive.fullAsked)
        return;
    const QSet<QString> newer = m_timelineLive.appliedFull(serial);
    emit timelineReady(slice);
    // Out of order only: lanes a newer live update had shown are read again.
    if (!newer.isEmpty()) {
        for (const QString& env : newer)
            m_timelineLive.pending.add(env);
        sendTimeline();
    }
}

void ConsoleSession::applyPromotions(quint64 serial, const PromotionsReadHandle& read)
{
    if (m_promotionsLive.isPartial(serial)) {
        const QStringList names = m_promotionsLive.takePartial(serial);
        sendPromotions(); // as for the environments
        if (names.isEmpty())
            return;
        // The server covers the environments promoted from those asked for too.
        QSet<QString> covered(names.begin(), names.end());
        if (read.read().covers) {
            const QSet<QString> asked = covered;
            for (const std::string& env : *read.read().covers) {
                const QString name = QString::fromStdString(env);
                // Unless a newer answer was applied for it.
                if (!asked.contains(name) && m_promotionsLive.applied.value(name) < serial)
                    covered.insert(name);
            }
        }
        // A new whole sharing every environment the part does not replace:
        // the views keep reading the one before until they are given this.
        QElapsedTimer timer;
        timer.start();
        m_promotions = m_promotions.merged(SharedPromotions(read.take()), covered);
        const QStringList applied(covered.begin(), covered.end());
        m_promotionsLive.appliedPartial(serial, applied);
        emit promotionsReady(m_promotions);
        emit liveUpdateApplied(QStringLiteral("promotions"), applied, timer.nsecsElapsed());
        return;
    }
    if (serial != m_promotionsLive.fullAsked)
        return;
    const QSet<QString> newer = m_promotionsLive.appliedFull(serial);
    // Taken, not copied: at 10,000 environments a copy cost 55 ms.
    SharedPromotions whole(read.take());
    // Out of order only: the part a newer live update applied stays.
    if (!newer.isEmpty())
        whole = whole.merged(m_promotions, newer);
    m_promotions = std::move(whole);
    emit promotionsReady(m_promotions);
}

void ConsoleSession::PendingNames::add(const QString& name)
{
    if (!m_names.contains(name)) {
        m_names.insert(name);
        m_order.append(name);
    }
}

QStringList ConsoleSession::PendingNames::take(int most)
{
    if (m_order.size() <= most) {
        m_names.clear();
        return std::exchange(m_order, {});
    }
    QStringList taken = m_order.first(most);
    m_order.remove(0, most);
    for (const QString& name : taken)
        m_names.remove(name);
    return taken;
}

quint64 ConsoleSession::LiveSerials::askFull(RequestTracker& tracker)
{
    fullAsked = tracker.next();
    // Older live updates and the names pending are covered by the full
    // read. Their answers will be dropped: a live read may go out again
    // without waiting for them (a lost connection may never answer).
    partials.clear();
    pending.clear();
    return fullAsked;
}

quint64 ConsoleSession::LiveSerials::askPartial(RequestTracker& tracker, const QStringList& names)
{
    const quint64 serial = tracker.next();
    partials.insert(serial, names);
    return serial;
}

QStringList ConsoleSession::LiveSerials::takePartial(quint64 serial)
{
    QStringList names = partials.take(serial);
    if (serial < fullAsked)
        return {};
    names.removeIf([&](const QString& name) { return applied.value(name) > serial; });
    return names;
}

void ConsoleSession::LiveSerials::appliedPartial(quint64 serial, const QStringList& names)
{
    for (const QString& name : names)
        applied.insert(name, serial);
}

QSet<QString> ConsoleSession::LiveSerials::appliedFull(quint64 serial)
{
    QSet<QString> newer;
    for (auto it = applied.begin(); it != applied.end();) {
        if (it.value() > serial) {
            newer.insert(it.key());
            ++it;
        } else {
            it = applied.erase(it);
        }
    }
    return newer;
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
    m_backend->loadTimeline(m_timelineLive.askFull(m_timelineRequests), fromMs, toMs);
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
