#include "run_support.h"

#include "output.h"
#include "relctl/error.h"
#include "relctl/parse.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <iostream>
#include <mutex>
#include <string_view>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

namespace relctl::cli {

using namespace std::chrono_literals;

namespace {

[[noreturn]] void throwSystem(const char* what)
{
    throw std::system_error(errno, std::generic_category(), what);
}

timespec toTimespec(BootClock::time_point at)
{
    const auto ns = at.time_since_epoch().count();
    // A zero it_value would disarm a timerfd instead of firing it at once.
    return ns <= 0 ? timespec{0, 1} : timespec{ns / 1'000'000'000, ns % 1'000'000'000};
}

} // namespace

BootClock::time_point BootClock::now() noexcept
{
    timespec ts{};
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
}

void diagnostic(const std::string& message)
{
    std::cerr << ("relctl: " + escapeControl(message) + "\n") << std::flush;
}

namespace {

int openSignalFd()
{
    // An inherited SIG_IGN for SIGCHLD would make the kernel reap the command
    // itself, and its exit code would be lost.
    std::signal(SIGCHLD, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGCHLD, SIGINT, SIGTERM})
        sigaddset(&set, sig);
    if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0)
        throwSystem("pthread_sigmask");
    const int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0)
        throwSystem("signalfd");
    return fd;
}

} // namespace

SignalWatch::SignalWatch() : m_fd(openSignalFd()) {}

namespace {

// What exitOnCancel prints, set before the handler is installed: a handler
// may only write and exit.
std::array<char, 512> g_cancelText[2]; // SIGINT's, SIGTERM's
std::size_t g_cancelLength[2] = {0, 0};

extern "C" void exitOnCancel(int sig)
{
    const int i = sig == SIGINT ? 0 : 1;
    [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, g_cancelText[i].data(), g_cancelLength[i]);
    _exit(128 + sig);
}

sigset_t cancelSignals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

} // namespace

ExitOnCancel::ExitOnCancel(const std::function<std::string(int sig)>& diagnosticFor)
{
    const int signals[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; ++i) {
        const std::string text = "relctl: " + escapeControl(diagnosticFor(signals[i])) + "\n";
        g_cancelLength[i] = std::min(text.size(), g_cancelText[i].size());
        std::memcpy(g_cancelText[i].data(), text.data(), g_cancelLength[i]);
    }
    std::cout.flush();
    std::cerr.flush();
    struct sigaction action
    {
    };
    action.sa_handler = exitOnCancel;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &m_int);
    sigaction(SIGTERM, &action, &m_term);
    const sigset_t set = cancelSignals();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

ExitOnCancel::~ExitOnCancel()
{
    const sigset_t set = cancelSignals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    sigaction(SIGINT, &m_int, nullptr);
    sigaction(SIGTERM, &m_term, nullptr);
}

std::vector<int> SignalWatch::take()
{
    std::vector<int> out;
    signalfd_siginfo info{};
    while (read(m_fd.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info))
        out.push_back(static_cast<int>(info.ssi_signo));
    return out;
}

WakeTimer::WakeTimer() : m_fd(timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK))
{
    if (m_fd.get() < 0)
        throwSystem("timerfd_create");
}

void WakeTimer::arm(BootClock::time_point at)
{
    itimerspec spec{};
    spec.it_value = toTimespec(at);
    if (timerfd_settime(m_fd.get(), TFD_TIMER_ABSTIME, &spec, nullptr) != 0)
        throwSystem("timerfd_settime");
}

void WakeTimer::drain()
{
    std::uint64_t expirations = 0;
    [[maybe_unused]] ssize_t n = read(m_fd.get(), &expirations, sizeof expirations);
}

