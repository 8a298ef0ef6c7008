#include "consoleworker.h"

#include "relctl/auditexport.h"
#include "relctl/database.h"
#include "relctl/demo.h"
#include "relctl/embedded.h"
#include "relctl/error.h"
#include "relctl/listener.h"
#include "relctl/naturalsort.h"

#include <QElapsedTimer>
#include <QSocketNotifier>
#include <QTimer>
#include <algorithm>
#include <future>
#include <utility>

namespace relctl::ui {

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

std::string s(const QString& q)
{
    return q.toStdString();
}

std::optional<std::vector<std::string>> strings(const std::optional<QStringList>& names)
{
    if (!names)
        return std::nullopt;
    std::vector<std::string> out;
    out.reserve(std::size_t(names->size()));
    for (const QString& n : *names)
        out.push_back(n.toStdString());
    return out;
}

} // namespace

ConsoleWorker::ConsoleWorker(ConnectionTarget target, QObject* parent)
    : QObject(parent), m_target(std::move(target)), m_retry(new QTimer(this)), m_follow(new QTimer(this))
{
    // A child: it moves to the worker's thread with the worker. Requests may
    // arrive before start(); whichever comes first connects.
    m_retry->setInterval(2000);
    connect(m_retry, &QTimer::timeout, this, &ConsoleWorker::connectNow);
    // Events nobody waits for are not announced (renewals, refusals, handovers
    // on an environment without waiters): the trail is followed by id. Four
    // times a second, so that such an event reaches the views within a second
    // (the debounce and the partial read come after the poll); a poll with
    // nothing new costs the server about 0.4 ms, whatever the trail's length.
    m_follow->setInterval(250);
    connect(m_follow, &QTimer::timeout, this, &ConsoleWorker::followEvents);
    qRegisterMetaType<relctl::AuditPageRequest>();
    qRegisterMetaType<relctl::AuditPage>();
    qRegisterMetaType<relctl::TimelineSlice>();
    qRegisterMetaType<std::vector<relctl::EnvironmentRow>>();
    qRegisterMetaType<relctl::ui::EnvironmentRows>();
    qRegisterMetaType<std::optional<relctl::RefusalTrace>>();
    qRegisterMetaType<ConsoleAction>();
    qRegisterMetaType<ConnectionState>();
    qRegisterMetaType<ConnectionTarget>();
    qRegisterMetaType<QList<SupersessionRow>>();
    qRegisterMetaType<PromotionsSnapshot>();
    qRegisterMetaType<PromotionsReadHandle>();
    qRegisterMetaType<SharedPromotions>();
    qRegisterMetaType<relctl::ManifestHistory>();
    qRegisterMetaType<relctl::AuditFilter>();
    qRegisterMetaType<relctl::AuditSort>();
    qRegisterMetaType<ExportCancelFlag>();
    qRegisterMetaType<RequestId>();
    qRegisterMetaType<StatusLookup>();
    qRegisterMetaType<relctl::JobStatus>();
}

ConsoleWorker::~ConsoleWorker() = default;

void ConsoleWorker::start()
{
    if (!m_db)
        connectNow();
}

void ConsoleWorker::setTarget(const ConnectionTarget& target)
{
    m_target = target;
    delete m_notifier;
    m_notifier = nullptr;
    m_listener.reset();
    m_db.reset();
    m_prefetched.reset();
    m_state = ConnectionState{};
    // Demo chosen in the connection dialog: its database is seeded (or
    // refreshed when its week has gone stale) as --demo does, by the worker
    // that connects first; the exporter's reads what that one seeded.
    if (m_target.kind == ConnectionTarget::Kind::Demo && m_live)
        m_seedDemo = true;
    // A worker without live updates (the exporter) connects on its next
    // request, not now: it would only hold an idle connection.
    if (m_live) {
        connectNow();
    } else {
        m_retry->stop();
        m_state.target = m_target.describe();
    }
}

