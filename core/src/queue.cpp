// The client side of the waiting queue: the decisions are the server's
// (relctl.acquire_candidate); the waiter only decides when to ask again.

#include "database_impl.h"

#include <algorithm>

namespace relctl {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Polling is only a safety net behind the notifications and the expiry timer.
constexpr milliseconds kSafetyNet{1000};
// Asks again just after the holder's expiry instant, not before it.
constexpr milliseconds kExpiryMargin{5};

} // namespace

QueueListener::QueueListener(pqxx::connection_base& conn, std::string env)
    : pqxx::notification_receiver(conn, "relctl"), m_env(std::move(env))
{
}

void QueueListener::operator()(const std::string& payload, int)
{
    auto event = nlohmann::json::parse(payload, nullptr, false);
    auto env = event.is_object() ? event.find("env") : event.end();
    if (!event.is_object() || env == event.end() || !env->is_string() || *env == m_env)
        woken = true;
}

namespace {

// When to ask again: at the holder's expiry (no event announces an expiry), at
// the deadline, or after the safety net, whichever comes first.
Clock::time_point nextAttempt(const nlohmann::json& reply, Clock::time_point deadline)
{
    auto due = std::min(deadline, Clock::now() + kSafetyNet);
    const auto holder = reply.find("holder");
    if (holder != reply.end() && holder->is_object())
        due = std::min(due, Clock::now() + milliseconds(holder->value("remaining_ms", 0)) + kExpiryMargin);
    return due;
}

void awaitWakeUp(pqxx::connection_base& conn, QueueListener& listener, Clock::time_point due)
{
    listener.woken = false;
    while (!listener.woken && Clock::now() < due) {
        auto left = std::chrono::duration_cast<std::chrono::microseconds>(due - Clock::now());
        conn.await_notification(static_cast<long>(left.count() / 1'000'000),
                                static_cast<long>(left.count() % 1'000'000));
    }
}

} // namespace

Outcome Database::Impl::retryWhileBusy(QueueListener& listener, const std::function<nlohmann::json()>& attempt,
                                       Clock::time_point deadline)
{
    try {
        nlohmann::json reply = attempt();
        while (reply.value("status", std::string()) == "busy" && Clock::now() < deadline) {
            awaitWakeUp(conn, listener, nextAttempt(reply, deadline));
            reply = attempt();
        }
        if (reply.value("status", std::string()) == "busy")
            reply["message"] = "still busy when --wait ran out: " + reply.value("message", std::string());
        return Outcome::fromReply(std::move(reply));
    } catch (...) {
        translateCurrentException();
    }
}

Outcome Database::Impl::waitInQueue(QueueListener& listener, nlohmann::json reply, Clock::time_point deadline,
                                    const std::string& secret)
{
    try {
        while (reply.value("status", std::string()) == "queued") {
            const std::int64_t candidate = reply.at("candidate").get<std::int64_t>();
            awaitWakeUp(conn, listener, nextAttempt(reply, deadline));
            if (!listener.woken && Clock::now() >= deadline) {
                call(true, "SELECT relctl.leave_queue($1, $2)", candidate, secret);
                reply["status"] = "busy";
                reply["message"] =
                    "still waiting when --wait ran out: " + reply.value("message", std::string());
                return Outcome::fromReply(std::move(reply));
            }
            reply = call(true, "SELECT relctl.acquire_candidate($1, $2::jsonb, $3)", candidate,
                         client.toJson().dump(), secret);
        }
        return Outcome::fromReply(std::move(reply));
    } catch (const pqxx::broken_connection& e) {
        // Lost while waiting for a notification (a restart, a failover): the
        // candidate's session is gone. Settling the acquire (Impl::settled)
        // asks again with the same op id and secret on a new connection, and
        // the server gives the candidate back its place in the queue.
        throw InDoubt(std::string("the connection was lost while waiting in the queue: ") + e.what(), e.what());
    } catch (...) {
        translateCurrentException();
    }
}

} // namespace relctl