ChildGroup::ChildGroup(const std::vector<std::string>& argv, const std::vector<std::string>& extraEnvironment)
{
    SpawnOptions options;
    options.argv = argv;
    // The extra entries replace inherited ones: an outer job's RELCTL_LEASE
    // must not leak through.
    options.environment = environmentWith(extraEnvironment);
    options.newProcessGroup = true;
    // An exec failure comes back here (its child exits 127 and is reaped by
    // posix_spawnp itself).
    const Spawned spawned = spawn(options);
    m_pid = spawned.pid;
    if (spawned.error != 0) {
        diagnostic("cannot run \"" + argv.at(0) + "\": " + std::strerror(spawned.error));
        m_reaped = true;
        m_code = 127;
    }
}

ChildGroup::~ChildGroup()
{
    if (!m_reaped)
        finish();
}

bool ChildGroup::exited()
{
    if (m_reaped)
        return true;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno != EINTR;
    return info.si_pid == m_pid;
}

void ChildGroup::signal(int sig)
{
    if (!m_reaped)
        kill(-m_pid, sig);
}

int ChildGroup::finish()
{
    if (m_reaped)
        return m_code;
    // Nothing the command started may outlive it: the lease is about to be
    // published under and released. The command itself is a zombie by now
    // (or this is the destructor's cleanup), so this reaches only stragglers.
    kill(-m_pid, SIGKILL);
    int status = 0;
    pid_t rc;
    while ((rc = waitpid(m_pid, &status, 0)) < 0 && errno == EINTR) {
    }
    m_reaped = true;
    // Without a wait status the outcome is unknown: never report success then.
    m_code = rc != m_pid           ? 1
             : WIFEXITED(status)   ? WEXITSTATUS(status)
             : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                   : 1;
    if (rc != m_pid)
        diagnostic("lost track of the command's exit status; treating it as failed");
    return m_code;
}

struct Heartbeat::State
{
    std::function<Database()> connect;
    Handle lease;
    std::chrono::milliseconds ttl;
    Fd wake{eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};

    std::mutex mutex; // guards everything below
    std::condition_variable changed;
    BootClock::time_point lastSend;
    BootClock::time_point deadline;
    bool stopping = false;
    bool calling = false; // a renewal or a connection attempt is under way, outside the lock
    bool exited = false;
    bool lost = false;
    std::string reason;
    std::string message;
    int renewals = 0;

    void lose(std::string why, std::string text)
    {
        if (lost)
            return;
        lost = true;
        reason = std::move(why);
        message = std::move(text);
        const std::uint64_t one = 1;
        [[maybe_unused]] ssize_t n = write(wake.get(), &one, sizeof one);
    }

    // When the thread connects, shortly before the first renewal is due (a
    // renewal after one third of the TTL): not at once, so that a command that
    // ends sooner (every short step of a pipeline) never costs the server a
    // second connection, nor the wrapper a thread.
    BootClock::time_point firstConnect() const
    {
        return lastSend + ttl / 3 - std::min<std::chrono::milliseconds>(ttl / 6, 2s);
    }

    bool check(BootClock::time_point now)
    {
        if (!lost && now >= deadline)
            lose("LEASE_EXPIRED", "LEASE_EXPIRED: no renewal within the TTL (" + formatDuration(ttl) +
                                      ") by the wrapper's clock");
        return !lost;
    }
};

Heartbeat::Heartbeat(std::function<Database()> connect, Handle lease, std::chrono::milliseconds ttl,
                     BootClock::time_point lastSend)
    : m_state(std::make_shared<State>())
{
    m_state->connect = std::move(connect);
    m_state->lease = std::move(lease);
    m_state->ttl = ttl;
    m_state->lastSend = lastSend;
    m_state->deadline = lastSend + ttl;
    if (m_state->wake.get() < 0)
        throwSystem("eventfd");
}

Heartbeat::~Heartbeat()
{
    stop();
    // Stopped and not in a call, the thread ends as soon as it runs again: it
    // is joined here, after the publish and the release, so its wake-up is not
    // waited for while the command's outcome is.
    if (m_thread.joinable())
        m_thread.join();
}

void Heartbeat::start()
{
    if (m_started)
        return;
    m_started = true;
    m_thread = std::thread(&Heartbeat::loop, m_state);
}

bool Heartbeat::started() const
{
    return m_started;
}