void ConsoleWorker::connectNow()
{
    m_state.target = m_target.describe();
    try {
        if (m_seedDemo) {
            // Only into the demo's own cluster: a connection switched before
            // the first one succeeded does not receive the demo.
            if (m_target.kind == ConnectionTarget::Kind::Demo) {
                relctl::EmbeddedCluster demo = relctl::EmbeddedCluster::demoForCurrentUser();
                openDemo(demo);
            }
            m_seedDemo = false;
        }
        // Resolved on every attempt: an embedded cluster that stopped is started again.
        const std::string conninfo = m_target.resolve();
        // The listening connection opens on a thread of its own while this
        // one connects and reads the server's facts: each is a new server
        // session that costs tens of milliseconds before its first answer,
        // and the window waits for both. Its first follow() notes where the
        // trail ends before the reload below reads anything, so nothing
        // committed in between is missed. A failure of either is thrown
        // here (a future's destructor waits for the thread, whose listener
        // is then dropped).
        std::future<std::unique_ptr<relctl::EventListener>> listening;
        if (m_live)
            listening = std::async(std::launch::async, [conninfo] {
                auto listener = std::make_unique<relctl::EventListener>(conninfo);
                listener->follow();
                return listener;
            });
        auto db = std::make_unique<relctl::Database>(conninfo);
        // Only the live worker's state reaches the window: the others (the
        // pages', the export's, the full reads') skip the server's facts, a
        // new session's first query, which on connecting competes with the
        // main one's for the server's time.
        std::optional<relctl::ServerInfo> info;
        if (m_live) {
            QElapsedTimer timer;
            timer.start();
            info = db->serverInfo();
            m_state.rttMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        }
        if (listening.valid())
            m_listener = listening.get();
        m_db = std::move(db);
        if (m_listener) {
            m_notifier =
                new QSocketNotifier(static_cast<qintptr>(m_listener->socket()), QSocketNotifier::Read, this);
            connect(m_notifier, &QSocketNotifier::activated, this, &ConsoleWorker::readEvents);
            m_follow->start();
        }
        if (m_prefetchFirstAuditPage) {
            // A session's first page costs it the compilation of the page
            // functions and the catalogue's lookups as well as the query.
            // Read here, while the main worker still connects, the page the
            // window asks for first is ready when it asks (auditPage()). A
            // failure here leaves nothing prefetched: the page itself
            // reports what is wrong.
            try {
                const relctl::AuditPageRequest first;
                m_prefetched = PrefetchedPage{first, relctl::ConsoleQueries(*m_db).auditPage(first)};
            } catch (const std::exception&) {
                m_prefetched.reset();
            }
        }
        m_state.connected = true;
        m_state.live = m_live;
        m_state.message.clear();
        if (info) {
            // The version without its build's words ("15.18", not "15.18
            // (Debian 15.18-0+deb12u1)"): the status bar it shares with the
            // notices is one line.
            const QString version = q(info->serverVersion).section(QStringLiteral(" ("), 0, 0);
            m_state.server = QStringLiteral("PostgreSQL %1, database %2").arg(version, q(info->database));
            m_state.schemaVersion = static_cast<int>(info->schemaVersion.value_or(0));
            m_state.login = q(info->login);
            m_state.permissions = Permissions::of(*info);
            m_state.tls = info->tls;
        }
        m_retry->stop();
        emit connectionChanged(m_state);
        // Nothing is kept for a disconnected listener: everything is re-read.
        emit eventsArrived({});
    } catch (const std::exception& e) {
        dropConnection(q(e.what()));
    }
}

void ConsoleWorker::dropConnection(const QString& why)
{
    m_follow->stop();
    delete m_notifier;
    m_notifier = nullptr;
    m_listener.reset();
    m_db.reset();
    m_prefetched.reset();
    const bool changed = m_state.connected || m_state.message != why;
    m_state.connected = false;
    m_state.live = false;
    m_state.message = why;
    if (changed)
        emit connectionChanged(m_state);
    if (!m_retry->isActive())
        m_retry->start();
}

bool ConsoleWorker::ensureConnected()
{
    if (!m_db)
        connectNow();
    return m_db != nullptr;
}

template <typename Read> void ConsoleWorker::relay(Read&& read)
{
    try {
        QStringList names;
        for (const std::string& env : read())
            names << q(env);
        if (!names.isEmpty())
            emit eventsArrived(names);
    } catch (const std::exception& e) {
        dropConnection(q(e.what()));
    }
}

void ConsoleWorker::readEvents()
{
    if (!m_listener)
        return;
    relay([&] { return m_listener->take(); });
}

void ConsoleWorker::followEvents()
{
    if (!m_listener) {
        m_follow->stop();
        return;
    }
    relay([&] { return m_listener->follow(); });
}

template <typename F, typename Fail> void ConsoleWorker::guarded(F&& body, Fail&& fail)
{
    if (!ensureConnected()) {
        fail(m_state.message);
        return;
    }
    QElapsedTimer timer;
    timer.start();
    // Nothing may escape: an exception thrown through a queued slot would end
    // the worker's event loop, and with it every view.
    try {
        body();
        m_state.rttMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    } catch (const relctl::Error& e) {
        if (e.code() == relctl::ExitCode::Unavailable)
            dropConnection(q(e.what()));
        fail(q(e.what()));
    } catch (const std::exception& e) {
        fail(q(e.what()));
    }
}

