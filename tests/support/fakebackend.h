#pragma once

#include "consolebackend.h"

#include <QList>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace relctl::ui {

// The console's backend in memory, for tests of the session and the window
// that need no database: it holds environments, audit events, approvals, a
// timeline slice and traces, and answers every request from them later,
// through the event loop, as the PostgreSQL backend answers from its thread.
// So two requests in a row are both answered, the older first, and the
// session's dropping of superseded answers is exercised as in the console.
// Answers can also be held and released in any order, requests made to fail,
// actions refused, and live events announced, all on demand. It records what
// was asked.
//
// Not a model of the protocol: an action changes what it holds the obvious
// way (a freeze freezes the environment, an approval leaves the list, a
// promotion decided by enough people or denied leaves its list, a rollback
// makes its manifest current), records an accepted event and announces it,
// as the database's notification would. A rehearsal plays a scripted report,
// a connection test answers a scripted result.
class FakeBackend final : public ConsoleBackend
{
    Q_OBJECT

public:
    explicit FakeBackend(QObject* parent = nullptr);

    // What it holds; answers read it when they go out, not when asked.
    void setEnvironments(std::vector<relctl::EnvironmentRow> rows) { m_environments = std::move(rows); }
    const std::vector<relctl::EnvironmentRow>& environments() const { return m_environments; }
    relctl::EnvironmentRow* environment(const QString& name);
    // Appends an event with the next id (and `at`, when 0, the next
    // millisecond); returns the id. Nothing is announced.
    std::int64_t addEvent(relctl::Event event);
    const std::vector<relctl::Event>& events() const { return m_events; }
    void setSupersessions(QList<SupersessionRow> rows) { m_supersessions = std::move(rows); }
    const QList<SupersessionRow>& supersessions() const { return m_supersessions; }
    void setPromotions(PromotionsSnapshot promotions) { m_promotions = std::move(promotions); }
    const PromotionsSnapshot& promotions() const { return m_promotions; }
    void setManifestHistory(relctl::ManifestHistory history)
    {
        m_histories[history.env] = std::move(history);
    }
    void setTimeline(relctl::TimelineSlice slice) { m_timeline = std::move(slice); }
    void setTrace(std::int64_t eventId, relctl::RefusalTrace trace) { m_traces[eventId] = std::move(trace); }
    // What a status lookup of this kind and key answers; any other key is
    // unknown, in the server's words (relctl.job_state, relctl.op_state).
    void setStatus(const StatusLookup& lookup, relctl::JobStatus status)
    {
        m_statuses[{lookup.kind, lookup.key.toStdString()}] = std::move(status);
    }
    const std::vector<StatusLookup>& statusLookups() const { return m_statusLookups; }
    // What start() and setTarget() report once "connected".
    void setConnectionState(ConnectionState state) { m_state = std::move(state); }
    // What every rehearsal plays, as one answer: each scenario of the report
    // started, its steps logged, its timeline and its result, then the
    // report. With an error, a run that could not start: only the error.
    // Unset, each scenario asked for passes. Cancelled before the answer
    // went out, the run reports a cancelled report with no scenario.
    void setRehearsal(relctl::rehearsal::Report report, QString error = {});
    // What every connection test answers (its target filled in); unset, the
    // target is reachable and is the fake's own server.
    void setProbeResult(ProbeResult result) { m_probeResult = std::move(result); }

    // The next request of this kind fails with `message` (one per call).
    void failNext(RequestKind kind, const QString& message);
    // The next action is refused with `message`, and changes nothing.
    void refuseNextAction(const QString& message);
    // While held, answers (of every kind) wait, in the order asked, until
    // released: all of them, in the order asked or newest first.
    void setHoldingAnswers(bool hold) { m_holding = hold; }
    int heldAnswers() const { return static_cast<int>(m_held.size()); }
    enum class Order { AsAsked, NewestFirst };
    void releaseHeld(Order order = Order::AsAsked);
    // Environments answers read what is held when asked rather than when
    // they go out, as a database's snapshot would: held answers can then
    // disagree, and a test can tell an older one from a newer one.
    void setReadingWhenAsked(bool when) { m_readWhenAsked = when; }
    // Events were recorded for these environments: eventsArrived(), through
    // the event loop as from the database.
    void announce(const QStringList& environments);
    // The connection is lost (connected: false, with the message).
    void dropConnection(const QString& message);

