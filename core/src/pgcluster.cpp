// The PostgreSQL cluster under relctl's control, step by step: where it keeps
// what, the server's account and binaries, initdb and pg_ctl run as the
// server's user with their output in a bounded log, the demo's clock, and
// the first migrate. EmbeddedCluster (embedded.cpp) decides when each runs.

#include "pgcluster.h"

#include "fnv.h"
#include "relctl/database.h"
#include "relctl/error.h"
#include "relctl/migrations.h"
#include "session.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <grp.h>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace relctl::pgcluster {

using namespace detail;

namespace {

// The cluster's superuser, used only to create the database, migrate it and
// create the login below. Peer authentication maps the OS user to it and to
// the login (pg_ident.conf, written by initialize()); people and jobs never
// work as it.
constexpr const char* kAdminRole = "relctl_admin";

// relctl's environment without PG* variables, which would redirect initdb,
// pg_ctl or the server (PGPORT moves the socket, PGDATA the cluster).
std::vector<std::string> serverEnvironment(const Layout& at)
{
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e)
        if (std::strncmp(*e, "PG", 2) != 0)
            env.emplace_back(*e);
    env.push_back("PGDATA=" + at.data.string());
    return env;
}

bool hasServer(const fs::path& bin)
{
    for (const char* program : {"initdb", "pg_ctl", "postgres"})
        if (access((bin / program).c_str(), X_OK) != 0)
            return false;
    return true;
}

// As root the server runs as postgres, which must traverse every ancestor of
// the directory. Opening up someone's home directory is not relctl's call (and
// /root is 0700 on purpose): say what blocks it and how to choose another.
void checkReachable(const fs::path& dir, const Account& server)
{
    int count = 64;
    std::vector<gid_t> groups(64);
    if (getgrouplist(server.name.c_str(), server.gid, groups.data(), &count) < 0) {
        groups.resize(static_cast<std::size_t>(count));
        getgrouplist(server.name.c_str(), server.gid, groups.data(), &count);
    }
    groups.resize(static_cast<std::size_t>(count));
    fs::path ancestor;
    for (const fs::path& part : dir.parent_path()) {
        ancestor /= part;
        struct stat st;
        if (stat(ancestor.c_str(), &st) != 0)
            return; // not created yet: checked again once it exists
        const bool inGroup = std::find(groups.begin(), groups.end(), st.st_gid) != groups.end();
        const mode_t bit = st.st_uid == server.uid ? S_IXUSR : inGroup ? S_IXGRP : S_IXOTH;
        if ((st.st_mode & bit) != 0)
            continue;
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        unavailable("as root, relctl runs the server as the postgres system user, which cannot reach " +
                    dir.string() + ": " + ancestor.string() + " (mode " + mode +
                    ") is not searchable by postgres. Set XDG_DATA_HOME to a directory postgres can reach, "
                    "unset it (root's default, /var/lib/relctl, is reachable), or name a database with "
                    "--dsn or RELCTL_DSN");
    }
}

// The server's log is bounded: pg_ctl starts the postmaster with its output
// appended (>>) to server.log for as long as it runs, so relctl checks the
// size on use. Past kServerLogLimit the log's last kServerLogLimit bytes (from
// a line's start) become server.log.1 and server.log is truncated in place.
// The server writes with O_APPEND, so its next line lands at the new end
// (logrotate's copytruncate); a line written between the copy and the
// truncation is lost, which a diagnostic log can afford.
constexpr off_t kServerLogLimit = off_t{10} * 1024 * 1024;

// What a failed step left in the log: its last FATAL/ERROR/error line, else
// its last line.
std::string logExcerpt(const Layout& at)
{
    std::ifstream in(at.log);
    std::string line, last, error;
    while (std::getline(in, line)) {
        if (line.rfind("== relctl ", 0) == 0) { // a new step begins
            last.clear();
            error.clear();
        } else if (!line.empty()) {
            last = line;
        }
        for (const char* mark : {"FATAL:", "ERROR:", "PANIC:", "error:"})
            if (line.find(mark) != std::string::npos)
                error = line;
    }
    return error.empty() ? last : error;
}

