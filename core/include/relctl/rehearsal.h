#pragma once

// Rehearsals: failure scenarios played through the real protocol, by real
// `relctl` processes where the scenario is about processes (a paused holder,
// a crashed one, a lost reply), on a scratch database that is created,
// migrated, and dropped afterwards. Every scenario ends with the history
// checker (relctl/history.h) on what the scratch database recorded, plus the
// scenario's own expectations (exit codes, the final manifest, a trace).
//
// Qt-free: `relctl rehearse` and the console's Rehearsals page both drive it,
// the console from a worker thread.

#include "relctl/console.h"
#include "relctl/history.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace relctl::rehearsal {

struct Scenario
{
    std::string name;        // "race"
    std::string title;       // one line
    std::string explanation; // a paragraph a new engineer can read
};

// Every scenario, in the order `all` plays them.
const std::vector<Scenario>& scenarios();

// One line of the live log: something an actor did and what came of it, or
// an event the scratch database recorded (then serverAt is set).
struct Step
{
    std::string scenario;
    std::int64_t elapsedMs = 0; // since the scenario started
    std::string actor;          // "r8", "r9", "operator", "rehearsal"
    std::string action;         // "relctl run", "publish", "SIGSTOP", "freeze" ...
    std::string outcome;        // accepted | refused | busy | queued | started | exit 5 | ...
    std::string reason;         // a refusal reason, when there is one
    std::optional<std::int64_t> token;
    std::optional<std::int64_t> generation;
    std::optional<Timestamp> serverAt; // the database's clock, for recorded events
    std::string detail;                // free text: a message, a process id
};

struct ScenarioResult
{
    std::string name;
    bool passed = false;
    std::int64_t durationMs = 0;
    std::vector<Step> steps;
    // The history checker's verdicts on the scenario's environment, then the
    // scenario's own expectations, each as a verdict.
    std::vector<history::Verdict> invariants;
    // Set when the scenario could not be played to its end (then it failed).
    std::string error;
    // The scenario's environment on the scratch database, for the timeline.
    TimelineSlice timeline;
};

struct Options
{
    // Scenario names; empty: all of them.
    std::vector<std::string> scenarios;
    // A libpq conninfo of any database on the server where the scratch
    // database is created (the login needs CREATEDB, and superuser to migrate).
    std::string server;
    // Instead of a scratch database: this existing database, which must hold
    // no environment (it is migrated when it is not yet). Never dropped.
    std::optional<std::string> dsn;
    // Copy this environment's queue policy, supersede mode and serialization
    // (and the ratio of its maximum to its default TTL), read-only, from
    // likeConninfo (default: server). A scenario still forces the settings
    // its story needs, and says so in its steps.
    std::optional<std::string> like;
    std::string likeConninfo;
    // The scratch environments' default TTL (compressed time).
    std::chrono::milliseconds ttl{1500};
    // Keep the scratch database afterwards (its name is in the report).
    bool keep = false;
    // The relctl executable the actors run; empty: the one beside this
    // executable, or $RELCTL_EXECUTABLE.
    std::filesystem::path relctl;
};

struct Report
{
    std::vector<ScenarioResult> scenarios;
    std::string database; // the database the scenarios ran in
    bool dropped = false; // the scratch database is gone again
    bool cancelled = false;
    bool passed() const; // every scenario passed and none was cancelled
};

// Receives the run as it happens, on the thread that called run().
class Observer
{
public:
    virtual ~Observer() = default;
    virtual void scenarioStarted(const Scenario& /*scenario*/, int /*index*/, int /*count*/) {}
    virtual void step(const Step& /*step*/) {}
    // The scenario's environment as the scratch database has it now.
    virtual void timeline(const std::string& /*scenario*/, const TimelineSlice& /*slice*/) {}
    virtual void scenarioFinished(const ScenarioResult& /*result*/) {}
};

// Checks the options before anything is written: Error(Usage) for an unknown
// scenario, an unknown --like environment, or a --dsn database that holds
// environments.
void validate(const Options& options);

// Plays the scenarios. Setting `cancel` stops the run at its next step: the
// actors' processes are killed and the scratch database is dropped (unless
// keep). Throws Error (Usage or Unavailable) only before the first scenario
// started; a scenario that fails later is reported as failed.
Report run(const Options& options, Observer& observer, const std::atomic<bool>& cancel);

// {"scenarios":[{"name","passed","duration_ms","steps":[...],"invariants":[...]}], ...}
nlohmann::json toJson(const Report& report);

// A self-contained HTML page (inline CSS and SVG): per scenario its
// explanation, the lease timeline, the step log and the verdicts.
std::string toHtml(const Report& report);

// The relctl executable beside the running one, or $RELCTL_EXECUTABLE.
std::filesystem::path defaultRelctl();

} // namespace relctl::rehearsal
