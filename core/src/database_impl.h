#pragma once

// Private to core: the libpqxx side of Database. Nothing here reaches a public header.

#include "relctl/database.h"

#include <pqxx/pqxx>

#include <utility>

namespace relctl {

struct Database::Impl {
    pqxx::connection conn;
    ClientContext client;

    Impl(const std::string& conninfo, ClientContext c)
        : conn(conninfo)
        , client(std::move(c))
    {
    }

    // Runs one statement returning one jsonb value in its own transaction,
    // retrying transient serialisation failures (the transaction rolled back,
    // so nothing was applied and the retry is safe). Every other database
    // failure is translated into an Error.
    template <typename... Args>
    nlohmann::json call(bool write, const std::string& sql, Args&&... args)
    {
        for (int attempt = 1;; ++attempt) {
            try {
                if (write) {
                    pqxx::work tx(conn);
                    pqxx::row row = tx.exec_params1(sql, args...);
                    nlohmann::json reply = nlohmann::json::parse(row[0].c_str());
                    tx.commit();
                    return reply;
                }
                pqxx::read_transaction tx(conn);
                pqxx::row row = tx.exec_params1(sql, args...);
                return nlohmann::json::parse(row[0].c_str());
            } catch (const pqxx::transaction_rollback&) {
                if (attempt == 3)
                    translateCurrentException();
            } catch (...) {
                translateCurrentException();
            }
        }
    }

    // Rethrows the exception in flight as a relctl::Error.
    [[noreturn]] static void translateCurrentException();
};

} // namespace relctl
