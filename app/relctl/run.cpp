// relctl run: acquire, run the command under a renewed lease, publish on
// success, release always. The lease is the command's licence to act: the
// moment the wrapper can no longer prove it holds it (a refused renewal, or
// its own boot clock passing the deadline), the command's process group is
// stopped and nothing is published.

#include "run.h"

#include "arguments.h"
#include "run_support.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <future>
#include <iostream>
#include <optional>
#include <poll.h>
#include <thread>

namespace relctl::cli {

namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using std::chrono::milliseconds;

struct RunSpec
{
    AcquireRequest acquire;
    std::optional<json> manifest;
    milliseconds grace = 10s;
    std::vector<std::string> command;

    std::string publishOpId() const { return acquire.opId + ".publish"; }
};

// Everything is checked before the database is touched: bad input writes nothing.
RunSpec parseRun(const Arguments& o, const std::vector<std::string>& command)
{
    RunSpec spec;
    spec.acquire = acquireRequest(o);
    AcquireRequest& r = spec.acquire;
    if (auto grace = o.duration("grace", false))
        spec.grace = *grace;
    // The publish uses "<op-id>.publish", which must fit the database's 200 characters too.
    if (r.opId.size() > 192)
        throwUsage(
            "--op-id may have at most 192 characters for 'run' (\".publish\" is appended for its publish)");
    spec.command = command;
    if (spec.command.empty() || spec.command.front().empty())
        throwUsage("'run' needs a command after --");
    if (auto path = o.get("manifest"))
        spec.manifest = readManifest(*path);
    return spec;
}

// What `run` prints never names the lease id: the handle is the command's
// secret (in its environment), not something for a CI log. The env and the
// fencing token identify the lease.
json withoutLeaseSecret(json j)
{
    std::vector<json*> pending{&j};
    while (!pending.empty()) {
        json* v = pending.back();
        pending.pop_back();
        if (v->is_object()) {
            v->erase("handle");
            v->erase("lease_id");
        }
        if (v->is_structured())
            for (json& child : *v)
                pending.push_back(&child);
    }
    return j;
}

std::string signalName(int sig)
{
    // glibc's abbreviations ("TERM"), as a shell prints them.
    if (const char* abbreviation = sigabbrev_np(sig))
        return std::string("SIG") + abbreviation;
    return "signal " + std::to_string(sig);
}

// How supervision ended. At most one of lost and cancelledBy is set: the
// first of the two decides the exit code.
struct Ending
{
    int code = 0;           // the command's exit code (128 + signal when killed)
    bool lost = false;      // the lease is gone by the wrapper's knowledge
    int cancelledBy = 0;    // SIGINT or SIGTERM received by the wrapper
    bool escalated = false; // SIGKILL was needed after the grace period
    pid_t group = -1;       // the command's process group
};

// What the wrapper stopped, for the record its release makes (the reviewer's
// and `relctl status`'s evidence). end: null when the command never started.
StopReport stopReport(const std::string& cause, int received, const Ending* end)
{
    StopReport r;
    r.cause = cause;
    if (received)
        r.signal = signalName(received);
    if (end) {
        r.commandStarted = true;
        r.processGroup = end->group;
        r.exitCode = end->code;
        if (end->code > 128 && end->code < 128 + 65)
            r.killedBy = signalName(end->code - 128);
        r.escalated = end->escalated;
    }
    return r;
}

// Waits for the command while watching the lease and the wrapper's signals.
// Every wait is bounded by the lease deadline on the boot clock, so a wrapper
// resumed after SIGSTOP or a VM freeze acts within one loop turn.
Ending supervise(ChildGroup& child, Heartbeat& heartbeat, SignalWatch& signals, milliseconds grace)
{
    Ending end;
    WakeTimer timer;
    std::optional<BootClock::time_point> killAt; // when SIGKILL is due, once the group was told to stop
    bool killed = false;
    const auto stop = [&](int sig) {
        child.signal(sig);
        if (!killAt)
            killAt = BootClock::now() + grace;
    };
    while (!child.exited()) {
        const auto now = BootClock::now();
        if (!end.lost && !end.cancelledBy && !heartbeat.held(now)) {
            end.lost = true;
            diagnostic(heartbeat.lostMessage() + "; stopping the command (SIGTERM to its process group)");
            stop(SIGTERM);
        }
        if (killAt && !killed && now >= *killAt) {
            diagnostic("the command is still running after the grace period of " + formatDuration(grace) +
                       "; sending SIGKILL to its process group");
            child.signal(SIGKILL);
            killed = true;
        }
        // Wake at the lease deadline while it matters (and first when the
        // renewal thread is due to start), else at the end of the grace. (Once
        // the command is being stopped, the heartbeat's eventfd is left out:
        // it stays readable once the lease is lost.)
        const bool watching = !end.lost && !end.cancelledBy;
        if (watching && !heartbeat.started() && now >= heartbeat.startBy())
            heartbeat.start();
        if (watching)
            timer.arm(heartbeat.started() ? heartbeat.deadline()
                                          : std::min(heartbeat.deadline(), heartbeat.startBy()));
        else if (!killed)
            timer.arm(*killAt);
        pollfd fds[] = {
            {signals.fd(), POLLIN, 0}, {watching ? heartbeat.fd() : -1, POLLIN, 0}, {timer.fd(), POLLIN, 0}};
        poll(fds, std::size(fds), -1); // EINTR needs nothing: the loop looks at everything again
        timer.drain();
        for (int sig : signals.take()) {
            if (sig == SIGCHLD)
                continue;
            if (!end.lost && !end.cancelledBy) {
                end.cancelledBy = sig;
                diagnostic("received " + signalName(sig) + "; forwarding it to the command's process group");
            }
            stop(sig); // a repeated signal is forwarded as well
        }
    }
    end.code = child.finish();
    end.escalated = killed;
    end.group = child.pid(); // the group's leader: its id is the group's
    return end;
}

class Runner
{
public:
    Runner(const RunContext& context, RunSpec spec)
        : m_context(context), m_out(context.output), m_spec(std::move(spec))
    {
    }

