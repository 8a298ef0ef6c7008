// The client side of the waiting queue: the decisions are the server's
// (relctl.acquire_candidate); the waiter only decides when to ask again.

#include "database_impl.h"

#include <algorithm>

namespace relctl {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Polling is only a safety net behind the notifications and the expiry timer.
// The candidate served next, and a waiter without a candidate, ask every
// second; the rest of a queue rarely (they are woken by name), each at its
// own moment so that a long queue does not ask all at once.
constexpr milliseconds kSafetyNet{1000};
constexpr milliseconds kQueuedSafetyNet{5000};
// The next candidate asks again just after the holder's expiry instant, not
// before it; the one after it a little later, in case the next one's waiter
// is gone (nothing announces an expiry).
constexpr milliseconds kExpiryMargin{5};
constexpr milliseconds kBackupExpiryMargin{100};

} // namespace

bool WakeBudget::take(Clock::time_point now)
{
    const double refilled = std::chrono::duration<double>(now - m_at) / kInterval;
    m_tokens = std::min(kBurst, m_tokens + refilled);
    m_at = now;
    if (m_tokens < 1)
        return false;
    m_tokens -= 1;
    return true;
}

Clock::time_point WakeBudget::nextToken() const
{
    return m_at + std::chrono::duration_cast<Clock::duration>((1 - m_tokens) * kInterval);
}

QueueListener::QueueListener(pqxx::connection_base& conn, std::string env)
    : pqxx::notification_receiver(conn, "relctl"), m_env(std::move(env))
{
}

// The channel's name is relctl.candidate_channel's (functions/queue.sql).
QueueListener::QueueListener(pqxx::connection_base& conn, std::int64_t candidate)
    : pqxx::notification_receiver(conn, "relctl_c" + std::to_string(candidate))
{
}

void QueueListener::operator()(const std::string& payload, int)
{
    if (m_env.empty()) {
        woken = true; // the candidate's own channel: it is about this waiter
        return;
    }
    auto event = nlohmann::json::parse(payload, nullptr, false);
    auto env = event.is_object() ? event.find("env") : event.end();
    if (!event.is_object() || env == event.end() || !env->is_string() || *env == m_env)
        woken = true; // not the protocol's payload: ask rather than miss something
}

namespace {

// Spreads the queue's polls: a fraction in [0.8, 1.2) of the interval.
milliseconds spread(milliseconds interval)
{
    static thread_local std::uint64_t state =
        static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto permille = 800 + static_cast<std::int64_t>((state >> 33) % 400);
    return milliseconds(interval.count() * permille / 1000);
}

// When to ask again: at the holder's expiry for the next two candidates (no
// event announces an expiry), at the deadline, or after the safety net,
// whichever comes first. `position` is the candidate's place in the queue
// (1: served next), absent for a waiter that is not queued.
Clock::time_point nextAttempt(const nlohmann::json& reply, Clock::time_point deadline)
{
    const std::int64_t position = reply.value("position", std::int64_t{0});
    const auto now = Clock::now();
    auto due = std::min(deadline, now + (position > 1 ? spread(kQueuedSafetyNet) : kSafetyNet));
    const auto holder = reply.find("holder");
    if (holder != reply.end() && holder->is_object() && position <= 2) {
        const auto margin = position == 2 ? kBackupExpiryMargin : kExpiryMargin;
        due = std::min(due, now + milliseconds(holder->value("remaining_ms", std::int64_t{0})) + margin);
    }
    return due;
}

// Waits for a notification (within the budget) or until due; true when a
// notification ended the wait.
bool awaitWakeUp(pqxx::connection_base& conn, QueueListener& listener, WakeBudget& budget,
                 Clock::time_point due)
{
    listener.woken = false;
    for (auto now = Clock::now(); now < due; now = Clock::now()) {
        if (listener.woken) {
            if (budget.take(now))
                return true;
            // Woken more often than the budget allows: ask when it has room.
            due = std::min(due, budget.nextToken());
        }
        auto left = std::chrono::duration_cast<std::chrono::microseconds>(due - now);
        conn.await_notification(static_cast<long>(left.count() / 1'000'000),
                                static_cast<long>(left.count() % 1'000'000));
    }
    // A deferred ask counts as well (the budget has room for it by now).
    if (listener.woken)
        budget.take(Clock::now());
    return listener.woken;
}

} // namespace

