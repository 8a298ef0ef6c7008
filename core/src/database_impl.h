#pragma once

// Private to core: the libpqxx side of Database. Nothing here reaches a public header.

#include "relctl/database.h"
#include "relctl/parse.h"
#include "session.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>
#include <thread>
#include <utility>

namespace relctl {

// LISTENs and notes whether an event that concerns this waiter arrived.
// Events are announced only while someone watches the environment
// (relctl.watch, functions/audit.sql). A queued candidate's session listens
// on the candidate's own channel (relctl.candidate_channel), to which only
// announcements naming it as the one served next, or as the candidate they
// are about, are sent: a handover wakes one waiter's process, not the whole
// queue's. A waiter without a candidate (a rollback waiting for the lease to
// end) listens on "relctl" and wakes for every event of its environment.
class QueueListener final : public pqxx::notification_receiver
{
public:
    // Every event of env, on the protocol's channel.
    QueueListener(pqxx::connection_base& conn, std::string env);
    // Everything on a candidate's own channel.
    QueueListener(pqxx::connection_base& conn, std::int64_t candidate);
    void operator()(const std::string& payload, int backendPid) override;

    bool woken = false;

private:
    std::string m_env; // empty: the candidate's own channel
};

// How often notifications may make a waiter ask again. Any login may NOTIFY
// a waiter's channel, or "relctl" with an environment's name: a notification
// is only a hint to ask, and each ask takes the environment's row (3,000 of
// them made a waiter ask 52 extra times). A token bucket: kBurst asks at
// once, then one per kInterval. The waiter's timers (the holder's expiry,
// the safety net, the deadline) are not limited by it.
class WakeBudget final
{
public:
    static constexpr double kBurst = 3;
    static constexpr std::chrono::milliseconds kInterval{250};

    // Whether an ask may follow a notification now (and then counts it).
    bool take(std::chrono::steady_clock::time_point now);
    // When the next one may.
    std::chrono::steady_clock::time_point nextToken() const;

private:
    double m_tokens = kBurst;
    std::chrono::steady_clock::time_point m_at = std::chrono::steady_clock::now();
};

// The connection was lost after a write may have been sent: its outcome is
// unknown to this session (exit 9 unless Impl::settled finds it out).
// lock_timeout ran out while a call waited for an environment's row lock:
// the statement was cancelled and rolled back, so nothing was applied.
class Locked final : public Error
{
public:
    explicit Locked(const std::string& message) : Error(ExitCode::Unavailable, message) {}
};

class InDoubt final : public Error
{
public:
    // cause: what libpq or the watchdog said, alone.
    InDoubt(const std::string& message, std::string cause)
        : Error(ExitCode::Unavailable, message), m_cause(std::move(cause))
    {
    }
    const std::string& cause() const noexcept { return m_cause; }

private:
    std::string m_cause;
};

// What ends a wait on the server (Database::Impl::unwatch, stopWaiting).
struct WaitEnd
{
    std::string env;            // empty: not watching
    std::int64_t candidate = 0; // 0: no queue lock to drop
    std::string secret;
};

struct Database::Impl
{
    std::string conninfo; // bounded (session::boundedConninfo): what a reconnect uses
    pqxx::connection conn;
    ClientContext client;
    std::chrono::milliseconds callTimeout;
    session::CallWatchdog watchdog; // declared after conn: stopped before the connection closes

    // The session's server bounds are its first statement, under the call
    // bound like any other: behind a pooler it may wait for a server.
    Impl(const std::string& bounded, ClientContext c, std::chrono::milliseconds bound)
        : conninfo(bounded), conn(conninfo), client(std::move(c)), callTimeout(bound)
    {
        session::Armed armed(watchdog, conn.sock(), callTimeout);
        // A connection that breaks here fails like one that could not be
        // made (pqxx::broken_connection): a reconnect tries again.
        try {
            session::applyBounds(conn, conninfo);
        } catch (const pqxx::broken_connection&) {
            if (armed.disarm())
                throw pqxx::broken_connection("no reply from the database within " +
                                              formatDuration(callTimeout));
            throw;
        } catch (const pqxx::failure& e) {
            if (!connectionEnded(e))
                throw;
            throw pqxx::broken_connection(e.what());
        }
    }

