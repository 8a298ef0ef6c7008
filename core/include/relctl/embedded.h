#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

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
    // The cluster of release-console --demo: beside the current user's, in a
    // directory of its own ("relctl-demo"), which relctl's default never opens.
    static EmbeddedCluster demoForCurrentUser();

    const std::filesystem::path& directory() const { return m_directory; }

    // The libpq connection string of the relctl database in this cluster.
    std::string conninfo() const;
    // A database of this cluster as its administrator (a superuser), for what
    // a login with the manager's role may not do: rehearsals create, migrate
    // and drop their scratch databases with it.
    std::string administratorConninfo(const std::string& database = "postgres") const;
    // The relctl database as `login`, a role peer authentication maps the OS
    // user to (addDemoLogins).
    std::string conninfoAs(const std::string& login) const;

    // Creates (initdb), starts (pg_ctl) and migrates the cluster as needed and
    // returns conninfo(); a server on a controlled clock is restarted on the
    // real one. Idempotent and safe when several processes call it
    // at once. Throws Error(Unavailable) naming the package to install when
    // the server binaries are missing.
    std::string ensureRunning();

    // Demo clusters only: (re)starts the server with its clock under the
    // caller's control, an empty relctl database (dropped, created and
    // migrated again when it holds any event), and each of `logins` (LOGIN IN
    // ROLE its group role) with the OS user mapped to it by peer
    // authentication, so that a demo's people and jobs each act through a
    // login of their own.
    //
    // libfaketime, preloaded into the server, reads an offset from a file of
    // the cluster on every clock call; setClock(t) makes clock_timestamp()
    // and now() read t from then on, advancing at the real rate. Monotonic
    // clocks (timeouts) stay real. ensureRunning() restarts the server on the
    // real clock.
    //
    // A demo cluster is one whose directory's name ends in "-demo" and is not
    // the directory of relctl's default: anything else is refused
    // (Error(Usage)) before anything is made, so a fabricated time never
    // reaches a real database.
    void startDemo(const std::vector<std::pair<std::string, std::string>>& logins);
    void setClock(std::chrono::system_clock::time_point now) const;
    // True while the server runs on a controlled clock.
    bool onControlledClock() const;

    bool running() const;
    nlohmann::json status() const; // {"path","initialized","running","conninfo",...}
    void stop();

private:
    void requireDemo() const;

    std::filesystem::path m_directory;
};

// True when nothing names a database: no RELCTL_DSN, PGHOST, PGSERVICE or
// PGDATABASE in the environment (the caller checks its own --dsn).
bool embeddedIsDefault();

} // namespace relctl
