#include "render.h"

#include "output.h"
#include "relctl/parse.h"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace relctl::cli::render {

namespace {

using nlohmann::json;

} // namespace

const json& field(const json& j, const char* key)
{
    static const json null;
    if (!j.is_object())
        return null;
    auto it = j.find(key);
    return it == j.end() ? null : *it;
}

std::string text(const json& j, const char* key)
{
    const json& v = field(j, key);
    if (v.is_null())
        return "-";
    // Values are escaped here, where they enter a rendering: the rendering's
    // own line breaks must survive the escaping at the output edge.
    return escapeControl(v.is_string() ? v.get<std::string>() : dumpJson(v));
}

namespace {

// A value as text, as text() renders a JSON member: strings escaped (see
// text()), numbers in decimal, "-" for none.
std::string str(const std::string& value)
{
    return escapeControl(value);
}

std::string str(std::int64_t value)
{
    return std::to_string(value);
}

std::string str(const Timestamp& value)
{
    return value.iso();
}

template <class T> std::string str(const std::optional<T>& value)
{
    return value ? str(*value) : std::string("-");
}

// Any of the manifest shapes (the current one, one of the history, the one
// current at a refusal).
template <class M> std::string manifestLine(const M& m)
{
    return str(m.release) + " (generation " + str(m.generation) + ") published by job " + str(m.job) +
           " with token " + str(m.token) + " at " + str(m.publishedAt);
}

std::string manifestLine(const std::optional<Manifest>& m)
{
    return m ? manifestLine(*m) : "nothing published";
}

std::string leaseLine(const std::optional<Lease>& l)
{
    if (!l)
        return "no live lease";
    return "held by job " + str(l->job) + " (release " + str(l->release) + ", generation " +
           str(l->generation) + ", token " + str(l->token) + ") until " + str(l->expiresAt) + ", " +
           str(l->remainingMs) + " ms left";
}

std::string supersession(const Supersession& a)
{
    std::ostringstream out;
    const std::optional<Candidate>& w = a.winner;
    out << "request " << str(a.id) << " on " << str(a.env) << " (" << str(a.state) << "): job "
        << (w ? str(w->job) : "-") << " (release " << (w ? str(w->release) : "-") << ", generation "
        << (w ? str(w->generation) : "-") << ") would skip";
    for (const Candidate& c : a.skipped)
        out << " " << str(c.job) << " (generation " << str(c.generation) << ")";
    out << ", opened " << str(a.openedAt);
    if (a.decidedBy)
        out << ", decided by " << str(actorWithLogin(*a.decidedBy, a.decidedLogin)) << " at "
            << str(a.decidedAt);
    if (a.reason)
        out << ": " << str(a.reason);
    out << "\n";
    return out.str();
}

} // namespace

std::string environment(const Environment& env)
{
    std::ostringstream out;
    out << str(env.name) << ": default ttl " << str(env.defaultTtlMs) << " ms, max ttl " << str(env.maxTtlMs)
        << " ms, last token " << str(env.lastToken) << ", policy " << str(env.policy) << " (supersede "
        << str(env.supersede) << "), serialization " << str(env.serialization) << "\n"
        << "  current: " << manifestLine(env.current) << "\n"
        << "  lease:   " << leaseLine(env.lease) << "\n";
    if (env.frozen)
        out << "  frozen:  since " << str(env.frozen->at) << " by " << str(env.frozen->by) << ": "
            << str(env.frozen->reason) << "\n";
    for (const Candidate& c : env.queue)
        out << "  queued:  job " << str(c.job) << " (release " << str(c.release) << ", generation "
            << str(c.generation) << ") since " << str(c.queuedAt) << "\n";
    if (env.pendingSupersessions != 0)
        out << "  " << str(env.pendingSupersessions) << " supersession request(s) await approval\n";
    if (env.promoteFrom || env.approvalsRequired != 0) {
        out << "  promote: ";
        if (env.promoteFrom)
            out << "from " << str(env.promoteFrom) << " after a soak of " << str(env.soakMs) << " ms";
        if (env.promoteFrom && env.approvalsRequired != 0)
            out << ", ";
        if (env.approvalsRequired != 0)
            out << str(env.approvalsRequired) << " approval(s) from distinct logins, "
                << str(env.openPromotions) << " request(s) open";
        out << "\n";
    }
    if (env.approverRole)
        out << "  approvers: members of " << str(env.approverRole) << " only\n";
    if (env.current && env.current->generation != env.highWaterGeneration)
        out << "  rolled back: generation " << str(env.highWaterGeneration)
            << " is the highest accepted (the freshness bar)\n";
    return out.str();
}

