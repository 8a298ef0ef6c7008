#include "relctl/scratch.h"

#include "relctl/error.h"
#include "session.h"

#include <optional>
#include <pqxx/pqxx>
#include <random>
#include <spdlog/spdlog.h>
#include <utility>

namespace relctl {

namespace {

std::string randomHex(int bytes)
{
    std::random_device device;
    std::string out;
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = 0; i < bytes; ++i) {
        const unsigned v = device() & 0xffU;
        out += kHex[v >> 4U];
        out += kHex[v & 0xfU];
    }
    return out;
}

} // namespace

ScratchDatabase::ScratchDatabase(const std::string& server, const std::string& prefix)
    : m_server(server), m_name(prefix + randomHex(6))
{
    create(std::nullopt);
}

ScratchDatabase::ScratchDatabase(const std::string& server, std::string name, Existing existing)
    : m_server(server), m_name(std::move(name))
{
    create(existing);
}

void ScratchDatabase::create(std::optional<Existing> existing)
{
    try {
        session::Connection conn(m_server);
        pqxx::nontransaction tx(conn); // CREATE DATABASE cannot run in a transaction block
        m_reused = existing == Existing::Reuse &&
                   !tx.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", m_name).empty();
        if (!m_reused) {
            if (existing) // a name of the caller's, which an earlier run may have left
                tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(m_name) + " WITH (FORCE)");
            tx.exec("CREATE DATABASE " + tx.quote_name(m_name));
        }
    } catch (const pqxx::broken_connection& e) {
        throw Error(ExitCode::Unavailable,
                    std::string("cannot reach the server for the scratch database: ") + e.what());
    } catch (const std::exception& e) {
        throwUsage(
            "cannot create a scratch database (the login needs CREATEDB, and superuser to migrate it): " +
            std::string(e.what()));
    }
    m_created = true;
    m_conninfo = session::withDatabase(m_server, m_name);
}

ScratchDatabase::~ScratchDatabase()
{
    if (m_created && !m_keep && !m_dropped)
        drop();
}

void ScratchDatabase::drop()
{
    try {
        session::Connection conn(m_server);
        pqxx::nontransaction tx(conn);
        tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(m_name) + " WITH (FORCE)");
        m_dropped = true;
    } catch (const std::exception& e) {
        spdlog::error("could not drop the scratch database {}: {}", m_name, e.what());
    }
}

} // namespace relctl
