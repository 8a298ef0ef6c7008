#pragma once

// Private to core: the PostgreSQL cluster under relctl's control, step by
// step (pgcluster.cpp). EmbeddedCluster (embedded.cpp) decides when each
// step runs; these only know how.

#include "posix.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace relctl::pgcluster {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using detail::Account;

// Where the cluster keeps what. The socket goes into the directory itself
// unless that path is too long for a unix socket (sun_path: 107 bytes and a
// NUL) or needs quoting in a conninfo or unix_socket_directories (a list);
// then into a short directory under /tmp named by a stable hash of the path,
// so that every relctl process derives the same one.
struct Layout
{
    fs::path dir, data, log, lock, stamp, socket;
    // Present while the server runs on a controlled clock (a demo): the
    // offset libfaketime reads.
    fs::path clock;

    explicit Layout(const fs::path& d);

    // A libpq connection string for `database` as `user` (clientRole() when
    // omitted).
    std::string conninfo(const std::string& database) const;
    std::string conninfo(const std::string& database, const std::string& user) const;
};

// The embedded database of root, when XDG_DATA_HOME does not name another.
constexpr const char* kRootDirectory = "/var/lib/relctl";

// The variable's value, or "" when unset.
std::string environment(const char* name);
// Error(Unavailable) saying "embedded database: <message>".
[[noreturn]] void unavailable(const std::string& message);
long long millisSince(Clock::time_point start);

// Who: the role relctl connects as (the OS user's name), the account the
// server runs as (postgres under root), the cluster's administrator.
std::string clientRole();
Account serverAccount();
std::string adminRole(const Layout& at);

// What is there: the live postmaster's pid, the server binaries to use, the
// stamp of the bundled schema (recorded after a migrate).
std::optional<pid_t> serverPid(const Layout& at);
fs::path findBinaries(const Layout& at);
std::string schemaStamp();

// The directory, its lock (an exclusive flock, released by closing the
// descriptor), and the files the server reads or appends to.
void prepareDirectory(const fs::path& dir, const Account& server);
int lockDirectory(const Layout& at);
int openServerFile(const fs::path& file, int flags, const Account& server);

// The server's log, kept under its bound (rotated into server.log.1).
bool serverLogTooLarge(const Layout& at);
void boundServerLog(const Layout& at, const Account& server, bool locked);

// The steps, each run as the server's user with its output in the log.
void initialize(const Layout& at, const fs::path& bin, int logFd);
void start(const Layout& at, const fs::path& bin, const Account& server, int logFd,
           const std::vector<std::string>& clockEnv = {});
void stopServer(const Layout& at, const fs::path& bin, int logFd);
void createDatabaseAndMigrate(const Layout& at);

// The demo's clock: the environment that puts the server on it, and its offset.
std::vector<std::string> controlledClockEnvironment(const Layout& at);
void writeClock(const Layout& at, double offsetSeconds);

} // namespace relctl::pgcluster