std::string environmentList(const EnvironmentList& reply)
{
    std::string out;
    for (const Environment& env : reply.environments)
        out += environment(env);
    return out.empty() ? "no environments\n" : out;
}

std::string environmentBriefs(const EnvironmentBriefs& envs)
{
    if (envs.empty())
        return "no environments\n";
    // Names and groups in columns: 10,000 lines are read down, not across.
    std::size_t nameWidth = 0, groupWidth = 0;
    for (std::size_t i = 0; i < envs.size(); ++i) {
        const EnvironmentBrief e = envs[i];
        nameWidth = std::max(nameWidth, e.name.size());
        groupWidth = std::max(groupWidth, e.group.size());
    }
    // Appended in place: one string for 10,000 lines, not a few temporaries
    // for each.
    std::string out;
    out.reserve(envs.size() * (nameWidth + groupWidth + 60));
    for (std::size_t i = 0; i < envs.size(); ++i) {
        const EnvironmentBrief e = envs[i];
        appendEscaped(out, e.name);
        out.append(nameWidth - e.name.size() + 2, ' ');
        appendEscaped(out, e.group);
        out.append(groupWidth - e.group.size() + 2, ' ');
        if (e.release) {
            appendEscaped(out, *e.release);
            out += " (generation " + str(e.generation) + ")";
        } else {
            out += "nothing published";
        }
        if (e.holder) {
            out += ", held by job ";
            appendEscaped(out, *e.holder);
            // Whole seconds: "212s left", not "212345ms left".
            out += ", " + formatDuration(std::chrono::seconds(e.remainingMs.value_or(0) / 1000)) + " left";
        }
        if (e.frozen)
            out += ", frozen";
        if (e.waiting != 0) {
            out += ", " + str(e.waiting) + " waiting";
        }
        if (e.promoteFrom) {
            out += ", promoted from ";
            appendEscaped(out, *e.promoteFrom);
        }
        out += '\n';
    }
    return out;
}

std::string attention(const std::vector<EnvironmentAttention>& envs)
{
    if (envs.empty())
        return "no environment needs attention\n";
    std::string out;
    for (const EnvironmentAttention& e : envs) {
        out += str(e.name) + " (" + str(e.group) + "): ";
        for (std::size_t i = 0; i < e.attention.size(); ++i)
            out += (i == 0 ? "" : "; ") + str(e.attention[i].summary);
        out += '\n';
    }
    return out;
}

std::string bulkFreeze(const BulkFreezeResult& result, bool frozen)
{
    std::string out;
    for (const std::string& env : result.changed)
        out += str(env) + (frozen ? " frozen\n" : " unfrozen\n");
    for (const std::string& env : result.unchanged)
        out += str(env) + (frozen ? " was frozen already\n" : " was not frozen\n");
    return out;
}

std::string promotionPaths(const PromotionPaths& reply)
{
    std::string out;
    for (const PromotionPaths::Path& p : reply.paths) {
        const EnvironmentSet::Changed& c = p.changed;
        const bool changed = c.promoteFrom || c.soakMs || c.approvalsRequired;
        out += str(p.env) + " promoted from " + str(p.promoteFrom) + (changed ? "" : " (already so)");
        if (c.soakMs)
            out += ", soak " + formatDuration(std::chrono::milliseconds(*c.soakMs));
        if (c.approvalsRequired)
            out +=
                ", " + str(*c.approvalsRequired) + (*c.approvalsRequired == 1 ? " approval" : " approvals");
        out += '\n';
    }
    for (const PromotionPaths::Skipped& s : reply.skipped) {
        std::string missing;
        for (const std::string& stage : s.missing)
            missing += (missing.empty() ? "" : ", ") + str(s.group + "." + stage);
        out += "group " + str(s.group) + " skipped: it has no " + missing + "\n";
    }
    return out;
}

std::string lease(const LeaseShow& reply)
{
    return str(reply.env) + ": " + leaseLine(reply.lease) + "\n";
}

std::string manifest(const ManifestShow& reply)
{
    std::string out = str(reply.env) + ": " + manifestLine(reply.manifest) + "\n";
    if (reply.manifest && reply.manifest->generation != reply.highWaterGeneration)
        out += str(reply.env) + ": rolled back; generation " + str(reply.highWaterGeneration) +
               " is the highest accepted (the freshness bar)\n";
    return out;
}

