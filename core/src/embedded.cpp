// Where the embedded cluster lives and when its steps run: on first use, on a
// stale schema, around a demo's clock. How each step runs is pgcluster's.

#include "relctl/embedded.h"

#include "pgcluster.h"
#include "relctl/error.h"
#include "session.h"

#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <libpq-fe.h>
#include <optional>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace relctl {

using namespace detail;
using namespace pgcluster;

EmbeddedCluster::EmbeddedCluster(const std::filesystem::path& directory)
    : m_directory(fs::absolute(directory).lexically_normal())
{
    if (!m_directory.has_filename())
        m_directory = m_directory.parent_path(); // "/a/b/" -> "/a/b"
}

EmbeddedCluster EmbeddedCluster::forCurrentUser()
{
    // A relative XDG_DATA_HOME is invalid by the XDG spec and ignored.
    if (const std::string xdg = environment("XDG_DATA_HOME"); !xdg.empty() && xdg.front() == '/')
        return EmbeddedCluster(fs::path(xdg) / "relctl");
    // As root the server runs as postgres, which cannot enter root's HOME
    // (/root is 0700): a system directory, like a packaged service's, is
    // the one the server can reach. Concurrent first starts are serialised
    // on the directory's lock exactly as under a HOME.
    if (asRoot())
        return EmbeddedCluster(fs::path(kRootDirectory));
    std::string home = environment("HOME");
    if (auto self = home.empty() ? lookupAccount(nullptr) : std::nullopt)
        home = self->home;
    if (home.empty())
        unavailable("no data directory: neither XDG_DATA_HOME nor HOME is set");
    return EmbeddedCluster(fs::path(home) / ".local" / "share" / "relctl");
}

std::string EmbeddedCluster::conninfo() const
{
    return Layout(m_directory).conninfo("relctl");
}

EmbeddedCluster EmbeddedCluster::demoForCurrentUser()
{
    const fs::path own = forCurrentUser().directory();
    return EmbeddedCluster(own.parent_path() / (own.filename().string() + "-demo"));
}

std::string EmbeddedCluster::conninfoAs(const std::string& login) const
{
    return Layout(m_directory).conninfo("relctl", login);
}

void EmbeddedCluster::requireDemo() const
{
    const std::string name = m_directory.filename().string();
    const bool named = name.size() > 5 && name.compare(name.size() - 5, 5, "-demo") == 0;
    std::optional<fs::path> own;
    try {
        own = forCurrentUser().directory();
    } catch (const Error&) {
        // No default cluster can be named here: nothing to confuse this one with.
    }
    if (!named || (own && *own == m_directory))
        throw Error(ExitCode::Usage, "embedded database: " + m_directory.string() +
                                         " is not a demo cluster (a directory named *-demo beside relctl's "
                                         "default): a controlled clock is only for a demo's history");
}

