// What release managers decide: freezes, the queue, supersessions,
// promotions and rollbacks, each recorded with who and why.

#include "context.h"
#include "grammar.h"
#include "groups.h"
#include "relctl/error.h"
#include "relctl/naturalsort.h"
#include "relctl/parse.h"
#include "render.h"

#include <algorithm>
#include <iostream>
#include <unistd.h>

namespace relctl::cli::groups {

namespace {

// --env E for one environment; --group and --match for many, listed first
// and confirmed on a terminal (--yes without one), --dry-run to list only.
void manyEnvironments(CLI::App* c, const std::string& verb)
{
    selection(c, "all the environments");
    flag(c, "yes", "change them without asking (required when stdin is not a terminal)");
    flag(c, "dry-run", "only list the environments it would " + verb);
    c->footer("With --group or --match, relctl lists the environments they select and asks before it " +
              verb + "s them, all in one transaction (all or nothing), with one event per environment. " +
              "Without a terminal on stdin it asks nothing: give --yes, or it exits 2 and changes nothing.");
}

void buildFreeze(CLI::App* c)
{
    environment(c, "the environment");
    text(c, "by", "NAME", "who freezes it")->required();
    text(c, "reason", "TEXT", "why")->required();
    manyEnvironments(c, "freeze");
}

void buildUnfreeze(CLI::App* c)
{
    environment(c, "the environment");
    text(c, "by", "NAME", "who unfreezes it")->required();
    text(c, "reason", "TEXT", "why (optional; kept in the audit trail)");
    manyEnvironments(c, "unfreeze");
}

// Whether the person at the terminal says yes to the question.
bool confirmed(const std::string& question)
{
    std::cerr << question << " [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer))
        return false;
    return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES" || answer == "Yes";
}

int changeFreezeMany(CommandContext& c, bool frozen)
{
    const Arguments& o = c.args();
    const std::string verb = frozen ? "freeze" : "unfreeze";
    // Checked before anything is read: a script without --yes learns at once.
    const bool dryRun = o.has("dry-run");
    if (!dryRun && !o.has("yes") && !isatty(STDIN_FILENO))
        throwUsage("'" + verb +
                   "' of a group or pattern asks for confirmation and stdin is not a terminal: "
                   "give --yes to " +
                   verb + " them (or --dry-run to list them); nothing was changed");
    const EnvironmentNames selected = c.database().environmentNames(o.get("group"), o.get("match"));
    std::vector<std::string> names = selected.environments;
    if (names.empty())
        throwUsage(
            "no environment matches" + std::string(o.has("group") ? " --group " + *o.get("group") : "") +
            std::string(o.has("match") ? " --match " + *o.get("match") : "") + "; nothing was changed");
    if (selected.truncated)
        throwUsage("more than 10000 environments match: " + verb +
                   " at most 10000 at once (narrow --group or --match); nothing was changed");
    std::sort(names.begin(), names.end(), naturalLess);
    std::string list;
    for (const std::string& n : names)
        list += n + "\n";
    if (dryRun) {
        const json body{{"dry_run", true}, {"environments", names}};
        return c.out().success(body, list);
    }
    if (!o.has("yes")) {
        std::cerr << escapeControl(list, true);
        const std::string count =
            std::to_string(names.size()) + (names.size() == 1 ? " environment" : " environments");
        if (!confirmed(verb + " these " + count + "?"))
            throwUsage("not confirmed; nothing was changed");
    }
    const BulkFreezeResult result =
        frozen ? c.database().freezeMany(names, o.required("by"), o.required("reason"))
               : c.database().unfreezeMany(names, o.required("by"), o.get("reason"));
    const json body{{"changed", result.changed}, {"unchanged", result.unchanged}};
    return c.out().success(body, render::bulkFreeze(result, frozen));
}

int changeFreeze(CommandContext& c, bool frozen)
{
    const Arguments& o = c.args();
    const bool many = o.has("group") || o.has("match");
    if (many && o.has("env"))
        throwUsage("give --env, or --group and --match, not both");
    if (many)
        return changeFreezeMany(c, frozen);
    if (!o.has("env"))
        throwUsage(std::string("'") + (frozen ? "freeze" : "unfreeze") + "' needs --env, --group or --match");
    if (o.has("yes") || o.has("dry-run"))
        throwUsage("--yes and --dry-run go with --group or --match");
    const std::string env = requireEnvironmentName(o.required("env"));
    const FreezeChange reply = frozen ? c.database().freeze(env, o.required("by"), o.required("reason"))
                                      : c.database().unfreeze(env, o.required("by"), o.get("reason"));
    return c.out().success(toJson(reply), render::environment(reply.environment));
}

int freeze(CommandContext& c)
{
    return changeFreeze(c, true);
}

int unfreeze(CommandContext& c)
{
    return changeFreeze(c, false);
}

// A positional id as typed, checked again where it is read: "invalid NAME \"...\"".
std::int64_t idOf(const std::string& text, const std::string& name)
{
    const auto id = parsePositiveInt(text);
    if (!id)
        throwUsage("invalid " + name + " \"" + text + "\": expected a positive integer");
    return *id;
}

void buildQueueDrop(CLI::App* c)
{
    positional(c, "CANDIDATE", "a candidate id (env show lists the queue)")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who drops it")->required();
    text(c, "reason", "TEXT", "why (kept in the audit trail and told to its job)")->required();
}

int queueDrop(CommandContext& c)
{
    const Arguments& o = c.args();
    const std::string idText = o.positional(0, "a candidate id");
    const std::int64_t id = idOf(idText, "candidate id");
    const Outcome outcome = c.database().dropCandidate(id, o.required("by"), o.required("reason"));
    return c.out().outcome(outcome, [&] {
        // relctl.queue_drop's reply names no environment (relctl.candidate_json
        // has none): "-", as for any value a reply lacks.
        const Candidate dropped = outcome.reply<DroppedCandidate>().candidate;
        return "dropped candidate " + idText + " (job " + escapeControl(dropped.job) + ", generation " +
               std::to_string(dropped.generation) + ") from the queue of -\n";
    });
}

void buildListing(CLI::App* c)
{
    environment(c, "only this environment's");
    flag(c, "all", "decided ones too");
}

int supersessionList(CommandContext& c)
{
    const Supersessions reply = c.database().supersessions(c.args().environment("env"), c.args().has("all"));
    return c.out().success(toJson(reply), render::supersessions(reply));
}

void buildApprove(CLI::App* c)
{
    positional(c, "ID", "a supersession request id")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who approves it")->required();
    value(c, "reason", "TEXT", "why");
}

void buildDeny(CLI::App* c)
{
    positional(c, "ID", "a supersession request id")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who denies it")->required();
    text(c, "reason", "TEXT", "why")->required();
}

int decideSupersession(CommandContext& c, bool approve)
{
    const Arguments& o = c.args();
    const std::int64_t id = idOf(o.positional(0, "a supersession request id"), "request id");
    const std::optional<std::string> reason = approve ? o.get("reason") : std::optional(o.required("reason"));
    const Outcome outcome = c.database().decideSupersession(id, approve, o.required("by"), reason);
    return c.out().outcome(outcome, [&] {
        return render::supersessions(Supersessions{{outcome.reply<SupersessionDecision>().supersession}});
    });
}

int approve(CommandContext& c)
{
    return decideSupersession(c, true);
}

int deny(CommandContext& c)
{
    return decideSupersession(c, false);
}

// A promotion request as the command's reply: its message, if any (a
// repeated decision says that it changed nothing), and the request.
template <class Reply> int promotionReply(const CommandContext& c, const Outcome& outcome)
{
    return c.out().outcome(outcome, [&] {
        const Reply reply = outcome.reply<Reply>();
        std::string out;
        if constexpr (requires { reply.message; })
            if (reply.message)
                out = escapeControl(*reply.message) + "\n";
        return out + render::promotions(Promotions{{reply.promotion}});
    });
}

void buildPromoteRequest(CLI::App* c)
{
    environment(c, "the environment it is promoted to")->required();
    text(c, "release", "R", "the release label")->required();
    positiveInt(c, "generation", "N", "the release's generation")->required();
    text(c, "by", "NAME", "who asks (cannot approve it)")->required();
    value(c, "reason", "TEXT", "why");
}

int promoteRequest(CommandContext& c)
{
    const Arguments& o = c.args();
    const PromotionRequest r{requireEnvironmentName(o.required("env")), o.required("release"),
                             o.requiredPositiveInt("generation"), o.required("by"), o.get("reason")};
    return promotionReply<PromotionRequested>(c, c.database().requestPromotion(r));
}

int promoteList(CommandContext& c)
{
    const Promotions reply = c.database().promotions(c.args().environment("env"), c.args().has("all"));
    return c.out().success(toJson(reply), render::promotions(reply));
}

void buildPromoteApprove(CLI::App* c)
{
    positional(c, "ID", "a promotion request id")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who approves it (not its requester)")->required();
    value(c, "reason", "TEXT", "why");
}

void buildPromoteDeny(CLI::App* c)
{
    positional(c, "ID", "a promotion request id")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who denies it")->required();
    text(c, "reason", "TEXT", "why")->required();
}

int decidePromotion(CommandContext& c, bool approve)
{
    const Arguments& o = c.args();
    const std::int64_t id = idOf(o.positional(0, "a promotion request id"), "promotion request id");
    return promotionReply<PromotionDecision>(
        c, c.database().decidePromotion(id, approve, o.required("by"),
                                        approve ? o.get("reason") : std::optional(o.required("reason"))));
}

int promoteApprove(CommandContext& c)
{
    return decidePromotion(c, true);
}

int promoteDeny(CommandContext& c)
{
    return decidePromotion(c, false);
}

void buildRollback(CLI::App* c)
{
    c->footer("Name one target. The freshness bar stays: the highest generation ever accepted still\n"
              "refuses older jobs (exit 4), and the next newer candidate adopts as usual. Allowed while\n"
              "frozen; busy (exit 3) while a job holds the lease, unless --wait.");
    environment(c, "the environment")->required();
    text(c, "to-release", "R", "the newest manifest of this release");
    positiveInt(c, "to-generation", "N", "the manifest of this generation");
    positiveInt(c, "to-manifest", "ID", "the manifest with this id (manifest show --history)");
    text(c, "by", "NAME", "who rolls back")->required();
    text(c, "reason", "TEXT", "why")->required();
    duration(c, "wait", false, "wait up to D while a job holds the lease");
    text(c, "op-id", "ID", "the operation id: a retry with the same id replays the outcome");
}

int rollback(CommandContext& c)
{
    const Arguments& o = c.args();
    RollbackRequest r;
    r.env = requireEnvironmentName(o.required("env"));
    r.toRelease = o.get("to-release");
    r.toGeneration = o.positiveInt("to-generation");
    r.toManifest = o.positiveInt("to-manifest");
    if ((r.toRelease ? 1 : 0) + (r.toGeneration ? 1 : 0) + (r.toManifest ? 1 : 0) != 1)
        throwUsage("'rollback' needs exactly one of --to-release, --to-generation and --to-manifest");
    r.by = o.required("by");
    r.reason = o.required("reason");
    r.wait = o.duration("wait", false);
    r.opId = o.opIdOrNew();
    Outcome outcome = c.database(r.wait).rollback(r);
    return c.out().outcome(outcome, [&] { return render::rollback(outcome.reply<RollbackDone>()); });
}

constexpr Command kQueue[] = {
    {"drop", "take a waiting candidate out of its queue (release managers)", buildQueueDrop, queueDrop},
};

constexpr Command kSupersession[] = {
    {"list", "the pending supersession requests", buildListing, supersessionList},
    {"approve", "approve a supersession request", buildApprove, approve},
    {"deny", "deny a supersession request", buildDeny, deny},
};

// The spellings before 'supersession' named the concept: kept, so that
// scripts written for them go on working, and listed as what they are.
constexpr Command kApprovalsAlias[] = {
    {"list", "the same as 'supersession list'", buildListing, supersessionList},
};

constexpr Command kPromote[] = {
    {"request", "open the promotion request of a release before its job asks", buildPromoteRequest,
     promoteRequest},
    {"list", "the open promotion requests", buildListing, promoteList},
    {"approve", "approve a promotion request", buildPromoteApprove, promoteApprove},
    {"deny", "deny a promotion request (final for that release and generation)", buildPromoteDeny,
     promoteDeny},
};

constexpr Command kDecisions[] = {
    {"freeze", "refuse acquisitions and publishes on the environment (or every one of a group or pattern)",
     buildFreeze, freeze},
    {"unfreeze", "end a dispatch freeze (or those of a group or pattern)", buildUnfreeze, unfreeze},
    {"queue", "the environments' waiting candidates", nullptr, nullptr, kQueue},
    {"supersession", "a waiting candidate's request to skip lower ones (newest policy, supersede approval)",
     nullptr, nullptr, kSupersession},
    {"approvals", "the same as 'supersession' (the older spelling)", nullptr, nullptr, kApprovalsAlias},
    {"approve", "the same as 'supersession approve' (the older spelling)", buildApprove, approve},
    {"deny", "the same as 'supersession deny' (the older spelling)", buildDeny, deny},
    {"promote", "promotion requests (env set --promote-from, --approvals)", nullptr, nullptr, kPromote},
    {"rollback", "make an earlier accepted manifest current again", buildRollback, rollback},
};

} // namespace

std::span<const Command> decisions()
{
    return kDecisions;
}

} // namespace relctl::cli::groups
