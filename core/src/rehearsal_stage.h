#pragma once

// Private to core: what a scenario plays with. A Stage is one scenario's run:
// its environment on the scratch database, the engine's own connection (the
// operator's), the actors' processes, the live log and the expectations.

#include "relctl/database.h"
#include "relctl/rehearsal.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace relctl::rehearsal {

// The scenario's run was cancelled: unwinds the scenario, whose actors are
// then killed.
struct Cancelled
{
};

// A `relctl` child process playing one CI job. Its stdout and stderr go to
// files in the run's directory; it runs in its own process group, so that a
// crash of the whole job (wrapper and deploy) can be played.
class Actor final
{
public:
    Actor(std::string name, pid_t pid, std::filesystem::path out, std::filesystem::path err);
    ~Actor(); // kills the process group if it is still running
    Actor(const Actor&) = delete;
    Actor& operator=(const Actor&) = delete;

    const std::string& name() const { return m_name; }
    pid_t pid() const { return m_pid; }
    // Reaps it if it has exited; its exit code (128 + signal) then.
    std::optional<int> poll();
    bool running() { return !poll().has_value(); }
    void signal(int sig);       // the wrapper process only
    void signalGroup(int sig);  // the wrapper and everything in its group
    std::string output() const; // stdout so far
    std::string errors() const; // stderr so far
    // stdout as the JSON object the actor printed (relctl --json), or null.
    nlohmann::json reply() const;

private:
    std::string m_name;
    pid_t m_pid;
    std::filesystem::path m_out;
    std::filesystem::path m_err;
    std::optional<int> m_code;
};

class Stage final
{
public:
    Stage(const Scenario& scenario, const std::string& conninfo, const std::filesystem::path& relctl,
          const std::filesystem::path& directory, std::chrono::milliseconds ttl, Observer& observer,
          const std::atomic<bool>& cancel);
    ~Stage();

    const std::string& env() const { return m_scenario.name; }
    std::chrono::milliseconds ttl() const { return m_ttl; }
    std::string ttlText(double factor = 1.0) const; // "1500ms" scaled
    Database& db() { return *m_db; }
    const std::string& conninfo() const { return m_conninfo; }
    const std::filesystem::path& directory() const { return m_directory; }

    // Starts `relctl --dsn <scratch> --json ARGS...` as the actor `name`.
    Actor& start(const std::string& name, const std::vector<std::string>& args,
                 const std::vector<std::string>& environment = {});
    // Waits for it to exit; Cancelled when cancelled, a failure after `bound`.
    int finish(Actor& actor, std::chrono::milliseconds bound);
    // Runs it to its end and logs its outcome as a step.
    int play(const std::string& name, const std::string& action, const std::vector<std::string>& args,
             const std::vector<std::string>& environment = {});
    // Logs how an actor ended (exit code, reason from its JSON reply).
    void logExit(Actor& actor, const std::string& action, int code);

    // A file in the run's directory holding `text`.
    std::filesystem::path writeFile(const std::string& name, const std::string& text);
    std::string readFile(const std::string& name) const;

    // One line of the live log.
    void log(const std::string& actor, const std::string& action, const std::string& outcome,
             const std::string& reason = {}, std::optional<std::int64_t> token = {},
             std::optional<std::int64_t> generation = {}, const std::string& detail = {});
    // Streams the scratch database's new events of this environment as steps
    // and the timeline to the observer.
    void pollEvents();
    // The scenario's environment on the scratch database's timeline, now.
    TimelineSlice timeline();
    // Sleeps, streaming events and watching for cancel.
    void pause(std::chrono::milliseconds duration);
    // Polls `condition` every 50 ms until it holds; a failure (thrown) naming
    // `what` after `bound`.
    void waitFor(const std::string& what, std::chrono::milliseconds bound,
                 const std::function<bool()>& condition);

    // A verdict of the scenario's own: passed or not, with its detail.
    void expect(const std::string& name, bool passed, const std::string& detail);
    void expectExit(const std::string& actor, int code, int expected, const std::string& meaning);
    // The release that must be current at the end.
    void expectCurrent(const std::string& release) { m_expectedRelease = release; }
    void expectTraced(const std::string& job, const std::string& reason);

    // Finishes the scenario: kills what still runs, runs the history checker
    // on the environment and collects the result.
    ScenarioResult conclude(std::string error);

private:
    std::int64_t elapsed() const;

    const Scenario& m_scenario;
    std::string m_conninfo;
    std::filesystem::path m_relctl;
    std::filesystem::path m_directory;
    std::chrono::milliseconds m_ttl;
    Observer& m_observer;
    const std::atomic<bool>& m_cancel;
    std::chrono::steady_clock::time_point m_started;
    std::unique_ptr<Database> m_db;
    std::vector<std::unique_ptr<Actor>> m_actors;
    std::vector<Step> m_steps;
    std::vector<history::Verdict> m_expectations;
    std::optional<std::string> m_expectedRelease;
    std::int64_t m_lastEvent = 0;
    std::map<std::string, std::string> m_actorOfJob;
};

// A scenario: its description, the settings its story needs, and its play.
struct ScenarioPlay
{
    Scenario scenario;
    // Settings forced on the environment after --like (empty: none).
    EnvironmentSettings forced;
    void (*play)(Stage& stage);
};

const std::vector<ScenarioPlay>& plays();

} // namespace relctl::rehearsal