BootClock::time_point Heartbeat::startBy() const
{
    std::lock_guard lock(m_state->mutex);
    return m_state->firstConnect();
}

void Heartbeat::stop()
{
    if (!m_thread.joinable())
        return;
    std::unique_lock lock(m_state->mutex);
    if (m_state->stopping)
        return;
    m_state->stopping = true;
    m_state->changed.notify_all();
    // Only a call under way is waited for: the thread looks at `stopping`
    // under the lock before it starts one, so once none is under way, none
    // will be. libpq cannot be interrupted: a renewal stuck on a dead network
    // must not hold the wrapper (and the release of its lease) hostage.
    const bool idle =
        m_state->changed.wait_for(lock, 5s, [&] { return m_state->exited || !m_state->calling; });
    lock.unlock();
    if (!idle) {
        diagnostic("the renewal thread is stuck in a database call; leaving it behind");
        m_thread.detach();
    }
}

int Heartbeat::fd() const
{
    return m_state->wake.get();
}

bool Heartbeat::held(BootClock::time_point now)
{
    std::lock_guard lock(m_state->mutex);
    return m_state->check(now);
}

BootClock::time_point Heartbeat::deadline() const
{
    std::lock_guard lock(m_state->mutex);
    return m_state->deadline;
}

std::string Heartbeat::lostReason() const
{
    std::lock_guard lock(m_state->mutex);
    return m_state->reason;
}

std::string Heartbeat::lostMessage() const
{
    std::lock_guard lock(m_state->mutex);
    return m_state->message;
}

int Heartbeat::renewals() const
{
    std::lock_guard lock(m_state->mutex);
    return m_state->renewals;
}

void Heartbeat::loop(const std::shared_ptr<State>& s)
{
    std::optional<Database> db; // dropped after any failure
    const auto retryDelay = std::clamp<std::chrono::milliseconds>(s->ttl / 10, 50ms, 1s);
    std::unique_lock lock(s->mutex);
    auto due = s->lastSend + s->ttl / 3; // the next renewal
    BootClock::time_point connectAt = s->firstConnect();
    bool failing = false;
    for (;;) {
        const auto now = BootClock::now();
        if (s->stopping || !s->check(now))
            break;
        const auto at = db ? due : connectAt;
        if (now < at) {
            // The condition variable waits on steady_clock, which stands still
            // during a suspend: wait in slices and look at the boot clock again.
            s->changed.wait_for(lock, std::min<BootClock::duration>({at - now, s->deadline - now, 1s}));
            continue;
        }
        // The deadline was checked under the lock just above and is checked
        // again after a (re)connection: no renewal leaves after it.
        const bool renewing = db.has_value();
        s->calling = true;
        lock.unlock();
        std::optional<Outcome> outcome;
        std::optional<std::string> failure;
        try {
            if (renewing)
                outcome = db->renew(s->lease, s->ttl);
            else
                db.emplace(s->connect());
        } catch (const std::exception& e) {
            db.reset();
            failure = e.what();
        }
        lock.lock();
        s->calling = false;
        s->changed.notify_all(); // a stop() may be waiting for the call to end
        if (failure) {
            if (!failing) {
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(s->deadline - now);
                diagnostic("cannot renew the lease (" + *failure + "); retrying for another " +
                           formatDuration(left));
            }
            failing = true;
            connectAt = BootClock::now() + retryDelay;
        } else if (outcome && outcome->accepted()) {
            // An answer that arrives after the deadline does not revive the
            // lease: check() has, or will have, declared it lost.
            if (BootClock::now() < s->deadline) {
                s->lastSend = now;
                s->deadline = now + s->ttl;
                ++s->renewals;
                if (failing)
                    diagnostic("lease renewed again");
                failing = false;
            }
            due = now + s->ttl / 3;
        } else if (outcome) {
            s->lose(outcome->reason, outcome->message().empty() ? outcome->reason : outcome->message());
        }
    }
    s->exited = true;
    s->changed.notify_all();
}

} // namespace relctl::cli
