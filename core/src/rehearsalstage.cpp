// The rehearsal's stage and its actors: the `relctl` child processes a
// scenario plays with, and the Stage that starts them, streams the scratch
// database's events as steps and concludes a scenario with its verdicts. Apart
// from rehearsal.cpp, which selects the scenarios and runs them, so that the
// engine reads as a loop over scenarios and the process handling stays here.

#include "privatefiles.h"
#include "rehearsal_stage.h"
#include "relctl/console.h"
#include "relctl/error.h"
#include "relctl/process.h"
#include "session.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace relctl::rehearsal {

namespace {

std::string slurp(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::int64_t wallNowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

// ---------------------------------------------------------------------------
// Actor

Actor::Actor(std::string name, pid_t pid, fs::path out, fs::path err)
    : m_name(std::move(name)), m_pid(pid), m_out(std::move(out)), m_err(std::move(err))
{
}

Actor::~Actor()
{
    if (!m_code) {
        signalGroup(SIGKILL);
        int status = 0;
        waitpid(m_pid, &status, 0);
    }
}

std::optional<int> Actor::poll()
{
    if (m_code)
        return m_code;
    int status = 0;
    const pid_t r = waitpid(m_pid, &status, WNOHANG);
    if (r == m_pid) {
        if (WIFEXITED(status))
            m_code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
            m_code = 128 + WTERMSIG(status);
    } else if (r < 0 && errno == ECHILD) {
        m_code = 127;
    }
    return m_code;
}

void Actor::signal(int sig)
{
    if (!m_code)
        kill(m_pid, sig);
}

void Actor::signalGroup(int sig)
{
    // The group outlives the wrapper when its command keeps running.
    kill(-m_pid, sig);
}

std::string Actor::output() const
{
    return slurp(m_out);
}

std::string Actor::errors() const
{
    return slurp(m_err);
}

nlohmann::json Actor::reply() const
{
    const std::string text = output();
    // relctl --json prints one object; `run` may print the command's output first.
    const auto start = text.rfind("\n{");
    const std::string last = start == std::string::npos ? text : text.substr(start + 1);
    return nlohmann::json::parse(last, nullptr, false).is_object() ? nlohmann::json::parse(last)
                                                                   : nlohmann::json();
}

// ---------------------------------------------------------------------------
// Stage

Stage::Stage(const Scenario& scenario, const std::string& conninfo, const fs::path& relctl,
             const fs::path& directory, std::chrono::milliseconds ttl, Observer& observer,
             const std::atomic<bool>& cancel)
    : m_scenario(scenario), m_conninfo(conninfo), m_relctl(relctl), m_directory(directory / scenario.name),
      m_ttl(ttl), m_observer(observer), m_cancel(cancel), m_started(std::chrono::steady_clock::now()),
      m_db(std::make_unique<Database>(conninfo))
{
    // The jobs' state directory is refused unless it is theirs alone
    // (requestSecret): 0700, whatever the umask.
    detail::createPrivateDirectories(m_directory / "state");
}

Stage::~Stage() = default;

std::int64_t Stage::elapsed() const
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - m_started)
        .count();
}

std::string Stage::ttlText(double factor) const
{
    return std::to_string(static_cast<std::int64_t>(static_cast<double>(m_ttl.count()) * factor)) + "ms";
}