template <typename F> void ConsoleWorker::guarded(RequestId request, F&& body)
{
    guarded(std::forward<F>(body), [&](const QString& message) { emit requestFailed(request, message); });
}

void ConsoleWorker::loadEnvironments(quint64 serial, const std::optional<QStringList>& names)
{
    guarded({RequestKind::Environments, serial}, [&] {
        std::vector<relctl::EnvironmentRow> rows = relctl::ConsoleQueries(*m_db).environments(strings(names));
        // In the order people count in (svc2 before svc10), here rather than
        // on the GUI thread: the model finds them sorted and keeps them.
        const auto natural = [](const relctl::EnvironmentRow& a, const relctl::EnvironmentRow& b) {
            return relctl::naturalLess(a.name, b.name);
        };
        if (!std::is_sorted(rows.begin(), rows.end(), natural))
            std::stable_sort(rows.begin(), rows.end(), natural);
        emit environmentsLoaded(serial, EnvironmentRows(std::move(rows)));
    });
}

void ConsoleWorker::loadAuditPage(quint64 serial, const relctl::AuditPageRequest& request)
{
    guarded({RequestKind::AuditPage, serial}, [&] { emit auditPageLoaded(serial, auditPage(request)); });
}

relctl::AuditPage ConsoleWorker::auditPage(const relctl::AuditPageRequest& request)
{
    relctl::ConsoleQueries queries(*m_db);
    // Served once at most: the next request for it is a reload.
    std::optional<PrefetchedPage> prefetched = std::exchange(m_prefetched, std::nullopt);
    if (prefetched && prefetched->request == request) {
        // Current unless an event the page would show arrived since it was
        // read: one row newer than its horizon, under the same filter. An
        // event below the horizon that committed late is the same for a page
        // read now; the model's first round of live updates reaches back
        // over those ids (AuditModel::requestNewer).
        const relctl::AuditPageRequest newer{request.filter, request.sort, std::nullopt,
                                             prefetched->page.horizon, 1};
        if (queries.auditPage(newer).events.empty()) {
            ++m_prefetchedPagesServed;
            return std::move(prefetched->page);
        }
    }
    return queries.auditPage(request);
}

void ConsoleWorker::loadTimeline(quint64 serial, qint64 fromMs, qint64 toMs,
                                 const std::optional<QStringList>& envs)
{
    guarded({RequestKind::Timeline, serial}, [&] {
        emit timelineLoaded(serial, relctl::ConsoleQueries(*m_db).timeline(
                                        relctl::Timestamp::fromMillis(fromMs),
                                        relctl::Timestamp::fromMillis(toMs), strings(envs)));
    });
}

void ConsoleWorker::loadTrace(quint64 serial, qint64 eventId)
{
    guarded({RequestKind::Trace, serial},
            [&] { emit traceLoaded(serial, relctl::ConsoleQueries(*m_db).trace(eventId)); });
}

void ConsoleWorker::loadSupersessions(quint64 serial)
{
    guarded({RequestKind::Supersessions, serial}, [&] {
        const relctl::Supersessions reply = m_db->supersessions(std::nullopt, false);
        QList<SupersessionRow> rows;
        for (const relctl::Supersession& a : reply.requests) {
            const relctl::Candidate w = a.winner.value_or(relctl::Candidate{});
            SupersessionRow row;
            row.id = a.id;
            row.env = q(a.env);
            row.winnerJob = q(w.job);
            row.winnerRelease = q(w.release);
            row.winnerGeneration = w.generation;
            for (const relctl::Candidate& c : a.skipped)
                row.skipped << QStringLiteral("%1 (generation %2)").arg(q(c.job)).arg(c.generation);
            rows << row;
        }
        emit supersessionsLoaded(serial, rows);
    });
}

void ConsoleWorker::loadPromotions(quint64 serial, const std::optional<QStringList>& names)
{
    guarded({RequestKind::Promotions, serial}, [&] {
        // One statement, so the paths and the requests are of one snapshot;
        // bounded: the newest decided requests only, not every one ever.
        relctl::PromotionsRead read =
            relctl::ConsoleQueries(*m_db).promotions(strings(names), kDecidedPromotions);
        PromotionsSnapshot snapshot;
        snapshot.environments = std::move(read.environments);
        snapshot.promotions = std::move(read.promotions);
        snapshot.covers = std::move(read.covers);
        // Handed over, not copied: the session takes it.
        emit promotionsLoaded(serial, PromotionsReadHandle(std::move(snapshot)));
    });
}