// Runs one step as the server's user, its output appended to the log, with
// `extraEnv` ("NAME=value") added to the environment.
void runStep(const std::string& step, std::vector<std::string> argv, const Layout& at, int logFd,
             const std::vector<std::string>& extraEnv = {})
{
    if (asRoot())
        argv.insert(argv.begin(),
                    {access("/usr/sbin/runuser", X_OK) == 0 ? "/usr/sbin/runuser" : "/sbin/runuser", "-u",
                     "postgres", "--"});
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &utc));
    const std::string marker = "== relctl " + std::string(stamp) + ": " + step + " ==\n";
    if (write(logFd, marker.data(), marker.size()) < 0)
        spdlog::debug("cannot write to {}: {}", at.log.string(), std::strerror(errno));
    const auto started = Clock::now();
    std::vector<std::string> env = serverEnvironment(at);
    env.insert(env.end(), extraEnv.begin(), extraEnv.end());
    const std::string failure = spawnAndWait(argv, env, at.dir, logFd);
    spdlog::debug("embedded database: {} took {} ms", step, millisSince(started));
    if (!failure.empty())
        unavailable(step + " failed (" + failure + "): " + logExcerpt(at) + " (see " + at.log.string() + ")");
}

} // namespace

Layout::Layout(const fs::path& d)
    : dir(d), data(d / "data"), log(d / "server.log"), lock(d / "lock"), stamp(d / "migrated"),
      clock(d / "clock")
{
    const std::string path = d.string();
    const bool plain = std::all_of(path.begin(), path.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._+@~-", c) != nullptr;
    });
    if (plain && path.size() + std::strlen("/.s.PGSQL.5432") < 107) {
        socket = d;
        return;
    }
    socket = "/tmp/relctl-" + std::to_string(geteuid()) + "-" + Fnv1a().add(path).hex();
}

std::string Layout::conninfo(const std::string& database) const
{
    return conninfo(database, clientRole());
}

std::string Layout::conninfo(const std::string& database, const std::string& user) const
{
    std::string role = "'";
    for (char c : user)
        role += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return "host=" + socket.string() + " port=5432 user=" + role + "' dbname=" + database;
}

std::string environment(const char* name)
{
    const char* value = std::getenv(name);
    return value ? value : "";
}

[[noreturn]] void unavailable(const std::string& message)
{
    throw Error(ExitCode::Unavailable, "embedded database: " + message);
}

long long millisSince(Clock::time_point start)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// The role relctl connects as: the OS user's own name, so that peer
// authentication on the socket admits exactly that user. As root that is the
// role "root" although the server runs as postgres: peer checks the client.
// In a cluster made by this relctl it is a login with relctl_manager (which
// includes relctl_job and relctl_reviewer), no superuser; in one made before
// the roles existed it is the cluster's bootstrap superuser.
std::string clientRole()
{
    auto self = lookupAccount(nullptr);
    if (!self)
        unavailable("user id " + std::to_string(geteuid()) + " has no name, which peer authentication needs");
    return self->name;
}

// initdb, pg_ctl and postgres refuse to run as root: then the server runs as
// the postgres system user, which the Debian package creates.
Account serverAccount()
{
    auto account = lookupAccount(asRoot() ? "postgres" : nullptr);
    if (!account)
        unavailable(asRoot() ? "as root, relctl runs the server as the postgres system user, and there is "
                               "none: install the Debian package postgresql"
                             : "user id " + std::to_string(geteuid()) + " has no passwd entry");
    return *account;
}

// The postmaster's pid when its pid file names a live process.
std::optional<pid_t> serverPid(const Layout& at)
{
    const long pid = std::strtol(firstLine(at.data / "postmaster.pid").c_str(), nullptr, 10);
    if (pid <= 0 || (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM))
        return std::nullopt;
    // kill() succeeds for a zombie too: a postmaster killed outright stays one
    // until init reaps it (lazily, in some containers).
    const std::string stat = firstLine("/proc/" + std::to_string(pid) + "/stat");
    if (const auto end = stat.rfind(')'); end != std::string::npos && stat.compare(end, 3, ") Z") == 0)
        return std::nullopt;
    return static_cast<pid_t>(pid);
}

// The bundled schema, recorded after a successful migrate: a relctl with
// other migrations or function modules sees a different stamp and migrates.
std::string schemaStamp()
{
    Fnv1a hash;
    for (const Migration& m : bundledMigrations())
        hash.add(m.name).add("\n").add(m.sql);
    for (const SchemaModule& m : bundledModules())
        hash.add(m.name).add("\n").add(m.sql);
    return "schema " + hash.hex();
}

