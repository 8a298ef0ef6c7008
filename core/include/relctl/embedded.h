#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace relctl {

// The private, local PostgreSQL cluster relctl (and the console) use when no
// database is named: created with initdb and started with pg_ctl on first use,
// in the user's data directory ($XDG_DATA_HOME/relctl, else
// ~/.local/share/relctl), on a unix socket in that directory, with no TCP
// listener, and migrated automatically.
class EmbeddedCluster final
{
public:
    explicit EmbeddedCluster(const std::filesystem::path& directory);

    // The cluster of the current user (from XDG_DATA_HOME / HOME).
    static EmbeddedCluster forCurrentUser();

    const std::filesystem::path& directory() const { return m_directory; }

    // The libpq connection string of the relctl database in this cluster.
    std::string conninfo() const;
    // A database of this cluster as its administrator (a superuser), for what
    // a login with the manager's role may not do: rehearsals create, migrate
    // and drop their scratch databases with it.
    std::string administratorConninfo(const std::string& database = "postgres") const;

    // Creates (initdb), starts (pg_ctl) and migrates the cluster as needed and
    // returns conninfo(). Idempotent and safe when several processes call it
    // at once. Throws Error(Unavailable) naming the package to install when
    // the server binaries are missing.
    std::string ensureRunning();

    bool running() const;
    nlohmann::json status() const; // {"path","initialized","running","conninfo",...}
    void stop();

private:
    std::filesystem::path m_directory;
};

// True when nothing names a database: no RELCTL_DSN, PGHOST, PGSERVICE or
// PGDATABASE in the environment (the caller checks its own --dsn).
bool embeddedIsDefault();

} // namespace relctl