Actor& Stage::start(const std::string& name, const std::vector<std::string>& args,
                    const std::vector<std::string>& environment)
{
    if (m_cancel)
        throw Cancelled{};
    const fs::path out = m_directory / (name + "." + std::to_string(m_actors.size()) + ".out");
    const fs::path err = m_directory / (name + "." + std::to_string(m_actors.size()) + ".err");
    Fd outFd(open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    Fd errFd(open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (outFd.get() < 0 || errFd.get() < 0)
        throw Error(ExitCode::Internal, "cannot write " + out.string() + ": " + strerror(errno));

    // The jobs act with relctl_job's privileges only, as CI jobs do: what the
    // rehearsal shows holds for an ordinary job login, not just a superuser.
    std::vector<std::string> overrides{"RELCTL_DSN=" + session::withRole(m_conninfo, "relctl_job"),
                                       "RELCTL_STATE_DIR=" + (m_directory / "state").string()};
    overrides.insert(overrides.end(), environment.begin(), environment.end());
    std::vector<std::string> childEnvironment = environmentWith(overrides);
    // What a rehearsal's jobs must not inherit from the person running it.
    const auto inherited = [&](const std::string& entry, const std::string& prefix) {
        return entry.rfind(prefix, 0) == 0 &&
               std::none_of(environment.begin(), environment.end(),
                            [&](const std::string& o) { return o.rfind(prefix, 0) == 0; });
    };
    childEnvironment.erase(std::remove_if(childEnvironment.begin(), childEnvironment.end(),
                                          [&](const std::string& e) {
                                              return inherited(e, "RELCTL_LEASE=") ||
                                                     inherited(e, "RELCTL_OP_KEY=") ||
                                                     inherited(e, "RELCTL_CALL_TIMEOUT=");
                                          }),
                           childEnvironment.end());

    SpawnOptions spawnOptions;
    spawnOptions.argv = {m_relctl.string(), "--json", "--job-url", "rehearsal://" + env() + "/" + name};
    spawnOptions.argv.insert(spawnOptions.argv.end(), args.begin(), args.end());
    spawnOptions.environment = std::move(childEnvironment);
    spawnOptions.output = outFd.get();
    spawnOptions.errorOutput = errFd.get();
    spawnOptions.newProcessGroup = true;
    spawnOptions.defaultSignals = {SIGINT, SIGTERM, SIGPIPE, SIGCHLD};
    const Spawned spawned = spawn(spawnOptions);
    if (spawned.pid < 0)
        throw Error(ExitCode::Internal, "cannot start " + m_relctl.string() + ": " + strerror(spawned.error) +
                                            " (set RELCTL_EXECUTABLE or --relctl to the relctl executable)");
    m_actors.push_back(std::make_unique<Actor>(name, spawned.pid, out, err));
    m_actorOfJob[env() + "-" + name] = name;
    return *m_actors.back();
}

int Stage::finish(Actor& actor, std::chrono::milliseconds bound)
{
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
        if (const auto code = actor.poll()) {
            pollEvents(); // what the actor got recorded comes before its exit in the log
            return *code;
        }
        if (m_cancel)
            throw Cancelled{};
        if (std::chrono::steady_clock::now() > deadline)
            throw Error(ExitCode::Internal,
                        actor.name() + " did not finish within " + std::to_string(bound.count()) + " ms");
        pollEvents();
        std::this_thread::sleep_for(25ms);
    }
}

void Stage::logExit(Actor& actor, const std::string& action, int code)
{
    const nlohmann::json reply = actor.reply();
    std::string reason;
    std::optional<std::int64_t> token;
    std::optional<std::int64_t> generation;
    std::string detail;
    if (reply.is_object()) {
        if (reply.contains("reason") && reply["reason"].is_string())
            reason = reply["reason"].get<std::string>();
        else if (reply.contains("error") && reply["error"].is_string() && code != 0)
            reason = reply["error"].get<std::string>();
        if (reply.contains("token") && reply["token"].is_number_integer())
            token = reply["token"].get<std::int64_t>();
        if (reply.contains("generation") && reply["generation"].is_number_integer())
            generation = reply["generation"].get<std::int64_t>();
        if (reply.contains("message") && reply["message"].is_string())
            detail = reply["message"].get<std::string>();
        if (reply.value("replayed", false))
            detail = "replayed from the record" + (detail.empty() ? "" : ": " + detail);
    }
    if (detail.empty()) {
        std::string err = actor.errors();
        while (!err.empty() && (err.back() == '\n' || err.back() == ' '))
            err.pop_back();
        const auto line = err.rfind('\n');
        detail = line == std::string::npos ? err : err.substr(line + 1);
    }
    log(actor.name(), action, "exit " + std::to_string(code), reason, token, generation, detail);
}

int Stage::play(const std::string& name, const std::string& action, const std::vector<std::string>& args,
                const std::vector<std::string>& environment)
{
    Actor& actor = start(name, args, environment);
    const int code = finish(actor, 30s);
    logExit(actor, action, code);
    return code;
}

fs::path Stage::writeFile(const std::string& name, const std::string& text)
{
    fs::path path = m_directory / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
}

std::string Stage::readFile(const std::string& name) const
{
    return slurp(m_directory / name);
}

void Stage::log(const std::string& actor, const std::string& action, const std::string& outcome,
                const std::string& reason, std::optional<std::int64_t> token,
                std::optional<std::int64_t> generation, const std::string& detail)
{
    Step s;
    s.scenario = m_scenario.name;
    s.elapsedMs = elapsed();
    s.actor = actor;
    s.action = action;
    s.outcome = outcome;
    s.reason = reason;
    s.token = token;
    s.generation = generation;
    s.detail = detail;
    m_steps.push_back(s);
    m_observer.step(s);
}

void Stage::pollEvents()
{
    AuditQuery query;
    query.env = env();
    query.limit = 1000;
    const AuditTrail trail = m_db->audit(query);
    bool fresh = false;
    for (const Event& e : trail.events) {
        if (e.id <= m_lastEvent)
            continue;
        m_lastEvent = e.id;
        fresh = true;
        Step s;
        s.scenario = m_scenario.name;
        s.elapsedMs = elapsed();
        const auto actor = e.job ? m_actorOfJob.find(*e.job) : m_actorOfJob.end();
        s.actor = actor != m_actorOfJob.end() ? actor->second : (e.job ? *e.job : "operator");
        s.action = "db: " + e.operation;
        s.outcome = e.outcome;
        s.reason = e.reason.value_or("");
        s.token = e.token;
        s.generation = e.generation;
        s.serverAt = e.at;
        if (e.release)
            s.detail = "release " + *e.release;
        if (e.reason && e.currentToken)
            s.detail += (s.detail.empty() ? "" : ", ") + std::string("current token ") +
                        std::to_string(*e.currentToken);
        if (e.reason && e.currentRelease)
            s.detail += ", current release " + *e.currentRelease;
        m_steps.push_back(s);
        m_observer.step(s);
    }
    if (fresh)
        m_observer.timeline(m_scenario.name, timeline());
}

TimelineSlice Stage::timeline()
{
    ConsoleQueries queries(*m_db);
    TimelineSlice slice = queries.timeline(Timestamp::fromMillis(wallNowMs() - 3600000),
                                           Timestamp::fromMillis(wallNowMs() + 3600000));
    const auto other = [&](const auto& x) { return x.env != env(); };
    slice.leases.erase(std::remove_if(slice.leases.begin(), slice.leases.end(), other), slice.leases.end());
    slice.markers.erase(std::remove_if(slice.markers.begin(), slice.markers.end(), other),
                        slice.markers.end());
    slice.environments = {env()};
    return slice;
}

void Stage::pause(std::chrono::milliseconds duration)
{
    const auto until = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < until) {
        if (m_cancel)
            throw Cancelled{};
        pollEvents();
        const auto left = until - std::chrono::steady_clock::now();
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, 50ms));
    }
}

