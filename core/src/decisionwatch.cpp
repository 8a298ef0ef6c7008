// `relctl watch --decisions` (relctl/decisionwatch.h): reads the audit trail by
// event id without skipping an event whose id was taken before a committed
// one's but committed after it, hands the events that need a decision to a
// hook at least once, and keeps the position across restarts.

#include "relctl/decisionwatch.h"

#include "fnv.h"
#include "relctl/error.h"
#include "relctl/listener.h"
#include "relctl/process.h"
#include "relctl/replies_audit.h"
#include "session.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <pqxx/pqxx>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace relctl::decisionwatch {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kPageSize = 1000;

std::string systemMessage(int error)
{
    return std::strerror(error);
}

// A libpq message's first line: the rest is hints for psql users.
std::string firstLine(const char* what)
{
    const std::string text = what;
    return text.substr(0, text.find('\n'));
}

// ---------------------------------------------------------------------------
// Stopping: SIGTERM and SIGINT set a flag and wake the wait through a pipe.

std::atomic<bool> g_stop{false};
int g_wakeWrite = -1;

extern "C" void onStopSignal(int)
{
    g_stop.store(true);
    if (g_wakeWrite >= 0) {
        const char byte = 1;
        [[maybe_unused]] const ssize_t n = ::write(g_wakeWrite, &byte, 1);
    }
}

