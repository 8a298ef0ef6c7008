// lease, publish and run: a job's own steps.

#include "context.h"
#include "grammar.h"
#include "groups.h"
#include "relctl/error.h"
#include "relctl/parse.h"
#include "render.h"
#include "run.h"

namespace relctl::cli::groups {

namespace {

void environmentRequired(CLI::App* c)
{
    environment(c, "the environment")->required();
}

int leaseAcquire(CommandContext& c)
{
    const AcquireRequest request = acquireRequest(c.args());
    Outcome outcome = c.database(request.wait).acquire(request);
    return c.out().outcome(outcome, [&] { return escapeControl(outcome.reply<Grant>().handle) + "\n"; });
}

void buildLeaseRenew(CLI::App* c)
{
    leaseHandle(c);
    duration(c, "ttl", true, "the new time to live (default: the lease's)");
}

int leaseRenew(CommandContext& c)
{
    const Handle h = c.handle();
    const auto ttl = c.args().duration("ttl", true);
    Outcome outcome = c.database().renew(h, ttl);
    return c.out().outcome(outcome, [&] {
        return "renewed lease " + std::to_string(h.token) + " on " + h.env + " until " +
               outcome.reply<Renewal>().expiresAt.iso() + "\n";
    });
}

int leaseRelease(CommandContext& c)
{
    const Handle h = c.handle();
    Outcome outcome = c.database().release(h);
    return c.out().outcome(outcome, [&] {
        const std::string state = escapeControl(outcome.reply<LeaseEnd>().state);
        const std::string lease = "lease " + std::to_string(h.token) + " on " + h.env;
        return state == "released" ? "released " + lease + "\n"
                                   : lease + " had already ended (" + state + ")\n";
    });
}

int leaseShow(CommandContext& c)
{
    const LeaseShow reply = c.database().showLease(requireEnvironmentName(c.args().required("env")));
    return c.out().success(toJson(reply), render::lease(reply));
}

void buildLeaseRevoke(CLI::App* c)
{
    environmentRequired(c);
    text(c, "by", "NAME", "who revokes it")->required();
    text(c, "reason", "TEXT", "why")->required();
}

int leaseRevoke(CommandContext& c)
{
    const Arguments& o = c.args();
    const std::string env = requireEnvironmentName(o.required("env"));
    const Revocation reply = c.database().revoke(env, o.required("by"), o.required("reason"));
    return c.out().success(toJson(reply), render::revocation(reply));
}

void buildPublish(CLI::App* c)
{
    c->footer("Without a lease: publish --env E --job J --release R --generation N [--manifest FILE|-]\n"
              "is accepted only while the environment's serialization is off.");
    leaseHandle(c);
    value(c, "manifest", "FILE|-", "the manifest, a JSON object (- reads stdin)");
    text(c, "op-id", "ID", "the operation id: a retry with the same id replays the outcome");
    environment(c, "publish without a lease on this environment");
    text(c, "job", "J", "with --env: the CI job");
    text(c, "release", "R", "with --env: the release label");
    positiveInt(c, "generation", "N", "with --env: the release order");
}

// While an environment's serialization is off (staged rollout), a job may
// publish without a lease; freshness is still checked by the server.
int publishUnserialized(CommandContext& c)
{
    const Arguments& o = c.args();
    if (o.has("lease") || o.has("lease-file"))
        throwUsage("give either a lease or --env (a publish without a lease), not both");
    UnserializedPublishRequest r;
    r.env = requireEnvironmentName(o.required("env"));
    r.job = o.required("job");
    r.release = o.required("release");
    r.generation = o.requiredPositiveInt("generation");
    if (auto path = o.get("manifest"))
        r.manifest = readManifest(*path);
    r.opId = o.opIdOrNew();
    Outcome outcome = c.database().publishUnserialized(r);
    return c.out().outcome(outcome, [&] {
        return "published " + escapeControl(r.release) + " (generation " + std::to_string(r.generation) +
               ") on " + r.env + " without a lease (serialization off)" +
               (outcome.replayed() ? " (replayed)" : "") + "\n";
    });
}

int publish(CommandContext& c)
{
    const Arguments& o = c.args();
    if (o.has("env"))
        return publishUnserialized(c);
    for (const char* name : {"job", "release", "generation"})
        if (o.has(name))
            throwUsage(std::string("--") + name + " goes with --env (a publish without a lease)");
    PublishRequest r;
    r.lease = c.handle();
    if (auto path = o.get("manifest"))
        r.manifest = readManifest(*path);
    r.opId = o.opIdOrNew();
    Outcome outcome = c.database().publish(r);
    return c.out().outcome(outcome, [&] {
        const Publication published = outcome.reply<Publication>();
        return "published " + escapeControl(published.release) + " (generation " +
               std::to_string(published.generation) + ") on " + r.lease.env + " with token " +
               std::to_string(r.lease.token) + (outcome.replayed() ? " (replayed)" : "") + "\n";
    });
}

void buildRun(CLI::App* c)
{
    c->footer(std::string(kRunUsage) +
              "\nEverything after -- is the command's own, untouched (a --dsn there is the command's).");
    candidate(c);
    value(c, "manifest", "FILE", "publish this manifest when the command succeeds");
    duration(c, "grace", false, "time between SIGTERM and SIGKILL when the lease is lost (default 10 s)");
}

int run(CommandContext& c)
{
    return runCommand(RunContext{c.args(), c.childCommand().value(), c.out(), c.globals().jobUrl,
                                 [&c] { return c.connect(); }});
}

constexpr Command kLease[] = {
    {"acquire", "take the lease; prints the handle ENV:TOKEN:LEASE_ID", candidate, leaseAcquire},
    {"renew", "extend the lease from the server's now", buildLeaseRenew, leaseRenew},
    {"release", "end the caller's own lease (idempotent)", leaseHandle, leaseRelease},
    {"show", "the live lease, with remaining_ms", environmentRequired, leaseShow},
    {"revoke", "end the live lease at once", buildLeaseRevoke, leaseRevoke},
};

constexpr Command kJob[] = {
    {"lease", "the environment's lease", nullptr, nullptr, kLease},
    {"publish", "mark the lease's release current", buildPublish, publish},
    {"run", "the whole lease life cycle around a command", buildRun, run},
};

} // namespace

std::span<const Command> lease()
{
    return kJob;
}

} // namespace relctl::cli::groups
