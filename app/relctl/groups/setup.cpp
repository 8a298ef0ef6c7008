// migrate and env: the schema and the environments.

#include "context.h"
#include "grammar.h"
#include "groups.h"
#include "relctl/error.h"
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
    if (!settings.policy && !settings.supersede && !settings.serialization && !settings.promoteFrom &&
        !settings.soak && !settings.approvals && !settings.approverRole)
        throwUsage("'env set' needs --policy, --supersede, --serialization, --promote-from, --soak, "
                   "--approvals or --approver-role");
    const EnvironmentSet reply = c.database().setEnvironment(settings);
    return c.out().success(toJson(reply), render::environment(reply.environment));
}

int envList(CommandContext& c)
{
    const EnvironmentList reply = c.database().listEnvironments();
    return c.out().success(toJson(reply), render::environmentList(reply));
}

int envShow(CommandContext& c)
{
    const Environment reply =
        c.database().showEnvironment(requireEnvironmentName(c.args().positional(0, "an environment name")));
    return c.out().success(toJson(reply), render::environment(reply));
}

constexpr Command kEnv[] = {
    {"add", "declare an environment", buildEnvAdd, envAdd},
    {"set", "the environment's queue policy, serialization and promotion gates", buildEnvSet, envSet},
    {"list", "environments with current manifest and live lease", nullptr, envList},
    {"show", "one environment with its current manifest and live lease", environmentName, envShow},
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
