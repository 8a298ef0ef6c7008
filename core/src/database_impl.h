#pragma once

// Private to core: the libpqxx side of Database. Nothing here reaches a public header.

#include "relctl/database.h"

#include <chrono>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>
#include <utility>

namespace relctl {

// LISTENs on the protocol's channel and notes whether an event for one
// environment arrived. Every recorded event (release, revoke, publish,
// unfreeze, approvals, a waiter leaving) notifies; waiters re-evaluate then.
class QueueListener final : public pqxx::notification_receiver
{
public:
    QueueListener(pqxx::connection_base& conn, std::string env);
    void operator()(const std::string& payload, int backendPid) override;

    bool woken = false;

private:
    std::string m_env;
};

struct Database::Impl
{
    pqxx::connection conn;
    ClientContext client;

    Impl(const std::string& conninfo, ClientContext c) : conn(conninfo), client(std::move(c)) {}

    // Runs one statement returning one jsonb value in its own transaction,
    // retrying transient serialisation failures (the transaction rolled back,
    // so nothing was applied and the retry is safe). Every other database
    // failure is translated into an Error.
    template <typename... Args> nlohmann::json call(bool write, const std::string& sql, Args&&... args)
    {
        for (int attempt = 1;; ++attempt) {
            const auto start = std::chrono::steady_clock::now();
            try {
                nlohmann::json reply;
                if (write) {
                    pqxx::work tx(conn);
                    pqxx::row row = tx.exec_params1(sql, args...);
                    reply = nlohmann::json::parse(row[0].c_str());
                    tx.commit();
                } else {
                    pqxx::read_transaction tx(conn);
                    pqxx::row row = tx.exec_params1(sql, args...);
                    reply = nlohmann::json::parse(row[0].c_str());
                }
                spdlog::debug(
                    "{} ({:.1f} ms)", sql,
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                        .count());
                return reply;
            } catch (const pqxx::transaction_rollback& e) {
                spdlog::warn("transaction rolled back (attempt {} of 3): {}", attempt, e.what());
                if (attempt == 3)
                    translateCurrentException();
            } catch (...) {
                translateCurrentException();
            }
        }
    }

    // Waits in the environment's queue until the queued candidate of `reply`
    // is granted or refused, or the deadline passes (then it leaves the queue
    // and the outcome is busy). See queue.cpp.
    // The candidate is re-evaluated with the request's secret: the server
    // hands a candidate's lease only to the session and secret that queued it.
    Outcome waitInQueue(QueueListener& listener, nlohmann::json reply,
                        std::chrono::steady_clock::time_point deadline, const std::string& secret);

    // Rethrows the exception in flight as a relctl::Error.
    [[noreturn]] static void translateCurrentException();
};

} // namespace relctl
