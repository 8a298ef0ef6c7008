// The rehearsal's engine: selects the scenarios, prepares the database they
// play on (a scratch one, or an empty --dsn) and runs each on a Stage
// (rehearsalstage.cpp), collecting the report.

#include "relctl/rehearsal.h"

#include "rehearsal_stage.h"
#include "relctl/error.h"
#include "relctl/scratch.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace relctl::rehearsal {

namespace {

const ScenarioPlay& playNamed(const std::string& name)
{
    for (const ScenarioPlay& p : plays())
        if (p.scenario.name == name)
            return p;
    throwUsage("unknown scenario \"" + name + "\" (relctl rehearse --list names them)");
}

std::vector<const ScenarioPlay*> selected(const Options& options)
{
    std::vector<const ScenarioPlay*> out;
    const bool all =
        options.scenarios.empty() ||
        std::find(options.scenarios.begin(), options.scenarios.end(), "all") != options.scenarios.end();
    if (all) {
        for (const ScenarioPlay& p : plays())
            out.push_back(&p);
        return out;
    }
    for (const std::string& name : options.scenarios) {
        const ScenarioPlay* p = &playNamed(name);
        if (std::find(out.begin(), out.end(), p) == out.end())
            out.push_back(p);
    }
    return out;
}

// A database that is migrated and holds no environment, or an Error(Usage).
void requireEmpty(const std::string& conninfo)
{
    Database db(conninfo);
    const auto states = db.migrationStatus();
    const bool migrated = std::any_of(states.begin(), states.end(),
                                      [](const MigrationState& s) { return s.state != "pending"; });
    if (!migrated)
        return; // a fresh database: nothing in it can be a real environment
    const EnvironmentList list = db.listEnvironments();
    if (!list.environments.empty())
        throwUsage("the database of --dsn holds " + std::to_string(list.environments.size()) +
                   " environment(s) (" + list.environments.front().name +
                   (list.environments.size() > 1 ? ", ..." : "") +
                   "): a rehearsal runs only in an empty test database");
}

// The run's directory for the actors' output, manifests and request secrets.
class TemporaryDirectory final
{
public:
    TemporaryDirectory()
    {
        std::string pattern = (fs::temp_directory_path() / "relctl-rehearsal-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr)
            throw Error(ExitCode::Internal,
                        "cannot create a temporary directory: " + std::string(strerror(errno)));
        m_path = pattern;
    }
    ~TemporaryDirectory()
    {
        std::error_code ignored;
        fs::remove_all(m_path, ignored);
    }
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

// What --like copies, read once: the settings, and the ratio of the maximum
// to the default TTL (10 without --like).
struct Like
{
    EnvironmentSettings settings;
    std::int64_t maxRatio = 10;
};

Like likeOf(const Options& options)
{
    Like like;
    if (!options.like)
        return like;
    Database db(options.likeConninfo.empty() ? options.server : options.likeConninfo);
    const Environment e = db.showEnvironment(*options.like);
    like.settings.policy = e.policy;
    like.settings.supersede = e.supersede;
    like.settings.serialization = e.serialization;
    like.maxRatio = std::clamp<std::int64_t>(e.defaultTtlMs > 0 ? e.maxTtlMs / e.defaultTtlMs : 10, 1, 100);
    return like;
}

} // namespace

// ---------------------------------------------------------------------------

bool Report::passed() const
{
    return !cancelled && !scenarios.empty() &&
           std::all_of(scenarios.begin(), scenarios.end(), [](const ScenarioResult& s) { return s.passed; });
}

fs::path defaultRelctl()
{
    if (const char* path = std::getenv("RELCTL_EXECUTABLE"); path != nullptr && *path != '\0')
        return path;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        for (const fs::path& candidate :
             {self.parent_path() / "relctl", self.parent_path() / "../relctl/relctl"})
            if (fs::exists(candidate))
                return candidate.lexically_normal();
    }
    return "relctl"; // found in PATH
}

void validate(const Options& options)
{
    (void)selected(options);
    if (options.ttl < 200ms || options.ttl > 10min)
        throwUsage("a rehearsal's TTL is between 200ms and 10min");
    if (options.like) {
        Database db(options.likeConninfo.empty() ? options.server : options.likeConninfo);
        (void)db.showEnvironment(*options.like); // Error(Usage) for an unknown environment
    }
    if (options.dsn)
        requireEmpty(*options.dsn);
}

Report run(const Options& options, Observer& observer, const std::atomic<bool>& cancel)
{
    validate(options);
    const std::vector<const ScenarioPlay*> plays = selected(options);
    const Like like = likeOf(options);
    const fs::path relctl = options.relctl.empty() ? defaultRelctl() : options.relctl;

    TemporaryDirectory directory;
    std::optional<ScratchDatabase> scratch;
    std::string conninfo;
    Report report;
    if (options.dsn) {
        conninfo = *options.dsn;
        Database(conninfo).migrate();
        report.database = conninfo;
    } else {
        // Dropped at the end, also after a failure or a cancel, unless kept.
        scratch.emplace(options.server, "relctl_rehearsal_");
        if (options.keep)
            scratch->keep();
        conninfo = scratch->conninfo();
        report.database = scratch->name();
        try {
            Database(conninfo).migrate();
        } catch (const Error& e) {
            throwUsage("cannot migrate the scratch database " + scratch->name() +
                       " (migrating needs a superuser): " + e.what());
        }
    }

    int index = 0;
    for (const ScenarioPlay* play : plays) {
        if (cancel) {
            report.cancelled = true;
            break;
        }
        observer.scenarioStarted(play->scenario, index++, static_cast<int>(plays.size()));
        std::optional<Stage> stage;
        std::string error;
        try {
            stage.emplace(play->scenario, conninfo, relctl, directory.path(), options.ttl, observer, cancel);
            EnvironmentSpec spec;
            spec.name = play->scenario.name;
            spec.defaultTtl = options.ttl;
            spec.maxTtl = options.ttl * like.maxRatio;
            stage->db().addEnvironment(spec);
            EnvironmentSettings settings = like.settings;
            settings.name = spec.name;
            if (play->forced.policy)
                settings.policy = play->forced.policy;
            if (play->forced.supersede)
                settings.supersede = play->forced.supersede;
            if (play->forced.serialization)
                settings.serialization = play->forced.serialization;
            stage->db().setEnvironment(settings);
            stage->pollEvents();
            stage->log("rehearsal", "env add " + spec.name, "ready", {}, {}, {},
                       "ttl " + stage->ttlText() + ", policy " + settings.policy.value_or("ordered") +
                           ", supersede " + settings.supersede.value_or("auto") + ", serialization " +
                           settings.serialization.value_or("enforced") +
                           (options.like ? " (like " + *options.like + ")" : ""));
            play->play(*stage);
        } catch (const Cancelled&) {
            report.cancelled = true;
            error = "cancelled";
        } catch (const std::exception& e) {
            error = e.what();
        }
        if (!stage) {
            ScenarioResult failed;
            failed.name = play->scenario.name;
            failed.error = error;
            report.scenarios.push_back(failed);
            observer.scenarioFinished(report.scenarios.back());
            continue;
        }
        if (!error.empty())
            stage->log("rehearsal", "scenario", "failed", {}, {}, {}, error);
        report.scenarios.push_back(stage->conclude(error));
        observer.scenarioFinished(report.scenarios.back());
        if (report.cancelled)
            break;
    }
    if (scratch && !options.keep) {
        scratch->drop();
        report.dropped = scratch->dropped();
    }
    return report;
}

// ---------------------------------------------------------------------------

nlohmann::json toJson(const Report& report)
{
    nlohmann::json scenarios = nlohmann::json::array();
    for (const ScenarioResult& s : report.scenarios) {
        nlohmann::json steps = nlohmann::json::array();
        for (const Step& st : s.steps) {
            nlohmann::json j{
                {"at", st.elapsedMs},
                {"actor", st.actor},
                {"action", st.action},
                {"outcome", st.outcome},
                {"reason", st.reason.empty() ? nlohmann::json() : nlohmann::json(st.reason)},
                {"token", st.token ? nlohmann::json(*st.token) : nlohmann::json()},
                {"generation", st.generation ? nlohmann::json(*st.generation) : nlohmann::json()}};
            if (st.serverAt)
                j["server_at"] = st.serverAt->millis();
            if (!st.detail.empty())
                j["detail"] = st.detail;
            steps.push_back(j);
        }
        nlohmann::json invariants = nlohmann::json::array();
        for (const history::Verdict& v : s.invariants)
            invariants.push_back({{"name", v.name}, {"passed", v.passed}, {"detail", v.detail}});
        nlohmann::json j{{"name", s.name},
                         {"passed", s.passed},
                         {"duration_ms", s.durationMs},
                         {"steps", steps},
                         {"invariants", invariants}};
        if (!s.error.empty())
            j["error"] = s.error;
        scenarios.push_back(j);
    }
    return {{"passed", report.passed()},
            {"cancelled", report.cancelled},
            {"database", report.database},
            {"dropped", report.dropped},
            {"scenarios", scenarios}};
}

} // namespace relctl::rehearsal