    // Sends an operation that carries an op id. When the connection is lost
    // before its reply (InDoubt), connects again within the reconnect window
    // and sends it once more under the same op id: the server's replay
    // (relctl.replay, in the transaction that would otherwise apply it) then
    // answers from the op's record if the first attempt committed, and applies
    // it if the database never saw it. The reply says which ("reply_lost").
    // Only when no connection can be made within the window does the job get
    // exit 9, naming the op id and the command that settles it.
    // Replaces `d` with the new connection's Impl.
    static Outcome settled(std::unique_ptr<Impl>& d, const std::string& opId, const std::string& what,
                           const std::function<Outcome()>& send);

    // Runs one statement returning one jsonb value, bounded by callTimeout.
    // A write is that one statement in autocommit: the server commits the
    // function's work with the statement, in one round trip, so no row lock is
    // held while a reply or a COMMIT crosses the network. A transient
    // serialisation failure is retried (the failed statement rolled back, so
    // nothing was applied). A connection lost during a write leaves its
    // outcome unknown. Every other database failure is translated into an Error.
    template <typename... Args> nlohmann::json call(bool write, const std::string& sql, Args&&... args)
    {
        return attempt(write, sql, [&](pqxx::transaction_base& tx) {
            const pqxx::row row = tx.exec_params1(sql, args...);
            return nlohmann::json::parse(row[0].c_str());
        });
    }

    // A read of many rows, under the same bound, retries and translation as
    // call: for replies whose size grows with the organisation, where rows
    // cost the server and the client a fraction of what one JSON document
    // does (see relctl.console_environments).
    template <typename... Args> pqxx::result rows(const std::string& sql, Args&&... args)
    {
        return attempt(false, sql, [&](pqxx::transaction_base& tx) { return tx.exec_params(sql, args...); });
    }

    // One statement through `run(tx)`, retried and translated as call says.
    template <typename Run> auto attempt(bool write, const std::string& sql, const Run& run)
    {
        if (waitEndDue)
            sendWaitEnd();
        for (int tries = 1;; ++tries) {
            const auto start = std::chrono::steady_clock::now();
            session::Armed armed(watchdog, conn.sock(), callTimeout);
            try {
                auto reply = [&] {
                    if (write) {
                        pqxx::nontransaction tx(conn);
                        return run(tx);
                    }
                    // Ends in a rollback: nothing to commit.
                    pqxx::read_transaction tx(conn);
                    return run(tx);
                }();
                armed.disarm();
                spdlog::debug(
                    "{} ({:.1f} ms)", sql,
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                        .count());
                return reply;
            } catch (const pqxx::statement_completion_unknown& e) {
                armed.disarm();
                connectionLost(true, false, e.what());
            } catch (const pqxx::transaction_rollback& e) {
                armed.disarm();
                spdlog::warn("transaction rolled back (attempt {} of 3): {}", tries, e.what());
                if (tries == 3)
                    translateCurrentException();
            } catch (const pqxx::broken_connection& e) {
                connectionLost(write, armed.disarm(), e.what());
            } catch (const pqxx::in_doubt_error& e) {
                connectionLost(write, armed.disarm(), e.what());
            } catch (const pqxx::failure& e) {
                // A server that crashed or shut down under the call may end
                // it with a statement error (57P01, or no SQLSTATE at all)
                // rather than a broken connection: for a write it is just as
                // unknown whether it committed.
                const bool ended = connectionEnded(e);
                const bool stalled = armed.disarm();
                if (!ended)
                    translateCurrentException();
                connectionLost(write, stalled, e.what());
            } catch (...) {
                armed.disarm();
                translateCurrentException();
            }
        }
    }