// RELCTL_PG_BINDIR alone when set; else the version that created the cluster,
// `pg_config --bindir`, then /usr/lib/postgresql/*/bin, highest version first.
fs::path findBinaries(const Layout& at)
{
    if (const std::string forced = environment("RELCTL_PG_BINDIR"); !forced.empty()) {
        if (hasServer(forced))
            return forced;
        unavailable("no PostgreSQL server binaries (initdb, pg_ctl, postgres) in RELCTL_PG_BINDIR=" + forced +
                    ": install the Debian package postgresql, or unset RELCTL_PG_BINDIR");
    }
    std::vector<fs::path> candidates;
    if (const std::string version = firstLine(at.data / "PG_VERSION"); !version.empty())
        candidates.emplace_back("/usr/lib/postgresql/" + version + "/bin"); // a cluster needs its own major
    // pg_config prints one short line: it fits in the pipe, so it is read after the wait.
    if (int fds[2]; pipe2(fds, O_CLOEXEC) == 0) {
        Fd readEnd(fds[0]), writeEnd(fds[1]);
        char out[4096];
        ssize_t n = 0;
        if (spawnAndWait({"pg_config", "--bindir"}, serverEnvironment(at), {}, writeEnd.get()).empty() &&
            (n = read(readEnd.get(), out, sizeof out)) > 0) {
            const std::string text(out, static_cast<std::size_t>(n));
            candidates.emplace_back(text.substr(0, text.find('\n')));
        }
    }
    std::vector<std::pair<int, fs::path>> installed;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec))
        installed.emplace_back(std::atoi(entry.path().filename().c_str()), entry.path() / "bin");
    std::sort(installed.begin(), installed.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (const auto& [version, bin] : installed)
        candidates.push_back(bin);
    for (const fs::path& bin : candidates)
        if (hasServer(bin))
            return bin;
    unavailable("the PostgreSQL server binaries (initdb, pg_ctl, postgres) were found neither by `pg_config "
                "--bindir` nor in /usr/lib/postgresql/*/bin: install the Debian package postgresql (apt-get "
                "install postgresql), or name a database with --dsn or RELCTL_DSN");
}

void prepareDirectory(const fs::path& dir, const Account& server)
{
    if (asRoot())
        checkReachable(dir, server);
    std::error_code ec;
    fs::create_directories(dir.parent_path(), ec);
    if (ec || (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST))
        unavailable("cannot create " + dir.string() + ": " + (ec ? ec.message() : std::strerror(errno)));
    if (!asRoot())
        return;
    checkReachable(dir, server); // ancestors just created under a restrictive umask
    // The server writes its data, socket and log here, so the directory is
    // postgres's; only one that root made is handed over, though.
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || (st.st_uid == 0 && chown(dir.c_str(), server.uid, server.gid) != 0))
        unavailable(systemError("cannot hand " + dir.string() + " to postgres"));
    if (st.st_uid != 0 && st.st_uid != server.uid)
        unavailable(dir.string() + " belongs to user id " + std::to_string(st.st_uid) +
                    ", but the server runs as postgres");
}

// An exclusive flock() serialises initdb, start, migrate and stop between
// relctl processes; the kernel drops it when a process dies. O_CLOEXEC: pg_ctl
// (and the postmaster it forks) must not inherit the lock and hold it for as
// long as the server runs. Closing the returned descriptor releases it.
int lockDirectory(const Layout& at)
{
    const int fd = open(at.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        unavailable(systemError("cannot open " + at.lock.string()));
    const auto deadline = Clock::now() + std::chrono::minutes(2);
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        if ((error == EWOULDBLOCK || error == EINTR) && Clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
            continue;
        }
        close(fd);
        unavailable(error != EWOULDBLOCK && error != EINTR
                        ? systemError("cannot lock " + at.lock.string(), error)
                        : "another relctl has held " + at.lock.string() + " for two minutes; see " +
                              at.log.string());
    }
    return fd;
}

// A file relctl writes and the server reads or appends to (pg_ctl's shell
// appends to the log as the server's user): as root it must belong to postgres.
int openServerFile(const fs::path& file, int flags, const Account& server)
{
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0600);
    if (fd < 0 || (asRoot() && fchown(fd, server.uid, server.gid) != 0)) {
        const int error = errno;
        close(fd);
        unavailable(systemError("cannot write " + file.string(), error));
    }
    return fd;
}

bool serverLogTooLarge(const Layout& at)
{
    struct stat st;
    return stat(at.log.c_str(), &st) == 0 && st.st_size > kServerLogLimit;
}