    int run()
    {
        // Before the lease exists and before any thread: from here on SIGINT
        // and SIGTERM are seen (and answered by releasing the lease), never fatal.
        SignalWatch signals;
        m_db.emplace(connectWithin(m_context.connect, m_spec.acquire.wait, diagnostic));
        const auto sent = BootClock::now();
        const Outcome acquired = acquire(signals);
        const auto answered = BootClock::now();
        if (!acquired.accepted())
            return printOutcome(acquired);
        const Grant grant = acquired.reply<Grant>();
        auto handle = parseHandle(grant.handle);
        if (!handle)
            throw Error(ExitCode::Internal, "unexpected acquire reply: " + acquired.body.dump());
        m_handle = *handle;
        m_ttl = milliseconds(grant.ttlMs);
        try {
            return runHolding(signals, acquired, sent, answered);
        } catch (...) {
            release("relctl run failed");
            throw;
        }
    }

private:
    // Queued (--wait), the acquire may block for long in libpq, which cannot
    // be interrupted: it runs on a helper thread while this one watches for a
    // cancellation, which then ends the process at once. The queue entry dies
    // with the connection; a grant racing with the signal lasts until its TTL.
    Outcome acquire(SignalWatch& signals)
    {
        if (!m_spec.acquire.wait || m_spec.acquire.wait->count() == 0)
            return m_db->acquire(m_spec.acquire);
        std::packaged_task<Outcome()> task([this] { return m_db->acquire(m_spec.acquire); });
        std::future<Outcome> result = task.get_future();
        std::thread worker(std::move(task));
        while (result.wait_for(50ms) != std::future_status::ready) {
            if (int sig = pendingCancel(signals)) {
                m_out.failure(static_cast<ExitCode>(128 + sig), "cancelled",
                              "cancelled by " + signalName(sig) + " while waiting for the lease");
                std::cout.flush();
                std::_Exit(128 + sig);
            }
        }
        worker.join();
        return result.get();
    }

