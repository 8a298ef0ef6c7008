#include "fakebackend.h"

#include <QFile>
#include <algorithm>
#include <charconv>

namespace relctl::ui {

namespace {

bool contains(const std::optional<std::string>& field, const std::string& text)
{
    return field && field->find(text) != std::string::npos;
}

bool matches(const relctl::Event& e, const relctl::AuditFilter& f)
{
    if ((f.env && e.env != *f.env) || (f.job && e.job != f.job) ||
        (f.operation && e.operation != *f.operation) || (f.reason && e.reason != f.reason) ||
        (f.from && e.at < *f.from) || (f.to && e.at > *f.to))
        return false;
    if (!f.text)
        return true;
    const std::string& t = *f.text;
    return contains(e.job, t) || contains(e.release, t) || contains(e.opId, t) || contains(e.host, t) ||
           contains(e.reason, t) || contains(e.actor, t) || contains(e.jobUrl, t);
}

std::optional<std::int64_t> number(const std::string& s)
{
    std::int64_t n = 0;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (error != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return n;
}

// The server's order on a cursor: the sort key (NULL larger than every value,
// numbers as numbers), then the id; reversed as a whole when descending.
bool before(const relctl::AuditCursor& a, const relctl::AuditCursor& b, bool descending)
{
    const auto less = [](const relctl::AuditCursor& x, const relctl::AuditCursor& y) {
        if (x.key != y.key) {
            if (!x.key || !y.key)
                return x.key.has_value(); // the other is NULL
            const auto nx = number(*x.key), ny = number(*y.key);
            if (nx && ny)
                return *nx < *ny;
            return *x.key < *y.key;
        }
        return x.id < y.id;
    };
    return descending ? less(b, a) : less(a, b);
}

const char* operationOf(ConsoleAction::Kind kind)
{
    switch (kind) {
    case ConsoleAction::Kind::Approve:
        return "approve";
    case ConsoleAction::Kind::Deny:
        return "deny";
    case ConsoleAction::Kind::Revoke:
        return "revoke";
    case ConsoleAction::Kind::Freeze:
        return "freeze";
    case ConsoleAction::Kind::Unfreeze:
        return "unfreeze";
    case ConsoleAction::Kind::ApprovePromotion:
        return "promotion-approve";
    case ConsoleAction::Kind::DenyPromotion:
        return "promotion-deny";
    case ConsoleAction::Kind::Rollback:
        return "rollback";
    case ConsoleAction::Kind::FreezeMany:
        return "freeze";
    case ConsoleAction::Kind::UnfreezeMany:
        return "unfreeze";
    }
    return "";
}

} // namespace

FakeBackend::FakeBackend(QObject* parent) : ConsoleBackend(parent)
{
    m_state.connected = true;
    m_state.live = true;
    m_state.server = QStringLiteral("in-memory fake");
    m_state.schemaVersion = 99;
    m_state.target = QStringLiteral("fake");
}

relctl::EnvironmentRow* FakeBackend::environment(const QString& name)
{
    const auto it =
        std::find_if(m_environments.begin(), m_environments.end(),
                     [&](const relctl::EnvironmentRow& row) { return row.name == name.toStdString(); });
    return it == m_environments.end() ? nullptr : &*it;
}

std::int64_t FakeBackend::addEvent(relctl::Event event)
{
    const relctl::Event* last = m_events.empty() ? nullptr : &m_events.back();
    event.id = last ? last->id + 1 : 1;
    if (event.at == relctl::Timestamp())
        event.at =
            last ? last->at + std::chrono::milliseconds(1) : relctl::Timestamp::fromMillis(1'700'000'000'000);
    m_events.push_back(std::move(event));
    return m_events.back().id;
}

void FakeBackend::failNext(RequestKind kind, const QString& message)
{
    m_failures[kind].push_back(message);
}

void FakeBackend::refuseNextAction(const QString& message)
{
    m_refusals.push_back(message);
}

void FakeBackend::releaseHeld(Order order)
{
    std::vector<std::function<void()>> held = std::exchange(m_held, {});
    if (order == Order::NewestFirst)
        std::reverse(held.begin(), held.end());
    // Each through the event loop, as they would arrive.
    for (std::function<void()>& send : held)
        QMetaObject::invokeMethod(this, std::move(send), Qt::QueuedConnection);
}

void FakeBackend::announce(const QStringList& environments)
{
    // Never held: the database's notifications do not wait for answers.
    QMetaObject::invokeMethod(
        this, [this, environments] { emit eventsArrived(environments); }, Qt::QueuedConnection);
}

void FakeBackend::dropConnection(const QString& message)
{
    ConnectionState lost = m_state;
    lost.connected = false;
    lost.live = false;
    lost.message = message;
    QMetaObject::invokeMethod(
        this, [this, lost] { emit connectionChanged(lost); }, Qt::QueuedConnection);
}

int FakeBackend::requestCount(RequestKind kind) const
{
    return static_cast<int>(std::count_if(m_requests.begin(), m_requests.end(),
                                          [kind](const RequestId& r) { return r.kind == kind; }));
}

void FakeBackend::answer(std::function<void()> send)
{
    if (m_holding)
        m_held.push_back(std::move(send));
    else
        QMetaObject::invokeMethod(this, std::move(send), Qt::QueuedConnection);
}

bool FakeBackend::failing(RequestId request)
{
    m_requests.push_back(request);
    std::deque<QString>& failures = m_failures[request.kind];
    if (failures.empty())
        return false;
    answer([this, request, message = failures.front()] { emit requestFailed(request, message); });
    failures.pop_front();
    return true;
}

void FakeBackend::connected()
{
    answer([this] {
        emit connectionChanged(m_state);
        // As the worker does: nothing is kept for a new connection, views re-read.
        emit eventsArrived({});
    });
}

void FakeBackend::start()
{
    ++m_starts;
    connected();
}

void FakeBackend::setTarget(const ConnectionTarget& target)
{
    m_targets << target;
    m_state.target = target.describe();
    connected();
}

void FakeBackend::loadEnvironments(quint64 serial, const std::optional<QStringList>& names)
{
    m_environmentNames.push_back(names);
    if (failing({RequestKind::Environments, serial}))
        return;
    const auto read = [this, names] {
        std::vector<relctl::EnvironmentRow> rows;
        for (const relctl::EnvironmentRow& r : m_environments) {
            if (!names || names->contains(QString::fromStdString(r.name)))
                rows.push_back(r);
        }
        return rows;
    };
    if (m_readWhenAsked)
        answer([this, serial, rows = read()] { emit environmentsLoaded(serial, rows); });
    else
        answer([this, serial, read] { emit environmentsLoaded(serial, read()); });
}

void FakeBackend::loadAuditPage(quint64 serial, const relctl::AuditPageRequest& request)
{
    m_auditRequests.push_back(request);
    if (!failing({RequestKind::AuditPage, serial}))
        answer([this, serial, request] { emit auditPageLoaded(serial, page(request)); });
}

void FakeBackend::loadTimeline(quint64 serial, qint64 fromMs, qint64 toMs,
                               const std::optional<QStringList>& envs)
{
    m_timelineEnvs.push_back(envs);
    if (failing({RequestKind::Timeline, serial}))
        return;
    answer([this, serial, fromMs, toMs, envs] {
        relctl::TimelineSlice slice = m_timeline;
        if (envs) {
            const auto other = [&](const std::string& env) {
                return !envs->contains(QString::fromStdString(env));
            };
            std::erase_if(slice.environments, other);
            std::erase_if(slice.markers, [&](const relctl::TimelineMarker& m) { return other(m.env); });
            std::erase_if(slice.leases, [&](const relctl::LeaseSpan& l) { return other(l.env); });
            std::erase_if(slice.freezes, [&](const relctl::FrozenSpan& f) { return other(f.env); });
        }
        std::erase_if(slice.markers, [&](const relctl::TimelineMarker& m) {
            return m.at.millis() < fromMs || m.at.millis() > toMs;
        });
        std::erase_if(slice.leases, [&](const relctl::LeaseSpan& l) {
            return l.endsAt.millis() < fromMs || l.acquiredAt.millis() > toMs;
        });
        std::erase_if(slice.freezes, [&](const relctl::FrozenSpan& f) {
            return f.from.millis() > toMs || (f.to && f.to->millis() < fromMs);
        });
        emit timelineLoaded(serial, slice);
    });
}

void FakeBackend::loadTrace(quint64 serial, qint64 eventId)
{
    if (failing({RequestKind::Trace, serial}))
        return;
    answer([this, serial, eventId] {
        const auto it = m_traces.find(eventId);
        emit traceLoaded(serial, it == m_traces.end() ? std::nullopt : std::optional(it->second));
    });
}

void FakeBackend::loadSupersessions(quint64 serial)
{
    if (!failing({RequestKind::Supersessions, serial}))
        answer([this, serial] { emit supersessionsLoaded(serial, m_supersessions); });
}

void FakeBackend::loadPromotions(quint64 serial, const std::optional<QStringList>& names)
{
    m_promotionNames.push_back(names);
    if (!failing({RequestKind::Promotions, serial}))
        answer([this, serial, names] {
            if (!names) {
                emit promotionsLoaded(serial, m_promotions);
                return;
            }
            // What the server covers: the names, and what is promoted from them.
            const auto named = [&](const std::string& env) {
                return names->contains(QString::fromStdString(env));
            };
            std::vector<std::string> covers;
            for (const QString& n : *names)
                covers.push_back(n.toStdString());
            for (const relctl::Environment& e : m_promotions.environments) {
                if (e.promoteFrom && named(*e.promoteFrom) && !named(e.name))
                    covers.push_back(e.name);
            }
            const auto covered = [&](const std::string& env) {
                return std::find(covers.begin(), covers.end(), env) != covers.end();
            };
            PromotionsSnapshot part;
            for (const relctl::Environment& e : m_promotions.environments) {
                if (covered(e.name))
                    part.environments.push_back(e);
            }
            for (const relctl::Promotion& p : m_promotions.promotions) {
                if (covered(p.env))
                    part.promotions.push_back(p);
            }
            part.covers = covers;
            emit promotionsLoaded(serial, part);
        });
}

void FakeBackend::loadManifestHistory(quint64 serial, const QString& env)
{
    if (failing({RequestKind::ManifestHistory, serial}))
        return;
    answer([this, serial, env] {
        const auto it = m_histories.find(env.toStdString());
        relctl::ManifestHistory history;
        history.env = env.toStdString();
        emit manifestHistoryLoaded(serial, it == m_histories.end() ? history : it->second);
    });
}

void FakeBackend::loadStatus(quint64 serial, const StatusLookup& lookup)
{
    m_statusLookups.push_back(lookup);
    if (failing({RequestKind::Status, serial}))
        return;
    answer([this, serial, lookup] {
        const std::string key = lookup.key.toStdString();
        const bool job = lookup.kind == StatusLookup::Kind::Job;
        if (const auto it = m_statuses.find({lookup.kind, key}); it != m_statuses.end()) {
            emit statusLoaded(serial, lookup, it->second);
            return;
        }
        relctl::JobStatus unknown;
        (job ? unknown.job : unknown.opId) = key;
        unknown.state = "unknown";
        unknown.summary = job ? "unknown: the database has no lease, candidate or refusal of job " + key
                              : "unknown: the database has no record of op id " + key;
        unknown.next = job ? "the job never reached the database: running it is safe"
                           : "the operation never reached the database: a retry with the same op id is safe";
        unknown.evidence = nlohmann::json::object();
        emit statusLoaded(serial, lookup, unknown);
    });
}

void FakeBackend::runAction(quint64 serial, const ConsoleAction& action)
{
    m_actions << action;
    answer([this, serial, action] {
        if (!m_refusals.empty()) {
            const QString message = m_refusals.front();
            m_refusals.pop_front();
            emit actionFinished(serial, false, message);
            return;
        }
        const QString error = apply(action);
        emit actionFinished(serial, error.isEmpty(), error);
        if (!error.isEmpty())
            return;
        const bool many = action.kind == ConsoleAction::Kind::FreezeMany ||
                          action.kind == ConsoleAction::Kind::UnfreezeMany;
        announce(many ? action.envs : QStringList{action.env});
    });
}

QString FakeBackend::apply(const ConsoleAction& action)
{
    if (action.kind == ConsoleAction::Kind::FreezeMany || action.kind == ConsoleAction::Kind::UnfreezeMany) {
        // All or nothing, as the server: an unknown name refuses the lot.
        for (const QString& env : action.envs) {
            if (!environment(env))
                return QStringLiteral("no environment %1").arg(env);
        }
        const bool freeze = action.kind == ConsoleAction::Kind::FreezeMany;
        for (const QString& env : action.envs) {
            relctl::EnvironmentRow* row = environment(env);
            if (row->frozen == freeze)
                continue; // unchanged: no event, as the server
            row->frozen = freeze;
            row->frozenBy = freeze ? std::optional(action.by.toStdString()) : std::nullopt;
            row->frozenReason = freeze ? std::optional(action.reason.toStdString()) : std::nullopt;
            relctl::Event event;
            event.env = env.toStdString();
            event.operation = operationOf(action.kind);
            event.outcome = "accepted";
            event.actor = action.by.toStdString();
            event.reason = action.reason.toStdString();
            addEvent(std::move(event));
        }
        return {};
    }
    QString env = action.env;
    if (action.kind == ConsoleAction::Kind::Approve || action.kind == ConsoleAction::Kind::Deny) {
        const auto it = std::find_if(m_supersessions.begin(), m_supersessions.end(),
                                     [&](const SupersessionRow& row) { return row.id == action.request; });
        if (it == m_supersessions.end())
            return QStringLiteral("no pending supersession request %1").arg(action.request);
        env = it->env;
        m_supersessions.erase(it);
    } else if (action.kind == ConsoleAction::Kind::ApprovePromotion ||
               action.kind == ConsoleAction::Kind::DenyPromotion) {
        std::vector<relctl::Promotion>& open = m_promotions.promotions;
        const auto it = std::find_if(open.begin(), open.end(),
                                     [&](const relctl::Promotion& p) { return p.id == action.promotion; });
        if (it == open.end())
            return QStringLiteral("no open promotion request %1").arg(action.promotion);
        if (action.kind == ConsoleAction::Kind::ApprovePromotion &&
            it->requestedBy == action.by.toStdString())
            return QStringLiteral("SELF_APPROVAL: %1 requested promotion %2 and cannot approve it")
                .arg(action.by)
                .arg(action.promotion);
        env = QString::fromStdString(it->env);
        if (action.kind == ConsoleAction::Kind::ApprovePromotion)
            it->approvals.push_back({action.by.toStdString(), std::nullopt, {}});
        if (action.kind == ConsoleAction::Kind::DenyPromotion ||
            static_cast<std::int64_t>(it->approvals.size()) >= it->approvalsRequired)
            open.erase(it);
    } else if (action.kind == ConsoleAction::Kind::Rollback) {
        const auto it = m_histories.find(env.toStdString());
        if (it == m_histories.end())
            return QStringLiteral("%1 has no manifest history").arg(env);
        it->second.currentManifestId = action.manifest;
    } else {
        relctl::EnvironmentRow* row = environment(env);
        if (!row)
            return QStringLiteral("no environment %1").arg(env);
        switch (action.kind) {
        case ConsoleAction::Kind::Revoke:
            row->holderJob.reset();
            row->holderRelease.reset();
            row->holderToken.reset();
            row->leaseExpiresAt.reset();
            break;
        case ConsoleAction::Kind::Freeze:
            row->frozen = true;
            row->frozenBy = action.by.toStdString();
            row->frozenReason = action.reason.toStdString();
            break;
        case ConsoleAction::Kind::Unfreeze:
            row->frozen = false;
            row->frozenBy.reset();
            row->frozenReason.reset();
            break;
        case ConsoleAction::Kind::Approve:
        case ConsoleAction::Kind::Deny:
        case ConsoleAction::Kind::ApprovePromotion:
        case ConsoleAction::Kind::DenyPromotion:
        case ConsoleAction::Kind::Rollback:
        case ConsoleAction::Kind::FreezeMany:
        case ConsoleAction::Kind::UnfreezeMany:
            break;
        }
    }
    relctl::Event event;
    event.env = env.toStdString();
    event.operation = operationOf(action.kind);
    event.outcome = "accepted";
    event.actor = action.by.toStdString();
    addEvent(std::move(event));
    return {};
}

void FakeBackend::exportAudit(quint64 serial, const QString& path, bool json,
                              const relctl::AuditFilter& filter, const relctl::AuditSort& sort,
                              const ExportCancelFlag& cancel)
{
    Q_UNUSED(json);
    answer([this, serial, path, filter, sort, cancel] {
        if (cancel && *cancel) {
            emit exportFinished(serial, false, 0, QStringLiteral("export cancelled"));
            return;
        }
        const std::vector<relctl::Event> rows = matching(filter, sort);
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            emit exportFinished(serial, false, 0, file.errorString());
            return;
        }
        for (const relctl::Event& e : rows)
            file.write(QByteArray::number(qint64(e.id)) + '\n');
        const auto count = static_cast<qint64>(rows.size());
        emit exportProgress(serial, count);
        emit exportFinished(serial, true, count, QString());
    });
}

void FakeBackend::setRehearsal(relctl::rehearsal::Report report, QString error)
{
    m_rehearsal = std::move(report);
    m_rehearsalError = std::move(error);
}

void FakeBackend::runRehearsal(quint64 serial, const relctl::rehearsal::Options& options)
{
    namespace rh = relctl::rehearsal;
    m_rehearsals.push_back(options);
    m_rehearsalCancelled = false;
    rh::Report report;
    if (m_rehearsal) {
        report = *m_rehearsal;
    } else {
        report.database = "relctl_rehearsal_fake";
        report.dropped = true;
        for (const std::string& name : options.scenarios) {
            rh::ScenarioResult passed;
            passed.name = name;
            passed.passed = true;
            report.scenarios.push_back(passed);
        }
    }
    answer([this, serial, report, error = m_rehearsalError] {
        if (!error.isEmpty()) {
            emit rehearsalFinished(serial, {}, error);
            return;
        }
        if (m_rehearsalCancelled) {
            rh::Report cancelled;
            cancelled.database = report.database;
            cancelled.dropped = report.dropped;
            cancelled.cancelled = true;
            emit rehearsalFinished(serial, cancelled, {});
            return;
        }
        const int count = static_cast<int>(report.scenarios.size());
        for (int index = 0; index < count; ++index) {
            const rh::ScenarioResult& result = report.scenarios[static_cast<std::size_t>(index)];
            // The engine's own scenario when there is one of that name.
            rh::Scenario scenario;
            scenario.name = result.name;
            for (const rh::Scenario& known : rh::scenarios())
                if (known.name == result.name)
                    scenario = known;
            emit rehearsalScenarioStarted(serial, scenario, index, count);
            for (const rh::Step& step : result.steps)
                emit rehearsalStepLogged(serial, step);
            emit rehearsalTimelineUpdated(serial, QString::fromStdString(result.name), result.timeline);
            emit rehearsalScenarioFinished(serial, result);
        }
        emit rehearsalFinished(serial, report, {});
    });
}

void FakeBackend::cancelRehearsal()
{
    ++m_rehearsalCancels;
    m_rehearsalCancelled = true;
}

void FakeBackend::probeTarget(quint64 serial, const ConnectionTarget& target)
{
    m_probes << target;
    answer([this, serial, target] {
        ProbeResult result;
        if (m_probeResult) {
            result = *m_probeResult;
        } else {
            result.ok = true;
            result.serverVersion = m_state.server;
            result.database = QStringLiteral("fake");
            result.schemaVersion = m_state.schemaVersion;
        }
        result.target = target.describe();
        emit probeFinished(serial, result);
    });
}

std::vector<relctl::Event> FakeBackend::matching(const relctl::AuditFilter& filter,
                                                 const relctl::AuditSort& sort) const
{
    std::vector<relctl::Event> rows;
    std::copy_if(m_events.begin(), m_events.end(), std::back_inserter(rows),
                 [&](const relctl::Event& e) { return matches(e, filter); });
    std::sort(rows.begin(), rows.end(), [&](const relctl::Event& a, const relctl::Event& b) {
        return before(relctl::auditCursorAfter(a, sort.column), relctl::auditCursorAfter(b, sort.column),
                      sort.descending);
    });
    return rows;
}

relctl::AuditPage FakeBackend::page(const relctl::AuditPageRequest& request) const
{
    relctl::AuditPage page;
    for (const relctl::Event& e : m_events)
        page.horizon = std::max(page.horizon, e.id);
    std::vector<relctl::Event> rows;
    if (request.newerThan) {
        // What arrived since: oldest first, whatever the sort.
        rows = matching(request.filter, {relctl::AuditSort::Column::Time, false});
        std::erase_if(rows, [&](const relctl::Event& e) { return e.id <= *request.newerThan; });
    } else {
        rows = matching(request.filter, request.sort);
        if (request.after)
            std::erase_if(rows, [&](const relctl::Event& e) {
                return !before(*request.after, relctl::auditCursorAfter(e, request.sort.column),
                               request.sort.descending);
            });
    }
    const auto limit = static_cast<std::size_t>(std::max(request.limit, 0));
    page.more = rows.size() > limit;
    if (page.more)
        rows.resize(limit);
    page.events = std::move(rows);
    return page;
}

} // namespace relctl::ui