void ConsoleWorker::loadManifestHistory(quint64 serial, const QString& env)
{
    guarded({RequestKind::ManifestHistory, serial},
            [&] { emit manifestHistoryLoaded(serial, m_db->manifestHistory(s(env))); });
}

void ConsoleWorker::loadStatus(quint64 serial, const StatusLookup& lookup)
{
    guarded({RequestKind::Status, serial}, [&] {
        const std::string key = s(lookup.key);
        emit statusLoaded(serial, lookup,
                          lookup.kind == StatusLookup::Kind::Job ? m_db->jobStatus(key)
                                                                 : m_db->operationStatus(key));
    });
}

void ConsoleWorker::runAction(quint64 serial, const ConsoleAction& a)
{
    // Answered with actionFinished either way: the window tells the operator
    // what was refused and why. The decisions and the rollback answer a
    // refusal (NOT_APPROVER, SELF_APPROVAL, busy) as an Outcome; revoke and
    // freeze have none (what stops them is an error, as for any call).
    guarded(
        [&] {
            const std::string env = s(a.env), by = s(a.by), reason = s(a.reason);
            const std::optional<std::string> optionalReason =
                reason.empty() ? std::nullopt : std::optional(reason);
            std::optional<relctl::Outcome> outcome;
            switch (a.kind) {
            case ConsoleAction::Kind::Approve:
                outcome = m_db->decideSupersession(a.request, true, by, optionalReason);
                break;
            case ConsoleAction::Kind::Deny:
                outcome = m_db->decideSupersession(a.request, false, by, reason);
                break;
            case ConsoleAction::Kind::Revoke:
                m_db->revoke(env, by, reason);
                break;
            case ConsoleAction::Kind::Freeze:
                m_db->freeze(env, by, reason);
                break;
            case ConsoleAction::Kind::Unfreeze:
                m_db->unfreeze(env, by, optionalReason);
                break;
            case ConsoleAction::Kind::ApprovePromotion:
                outcome = m_db->decidePromotion(a.promotion, true, by, optionalReason);
                break;
            case ConsoleAction::Kind::DenyPromotion:
                outcome = m_db->decidePromotion(a.promotion, false, by, reason);
                break;
            case ConsoleAction::Kind::FreezeMany:
            case ConsoleAction::Kind::UnfreezeMany: {
                // One transaction: an unknown name refuses the whole call
                // (an error, answered below like any other).
                std::vector<std::string> envs;
                envs.reserve(std::size_t(a.envs.size()));
                for (const QString& e : a.envs)
                    envs.push_back(s(e));
                if (a.kind == ConsoleAction::Kind::FreezeMany)
                    m_db->freezeMany(envs, by, reason);
                else
                    m_db->unfreezeMany(envs, by, optionalReason);
                break;
            }
            case ConsoleAction::Kind::Rollback: {
                relctl::RollbackRequest r;
                r.env = env;
                r.toManifest = a.manifest;
                r.by = by;
                r.reason = reason;
                // No wait: a job holding the lease is news for the operator
                // (who decides whether to revoke it), not something to sit out.
                outcome = m_db->rollback(r);
                break;
            }
            }
            if (outcome && !outcome->accepted()) {
                const std::string message = outcome->message();
                emit actionFinished(serial, false, q(message.empty() ? outcome->reason : message));
                return;
            }
            emit actionFinished(serial, true, QString());
        },
        [&](const QString& message) { emit actionFinished(serial, false, message); });
}

void ConsoleWorker::sleepOnServer(quint64 serial, double seconds)
{
    guarded({RequestKind::ServerSleep, serial}, [&] {
        m_db->sleepOnServer(seconds);
        emit slept(serial);
    });
}

void ConsoleWorker::exportAudit(quint64 serial, const QString& path, bool json,
                                const relctl::AuditFilter& filter, const relctl::AuditSort& sort,
                                const ExportCancelFlag& cancel)
{
    relctl::AuditExportOptions options;
    options.filter = filter;
    options.sort = sort;
    options.format = json ? relctl::AuditExportFormat::Json : relctl::AuditExportFormat::Csv;
    options.cancel = cancel.get();
    options.progress = [&](std::int64_t rows) { emit exportProgress(serial, rows); };
    // A cancel (AuditExportCancelled) fails like any other error, with its message.
    guarded(
        [&] {
            relctl::ConsoleQueries queries(*m_db);
            const std::int64_t rows = relctl::exportAuditFile(queries, options, s(path));
            emit exportFinished(serial, true, rows, QString());
        },
        [&](const QString& message) { emit exportFinished(serial, false, 0, message); });
}

} // namespace relctl::ui