    int runHolding(SignalWatch& signals, const Outcome& acquired, BootClock::time_point sent,
                   BootClock::time_point answered)
    {
        auto lastSend = sent;
        if (acquired.replayed()) {
            // A retried run with the same --op-id. If the first attempt got as
            // far as its publish, answer with that recorded outcome.
            if (m_db->showOperation(m_spec.publishOpId()).recorded()) {
                diagnostic("op id " + m_spec.acquire.opId +
                           " already reached its publish; replaying it without running the command");
                return publishAndRelease(std::nullopt);
            }
        }
        if (acquired.replayed() || answered - sent > m_ttl / 3) {
            // The send time bounds when the lease was granted only for a fresh,
            // prompt grant; a replayed or long-queued one is confirmed by a
            // renewal first. Nothing runs under the lease yet, so this is safe.
            lastSend = BootClock::now();
            const Outcome renewed = m_db->renew(m_handle, m_ttl);
            if (!renewed.accepted()) {
                release("lease lost before the command started");
                return printOutcome(renewed);
            }
        }
        Heartbeat heartbeat(m_context.connect, m_handle, m_ttl, lastSend);
        if (int sig = pendingCancel(signals))
            return cancelled(sig, "before the command started", nullptr);
        if (!heartbeat.held(BootClock::now()))
            return lost(heartbeat, "before the command started", nullptr);
        diagnostic("holding lease " + std::to_string(m_handle.token) + " on " + m_handle.env + " (ttl " +
                   formatDuration(m_ttl) + "); running " + m_spec.command.front());
        ChildGroup child(m_spec.command, childEnvironment());
        Ending end = supervise(child, heartbeat, signals, m_spec.grace);
        heartbeat.stop();
        // The command may have finished while the wrapper was stopped past the
        // deadline, or a cancellation may have arrived just now: both win over
        // publishing.
        if (!end.lost && !end.cancelledBy)
            end.cancelledBy = pendingCancel(signals);
        if (!end.lost && !end.cancelledBy && !heartbeat.held(BootClock::now()))
            return lost(heartbeat, "the command exited with " + std::to_string(end.code) + " meanwhile",
                        &end);
        if (end.lost)
            return lost(heartbeat, "the command was stopped", &end);
        if (end.cancelledBy)
            return cancelled(end.cancelledBy, "the command was stopped", &end);
        if (end.code != 0) {
            const std::string text = end.code > 128 && end.code < 128 + 65
                                         ? "the command was killed by " + signalName(end.code - 128) +
                                               " (exit " + std::to_string(end.code) + ")"
                                         : "the command exited with " + std::to_string(end.code);
            release("command exited with " + std::to_string(end.code));
            return m_out.failure(static_cast<ExitCode>(end.code), "command_failed",
                                 text + "; nothing was published and the lease was released",
                                 {{"env", m_handle.env}, {"token", m_handle.token}, {"exit_code", end.code}});
        }
        return publishAndRelease(heartbeat.deadline());
    }

    // The lease's facts for the command, which may present the token to the
    // deploy target or renew through `relctl lease renew` itself.
    std::vector<std::string> childEnvironment() const
    {
        return {"RELCTL_LEASE=" + m_handle.toString(),
                "RELCTL_FENCING_TOKEN=" + std::to_string(m_handle.token), "RELCTL_ENV=" + m_handle.env,
                "RELCTL_RELEASE=" + m_spec.acquire.release,
                "RELCTL_GENERATION=" + std::to_string(m_spec.acquire.generation)};
    }

    static int pendingCancel(SignalWatch& signals)
    {
        for (int sig : signals.take())
            if (sig != SIGCHLD)
                return sig;
        return 0;
    }

    // A publish whose connection is lost (a long command may outlive an idle
    // connection, or the reply is lost) is settled by Database itself: it
    // connects again and sends it once more under the same op id, answered
    // from the record if the first attempt committed. One that finds the
    // environment locked (nothing applied) is sent again until the lease's
    // end by the wrapper's clock (`leaseEnd`; none for a replayed run): the
    // command succeeded, and a busy server is no reason to report otherwise.
    int publishAndRelease(std::optional<BootClock::time_point> leaseEnd)
    {
        const PublishRequest request{m_handle, m_spec.manifest, m_spec.publishOpId()};
        std::optional<std::chrono::steady_clock::time_point> retryLockedUntil;
        if (leaseEnd)
            retryLockedUntil = std::chrono::steady_clock::now() + (*leaseEnd - BootClock::now());
        const Outcome published = m_db->publish(request, retryLockedUntil);
        const std::string state = release(published.accepted() ? "" : "publish refused: " + published.reason);
        if (!published.accepted())
            return printOutcome(published);
        json body = withoutLeaseSecret(published.body);
        body["env"] = m_handle.env;
        body["token"] = m_handle.token;
        body["lease_state"] = state;
        diagnostic("published " + m_spec.acquire.release + " (generation " +
                   std::to_string(m_spec.acquire.generation) + ") on " + m_handle.env + " with token " +
                   std::to_string(m_handle.token) + (published.replayed() ? " (replayed)" : "") + "; lease " +
                   state);
        return m_out.outcome(Outcome{ExitCode::Ok, {}, body}, [] { return std::string(); });
    }

