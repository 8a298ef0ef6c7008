#pragma once

// Private to core: the bounds every relctl session runs under, so that no
// client holds an environment's row lock, or waits, for longer than a CI job
// can afford, and a silent server cannot hang a job.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <pqxx/connection>
#include <string>
#include <thread>

namespace relctl::session {

using namespace std::chrono_literals;

// Every protocol call is one short statement (see migrations/): none needs
// seconds, let alone minutes. The numbers say how long something unusual may
// last before the client gives up and reports "unavailable, try again":
//
// - connect_timeout: an unreachable server fails the job fast (libpq waits
//   forever by default). PGCONNECT_TIMEOUT or the connection string wins.
inline constexpr std::chrono::seconds kConnectTimeout = 5s;
// - lock_timeout: a call waiting for an environment's row lock held by a
//   stuck session (an open transaction, a paused client) gives up instead of
//   queueing behind it indefinitely.
inline constexpr std::chrono::seconds kLockTimeout = 10s;
// - statement_timeout: bounds every statement on the server. Queue waiters
//   wait on the client side (LISTEN, timers) and only make short calls, so
//   waiting for a lease for 30 minutes is not one long statement.
inline constexpr std::chrono::seconds kStatementTimeout = 30s;
// - idle_in_transaction_session_timeout: a session that opened a transaction
//   and went silent (a paused process, a half-dead network) is ended and its
//   locks freed. relctl's own calls never leave a transaction open.
inline constexpr std::chrono::seconds kIdleInTransactionTimeout = 15s;
// - TCP keepalives and tcp_user_timeout: a peer that vanished (a dropped VM,
//   a firewall forgetting the flow) is noticed within about half a minute,
//   on the server for the session's locks and on the client for its wait.
inline constexpr int kKeepalivesIdleSeconds = 10;
inline constexpr int kKeepalivesIntervalSeconds = 5;
inline constexpr int kKeepalivesCount = 3;
inline constexpr std::chrono::milliseconds kTcpUserTimeout = 30000ms;
// - the client's own bound on one call: a server that accepted the connection
//   and then stalls without a word (no error, no reset) is given up on a little
//   after statement_timeout would have ended the statement. RELCTL_CALL_TIMEOUT
//   (a duration, e.g. 2s) overrides it, for tests.
inline constexpr std::chrono::milliseconds kCallTimeout = kStatementTimeout + 5s;
// - the reconnect window: when the connection is lost between sending an
//   operation that carries an op id and reading its reply, the client keeps
//   trying to connect again for this long to read what became of it, instead
//   of leaving the job an unknown outcome. A failover or a restart typically
//   ends well inside it. RELCTL_RECONNECT_TIMEOUT (a duration; 0 turns the
//   resolution off) overrides it.
inline constexpr std::chrono::milliseconds kReconnectWindow = 15s;

// The connection string (keyword/value or URI; empty: libpq's PG* variables)
// as a keyword/value string carrying the client-side bounds above
// (connect_timeout, keepalives, tcp_user_timeout), and the user's own
// `options` or PGOPTIONS if any. What the user set wins: a keyword is added
// only when absent. The server settings (lock_timeout, statement_timeout,
// idle_in_transaction_session_timeout) are not startup options here: see
// boundsStatement. Throws Error(Usage) for a malformed string.
std::string boundedConninfo(const std::string& conninfo);

// The SET statement that puts the server settings above on a session, sent as
// its first statement (Connection, Database). Not startup options, so that
// they hold through a connection pooler: PgBouncer refuses the `options`
// startup parameter, or drops it when told to ignore it. A setting the
// connection string's own `options` (or PGOPTIONS) sets with -c or --name=
// is left out: the user's wins, as it would among startup options. Empty when
// the user set all three. Throws Error(Usage) for a malformed string.
std::string boundsStatement(const std::string& conninfo);

// Sends boundsStatement(conninfo) on a connection just made to
// boundedConninfo(conninfo), when there is anything to set.
void applyBounds(pqxx::connection_base& conn, const std::string& conninfo);

// A connection to boundedConninfo(conninfo) with applyBounds done: what every
// relctl session but Database's (which also bounds that statement with its
// watchdog) connects with.
class Connection final : public pqxx::connection
{
public:
    explicit Connection(const std::string& conninfo);
};

// The same connection string (keyword/value or URI) naming another database,
// as a keyword/value string. Throws Error(Usage) for a malformed string.
std::string withDatabase(const std::string& conninfo, const std::string& database);

// The same connection string, with the session's role set to `role` when it
// starts (options -c role=...): the login's privileges narrowed to a group
// role's, e.g. a rehearsal's jobs acting with relctl_job's and nothing more.
std::string withRole(const std::string& conninfo, const std::string& role);

// RELCTL_CALL_TIMEOUT, else kCallTimeout. Throws Error(Usage) for an invalid value.
std::chrono::milliseconds callTimeout();

// RELCTL_RECONNECT_TIMEOUT, else kReconnectWindow. Throws Error(Usage) for an invalid value.
std::chrono::milliseconds reconnectWindow();

// Bounds a blocking libpq call from outside: libpq cannot be interrupted, so
// when an armed call outlives its bound, the connection's socket is shut down
// and libpq fails the call with a broken connection. One per connection, armed
// by one thread at a time.
class CallWatchdog
{
public:
    CallWatchdog() = default;
    ~CallWatchdog();
    CallWatchdog(const CallWatchdog&) = delete;
    CallWatchdog& operator=(const CallWatchdog&) = delete;

    // Holds a duplicate of the socket while armed: shutting it down reaches
    // the connection even if libpq has closed its own descriptor meanwhile,
    // and never a descriptor number reused by something else.
    void arm(int socket, std::chrono::milliseconds bound);
    // Returns whether the bound expired (and the socket was shut down).
    bool disarm();

private:
    void loop();

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::thread m_thread;
    int m_socket = -1;
    std::chrono::steady_clock::time_point m_deadline;
    bool m_fired = false;
    bool m_stopping = false;
};

// Arms a watchdog for one scope.
class Armed
{
public:
    Armed(CallWatchdog& watchdog, int socket, std::chrono::milliseconds bound) : m_watchdog(watchdog)
    {
        m_watchdog.arm(socket, bound);
    }
    ~Armed() { disarm(); }
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;

    // Idempotent; true when the bound expired.
    bool disarm()
    {
        if (!m_done) {
            m_fired = m_watchdog.disarm();
            m_done = true;
        }
        return m_fired;
    }

private:
    CallWatchdog& m_watchdog;
    bool m_done = false;
    bool m_fired = false;
};

} // namespace relctl::session
