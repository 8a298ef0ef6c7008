// What incident reviewers read: manifests, the audit trail, a job's trace
// and status, an operation's outcome, and the history checked against the
// protocol's invariants.

#include "context.h"
#include "grammar.h"
#include "groups.h"
#include "relctl/error.h"
#include "relctl/history.h"
#include "relctl/naturalsort.h"
#include "relctl/parse.h"
#include "render.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace relctl::cli::groups {

namespace {

using nlohmann::json;

void buildManifestShow(CLI::App* c)
{
    environment(c, "the environment")->required();
    flag(c, "history", "every manifest and rollback, oldest first");
}

int manifestShow(CommandContext& c)
{
    const Arguments& o = c.args();
    const std::string env = requireEnvironmentName(o.required("env"));
    if (o.has("history")) {
        const ManifestHistory reply = c.database().manifestHistory(env);
        return c.out().success(toJson(reply), render::manifestHistory(reply));
    }
    const ManifestShow reply = c.database().showManifest(env);
    return c.out().success(toJson(reply), render::manifest(reply));
}

void buildAudit(CLI::App* c)
{
    environment(c, "only this environment's");
    value(c, "job", "J", "only this job's");
    value(c, "reason", "CODE", "only this refusal reason");
    value(c, "operation", "OP", "only this operation");
    value(c, "since", "TIME", "a time, or an age such as 2h");
    positiveInt(c, "limit", "N", "at most N events (default 1000)");
}

int audit(CommandContext& c)
{
    const Arguments& o = c.args();
    AuditQuery q;
    q.env = o.environment("env");
    q.job = o.get("job");
    q.reason = o.get("reason");
    q.operation = o.get("operation");
    if (auto since = o.get("since")) {
        // A duration is an age on the server's clock; anything else is a time.
        if (auto age = parseDuration(*since))
            q.sinceAgo = *age;
        else
            q.since = *since;
    }
    if (auto limit = o.positiveInt("limit")) {
        if (*limit > 1'000'000)
            throwUsage("--limit may not exceed 1000000");
        q.limit = static_cast<int>(*limit);
    }
    const AuditTrail reply = c.database().audit(q);
    return c.out().success(toJson(reply), render::audit(reply));
}

void jobRequired(CLI::App* c)
{
    text(c, "job", "J", "the CI job")->required();
}

int trace(CommandContext& c)
{
    const JobTrace reply = c.database().trace(c.args().required("job"));
    return c.out().success(toJson(reply), render::trace(reply));
}

void buildVerify(CLI::App* c)
{
    environment(c, "only this environment's history");
    value(c, "since", "TIME", "only what was recorded since TIME: a time, or an age such as 2h");
    std::string checks = "Checks (exit 0 when all pass, 10 when one fails):";
    for (const history::CheckInfo& check : history::checks())
        if (check.name != "expected-current-manifest") // rehearsals only: verify expects no release
            checks += "\n  " + check.name + ": " + check.meaning + ".";
    c->footer(checks);
}

// Read-only: relctl.history() needs relctl_reviewer only.
int verify(CommandContext& c)
{
    const Arguments& o = c.args();
    const std::optional<std::string> env = o.environment("env");
    const history::History h = history::load(c.database(), env, o.get("since"));
    const std::vector<history::Verdict> verdicts = history::check(h);
    json checks = json::array();
    for (const history::Verdict& v : verdicts)
        checks.push_back(
            {{"name", v.name}, {"passed", v.passed}, {"detail", v.detail}, {"violations", v.violations}});
    const bool passed = history::allPassed(verdicts);
    const json body{{"passed", passed},
                    {"env", env ? json(*env) : json()},
                    {"since", h.since ? json(h.since->millis()) : json()}, // epoch ms, as ever
                    {"checks", std::move(checks)}};
    c.out().success(body, render::verdicts(verdicts));
    return static_cast<int>(passed ? ExitCode::Ok : ExitCode::Violations);
}

void buildOpShow(CLI::App* c)
{
    positional(c, "ID", "an operation id");
}

int opShow(CommandContext& c)
{
    const OperationRecord reply = c.database().showOperation(c.args().positional(0, "an operation id"));
    return c.out().success(toJson(reply), render::operation(reply));
}

void buildStatus(CLI::App* c)
{
    text(c, "job", "J", "the CI job");
    flag(c, "attention",
         "instead: the environments that need a person now, and why (exit 0 whether or not any does)");
    selection(c, "with --attention: only the environments");
    c->footer("--attention lists, in natural order, each environment that is frozen, had a write refused "
              "in the last hour, has a supersession or promotion waiting for a decision, has candidates "
              "waiting, has a lease with less than a quarter of its default TTL left, or has a promotion "
              "that cannot go ahead; with its reasons. Exit 0 whether or not any does (read the list, or "
              "the \"environments\" array of --json).");
}

int status(CommandContext& c)
{
    const Arguments& o = c.args();
    if (o.has("attention")) {
        if (o.has("job"))
            throwUsage("give --job or --attention, not both");
        AttentionList reply = c.database().attention(o.get("group"), o.get("match"));
        std::sort(reply.environments.begin(), reply.environments.end(),
                  [](const EnvironmentAttention& a, const EnvironmentAttention& b) {
                      return naturalLess(a.name, b.name);
                  });
        return c.out().success(toJson(reply), render::attention(reply.environments));
    }
    if (o.has("group") || o.has("match"))
        throwUsage("--group and --match go with --attention");
    if (!o.has("job"))
        throwUsage("'status' needs --job or --attention");
    const JobStatus reply = c.database().jobStatus(o.required("job"));
    return c.out().success(toJson(reply), render::status(reply));
}

constexpr Command kManifest[] = {
    {"show", "the current manifest", buildManifestShow, manifestShow},
};

constexpr Command kOp[] = {
    {"show", "the recorded outcome of an operation id, and what became of it since", buildOpShow, opShow},
};

constexpr Command kReading[] = {
    {"manifest", "published manifests", nullptr, nullptr, kManifest},
    {"audit", "the newest matching events, oldest first", buildAudit, audit},
    {"trace", "every refusal of a job with its lease, the lease that beat it and the manifest then",
     jobRequired, trace},
    {"verify", "check the recorded history against the protocol's invariants (read-only)", buildVerify,
     verify},
    {"op", "operation ids", nullptr, nullptr, kOp},
    {"status",
     "what became of a job: unknown, queued, rejected, accepted-running, completed or ended-unpublished, "
     "and what to do next; or (--attention) which environments need a person now",
     buildStatus, status},
};

} // namespace

std::span<const Command> reading()
{
    return kReading;
}

} // namespace relctl::cli::groups