    // end: how the command ended; null when it never started. The release
    // records what was stopped, and the reply says what may not have been.
    int lost(Heartbeat& heartbeat, const std::string& what, const Ending* end)
    {
        const std::string reason = heartbeat.lostReason();
        release("lease lost: " + reason, stopReport("lease-lost", 0, end));
        return m_out.failure(ExitCode::LeaseLost, reason,
                             heartbeat.lostMessage() + "; " + what + " and nothing was published" +
                                 (end ? "; " + std::string(kExternalWork) : ""),
                             {{"env", m_handle.env}, {"token", m_handle.token}});
    }

    int cancelled(int sig, const std::string& what, const Ending* end)
    {
        release("cancelled by " + signalName(sig), stopReport("cancelled", sig, end));
        return m_out.failure(static_cast<ExitCode>(128 + sig), "cancelled",
                             "cancelled by " + signalName(sig) + ": " + what +
                                 ", nothing was published and the lease was released" +
                                 (end ? "; " + std::string(kExternalWork) : ""),
                             {{"env", m_handle.env}, {"token", m_handle.token}});
    }

    // Stopping the process group reaches the command's processes on this
    // machine, not what it set going elsewhere.
    static constexpr const char* kExternalWork =
        "work the command started outside its process group (a rollout, a remote job) is not known to have "
        "stopped: check the deploy target before running again";

    int printOutcome(const Outcome& o) const
    {
        return m_out.outcome(Outcome{o.code, o.reason, withoutLeaseSecret(o.body)},
                             [] { return std::string(); });
    }

    // Releases the wrapper's own lease (idempotent on the server) and returns
    // its state. Never throws and never blocks for long: a lease that cannot be
    // released runs out by itself at its expiry, and the run's outcome is
    // already decided. Another SIGINT or SIGTERM meanwhile ends the wrapper at
    // once (ExitOnCancel): a job being cancelled is not kept waiting.
    std::string release(const std::string& note, const std::optional<StopReport>& stopped = std::nullopt)
    {
        const ExitOnCancel cancel([this](int sig) {
            return "received " + signalName(sig) + " while releasing; could not release the lease, " +
                   expiryNote();
        });
        return releaseBounded(note, stopped);
    }

    // Both attempts together wait at most one call bound (plus connecting):
    // the second, on a new connection, is made only within what is left of it.
    std::string releaseBounded(const std::string& note, const std::optional<StopReport>& stopped)
    {
        const auto budget = m_db ? m_db->callTimeout() : std::chrono::milliseconds(35s);
        const auto until = std::chrono::steady_clock::now() + budget;
        std::string why = "no time left";
        for (int attempt = 1; attempt <= 2; ++attempt) {
            try {
                if (attempt == 2 || !m_db) {
                    const auto left =
                        std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
                    if (left.count() <= 0)
                        break;
                    m_db.emplace(m_context.connect());
                    m_db->setCallTimeout(std::min(left, m_db->callTimeout()));
                }
                const Outcome o = m_db->release(m_handle, note, stopped);
                return o.accepted() ? o.reply<LeaseEnd>().state : o.reason;
            } catch (const std::exception& e) {
                why = e.what();
            }
        }
        diagnostic("could not release the lease (" + why + "); " + expiryNote());
        return "unreleased";
    }

    std::string expiryNote() const
    {
        return "the lease runs out at its expiry (within " + formatDuration(m_ttl) + ")";
    }

    const RunContext& m_context;
    const Output& m_out;
    RunSpec m_spec;
    std::optional<Database> m_db; // the main thread's connection
    Handle m_handle;
    milliseconds m_ttl{};
};

} // namespace

int runCommand(const RunContext& context)
{
    return Runner(context, parseRun(context.arguments, context.command)).run();
}

} // namespace relctl::cli