std::string manifestHistory(const ManifestHistory& reply)
{
    std::string out;
    for (const ManifestHistoryEntry& e : reply.history) {
        out += str(reply.env) + ": ";
        if (e.rollback)
            out += "rollback by " + str(e.rollback->by) + " at " + str(e.rollback->at) + " to manifest " +
                   str(e.manifest.id) + ", " + manifestLine(e.manifest) + ", replacing " +
                   str(e.rollback->replaced.release) + " (generation " +
                   str(e.rollback->replaced.generation) + "): " + str(e.rollback->reason) + "\n";
        else
            out += "manifest " + str(e.manifest.id) + ", " + manifestLine(e.manifest) + "\n";
    }
    if (out.empty())
        return str(reply.env) + ": nothing published\n";
    return out + str(reply.env) + ": highest generation accepted " + str(reply.highWaterGeneration) + "\n";
}

std::string audit(const AuditTrail& reply)
{
    std::ostringstream out;
    for (const Event& e : reply.events) {
        out << '#' << str(e.id) << ' ' << str(e.at) << ' ' << str(e.env) << ' ' << str(e.operation) << ' '
            << str(e.outcome);
        if (e.reason)
            out << ' ' << str(e.reason);
        out << " job=" << str(e.job) << " release=" << str(e.release) << " generation=" << str(e.generation)
            << " token=" << str(e.token) << " current=" << str(e.currentRelease) << '/'
            << str(e.currentGeneration) << '/' << str(e.currentToken) << " host=" << str(e.host)
            << " pid=" << str(e.pid);
        if (e.jobUrl)
            out << ' ' << str(e.jobUrl);
        // Who and why: the person an operator named, the login that called,
        // and what the event recorded (an operator's reason, a gate's view).
        if (e.actor)
            out << " by=" << str(e.actor);
        if (e.dbUser)
            out << " login=" << str(e.dbUser);
        if (e.clientAddr)
            out << " from=" << str(e.clientAddr);
        if (e.detail)
            out << " detail=" << *e.detail;
        out << '\n';
    }
    return out.str();
}

std::string trace(const JobTrace& reply)
{
    std::ostringstream out;
    if (reply.refusals.empty())
        return "job " + str(reply.job) + " has no refused operations\n";
    for (const TracedRefusal& r : reply.refusals) {
        const Event& e = r.event;
        out << '#' << str(e.id) << ' ' << str(e.at) << ": " << str(e.operation) << " on " << str(e.env)
            << " refused " << str(e.reason) << " (release " << str(e.release) << ", generation "
            << str(e.generation) << ", token " << str(e.token) << ", host " << str(e.host) << ", pid "
            << str(e.pid) << ", op " << str(e.opId) << ")\n";
        if (e.jobUrl)
            out << "  job url:          " << str(e.jobUrl) << '\n';
        // The cause first: the row that decided the refusal, not merely the
        // lease that held the environment at the time.
        if (const auto& c = r.cause) {
            out << "  cause:            " << c->summary << '\n';
            if (c->at)
                out << "  decided at:       " << str(c->at) << '\n';
            if (c->jobUrl)
                out << "  its job url:      " << str(c->jobUrl) << '\n';
        }
        if (const auto& l = r.lease)
            out << "  its lease:        token " << str(l->token) << ", acquired " << str(l->acquiredAt)
                << ", expires " << str(l->expiresAt) << ", ended " << str(l->endedAt) << " ("
                << str(l->endReason) << ")\n";
        // A candidate skipped for a newer one was beaten by the winner the cause
        // names, not by whoever held the lease then.
        const bool skipped = r.cause && r.cause->kind == "superseded";
        if (const auto& b = r.supersededBy; b && !skipped)
            out << "  holding then:     token " << str(b->token) << " held by job " << str(b->job)
                << " (release " << str(b->release) << ", generation " << str(b->generation) << "), acquired "
                << str(b->acquiredAt) << '\n';
        out << "  current manifest: ";
        if (const auto& m = r.currentManifest)
            out << manifestLine(*m) << ", " << str(m->publishedBeforeMs) << " ms before the refusal\n";
        else
            out << "nothing published\n";
    }
    return out.str();
}

namespace {

// "state: ...", the sentence and the next step, as the server said them.
std::string stateLines(const std::string& state, const std::string& summary, const std::string& next)
{
    return "state: " + state + "\n  " + summary + "\n  next: " + next + "\n";
}

} // namespace