bool Database::Impl::watch(const std::string& env)
{
    // Unwatched (the lock was unavailable), the waiter still wakes at the
    // holder's expiry and on its safety net.
    const bool watching = call(true, "SELECT to_jsonb(relctl.watch($1))", env).get<bool>();
    if (!watching)
        spdlog::warn("cannot watch {}: waiting without its notifications", env);
    return watching;
}

void Database::Impl::sendWaitEnd() noexcept
{
    const WaitEnd end = *waitEndDue;
    waitEndDue.reset();
    try {
        if (end.env.empty())
            call(true, "SELECT to_jsonb(relctl.stop_waiting($1, $2))", end.candidate, end.secret);
        else if (end.candidate == 0)
            call(true, "SELECT to_jsonb(relctl.unwatch($1))", end.env);
        else
            call(true, "SELECT jsonb_build_array(relctl.unwatch($1), relctl.stop_waiting($2, $3))", end.env,
                 end.candidate, end.secret);
    } catch (const std::exception& e) {
        // What it preceded goes on; the registration and the lock end with
        // the session.
        spdlog::debug("ending the wait on {} (candidate {}): {}", end.env, end.candidate, e.what());
    }
}

Outcome Database::Impl::retryWhileBusy(QueueListener& listener,
                                       const std::function<nlohmann::json()>& attempt,
                                       Clock::time_point deadline)
{
    try {
        nlohmann::json reply = whileLocked(deadline, attempt);
        WakeBudget budget;
        while (reply.value("status", std::string()) == "busy" && Clock::now() < deadline) {
            awaitWakeUp(conn, listener, budget, nextAttempt(reply, deadline));
            reply = whileLocked(deadline, attempt);
        }
        if (reply.value("status", std::string()) == "busy")
            reply["message"] = "still busy when --wait ran out: " + reply.value("message", std::string());
        return Outcome::fromReply(std::move(reply));
    } catch (...) {
        translateCurrentException();
    }
}

Outcome Database::Impl::waitInQueue(nlohmann::json reply, Clock::time_point deadline,
                                    const std::string& secret)
{
    std::optional<QueueListener> listener;
    WakeBudget budget;
    try {
        while (reply.value("status", std::string()) == "queued") {
            const std::int64_t candidate = reply.at("candidate").get<std::int64_t>();
            if (!listener)
                listen(listener, candidate); // the server LISTENs already: this routes its notifications here
            const bool woken = awaitWakeUp(conn, *listener, budget, nextAttempt(reply, deadline));
            if (!woken && Clock::now() >= deadline) {
                // A release may have handed this candidate the lease just
                // before it left: the reply is then that acquisition.
                nlohmann::json left = call(true, "SELECT relctl.leave_queue($1, $2)", candidate, secret);
                if (left.value("status", std::string()) == "ok")
                    return Outcome::fromReply(std::move(left));
                reply["status"] = "busy";
                reply["message"] =
                    "still waiting when --wait ran out: " + reply.value("message", std::string());
                return Outcome::fromReply(std::move(reply));
            }
            reply = whileLocked(deadline, [&] {
                return call(true, "SELECT relctl.acquire_candidate($1, $2::jsonb, $3)", candidate,
                            client.toJson().dump(), secret);
            });
            if (reply.value("status", std::string()) != "queued")
                stopWaiting(candidate, secret);
        }
        return Outcome::fromReply(std::move(reply));
    } catch (const pqxx::broken_connection& e) {
        // Lost while waiting for a notification (a restart, a failover): the
        // candidate's session is gone. Settling the acquire (Impl::settled)
        // asks again with the same op id and secret on a new connection, and
        // the server gives the candidate back its place in the queue.
        throw InDoubt(std::string("the connection was lost while waiting in the queue: ") + e.what(),
                      e.what());
    } catch (...) {
        translateCurrentException();
    }
}

} // namespace relctl