// locked: the caller holds the directory's lock. Otherwise it is tried, not
// waited for: while another relctl starts or stops the server (and writes
// the log), the next use rotates instead.
void boundServerLog(const Layout& at, const Account& server, bool locked)
{
    struct stat st;
    Fd lock;
    if (!locked) {
        lock = Fd(open(at.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
        if (lock.get() < 0 || flock(lock.get(), LOCK_EX | LOCK_NB) != 0)
            return;
    }
    const Fd in(open(at.log.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.get() < 0 || fstat(in.get(), &st) != 0 || st.st_size <= kServerLogLimit)
        return;
    const fs::path previous = at.dir / "server.log.1";
    const fs::path staging = at.dir / "server.log.1.new";
    try {
        const Fd out(openServerFile(staging, O_TRUNC, server));
        std::vector<char> buffer(64 * 1024);
        off_t offset = st.st_size - kServerLogLimit;
        bool lineStart = false;
        for (ssize_t n; (n = pread(in.get(), buffer.data(), buffer.size(), offset)) > 0; offset += n) {
            const char* from = buffer.data();
            const char* end = buffer.data() + n;
            if (!lineStart) { // the first, partial line is left out
                from = std::find(from, end, '\n');
                if (from == end)
                    continue;
                ++from;
                lineStart = true;
            }
            if (write(out.get(), from, static_cast<std::size_t>(end - from)) != end - from)
                unavailable(systemError("cannot write " + staging.string()));
        }
    } catch (const Error& e) {
        spdlog::warn("not rotating {}: {}", at.log.string(), e.what());
        unlink(staging.c_str());
        return;
    }
    if (rename(staging.c_str(), previous.c_str()) != 0 || truncate(at.log.c_str(), 0) != 0)
        spdlog::warn("{}", systemError("cannot rotate " + at.log.string()));
}

void initialize(const Layout& at, const fs::path& bin, int logFd)
{
    // initdb works in a staging directory renamed into place when complete, so
    // an interrupted initdb never leaves a half-made cluster behind as "data".
    const fs::path staging = at.dir / "data.initdb";
    std::error_code ec;
    fs::remove_all(staging, ec);
    fs::remove(at.stamp, ec);
    runStep("initdb",
            {(bin / "initdb").string(), "-D", staging.string(), "-U", kAdminRole, "--auth-local=peer",
             "--auth-host=reject", "-E", "UTF8", "--locale=C.UTF-8"},
            at, logFd);
    // Peer authentication admits the OS user as its own login and as the
    // administrator, and nobody else; no TCP at all.
    std::ofstream hba(staging / "pg_hba.conf", std::ios::trunc);
    hba << "# Written by relctl: the OS user, by peer authentication, as mapped in pg_ident.conf.\n"
        << "local all all peer map=relctl\n";
    std::ofstream ident(staging / "pg_ident.conf", std::ios::trunc);
    ident << "relctl " << clientRole() << ' ' << clientRole() << '\n'
          << "relctl " << clientRole() << ' ' << kAdminRole << '\n';
    hba.close();
    ident.close();
    if (!hba || !ident)
        unavailable(systemError("cannot write the authentication files of " + staging.string()));
    // `include`, not include_if_exists: without relctl.conf the server would
    // rather not start than listen on TCP with the defaults.
    std::ofstream conf(staging / "postgresql.conf", std::ios::app);
    conf << "\n# Settings relctl rewrites before every start.\ninclude 'relctl.conf'\n";
    conf.close();
    if (!conf || rename(staging.c_str(), at.data.c_str()) != 0)
        unavailable(systemError("cannot complete the cluster in " + staging.string()));
}

// The environment that puts the server's clock under the demo's control:
// libfaketime reads the offset from the clock file on every call (no cache),
// and leaves the monotonic clocks alone, so that timeouts and waits keep
// real time.
std::vector<std::string> controlledClockEnvironment(const Layout& at)
{
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/usr/lib", ec)) {
        const fs::path lib = entry.path() / "faketime" / "libfaketime.so.1";
        if (access(lib.c_str(), R_OK) == 0)
            return {"LD_PRELOAD=" + lib.string(), "FAKETIME_TIMESTAMP_FILE=" + at.clock.string(),
                    "FAKETIME_NO_CACHE=1", "DONT_FAKE_MONOTONIC=1"};
    }
    unavailable("the demo's clock needs libfaketime, which is not installed: install the Debian package "
                "faketime");
}

void start(const Layout& at, const fs::path& bin, const Account& server, int logFd,
           const std::vector<std::string>& clockEnv)
{
    // Rewritten on every start, so that the socket follows the directory if it moves.
    // plpgsql is preloaded: every session of relctl or the console calls
    // PL/pgSQL, and a backend that loads the library itself pays for it on
    // its first call (docs/operations.md).
    const std::string conf = "listen_addresses = ''\nport = 5432\nunix_socket_directories = '" +
                             at.socket.string() +
                             "'\nunix_socket_permissions = 0700\nshared_preload_libraries = 'plpgsql'\n";
    Fd file(openServerFile(at.data / "relctl.conf", O_TRUNC, server));
    if (write(file.get(), conf.data(), conf.size()) != static_cast<ssize_t>(conf.size()))
        unavailable(systemError("cannot write " + (at.data / "relctl.conf").string()));
    if (at.socket != at.dir) {
        if (mkdir(at.socket.c_str(), 0700) == 0 && asRoot() &&
            chown(at.socket.c_str(), server.uid, server.gid) != 0)
            unavailable(systemError("cannot hand " + at.socket.string() + " to postgres"));
        // Anyone may have created it first in /tmp: use it only if it is private to the server's user.
        struct stat st;
        if (lstat(at.socket.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != server.uid ||
            (st.st_mode & 077) != 0)
            unavailable("the socket directory " + at.socket.string() + " is not a private directory of " +
                        server.name + ": remove it");
    }
    // pg_ctl starts the postmaster through /bin/sh with -D and -l pasted into
    // its command line; PGDATA in the environment and a log path relative to
    // the working directory keep the user's path out of that shell string.
    runStep(clockEnv.empty() ? "pg_ctl start" : "pg_ctl start (on the demo's clock)",
            {(bin / "pg_ctl").string(), "start", "-w", "-t", "60", "-l", "server.log"}, at, logFd, clockEnv);
}

void stopServer(const Layout& at, const fs::path& bin, int logFd)
{
    runStep("pg_ctl stop", {(bin / "pg_ctl").string(), "stop", "-m", "fast", "-w", "-t", "60"}, at, logFd);
}

// An offset libfaketime reads ("+12.5" seconds), replaced whole by a rename
// so that the server never reads a half-written one.
void writeClock(const Layout& at, double offsetSeconds)
{
    char text[64];
    std::snprintf(text, sizeof text, "%+.6f\n", offsetSeconds);
    const fs::path next = at.clock.string() + ".next";
    {
        Fd file(open(next.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        const auto length = static_cast<ssize_t>(std::strlen(text));
        if (file.get() < 0 || write(file.get(), text, std::strlen(text)) != length ||
            fchmod(file.get(), 0644) != 0)
            unavailable(systemError("cannot write " + next.string()));
    }
    if (rename(next.c_str(), at.clock.c_str()) != 0)
        unavailable(systemError("cannot replace " + at.clock.string()));
}

// The role that administers the cluster: relctl_admin in a cluster made by
// this relctl, the OS user's own (bootstrap superuser) in an older one.
std::string adminRole(const Layout& at)
{
    std::ifstream in(at.data / "pg_ident.conf");
    for (std::string line; std::getline(in, line);)
        if (line.find(kAdminRole) != std::string::npos && line.rfind("relctl ", 0) == 0)
            return kAdminRole;
    return clientRole();
}

void createDatabaseAndMigrate(const Layout& at)
{
    const std::string admin = adminRole(at);
    try {
        session::Connection conn(at.conninfo("postgres", admin));
        pqxx::nontransaction tx(conn); // CREATE DATABASE cannot run in a transaction block
        if (tx.exec("SELECT 1 FROM pg_database WHERE datname = 'relctl'").empty())
            tx.exec("CREATE DATABASE relctl");
    } catch (const std::exception& e) {
        unavailable("creating the database relctl failed: " + std::string(e.what()) + " (see " +
                    at.log.string() + ")");
    }
    try {
        Database db(at.conninfo("relctl", admin));
        db.migrate();
        if (admin != clientRole()) {
            // The OS user works as a login with the manager's group role (a
            // person at the console and the jobs they rehearse), not as the
            // superuser: the protocol's guarantees are then exercised through
            // the privileges every other login has.
            session::Connection conn(at.conninfo("relctl", admin));
            pqxx::nontransaction tx(conn);
            if (tx.exec_params("SELECT 1 FROM pg_roles WHERE rolname = $1", clientRole()).empty())
                tx.exec("CREATE ROLE " + tx.quote_name(clientRole()) + " LOGIN IN ROLE relctl_manager");
        }
    } catch (const Error& e) {
        throw Error(e.code(), "embedded database: migrating failed: " + std::string(e.what()));
    } catch (const std::exception& e) {
        unavailable("creating the login of " + clientRole() + " failed: " + std::string(e.what()));
    }
    std::ofstream(at.stamp) << schemaStamp() << '\n';
}

} // namespace relctl::pgcluster