void EmbeddedCluster::startDemo(const std::vector<std::pair<std::string, std::string>>& logins)
{
    requireDemo();
    const Layout at(m_directory);
    const fs::path bin = findBinaries(at);
    const Account server = serverAccount();
    prepareDirectory(at.dir, server);
    Fd lock(lockDirectory(at));
    Fd log(openServerFile(at.log, O_APPEND, server));
    if (!fs::exists(at.data / "PG_VERSION"))
        initialize(at, bin, log.get());
    // Peer authentication admits the OS user as each login: written before
    // the start, which reads it (the roles may come after).
    {
        std::ifstream in(at.data / "pg_ident.conf");
        const std::string ident((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream out(at.data / "pg_ident.conf", std::ios::app);
        for (const auto& login : logins) {
            const std::string line = "relctl " + clientRole() + ' ' + login.first + '\n';
            if (ident.find(line) == std::string::npos)
                out << line;
        }
        if (!out.flush())
            unavailable(systemError("cannot write " + (at.data / "pg_ident.conf").string()));
    }
    if (serverPid(at))
        stopServer(at, bin, log.get());
    writeClock(at, 0);
    start(at, bin, server, log.get(), controlledClockEnvironment(at));
    const std::string admin = adminRole(at);
    try {
        session::Connection conn(at.conninfo("postgres", admin));
        pqxx::nontransaction tx(conn);
        if (!tx.exec("SELECT 1 FROM pg_database WHERE datname = 'relctl'").empty()) {
            session::Connection demo(at.conninfo("relctl", admin));
            pqxx::nontransaction look(demo);
            const bool used = !look.exec("SELECT 1 FROM pg_namespace WHERE nspname = 'relctl'").empty() &&
                              !look.exec("SELECT 1 FROM relctl.events LIMIT 1").empty();
            demo.disconnect();
            if (used) {
                tx.exec("DROP DATABASE relctl WITH (FORCE)");
                std::error_code ec;
                fs::remove(at.stamp, ec);
            }
        }
    } catch (const std::exception& e) {
        unavailable("emptying the demo's database failed: " + std::string(e.what()));
    }
    if (firstLine(at.stamp) != schemaStamp())
        createDatabaseAndMigrate(at);
    try {
        session::Connection conn(at.conninfo("relctl", admin));
        pqxx::nontransaction tx(conn);
        for (const auto& [login, group] : logins)
            if (tx.exec_params("SELECT 1 FROM pg_roles WHERE rolname = $1", login).empty())
                tx.exec("CREATE ROLE " + tx.quote_name(login) + " LOGIN IN ROLE " + tx.quote_name(group));
    } catch (const std::exception& e) {
        unavailable("creating the demo's logins failed: " + std::string(e.what()));
    }
}

void EmbeddedCluster::setClock(std::chrono::system_clock::time_point now) const
{
    requireDemo();
    const Layout at(m_directory);
    if (!fs::exists(at.clock))
        throw Error(ExitCode::Usage, "embedded database: the server of " + m_directory.string() +
                                         " does not run on a controlled clock");
    writeClock(at, std::chrono::duration<double>(now - std::chrono::system_clock::now()).count());
}

bool EmbeddedCluster::onControlledClock() const
{
    return fs::exists(Layout(m_directory).clock);
}

std::string EmbeddedCluster::administratorConninfo(const std::string& database) const
{
    const Layout at(m_directory);
    return at.conninfo(database, adminRole(at));
}

std::string EmbeddedCluster::ensureRunning()
{
    const Layout at(m_directory);
    // The common case costs two stats, one ping and a small read: no lock, no pg_ctl.
    const bool up = running();
    if (up && firstLine(at.stamp) == schemaStamp() && !fs::exists(at.clock)) {
        if (serverLogTooLarge(at)) // one stat in the common case
            boundServerLog(at, serverAccount(), false);
        return conninfo();
    }

    const auto started = Clock::now();
    // Binaries first: on a new machine their absence is the likeliest failure,
    // and it should not leave directories behind.
    std::optional<fs::path> bin;
    if (!up)
        bin = findBinaries(at);
    const Account server = serverAccount();
    prepareDirectory(at.dir, server);
    Fd lock(lockDirectory(at)); // a concurrent relctl waits here, then finds the server running
    if (fs::exists(at.clock)) {
        // A demo's clock: back to the real one (also after a seeder died).
        if (!bin)
            bin = findBinaries(at);
        Fd log(openServerFile(at.log, O_APPEND, server));
        if (serverPid(at))
            stopServer(at, *bin, log.get());
        std::error_code ec;
        fs::remove(at.clock, ec);
    }
    if (!running()) {
        if (!bin)
            bin = findBinaries(at);
        boundServerLog(at, server, true);
        Fd log(openServerFile(at.log, O_APPEND, server));
        if (!fs::exists(at.data / "PG_VERSION"))
            initialize(at, *bin, log.get());
        start(at, *bin, server, log.get());
    }
    if (firstLine(at.stamp) != schemaStamp())
        createDatabaseAndMigrate(at);
    spdlog::debug("embedded database: ready in {} ms", millisSince(started));
    return conninfo();
}

bool EmbeddedCluster::running() const
{
    const Layout at(m_directory);
    // A pid file survives a crash; only an answer on the socket proves a server.
    return fs::exists(at.data / "postmaster.pid") && PQping(at.conninfo("postgres").c_str()) == PQPING_OK;
}

nlohmann::json EmbeddedCluster::status() const
{
    const Layout at(m_directory);
    nlohmann::json s{{"path", at.dir.string()},
                     {"initialized", fs::exists(at.data / "PG_VERSION")},
                     {"running", running()},
                     {"conninfo", conninfo()},
                     {"data_directory", at.data.string()},
                     {"socket_directory", at.socket.string()},
                     {"log", at.log.string()},
                     {"server_user", asRoot() ? std::string("postgres") : clientRole()}};
    if (s["initialized"].get<bool>())
        s["version"] = firstLine(at.data / "PG_VERSION");
    if (auto pid = serverPid(at); pid && s["running"].get<bool>())
        s["pid"] = *pid;
    return s;
}

void EmbeddedCluster::stop()
{
    const Layout at(m_directory);
    if (!fs::exists(at.data / "postmaster.pid"))
        return;
    const Account server = serverAccount();
    Fd lock(lockDirectory(at));
    if (!serverPid(at))
        return; // a stale pid file: the server is gone already
    const fs::path bin = findBinaries(at);
    Fd log(openServerFile(at.log, O_APPEND, server));
    stopServer(at, bin, log.get());
    // The server removed its socket; a directory made for it under /tmp goes too.
    if (at.socket != at.dir)
        rmdir(at.socket.c_str());
}

bool embeddedIsDefault()
{
    for (const char* name : {"RELCTL_DSN", "PGHOST", "PGSERVICE", "PGDATABASE"})
        if (!environment(name).empty())
            return false;
    return true;
}

} // namespace relctl