void Stage::waitFor(const std::string& what, std::chrono::milliseconds bound,
                    const std::function<bool()>& condition)
{
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (!condition()) {
        if (m_cancel)
            throw Cancelled{};
        if (std::chrono::steady_clock::now() > deadline)
            throw Error(ExitCode::Internal,
                        "gave up waiting " + std::to_string(bound.count()) + " ms for " + what);
        pollEvents();
        std::this_thread::sleep_for(50ms);
    }
}

void Stage::expect(const std::string& name, bool passed, const std::string& detail)
{
    m_expectations.push_back(history::Verdict{
        name, passed, detail, passed ? std::vector<std::string>{} : std::vector<std::string>{detail}});
}

void Stage::expectExit(const std::string& actor, int code, int expected, const std::string& meaning)
{
    expect(actor + "-exit-" + std::to_string(expected), code == expected,
           actor + " exited " + std::to_string(code) + " (expected " + std::to_string(expected) + ": " +
               meaning + ")");
}

void Stage::expectTraced(const std::string& job, const std::string& reason)
{
    const JobTrace trace = m_db->trace(env() + "-" + job);
    const auto found = std::find_if(trace.refusals.begin(), trace.refusals.end(),
                                    [&](const TracedRefusal& r) { return r.event.reason == reason; });
    std::string name = job + "-traced-";
    for (const char c : reason)
        name += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    expect(name, found != trace.refusals.end(),
           found != trace.refusals.end()
               ? "relctl trace --job " + env() + "-" + job + " finds its " + reason + " refusal (event " +
                     std::to_string(found->event.id) + ")"
               : "relctl trace --job " + env() + "-" + job + " has no " + reason + " refusal (" +
                     std::to_string(trace.refusals.size()) + " refusal(s))");
}

ScenarioResult Stage::conclude(std::string error)
{
    for (auto& actor : m_actors)
        if (actor->running()) {
            actor->signalGroup(SIGKILL);
            log(actor->name(), "SIGKILL", "killed", {}, {}, {}, "still running when the scenario ended");
        }
    // A deploy runs in a process group of its own (relctl run starts it so),
    // which killing its wrapper's group does not reach: when a scenario ends
    // with a wrapper killed or refused before it stopped its command, the
    // deploy (which wrote its pid, the group's id, to ACTOR.pid) would wait
    // for its go file forever. Only a process whose command line names this
    // stage's directory is ours.
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(m_directory, ignored)) {
        if (entry.path().extension() != ".pid")
            continue;
        std::ifstream pidFile(entry.path());
        long pid = 0;
        if (!(pidFile >> pid) || pid <= 1)
            continue;
        std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
        const std::string command((std::istreambuf_iterator<char>(cmdline)),
                                  std::istreambuf_iterator<char>());
        if (command.find(m_directory.string()) != std::string::npos)
            kill(-static_cast<pid_t>(pid), SIGKILL);
    }
    ScenarioResult result;
    result.name = m_scenario.name;
    try {
        pollEvents();
        history::Expectations expected;
        expected.env = env();
        expected.currentRelease = m_expectedRelease;
        result.invariants = history::check(history::load(*m_db, env()), expected);
        result.timeline = timeline();
    } catch (const std::exception& e) {
        if (error.empty())
            error = std::string("reading the scratch database failed: ") + e.what();
    }
    result.invariants.insert(result.invariants.end(), m_expectations.begin(), m_expectations.end());
    result.steps = m_steps;
    result.error = std::move(error);
    result.durationMs = elapsed();
    result.passed = result.error.empty() && history::allPassed(result.invariants);
    return result;
}

} // namespace relctl::rehearsal