// Installs the handlers for run()'s duration and puts the old ones back.
class StopSignals final
{
public:
    StopSignals()
    {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
            throw Error(ExitCode::Internal, "cannot create a pipe: " + systemMessage(errno));
        m_read = fds[0];
        g_wakeWrite = fds[1];
        g_stop.store(false);
        struct sigaction sa = {};
        sa.sa_handler = onStopSignal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0; // no SA_RESTART: a wait returns at once
        ::sigaction(SIGTERM, &sa, &m_oldTerm);
        ::sigaction(SIGINT, &sa, &m_oldInt);
        // A closed stdout is an error to report, not a silent death.
        struct sigaction ignore = {};
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        ::sigaction(SIGPIPE, &ignore, &m_oldPipe);
    }
    ~StopSignals()
    {
        ::sigaction(SIGTERM, &m_oldTerm, nullptr);
        ::sigaction(SIGINT, &m_oldInt, nullptr);
        ::sigaction(SIGPIPE, &m_oldPipe, nullptr);
        ::close(g_wakeWrite);
        g_wakeWrite = -1;
        ::close(m_read);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

    int socket() const { return m_read; }
    void drain() const
    {
        char buffer[64];
        while (::read(m_read, buffer, sizeof buffer) > 0) {
        }
    }

private:
    int m_read = -1;
    struct sigaction m_oldTerm = {};
    struct sigaction m_oldInt = {};
    struct sigaction m_oldPipe = {};
};

bool stopping()
{
    return g_stop.load();
}

// Waits until `fd` (if any) is readable, a stop signal arrives, or `timeout`.
void waitFor(const StopSignals& signals, int fd, std::chrono::milliseconds timeout)
{
    if (stopping())
        return;
    pollfd fds[2] = {{signals.socket(), POLLIN, 0}, {fd, POLLIN, 0}};
    ::poll(fds, fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
    signals.drain();
}

// ---------------------------------------------------------------------------
// Reading the trail.

struct Batch
{
    std::vector<Event> events; // final events after the position, oldest first
    std::int64_t through = 0;  // every id up to here is final: the position once `events` are handled
    bool held = false;         // committed events wait behind an id that may still commit
    bool more = false;         // another page follows at once
};

// Reads the trail by id through relctl.console_audit's "newer than" pages (a
// reviewer's function; relctl.events_after says only which environments
// changed). An id comes from a sequence when the event is inserted, and the
// inserting transaction commits later: event 11 may be visible while event
// 10 is still uncommitted, and events_after's `last` would then pass 10 for
// good. So an event is handed out only when no lower id can still appear:
// the ids below it are all visible, or they are settled. A missing id is
// settled once every transaction that was running a moment (`settle`) after
// it was noticed has ended (pg_current_snapshot's in-progress list, each
// checked against a later snapshot): the moment covers a transaction that had
// taken its id but not yet its transaction id. A settled id is one whose
// transaction rolled back, and never appears.
class TrailReader final
{
public:
    TrailReader(const std::string& conninfo, std::chrono::milliseconds settle) : m_settle(settle)
    {
        try {
            m_conn = std::make_unique<session::Connection>(conninfo);
            pqxx::read_transaction tx(*m_conn);
            const pqxx::row r =
                tx.exec1("SELECT current_user, coalesce((SELECT pg_has_role(current_user, r.oid, 'USAGE') "
                         "FROM pg_roles r WHERE r.rolname = 'relctl_reviewer'), false)");
            m_login = r[0].as<std::string>();
            if (!r[1].as<bool>())
                throw Error(ExitCode::Internal,
                            "the database login \"" + m_login +
                                "\" lacks the relctl_reviewer role, which `relctl watch` "
                                "needs to read the audit trail (see docs/security.md, Roles)");
        } catch (const pqxx::broken_connection& e) {
            throw Error(ExitCode::Unavailable, std::string("database unavailable: ") + firstLine(e.what()));
        } catch (const pqxx::failure& e) {
            throw Error(ExitCode::Unavailable,
                        std::string("cannot read the audit trail: ") + firstLine(e.what()));
        }
    }

    std::string host() const { return m_conn->hostname() ? m_conn->hostname() : ""; }
    std::string port() const { return m_conn->port() ? m_conn->port() : ""; }
    std::string dbname() const { return m_conn->dbname() ? m_conn->dbname() : ""; }

    // The newest id (0: an empty trail).
    std::int64_t end()
    {
        return guarded([&] {
            pqxx::read_transaction tx(*m_conn);
            const json reply = json::parse(tx.exec1("SELECT relctl.events_after(NULL)")[0].c_str());
            return reply.value("last", json()).is_number_integer() ? reply["last"].get<std::int64_t>()
                                                                   : std::int64_t{0};
        });
    }

    Batch read(std::int64_t after)
    {
        return guarded([&] {
            settleGap();
            pqxx::nontransaction tx(*m_conn);
            const pqxx::row r = tx.exec_params1(
                "SELECT relctl.console_audit(NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'time', false, NULL, "
                "NULL, $1, $2)::text",
                static_cast<long long>(after), kPageSize);
            const json page = json::parse(r[0].c_str());
            Batch batch;
            std::int64_t frontier = std::max(after, m_settled);
            for (json e : page.at("events")) {
                const std::int64_t id = e.at("id").get<std::int64_t>();
                if (id > frontier + 1) {
                    batch.held = true;
                    break;
                }
                if (!e.contains("high_water_generation"))
                    e["high_water_generation"] = nullptr; // console_audit does not send it
                batch.events.push_back(e.get<Event>());
                frontier = std::max(frontier, id);
            }
            if (batch.held && !m_gap)
                m_gap = Gap{page.value("horizon", frontier), Clock::now(), std::nullopt};
            batch.through = frontier;
            batch.more = !batch.held && page.value("more", false);
            return batch;
        });
    }

private:
    struct Gap
    {
        std::int64_t horizon; // the newest id visible when the gap was noticed
        Clock::time_point noticed;
        std::optional<std::string> reference; // the snapshot whose running transactions must end
    };

    void settleGap()
    {
        if (!m_gap)
            return;
        pqxx::nontransaction tx(*m_conn);
        if (!m_gap->reference) {
            if (Clock::now() - m_gap->noticed >= m_settle)
                m_gap->reference = tx.exec1("SELECT pg_current_snapshot()::text")[0].as<std::string>();
            return;
        }
        // Ended as this statement's snapshot sees it, not as the commit log
        // says: a transaction is marked committed there a moment before its
        // rows become visible, and the read that follows must see them.
        const bool ended =
            tx.exec_params1("SELECT NOT EXISTS (SELECT 1 FROM pg_snapshot_xip($1::pg_snapshot) x "
                            "WHERE NOT pg_visible_in_snapshot(x, pg_current_snapshot()))",
                            *m_gap->reference)[0]
                .as<bool>();
        if (ended) {
            m_settled = std::max(m_settled, m_gap->horizon);
            m_gap.reset();
        }
    }

    template <class F> auto guarded(F&& f) -> decltype(f())
    {
        try {
            return f();
        } catch (const pqxx::broken_connection& e) {
            throw Error(ExitCode::Unavailable,
                        std::string("the database connection was lost: ") + firstLine(e.what()));
        } catch (const pqxx::insufficient_privilege& e) {
            throw Error(ExitCode::Internal, firstLine(e.what()) + ": the database login \"" + m_login +
                                                "\" lacks the relctl_reviewer role");
        } catch (const pqxx::sql_error& e) {
            if (!m_conn->is_open())
                throw Error(ExitCode::Unavailable,
                            std::string("the database connection was lost: ") + firstLine(e.what()));
            throw Error(ExitCode::Internal,
                        std::string("cannot read the audit trail: ") + firstLine(e.what()));
        } catch (const pqxx::failure& e) {
            throw Error(ExitCode::Unavailable,
                        std::string("cannot read the audit trail: ") + firstLine(e.what()));
        }
    }

    std::unique_ptr<session::Connection> m_conn;
    std::string m_login;
    std::chrono::milliseconds m_settle;
    std::int64_t m_settled = 0; // every id up to here is final
    std::optional<Gap> m_gap;
};

// ---------------------------------------------------------------------------
// Delivery.

std::string describe(const Event& e)
{
    return "event " + std::to_string(e.id) + " (" + e.operation + (e.env ? " on " + *e.env : std::string()) +
           ")";
}

// Runs the hook through /bin/sh -c with the event on its stdin; returns its
// wait status. Waits for it whatever signal arrives: a stop ends the watch
// after the delivery in progress.
int runHook(const std::string& command, const std::string& text, const Event& e)
{
    const int input = ::memfd_create("relctl-event", MFD_CLOEXEC);
    if (input < 0)
        throw Error(ExitCode::Internal, "cannot hold the event for the hook: " + systemMessage(errno));
    struct Closer
    {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{input};
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(input, text.data() + done, text.size() - done);
        if (n < 0 && errno != EINTR)
            throw Error(ExitCode::Internal, "cannot hold the event for the hook: " + systemMessage(errno));
        done += n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    ::lseek(input, 0, SEEK_SET);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    const std::vector<std::string> env =
        environmentWith({"RELCTL_EVENT_ID=" + std::to_string(e.id), "RELCTL_EVENT_KIND=" + e.operation,
                         "RELCTL_ENV=" + e.env.value_or("")});
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (const std::string& s : env)
        envp.push_back(const_cast<char*>(s.c_str()));
    envp.push_back(nullptr);
    std::string sh = "/bin/sh", dashC = "-c", cmd = command;
    char* argv[] = {sh.data(), dashC.data(), cmd.data(), nullptr};
    pid_t pid = -1;
    const int failed = ::posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (failed != 0)
        throw Error(ExitCode::Internal, "cannot start the hook: " + systemMessage(failed));
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            throw Error(ExitCode::Internal, "cannot wait for the hook: " + systemMessage(errno));
    return status;
}

std::string statusText(int status)
{
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
               ::strsignal(WTERMSIG(status)) + ")";
    return "ended with wait status " + std::to_string(status);
}

// How often --once runs a failing hook before it gives up on the event.
constexpr int kOnceTries = 4;

// Delivers one event; true once acknowledged, false when a stop came first.
bool deliver(const Options& o, const StopSignals& signals, const Event& e)
{
    const std::string text = json(e).dump() + "\n";
    if (!o.exec) {
        if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
            throw Error(ExitCode::Internal, "cannot write " + describe(e) + " to standard output");
        return true;
    }
    std::chrono::milliseconds delay = o.firstRetry;
    int tries = 0;
    for (;;) {
        const int status = runHook(*o.exec, text, e);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            return true;
        if (stopping()) {
            std::cerr << "relctl: the hook " << statusText(status) << " on " << describe(e)
                      << "; stopping without acknowledging it: it is delivered again at the next start\n";
            return false;
        }
        // A run from cron (--once) does not wait for a hook that keeps
        // failing: after a few tries it stops at the event, which the next
        // run delivers first.
        if (o.once && ++tries >= kOnceTries)
            throw Error(ExitCode::Internal, "the hook " + statusText(status) + " on " + describe(e) +
                                                ": not acknowledged; the next run delivers it again");
        std::cerr << "relctl: the hook " << statusText(status) << " on " << describe(e)
                  << "; not moving past it, trying again in " << static_cast<double>(delay.count()) / 1000.0
                  << " s\n";
        waitFor(signals, -1, delay);
        if (stopping())
            return false;
        delay = std::min(delay * 2, o.maxRetry);
    }
}

} // namespace

std::vector<DecisionKind> decisionKinds()
{
    return {
        {"promotion-requested",
         "a promotion request was opened: it waits for approvals (promote approve/deny)"},
        {"supersession-requested",
         "a waiting candidate asks to skip lower ones: it waits for approval (supersession approve/deny)"},
        {"freeze", "dispatch was stopped: approved promotions and queued candidates wait until someone "
                   "unfreezes"},
        {"rollback", "an earlier manifest was made current again: what was rolled back no longer counts as "
                     "accepted upstream, so promotions approved downstream for it no longer pass"},
    };
}

bool needsDecision(const Event& event)
{
    if (event.outcome != "accepted")
        return false;
    for (const DecisionKind& k : decisionKinds())
        if (k.operation == event.operation)
            return true;
    return false;
}

std::optional<std::int64_t> readPosition(const std::filesystem::path& file)
{
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        if (ec)
            throwUsage("cannot read the position file " + file.string() + ": " + ec.message());
        return std::nullopt;
    }
    if (!std::filesystem::is_regular_file(file, ec))
        throwUsage("the position file " + file.string() + " is not a regular file");
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throwUsage("cannot read the position file " + file.string() + ": " + systemMessage(errno));
    std::string text(64, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in.bad())
        throwUsage("cannot read the position file " + file.string());
    text.resize(static_cast<std::size_t>(in.gcount()));
    const bool digits = text.size() >= 2 && text.size() <= 20 && text.back() == '\n' &&
                        text.find_first_not_of("0123456789") == text.size() - 1;
    if (!digits)
        throwUsage("the position file " + file.string() +
                   " is damaged (it should hold one event id and a newline); it was left as it is: fix it, "
                   "or remove it to start at the trail's end");
    return std::stoll(text);
}

void writePosition(const std::filesystem::path& file, std::int64_t after)
{
    auto fail = [&](const std::string& what) {
        throw Error(ExitCode::Internal, "cannot save the position in " + file.string() + ": " + what + ": " +
                                            systemMessage(errno));
    };
    const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::filesystem::path temporary = file.string() + ".tmp";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        fail("create " + temporary.string());
    const std::string text = std::to_string(after) + "\n";
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const bool synced = written && ::fsync(fd) == 0;
    ::close(fd);
    if (!synced)
        fail("write " + temporary.string());
    if (::rename(temporary.c_str(), file.c_str()) != 0)
        fail("rename");
    const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0)
        fail("open the directory");
    const bool dirSynced = ::fsync(d) == 0;
    ::close(d);
    if (!dirSynced)
        fail("fsync the directory");
}