    // What was asked, in order.
    const std::vector<RequestId>& requests() const { return m_requests; }
    int requestCount(RequestKind kind) const;
    const std::vector<relctl::AuditPageRequest>& auditRequests() const { return m_auditRequests; }
    // The names each environments, timeline and promotions request asked
    // for, in order (empty optional: all).
    const std::vector<std::optional<QStringList>>& environmentNames() const { return m_environmentNames; }
    const std::vector<std::optional<QStringList>>& timelineEnvs() const { return m_timelineEnvs; }
    const std::vector<std::optional<QStringList>>& promotionNames() const { return m_promotionNames; }
    const QList<ConsoleAction>& actions() const { return m_actions; }
    const QList<ConnectionTarget>& targets() const { return m_targets; }
    int starts() const { return m_starts; }
    const std::vector<relctl::rehearsal::Options>& rehearsals() const { return m_rehearsals; }
    int rehearsalCancels() const { return m_rehearsalCancels; }
    const QList<ConnectionTarget>& probes() const { return m_probes; }

    void start() override;
    void setTarget(const ConnectionTarget& target) override;
    // Only the named environments when names are given, as the server does.
    void loadEnvironments(quint64 serial, const std::optional<QStringList>& names = std::nullopt) override;
    void loadAuditPage(quint64 serial, const relctl::AuditPageRequest& request) override;
    // Only envs' lanes and items when envs are given.
    void loadTimeline(quint64 serial, qint64 fromMs, qint64 toMs,
                      const std::optional<QStringList>& envs = std::nullopt) override;
    void loadTrace(quint64 serial, qint64 eventId) override;
    void loadSupersessions(quint64 serial) override;
    // Names given: the paths and requests of those environments, covering them.
    void loadPromotions(quint64 serial, const std::optional<QStringList>& names = std::nullopt) override;
    // An environment without a history set answers an empty one.
    void loadManifestHistory(quint64 serial, const QString& env) override;
    void loadStatus(quint64 serial, const StatusLookup& lookup) override;
    void runAction(quint64 serial, const ConsoleAction& action) override;
    // Counts the matching events (progress, then finished) and writes them
    // as one id a line: enough to see what an export asked for.
    void exportAudit(quint64 serial, const QString& path, bool json, const relctl::AuditFilter& filter,
                     const relctl::AuditSort& sort, const ExportCancelFlag& cancel) override;
    void runRehearsal(quint64 serial, const relctl::rehearsal::Options& options) override;
    void cancelRehearsal() override;
    void probeTarget(quint64 serial, const ConnectionTarget& target) override;

private:
    // Sends the answer through the event loop, or holds it.
    void answer(std::function<void()> send);
    // Records the request; true if it is to fail (and answers the failure).
    bool failing(RequestId request);
    void connected();
    relctl::AuditPage page(const relctl::AuditPageRequest& request) const;
    std::vector<relctl::Event> matching(const relctl::AuditFilter& filter,
                                        const relctl::AuditSort& sort) const;
    // The action's effect on what is held; an error message if there is none to have.
    QString apply(const ConsoleAction& action);

    std::vector<relctl::EnvironmentRow> m_environments;
    std::vector<relctl::Event> m_events;
    QList<SupersessionRow> m_supersessions;
    PromotionsSnapshot m_promotions;
    std::map<std::string, relctl::ManifestHistory> m_histories;
    relctl::TimelineSlice m_timeline;
    std::map<std::int64_t, relctl::RefusalTrace> m_traces;
    std::map<std::pair<StatusLookup::Kind, std::string>, relctl::JobStatus> m_statuses;
    std::vector<StatusLookup> m_statusLookups;
    ConnectionState m_state;
    std::optional<relctl::rehearsal::Report> m_rehearsal;
    QString m_rehearsalError;
    bool m_rehearsalCancelled = false;
    std::optional<ProbeResult> m_probeResult;

    std::map<RequestKind, std::deque<QString>> m_failures;
    std::deque<QString> m_refusals;
    bool m_holding = false;
    bool m_readWhenAsked = false;
    std::vector<std::function<void()>> m_held;

    std::vector<RequestId> m_requests;
    std::vector<relctl::AuditPageRequest> m_auditRequests;
    std::vector<std::optional<QStringList>> m_environmentNames, m_timelineEnvs, m_promotionNames;
    QList<ConsoleAction> m_actions;
    QList<ConnectionTarget> m_targets;
    int m_starts = 0;
    std::vector<relctl::rehearsal::Options> m_rehearsals;
    int m_rehearsalCancels = 0;
    QList<ConnectionTarget> m_probes;
};

} // namespace relctl::ui
