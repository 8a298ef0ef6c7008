// migrate and env: the schema and the environments.

#include "context.h"
#include "grammar.h"
#include "groups.h"
#include "relctl/error.h"
#include "relctl/naturalsort.h"
#include "relctl/parse.h"
#include "render.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace relctl::cli::groups {

namespace {

using nlohmann::json;

void buildMigrate(CLI::App* c)
{
    flag(c, "status", "list them with checksums and state instead");
}

int migrate(CommandContext& c)
{
    const Arguments& o = c.args();
    std::vector<MigrationState> states;
    std::string plain;
    json reply = json::object();
    if (o.has("status")) {
        states = c.database().migrationStatus();
    } else {
        MigrationReport report = c.database().migrate();
        states = report.states;
        reply["applied"] = report.applied;
        for (const std::string& name : report.applied)
            plain += "applied " + escapeControl(name) + "\n";
        if (report.applied.empty())
            plain += "schema is up to date\n";
    }
    reply["migrations"] = json::array();
    for (const MigrationState& s : states) {
        reply["migrations"].push_back({{"kind", s.kind},
                                       {"version", s.version},
                                       {"name", s.name},
                                       {"checksum", s.checksum},
                                       {"applied_at", s.appliedAt ? json(*s.appliedAt) : json()},
                                       {"state", s.state}});
        if (o.has("status"))
            plain +=
                escapeControl(s.name + " " + s.state + (s.appliedAt ? " " + *s.appliedAt : std::string())) +
                "\n";
    }
    return c.out().success(reply, plain);
}

void environmentName(CLI::App* c)
{
    positional(c, "NAME", "an environment name")->check(rule(environmentNameProblem));
}

void buildEnvAdd(CLI::App* c)
{
    environmentName(c);
    duration(c, "default-ttl", true, "a lease's time to live when acquire gives none (default 60 s)");
    duration(c, "max-ttl", true, "the longest time to live (default 10 min)");
}

int envAdd(CommandContext& c)
{
    const Arguments& o = c.args();
    EnvironmentSpec spec{requireEnvironmentName(o.positional(0, "an environment name")),
                         o.duration("default-ttl", true), o.duration("max-ttl", true)};
    const EnvironmentAdded reply = c.database().addEnvironment(spec);
    return c.out().success(toJson(reply),
                           "environment " + spec.name + (reply.created ? " created\n" : " already exists\n"));
}

void buildEnvSet(CLI::App* c)
{
    environmentName(c);
    value(c, "policy", "ordered|newest", "which waiting candidate goes next")
        ->check(oneOf({"ordered", "newest"}));
    value(c, "supersede", "auto|approval", "with newest: skip lower candidates at once or after approval")
        ->check(oneOf({"auto", "approval"}));
    value(c, "serialization", "enforced|off", "off allows a publish without a lease (staged rollout)")
        ->check(oneOf({"enforced", "off"}));
    value(c, "promote-from", "ENV", "take only what ENV accepted first (\"\" clears it)")
        ->check(
            rule([](const std::string& v) { return v.empty() ? std::nullopt : environmentNameProblem(v); }));
    duration(c, "soak", false, "with --promote-from: accepted there at least D ago");
    value(c, "approvals", "K", "distinct approvals a promotion needs here (0-10; 0: none)")
        ->check(rule([](const std::string& v) -> std::optional<std::string> {
            if (v.size() <= 2 && !v.empty() && std::all_of(v.begin(), v.end(), ::isdigit) &&
                std::stoi(v) <= 10)
                return std::nullopt;
            return "invalid value \"" + v + "\": expected an integer from 0 to 10";
        }));
    value(c, "approver-role", "ROLE",
          "only members of this PostgreSQL role may approve or deny here (\"\" clears it)")
        ->check(rule([](const std::string& v) -> std::optional<std::string> {
            if (v.size() <= 63)
                return std::nullopt;
            return "invalid role \"" + v + "\": a PostgreSQL role name has at most 63 characters";
        }));
    value(c, "group", "G", "the group it belongs to (\"\" back to the default: its name up to the first '.')")
        ->check(rule([](const std::string& v) { return v.empty() ? std::nullopt : groupNameProblem(v); }));
}

int envSet(CommandContext& c)
{
    const Arguments& o = c.args();
    EnvironmentSettings settings{requireEnvironmentName(o.positional(0, "an environment name")),
                                 o.get("policy"),
                                 o.get("supersede"),
                                 o.get("serialization"),
                                 o.get("promote-from"),
                                 o.duration("soak", false),
                                 o.has("approvals") ? std::optional(std::stoi(o.required("approvals")))
                                                    : std::nullopt,
                                 o.get("approver-role")};
    const std::optional<std::string> group = o.get("group");
    if (!settings.policy && !settings.supersede && !settings.serialization && !settings.promoteFrom &&
        !settings.soak && !settings.approvals && !settings.approverRole && !group)
        throwUsage("'env set' needs --policy, --supersede, --serialization, --promote-from, --soak, "
                   "--approvals, --approver-role or --group");
    const EnvironmentSet reply = c.database().setEnvironment(settings, group);
    return c.out().success(toJson(reply), render::environment(reply.environment));
}

void buildEnvList(CLI::App* c)
{
    selection(c, "only the environments");
    c->footer("One line per environment in natural order (svc2 before svc10): name, group, current "
              "release, live lease, frozen, candidates waiting, promoted from. --json gives every "
              "environment as env show does, with its group.");
}

template <class T> void sortNaturally(std::vector<T>& rows)
{
    std::sort(rows.begin(), rows.end(), [](const T& a, const T& b) { return naturalLess(a.name, b.name); });
}

// Text is one line per environment (relctl.env_brief: a fifth of the reply,
// so 10,000 environments list in well under a second); --json is the whole
// of each, as scripts have read it.
int envList(CommandContext& c)
{
    const Arguments& o = c.args();
    if (c.out().asJson()) {
        EnvironmentList reply = c.database().listEnvironments(o.get("group"), o.get("match"));
        sortNaturally(reply.environments);
        return c.out().success(toJson(reply), std::string());
    }
    const EnvironmentBriefs reply = c.database().briefEnvironments(o.get("group"), o.get("match"));
    return c.out().success(json(), render::environmentBriefs(reply));
}

void buildEnvPath(CLI::App* c)
{
    value(c, "stages", "S1,S2,...",
          "the stages in promotion order, as the names' last part (test,staging,prod: GROUP.staging is "
          "promoted from GROUP.test, GROUP.prod from GROUP.staging)")
        ->required();
    selection(c, "only the groups of the environments");
    duration(c, "soak", false, "every stage after the first: accepted on the one before at least D ago");
    value(c, "approvals", "K", "every stage after the first: distinct approvals a promotion needs (0-10)")
        ->check(rule([](const std::string& v) -> std::optional<std::string> {
            if (v.size() <= 2 && !v.empty() && std::all_of(v.begin(), v.end(), ::isdigit) &&
                std::stoi(v) <= 10)
                return std::nullopt;
            return "invalid value \"" + v + "\": expected an integer from 0 to 10";
        }));
    c->footer("In one transaction, for every group (default: all; --group, --match: those of the "
              "environments they select) that has GROUP.STAGE for each stage: each stage is promoted "
              "from the one before it, as env set --promote-from would set it, and recorded the same "
              "way. Groups lacking a stage are listed as skipped. Exit 2, nothing changed, when no "
              "group has them all.");
}

// "test,staging,prod" as stages: each a valid name part, none twice.
std::vector<std::string> stagesOf(const std::string& text)
{
    std::vector<std::string> stages;
    std::size_t from = 0;
    for (;;) {
        const std::size_t comma = text.find(',', from);
        const std::string stage =
            text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        if (environmentNameProblem(stage))
            throwUsage("invalid stage \"" + stage + "\" in --stages: expected ^[a-z0-9][a-z0-9._-]{0,62}$");
        if (std::find(stages.begin(), stages.end(), stage) != stages.end())
            throwUsage("stage \"" + stage + "\" is named more than once in --stages");
        stages.push_back(stage);
        if (comma == std::string::npos)
            break;
        from = comma + 1;
    }
    if (stages.size() < 2 || stages.size() > 20)
        throwUsage("--stages names 2 to 20 stages, in promotion order (test,staging,prod)");
    return stages;
}

int envPath(CommandContext& c)
{
    const Arguments& o = c.args();
    const std::vector<std::string> stages = stagesOf(o.required("stages"));
    const PromotionPaths reply = c.database().setPromotionPaths(
        stages, o.get("group"), o.get("match"), o.duration("soak", false),
        o.has("approvals") ? std::optional(std::stoi(o.required("approvals"))) : std::nullopt);
    return c.out().success(toJson(reply), render::promotionPaths(reply));
}

int envShow(CommandContext& c)
{
    const Environment reply =
        c.database().showEnvironment(requireEnvironmentName(c.args().positional(0, "an environment name")));
    return c.out().success(toJson(reply), render::environment(reply));
}

constexpr Command kEnv[] = {
    {"add", "declare an environment", buildEnvAdd, envAdd},
    {"set", "the environment's queue policy, serialization, promotion gates and group", buildEnvSet, envSet},
    {"list", "environments with current manifest and live lease (--group, --match)", buildEnvList, envList},
    {"show", "one environment with its current manifest and live lease", environmentName, envShow},
    {"path", "promotion paths in every group at once (--stages test,staging,prod)", buildEnvPath, envPath},
};

constexpr Command kSetup[] = {
    {"migrate", "apply the bundled migrations and function modules (as a superuser)", buildMigrate, migrate},
    {"env", "environments", nullptr, nullptr, kEnv},
};

} // namespace

std::span<const Command> setup()
{
    return kSetup;
}

} // namespace relctl::cli::groups