std::filesystem::path defaultPositionFile(const std::string& host, const std::string& port,
                                          const std::string& dbname)
{
    std::filesystem::path base;
    if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state == '/')
        base = state;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = std::filesystem::path(home) / ".local" / "state";
    else
        throwUsage("neither XDG_STATE_HOME nor HOME is set: give --position FILE");
    std::string name;
    for (const char c : dbname)
        name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(
                      detail::Fnv1a().add(host).add("\n").add(port).add("\n").add(dbname).value()));
    return base / "relctl" / "watch" / (name + "-" + hash + ".position");
}

int run(const Options& o)
{
    StopSignals signals;
    // A named file is checked before connecting: a damaged one is bad input
    // whether or not the server answers.
    std::optional<std::int64_t> stored;
    if (o.positionFile)
        stored = readPosition(*o.positionFile);
    auto reader = std::make_unique<TrailReader>(o.conninfo, o.settle);
    std::filesystem::path file;
    if (o.positionFile) {
        file = *o.positionFile;
    } else {
        file = defaultPositionFile(reader->host(), reader->port(), reader->dbname());
        stored = readPosition(file);
    }
    std::int64_t position = 0;
    if (stored) {
        position = *stored;
    } else {
        position = o.startAfter ? *o.startAfter : reader->end();
        writePosition(file, position);
        std::cerr << "relctl: no position in " << file.string() << ": starting after event " << position
                  << "\n";
    }
    std::int64_t saved = position;
    std::unique_ptr<EventListener> listener;
    std::chrono::milliseconds reconnectDelay{1000};
    bool down = false;
    while (!stopping()) {
        try {
            if (!reader)
                reader = std::make_unique<TrailReader>(o.conninfo, o.settle);
            if (!listener)
                listener = std::make_unique<EventListener>(o.conninfo);
            if (down)
                std::cerr << "relctl: connected again; following from event " << position << "\n";
            down = false;
            reconnectDelay = std::chrono::milliseconds(1000);
            listener->take();
            const Batch batch = reader->read(position);
            bool stopped = false;
            for (const Event& e : batch.events) {
                if (needsDecision(e)) {
                    if (!deliver(o, signals, e)) {
                        stopped = true;
                        break;
                    }
                    position = e.id;
                    writePosition(file, position);
                    saved = position;
                } else {
                    position = e.id;
                }
                if (stopping()) {
                    stopped = true;
                    break;
                }
            }
            if (!stopped)
                position = std::max(position, batch.through);
            if (position != saved) {
                writePosition(file, position);
                saved = position;
            }
            if (stopped || stopping())
                break;
            if (batch.more)
                continue;
            if (o.once && !batch.held)
                break;
            waitFor(signals, listener->socket(), batch.held ? std::chrono::milliseconds(200) : o.poll);
        } catch (const Error& e) {
            if (e.code() != ExitCode::Unavailable || o.once)
                throw;
            std::cerr << "relctl: " << firstLine(e.what()) << "; trying again in "
                      << reconnectDelay.count() / 1000 << " s\n";
            reader.reset();
            listener.reset();
            down = true;
            waitFor(signals, -1, reconnectDelay);
            reconnectDelay = std::min(reconnectDelay * 2, std::chrono::milliseconds(30000));
        }
    }
    return 0;
}

} // namespace relctl::decisionwatch