    // One call of a job that waits (--wait): a call that met lock_timeout is
    // sent again after a pause, until the wait runs out. Under load a queue's
    // first evaluations can hold an environment's row lock for longer than
    // lock_timeout between them, and a stuck session holding it is ended by
    // idle_in_transaction_session_timeout; neither is a reason for a job that
    // may wait to give up before its wait does.
    template <typename Attempt>
    nlohmann::json whileLocked(std::chrono::steady_clock::time_point deadline, const Attempt& attempt)
    {
        using namespace std::chrono_literals;
        auto pause = 100ms;
        for (bool told = false;; told = true) {
            try {
                return attempt();
            } catch (const Locked& e) {
                if (std::chrono::steady_clock::now() + pause >= deadline)
                    throw;
                if (!told)
                    spdlog::warn("{}; asking again until --wait runs out", e.what());
                std::this_thread::sleep_for(pause);
                pause = std::min<std::chrono::milliseconds>(pause * 2, 1s);
            }
        }
    }

    // The connection broke during a call (stalled: the call outlived
    // callTimeout and the watchdog cut it). For a write the outcome is unknown.
    [[noreturn]] void connectionLost(bool write, bool stalled, const std::string& what) const;

    // Waits in the environment's queue until the queued candidate of `reply`
    // is granted or refused, or the deadline passes (then it leaves the queue
    // and the outcome is busy). See queue.cpp.
    // The candidate is re-evaluated with the request's secret: the server
    // hands a candidate's lease only to the session and secret that queued it.
    // Registers as the environment's watcher (relctl.watch) before the first
    // attempt, so that an event committed after it is announced: false when
    // the registration was not possible (the waiter then relies on its
    // timers). unwatch() ends it when the wait is over, and stopWaiting()
    // drops the queue lock of a candidate that its own re-evaluation decided
    // (the server keeps it until that decision is committed: relctl.end_wait).
    // Both are sent with the next call on this connection, or dropped with the
    // session if that ends first, so a job that exits once it has its lease
    // (`lease acquire --wait`) does not spend a round trip on them before it
    // can report the lease.
    bool watch(const std::string& env);
    void unwatch(const std::string& env) noexcept { waitEnd().env = env; }
    void stopWaiting(std::int64_t candidate, const std::string& secret) noexcept
    {
        waitEnd().candidate = candidate;
        waitEnd().secret = secret;
    }
    WaitEnd& waitEnd() noexcept { return waitEndDue ? *waitEndDue : waitEndDue.emplace(); }
    std::optional<WaitEnd> waitEndDue;
    void sendWaitEnd() noexcept;
    // Constructs a listener (its LISTEN is a round trip) under the call bound.
    template <typename... Args> void listen(std::optional<QueueListener>& listener, Args&&... args)
    {
        session::Armed armed(watchdog, conn.sock(), callTimeout);
        try {
            listener.emplace(conn, std::forward<Args>(args)...);
        } catch (const pqxx::broken_connection& e) {
            connectionLost(false, armed.disarm(), e.what());
        } catch (...) {
            armed.disarm();
            translateCurrentException();
        }
    }

    Outcome waitInQueue(nlohmann::json reply, std::chrono::steady_clock::time_point deadline,
                        const std::string& secret);

    // Repeats an operation that answers busy (rollback, which does not queue)
    // whenever the environment's notifications, the holder's expiry or the
    // safety net say it may now go through, until the deadline.
    Outcome retryWhileBusy(QueueListener& listener, const std::function<nlohmann::json()>& attempt,
                           std::chrono::steady_clock::time_point deadline);

    // Rethrows the exception in flight as a relctl::Error.
    [[noreturn]] static void translateCurrentException();
    // Whether the failure of a statement on this connection ended the session
    // (the connection is gone, or the server said it ended it).
    bool connectionEnded(const pqxx::failure& e) const;

    // The server's reply as its type (relctl/replies.h). A reply without a key
    // the type needs is a client/schema mismatch: reported like any unreadable
    // reply, Error(Internal).
    template <class Reply> static Reply parsed(const nlohmann::json& reply)
    {
        try {
            return reply.get<Reply>();
        } catch (...) {
            translateCurrentException();
        }
    }
};

namespace internal {

// The one way into a Database's connection for core's readers outside
// database.cpp (ConsoleQueries, history::Reader): a friend that hands out the
// Impl and nothing else of the class, as libpqxx's gates do, so that the
// public header names one friend instead of each reader.
class DatabaseGate final
{
public:
    static Database::Impl& impl(Database& db) { return *db.d; }
};

} // namespace internal

} // namespace relctl
