#pragma once

// The moving parts of `relctl run`: the wrapper's clock, the signals it
// watches, the child's process group and the heartbeat that keeps the lease.

#include "relctl/database.h"
#include "relctl/process.h"

#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace relctl::cli {

// CLOCK_BOOTTIME: monotonic like steady_clock, but it keeps counting while the
// machine is suspended, so a lease's deadline passes during a suspend as it
// does on the database server.
struct BootClock
{
    using duration = std::chrono::nanoseconds;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::time_point<BootClock>;
    static constexpr bool is_steady = true;
    static time_point now() noexcept;
};

// Writes one "relctl: ..." diagnostic line to stderr in a single write, so
// lines from the two threads do not interleave.
void diagnostic(const std::string& message);

// Blocks SIGCHLD, SIGINT and SIGTERM in the calling thread, and so in every
// thread it starts afterwards, and receives them through a signalfd. The mask
// is kept until the process exits: a signal arriving late must not kill the
// wrapper before it has released its lease.
class SignalWatch
{
public:
    SignalWatch();
    int fd() const { return m_fd.get(); }
    // The signals received since the last call, in order (SIGCHLD included).
    std::vector<int> take();

private:
    Fd m_fd;
};

// While one lives, SIGINT and SIGTERM (blocked by SignalWatch) reach this
// thread's handler instead, which prints the diagnostic given for the signal
// and exits 128 + the signal at once: for a blocking database call that a job
// being cancelled must not wait for (libpq cannot be interrupted). A signal
// pending when it starts is handled so too. One at a time, on one thread.
class ExitOnCancel
{
public:
    explicit ExitOnCancel(const std::function<std::string(int sig)>& diagnosticFor);
    ~ExitOnCancel();
    ExitOnCancel(const ExitOnCancel&) = delete;
    ExitOnCancel& operator=(const ExitOnCancel&) = delete;

private:
    struct sigaction m_int
    {
    };
    struct sigaction m_term
    {
    };
};

// A timerfd on CLOCK_BOOTTIME: poll() on it wakes at an absolute boot-clock
// time even across a suspend or a SIGSTOP, unlike poll's own timeout.
class WakeTimer
{
public:
    WakeTimer();
    int fd() const { return m_fd.get(); }
    void arm(BootClock::time_point at);
    void drain();

private:
    Fd m_fd;
};

// The command, run in a process group of its own so that it and everything it
// starts can be signalled together. The group id stays reserved until
// finish() reaps the command (it is observed with WNOWAIT until then), so a
// signal to the group never reaches an unrelated group that reused the id.
class ChildGroup
{
public:
    // Starts argv[0] (searched in PATH) with the extra environment variables
    // and every signal unblocked. An exec failure is reported as a command
    // that exited 127 (as a shell does), with a diagnostic.
    ChildGroup(const std::vector<std::string>& argv, const std::vector<std::string>& extraEnvironment);
    ~ChildGroup();
    ChildGroup(const ChildGroup&) = delete;
    ChildGroup& operator=(const ChildGroup&) = delete;

    pid_t pid() const { return m_pid; }
    // Whether the command itself has exited (without reaping it).
    bool exited();
    // Signals the whole group (a no-op once the command was reaped).
    void signal(int sig);
    // Kills what is left of the group, reaps the command and returns its exit
    // code, 128 + the signal that killed it.
    int finish();

private:
    pid_t m_pid = -1;
    bool m_reaped = false;
    int m_code = 127;
};

// Renews the lease every TTL/3 from a thread with its own connection and
// decides, on the wrapper's own boot clock, when the lease must be treated as
// gone: as soon as a renewal is refused, or once the deadline passed without
// an answered renewal. The deadline is the moment the last successful renewal
// (or the acquire) was SENT plus the TTL: the server extends from its own now,
// which is later than that send, so the lease lives at least that long.
class Heartbeat
{
public:
    Heartbeat(std::function<Database()> connect, Handle lease, std::chrono::milliseconds ttl,
              BootClock::time_point lastSend);
    ~Heartbeat();
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

    // Starts the renewal thread, once; supervise() calls it when startBy()
    // comes, so a command that ends sooner runs without it.
    void start();
    bool started() const;
    BootClock::time_point startBy() const;
    // After stop() no renewal is in flight and none will be sent. It waits
    // only for a call under way (at most 5 s); the idle thread is joined by
    // the destructor.
    void stop();

    // Readable (an eventfd) once the heartbeat thread has found the lease lost.
    int fd() const;
    // Whether the lease is still held at `now` by the wrapper's clock; once it
    // is not, it never is again.
    bool held(BootClock::time_point now);
    BootClock::time_point deadline() const;
    // Why it was lost: the refusal reason (LEASE_SUPERSEDED, ...) or
    // LEASE_EXPIRED for a deadline that passed, and a message.
    std::string lostReason() const;
    std::string lostMessage() const;
    int renewals() const;

private:
    struct State;
    static void loop(const std::shared_ptr<State>& state);

    std::shared_ptr<State> m_state;
    std::thread m_thread;
    bool m_started = false;
};

} // namespace relctl::cli