std::string operation(const OperationRecord& reply)
{
    const std::string state =
        reply.state ? stateLines(*reply.state, str(reply.summary), str(reply.next)) : std::string();
    if (!reply.recorded()) {
        // A waiting candidate has no stored outcome yet, but it is no reason to retry.
        if (reply.state && *reply.state != "unknown")
            return "operation " + str(reply.opId) + ": no outcome recorded yet\n" + state;
        return "operation " + str(reply.opId) + ": not found (the database never saw it; a retry is safe)\n" +
               state;
    }
    // A stored outcome is accepted or refused (busy is never stored).
    std::string result = "-";
    if (const auto& o = reply.outcome)
        result = o->accepted() ? "ok" : o->code == ExitCode::Busy ? "busy" : "refused " + str(o->reason);
    return "operation " + str(reply.opId) + ": " + str(reply.operation) + " " + result + ", recorded at " +
           str(reply.recordedAt) + "\n" + state;
}

std::string status(const JobStatus& reply)
{
    return "job " + str(reply.job) + (reply.opId ? " (op id " + *reply.opId + ")" : std::string()) + "\n" +
           stateLines(reply.state, reply.summary, reply.next);
}

std::string supersessions(const Supersessions& reply)
{
    if (reply.requests.empty())
        return "no supersession requests\n";
    std::string out;
    for (const Supersession& a : reply.requests)
        out += supersession(a);
    return out;
}

std::string promotions(const Promotions& reply)
{
    if (reply.promotions.empty())
        return "no promotion requests\n";
    std::ostringstream out;
    for (const Promotion& p : reply.promotions) {
        out << "promotion " << str(p.id) << " on " << str(p.env) << " (" << str(p.state) << "): release "
            << str(p.release) << ", generation " << str(p.generation) << ", requested by "
            << str(actorWithLogin(p.requestedBy, p.requestedLogin)) << " at " << str(p.requestedAt);
        if (p.reason)
            out << ": " << str(p.reason);
        out << "\n  approvals: "
            << str(p.approvalsGiven.value_or(static_cast<std::int64_t>(p.approvals.size()))) << " of "
            << str(p.approvalsRequired);
        if (p.approverRole)
            out << " (members of " << str(p.approverRole) << ")";
        for (const PromotionVote& v : p.approvals)
            out << "; " << str(actorWithLogin(v.by, v.login)) << " at " << str(v.at)
                << (v.reason ? ": " + str(v.reason) : std::string());
        out << "\n";
        if (p.denial)
            out << "  denied by " << str(actorWithLogin(p.denial->by, p.denial->login)) << " at "
                << str(p.denial->at) << ": " << str(p.denial->reason) << "\n";
        if (p.upstream) {
            out << "  upstream " << str(p.upstream->env) << ": ";
            if (p.upstream->acceptedAt)
                out << "accepted at " << str(p.upstream->acceptedAt) << ", soak " << str(p.upstream->soakMs)
                    << " ms, " << str(p.upstream->soakRemainingMs) << " ms to go";
            else
                out << "not accepted there";
            out << "\n";
        }
    }
    return out.str();
}

std::string rollback(const RollbackDone& reply)
{
    const auto release = [](const std::optional<PublishedManifest>& m) {
        if (!m)
            return std::string("-");
        return str(m->release) + " (generation " + str(m->generation) + ", manifest " + str(m->id) + ")";
    };
    if (!reply.rolledBack)
        return str(reply.message) + "\n";
    return "rolled " + str(reply.env) + " back to " + release(reply.restored) + ", replacing " +
           release(reply.replaced) + ", with token " + str(reply.token) + "; generations up to " +
           str(reply.highWaterGeneration) + " stay refused" + (reply.replayed ? " (replayed)" : "") + "\n";
}

std::string revocation(const Revocation& reply)
{
    if (!reply.lease)
        return str(reply.message) + "\n";
    return "revoked lease " + str(reply.lease->token) + " of job " + str(reply.lease->job) + " on " +
           reply.env + "\n";
}

std::string verdicts(const std::vector<history::Verdict>& verdicts)
{
    std::string out;
    for (const history::Verdict& v : verdicts) {
        out += (v.passed ? "PASS " : "FAIL ") + v.name + ": " + str(v.detail) + "\n";
        for (const std::string& violation : v.violations)
            out += "    " + str(violation) + "\n";
    }
    return out;
}

} // namespace relctl::cli::render
