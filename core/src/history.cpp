#include "relctl/history.h"

#include "relctl/error.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

namespace relctl::history {

namespace {

using nlohmann::json;

std::string str(std::int64_t n)
{
    return std::to_string(n);
}

// A span between two of the server's times, in the checker's unit.
std::string str(std::chrono::microseconds d)
{
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

std::string str(const std::optional<std::string>& s)
{
    return s ? *s : "(none)";
}

std::string str(const std::optional<std::int64_t>& n)
{
    return n ? std::to_string(*n) : "(none)";
}

std::string count(std::size_t n, const std::string& what)
{
    return std::to_string(n) + " " + what;
}

// What one check found: its violations, and the summary it gives when none.
class Finding
{
public:
    explicit Finding(std::string name) { m_verdict.name = std::move(name); }

    void violation(std::string text) { m_verdict.violations.push_back(std::move(text)); }

    Verdict verdict(std::string summary)
    {
        const auto& v = m_verdict.violations;
        m_verdict.passed = v.empty();
        m_verdict.detail = v.empty()       ? std::move(summary)
                           : v.size() == 1 ? v.front()
                                           : v.front() + " (and " + count(v.size() - 1, "more") + ")";
        return std::move(m_verdict);
    }

private:
    Verdict m_verdict;
};

// Which rows a check judges: the environment asked for, and rows at or
// after `since` (older rows are the context the first judged row is compared with).
struct Scope
{
    const History& h;

    bool env(const std::string& name) const { return !h.env || *h.env == name; }
    bool env(const std::optional<std::string>& name) const { return !h.env || name == h.env; }
    bool at(Timestamp t) const { return !h.since || t >= *h.since; }
};

// Rows of one environment, by the environment's name.
template <typename Row> std::map<std::string, std::vector<const Row*>> byEnv(const std::vector<Row>& rows)
{
    std::map<std::string, std::vector<const Row*>> out;
    for (const Row& r : rows)
        out[r.env].push_back(&r);
    return out;
}

std::string lease(const LeaseRow& l)
{
    return "lease " + l.env + ":" + str(l.token) + " (job " + l.job + ")";
}

std::string manifest(const ManifestRow& m)
{
    return "manifest #" + str(m.id) + " on " + m.env + " (release " + m.release + ", generation " +
           str(m.generation) + ", token " + str(m.token) + ")";
}

std::string event(const Event& e)
{
    return "event #" + str(e.id) + " (" + e.operation + " on " + str(e.env) + ", " + e.outcome +
           (e.reason ? " " + *e.reason : "") + ")";
}

std::string rollback(const RollbackRow& r)
{
    return "rollback #" + str(r.id) + " on " + r.env + " (token " + str(r.token) + ")";
}

using EnvToken = std::pair<std::string, std::int64_t>;

// The (environment, token) of every lease an accepted event of `operation`
// granted: "acquire", or "rollback" (whose lease has no acquire event).
std::set<EnvToken> grantedBy(const History& h, const std::string& operation)
{
    std::set<EnvToken> out;
    for (const Event& e : h.events)
        if (e.operation == operation && e.outcome == "accepted" && e.env && e.token)
            out.insert({*e.env, *e.token});
    return out;
}

// Whether manifest m was published before rollback r, on r's environment. A
// serialized publish after a rollback holds a newer token than the
// rollback's, whose lease fenced out every older one (publish-under-live-lease
// judges that); an unserialized publish has no token, so times decide, and
// the same millisecond counts as before.
bool publishedBefore(const ManifestRow& m, const RollbackRow& r)
{
    return m.token ? *m.token < r.token : m.publishedAt <= r.at;
}

Verdict fencingTokensIncrease(const History& h)
{
    const Scope scope{h};
    Finding f("fencing-tokens-increase");
    std::map<std::string, std::int64_t> lastToken;
    for (const EnvironmentRow& e : h.environments)
        lastToken[e.name] = e.lastToken;
    const std::set<EnvToken> acquired = grantedBy(h, "acquire");
    const std::set<EnvToken> rolledBack = grantedBy(h, "rollback");
    std::set<EnvToken> granted;
    std::size_t leases = 0;
    std::size_t rollbackLeases = 0;
    for (auto& [env, rows] : byEnv(h.leases)) {
        std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->token < b->token; });
        for (const LeaseRow* l : rows)
            granted.insert({env, l->token});
        if (!scope.env(env))
            continue;
        const auto last = lastToken.find(env);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const LeaseRow& l = *rows[i];
            const bool judged = scope.at(l.acquiredAt);
            leases += judged ? 1 : 0;
            if (judged && last == lastToken.end())
                f.violation(lease(l) + " is on an environment the history does not have");
            else if (judged && l.token > last->second)
                f.violation(lease(l) + " is above " + env + "'s last issued token " + str(last->second));
            // Every lease was granted by an accepted event: an acquire, or a
            // rollback, which holds its lease only for the moment of the switch.
            if (judged && rolledBack.count({env, l.token})) {
                ++rollbackLeases;
                if (!l.endedAt || *l.endedAt != l.acquiredAt || l.endReason != "released")
                    f.violation(lease(l) + " was taken by a rollback but not released at once (ended " +
                                (l.endedAt ? str(*l.endedAt - l.acquiredAt) + " ms after it was acquired, " +
                                                 str(l.endReason)
                                           : std::string("never")) +
                                ")");
            } else if (judged && !acquired.count({env, l.token})) {
                f.violation(lease(l) + " was granted by no accepted acquire or rollback event");
            }
            if (i == 0)
                continue;
            const LeaseRow& prev = *rows[i - 1];
            if (!judged && !scope.at(prev.acquiredAt))
                continue;
            if (prev.token == l.token)
                f.violation("token " + str(l.token) + " of " + env + " was issued twice (jobs " + prev.job +
                            " and " + l.job + ")");
            else if (l.acquiredAt < prev.acquiredAt)
                f.violation(lease(l) + " was acquired " + str(prev.acquiredAt - l.acquiredAt) +
                            " ms before " + lease(prev) + ", which has the lower token");
        }
    }
    // The audit trail's side: accepted acquires and rollbacks (each takes the
    // next token), in the order they were recorded (event ids are assigned
    // under the environment's row lock), each naming a lease the history has.
    std::map<std::string, const Event*> previous;
    std::size_t grants = 0;
    for (const Event& e : h.events) {
        if ((e.operation != "acquire" && e.operation != "rollback") || e.outcome != "accepted" || !e.env ||
            !scope.env(e.env))
            continue;
        const bool judged = scope.at(e.at);
        if (!e.token) {
            if (judged)
                f.violation(event(e) + " granted a lease but records no token");
            continue;
        }
        grants += judged ? 1 : 0;
        if (judged && !granted.count({*e.env, *e.token}))
            f.violation(event(e) + " granted token " + str(*e.token) + ", but " + *e.env +
                        " has no lease with that token");
        const Event*& prev = previous[*e.env];
        if (judged && prev && *prev->token >= *e.token)
            f.violation(event(e) + " granted token " + str(*e.token) + " after " + event(*prev) +
                        " granted token " + str(*prev->token));
        prev = &e;
    }
    return f.verdict(count(leases, "leases") +
                     ": tokens unique, increasing with acquisition time, none above the "
                     "environment's last token, each granted by its event (" +
                     count(rollbackLeases, "by rollbacks") + ", released at once); " +
                     count(grants, "accepted acquires and rollbacks") + " in increasing token order");
}

Verdict generationsAdvance(const History& h)
{
    const Scope scope{h};
    Finding f("generations-advance");
    auto manifests = byEnv(h.manifests);
    auto rollbacks = byEnv(h.rollbacks);
    std::map<std::int64_t, const ManifestRow*> byId;
    for (const ManifestRow& m : h.manifests)
        byId[m.id] = &m;
    std::size_t judged = 0;
    for (auto& [env, rows] : manifests) {
        std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->id < b->id; });
        if (!scope.env(env))
            continue;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const ManifestRow& m = *rows[i];
            if (!scope.at(m.publishedAt))
                continue;
            ++judged;
            // A rollback writes no manifest: every manifest is a publish, and
            // no publish may make the history go back.
            if (i > 0 && m.generation <= rows[i - 1]->generation)
                f.violation(manifest(m) + " does not advance past " + manifest(*rows[i - 1]));
        }
    }
    // What was current when the first `end` of an environment's rollbacks
    // had happened, and the publishes before the next one (all of them when
    // there is none): the newest of those publishes, unless the last of those
    // rollbacks came after it.
    const auto currentAt = [&](const std::vector<const ManifestRow*>& published,
                               const std::vector<const RollbackRow*>& rows,
                               std::size_t end) -> std::optional<std::int64_t> {
        const ManifestRow* newest = nullptr;
        for (const ManifestRow* m : published)
            if (end == rows.size() || publishedBefore(*m, *rows[end]))
                newest = m;
        const RollbackRow* latest = end > 0 ? rows[end - 1] : nullptr;
        if (latest && (!newest || publishedBefore(*newest, *latest)))
            return latest->restoredManifestId;
        return newest ? std::optional(newest->id) : std::nullopt;
    };
    static const std::vector<const ManifestRow*> noManifests;
    static const std::vector<const RollbackRow*> noRollbacks;
    std::size_t judgedRollbacks = 0;
    for (auto& [env, rows] : rollbacks) {
        std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->token < b->token; });
        if (!scope.env(env))
            continue;
        const auto published = manifests.find(env);
        const auto& ofEnv = published == manifests.end() ? noManifests : published->second;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const RollbackRow& r = *rows[i];
            if (!scope.at(r.at))
                continue;
            ++judgedRollbacks;
            const auto restored = byId.find(r.restoredManifestId);
            const auto replaced = byId.find(r.replacedManifestId);
            if (restored == byId.end())
                f.violation(rollback(r) + " restores manifest #" + str(r.restoredManifestId) +
                            ", which the history does not have");
            else if (restored->second->env != env)
                f.violation(rollback(r) + " restores " + manifest(*restored->second) + ", not one of " + env +
                            "'s own");
            if (replaced == byId.end())
                f.violation(rollback(r) + " replaces manifest #" + str(r.replacedManifestId) +
                            ", which the history does not have");
            else if (replaced->second->env != env)
                f.violation(rollback(r) + " replaces " + manifest(*replaced->second) + ", not one of " + env +
                            "'s own");
            // Any manifest the environment accepted before may be restored:
            // also one newer than the current one, after an earlier rollback
            // (undoing it). The freshness bar is judged by freshness-bar-kept.
            if (restored != byId.end() && r.restoredManifestId == r.replacedManifestId)
                f.violation(rollback(r) + " restores " + manifest(*restored->second) +
                            ", which it also replaced");
            else if (restored != byId.end() && restored->second->publishedAt > r.at)
                f.violation(rollback(r) + " restores " + manifest(*restored->second) +
                            ", which was published after it");
            const auto before = currentAt(ofEnv, rows, i);
            if (!before)
                f.violation(rollback(r) + " replaces manifest #" + str(r.replacedManifestId) + ", but " +
                            env + " had no current manifest");
            else if (*before != r.replacedManifestId)
                f.violation(rollback(r) + " replaces manifest #" + str(r.replacedManifestId) + ", but #" +
                            str(*before) + " was current then");
        }
    }
    // The current manifest is the newest, unless the environment's latest
    // rollback came after the newest publish: then it is what that restored.
    std::size_t environments = 0;
    for (const EnvironmentRow& e : h.environments) {
        if (!scope.env(e.name))
            continue;
        ++environments;
        const auto rows = manifests.find(e.name);
        const ManifestRow* newest = rows == manifests.end() ? nullptr : rows->second.back();
        if (!newest) {
            if (e.currentManifestId)
                f.violation(e.name + "'s current manifest #" + str(*e.currentManifestId) +
                            " is not among its manifests");
            continue;
        }
        if (!e.currentManifestId) {
            f.violation(e.name + " has manifests but no current one (newest: " + manifest(*newest) + ")");
            continue;
        }
        const auto envRollbacks = rollbacks.find(e.name);
        const auto& rolled = envRollbacks == rollbacks.end() ? noRollbacks : envRollbacks->second;
        const std::optional<std::int64_t> expected = currentAt(rows->second, rolled, rolled.size());
        if (*e.currentManifestId == expected)
            continue;
        const auto current = byId.find(*e.currentManifestId);
        const std::string what =
            current == byId.end() || current->second->env != e.name
                ? "manifest #" + str(*e.currentManifestId) + " is not among its manifests"
                : manifest(*current->second);
        if (*expected == newest->id)
            f.violation(e.name + "'s current " + what + " is not its newest, " + manifest(*newest) +
                        (rolled.empty() ? "" : ", and no rollback came after that publish"));
        else
            f.violation(e.name + "'s current " + what + " is not manifest #" + str(*expected) + ", which " +
                        rollback(*rolled.back()) + " restored after the newest publish");
    }
    return f.verdict(
        count(judged, "manifests") + " advance their environment's generation; " +
        count(judgedRollbacks, "rollbacks") +
        " each restore a manifest their environment accepted before, in place of the current one; " +
        count(environments, "environments") +
        " point at their newest manifest, or at what a later rollback restored");
}

// The freshness bar: what an environment accepts must be newer than every
// generation ever published there. A rollback moves the current manifest
// back but not the bar, so it is computed here from the accepted publishes
// alone, in the order they were recorded, and compared with every accepted
// acquire and publish and with the high-water mark each event recorded.
Verdict freshnessBarKept(const History& h)
{
    const Scope scope{h};
    Finding f("freshness-bar-kept");
    // With `since`, the bar at its start: the context manifests published
    // before it (the newest is among them) whose publish event is not in the
    // history, which would raise the bar in order below.
    std::set<std::int64_t> publishedByEvent;
    for (const Event& e : h.events)
        if (e.operation == "publish" && e.outcome == "accepted" && e.manifestId)
            publishedByEvent.insert(*e.manifestId);
    std::map<std::string, std::int64_t> bar;
    if (h.since)
        for (const ManifestRow& m : h.manifests)
            if (m.publishedAt < *h.since && !publishedByEvent.count(m.id))
                bar[m.env] = std::max(bar[m.env], m.generation);
    std::size_t accepted = 0;
    std::size_t marks = 0;
    for (const Event& e : h.events) {
        if (!e.env || !scope.env(e.env))
            continue;
        std::int64_t& before = bar[*e.env];
        const bool judged = scope.at(e.at);
        const bool publish = e.operation == "publish" && e.outcome == "accepted";
        const bool acquire = e.operation == "acquire" && e.outcome == "accepted";
        if (judged && (publish || acquire)) {
            ++accepted;
            if (!e.generation)
                f.violation(event(e) + " records no generation");
            else if (*e.generation <= before)
                f.violation(event(e) + " accepted generation " + str(*e.generation) + ", but generation " +
                            str(before) + " was already published on " + *e.env);
        }
        const std::int64_t after = publish && e.generation ? std::max(before, *e.generation) : before;
        // The mark an event records is the bar as it stood (an accepted
        // publish may record the one it raised): never lower, whatever was
        // rolled back, and never higher than anything published.
        if (judged && e.highWaterGeneration) {
            ++marks;
            if (*e.highWaterGeneration != after && !(publish && *e.highWaterGeneration == before))
                f.violation(event(e) + " records the high-water generation " + str(*e.highWaterGeneration) +
                            ", but the highest published on " + *e.env + " by then was " + str(after));
        }
        before = after;
    }
    return f.verdict(count(accepted, "accepted acquires and publishes") +
                     " above every generation published before them on their environment; " +
                     count(marks, "recorded high-water marks") + " equal to that bar");
}

Verdict publishUnderLiveLease(const History& h)
{
    const Scope scope{h};
    Finding f("publish-under-live-lease");
    // Per environment, leases by token, and for each position the earliest
    // acquisition among it and every higher token: a publish under token T
    // is superseded when a higher token was acquired before it.
    struct Leases
    {
        std::vector<const LeaseRow*> byToken;
        std::vector<std::size_t> earliestFrom;
    };
    std::map<std::string, Leases> leases;
    for (auto& [env, rows] : byEnv(h.leases)) {
        std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->token < b->token; });
        Leases& l = leases[env];
        l.byToken = rows;
        l.earliestFrom.resize(rows.size());
        for (std::size_t i = rows.size(); i-- > 0;) {
            const bool later =
                i + 1 < rows.size() && rows[l.earliestFrom[i + 1]]->acquiredAt < rows[i]->acquiredAt;
            l.earliestFrom[i] = later ? l.earliestFrom[i + 1] : i;
        }
    }
    // A rollback's lease switches the current manifest and ends: nothing is
    // published under it.
    const std::set<EnvToken> rolledBack = grantedBy(h, "rollback");
    std::size_t serialized = 0;
    std::size_t unserialized = 0;
    for (const ManifestRow& m : h.manifests) {
        if (!scope.env(m.env) || !scope.at(m.publishedAt))
            continue;
        if (!m.token) {
            ++unserialized;
            continue;
        }
        ++serialized;
        const auto env = leases.find(m.env);
        if (env == leases.end()) {
            f.violation(manifest(m) + " names a lease that " + m.env + " never granted");
            continue;
        }
        const std::vector<const LeaseRow*>& rows = env->second.byToken;
        const auto it = std::lower_bound(rows.begin(), rows.end(), *m.token,
                                         [](auto* l, std::int64_t t) { return l->token < t; });
        if (it == rows.end() || (*it)->token != *m.token) {
            f.violation(manifest(m) + " names a lease that " + m.env + " never granted");
            continue;
        }
        const LeaseRow& l = **it;
        if (rolledBack.count({m.env, l.token}))
            f.violation(manifest(m) + " was published under the lease of a rollback, " + lease(l));
        if (m.publishedAt < l.acquiredAt)
            f.violation(manifest(m) + " was published " + str(l.acquiredAt - m.publishedAt) +
                        " ms before its lease was acquired");
        if (m.publishedAt > l.expiresAt)
            f.violation(manifest(m) + " was published " + str(m.publishedAt - l.expiresAt) + " ms after " +
                        lease(l) + " expired");
        if (l.endedAt && m.publishedAt > *l.endedAt)
            f.violation(manifest(m) + " was published " + str(m.publishedAt - *l.endedAt) + " ms after " +
                        lease(l) + " was " + str(l.endReason));
        const auto next = static_cast<std::size_t>(it - rows.begin()) + 1;
        if (next < rows.size()) {
            const LeaseRow& newer = *rows[env->second.earliestFrom[next]];
            if (newer.acquiredAt < m.publishedAt)
                f.violation(manifest(m) + " was published under a superseded token: " + lease(newer) +
                            " was acquired " + str(m.publishedAt - newer.acquiredAt) + " ms before");
        }
        if (l.job != m.job || l.release != m.release || l.generation != m.generation)
            f.violation(manifest(m) + " differs from its " + lease(l) + " (release " + l.release +
                        ", generation " + str(l.generation) + ")");
    }
    return f.verdict(count(serialized, "serialized manifests") +
                     " published by their lease while it was live and newest; " +
                     count(unserialized, "unserialized manifests (no lease) not judged here"));
}

bool leaseRefusal(std::string_view reason)
{
    return reason == "LEASE_EXPIRED" || reason == "LEASE_SUPERSEDED" || reason == "LEASE_RELEASED" ||
           reason == "LEASE_REVOKED" || reason == "UNKNOWN_LEASE" || reason == "BAD_LEASE_ID";
}

Verdict refusalsExplained(const History& h)
{
    const Scope scope{h};
    Finding f("refusals-explained");
    std::map<std::string, std::set<std::string>> refusedOps; // op id -> reasons of its rejected events
    std::size_t rejected = 0;
    for (const Event& e : h.events) {
        if (e.outcome == "rejected" && e.opId)
            refusedOps[*e.opId].insert(e.reason.value_or(""));
        if (!scope.env(e.env) || !scope.at(e.at))
            continue;
        if (e.outcome != "rejected") {
            if (e.outcome != "accepted")
                f.violation(event(e) + " has neither outcome accepted nor rejected");
            else if (e.reason)
                f.violation(event(e) + " is accepted with a refusal reason");
            continue;
        }
        ++rejected;
        if (!e.reason || e.reason->empty()) {
            f.violation(event(e) + " is rejected without a reason");
            continue;
        }
        const std::string& reason = *e.reason;
        // renew, publish and release judge a presented lease against the
        // environment's newest token; both are recorded (relctl.record
        // snapshots last_token). A STALE_GENERATION publish presents one
        // too, except without a lease (serialization off): then there is no
        // token to record, and the generations below still explain it.
        const bool leaseBound =
            e.operation == "renew" || e.operation == "publish" || e.operation == "release";
        if (leaseBound && (leaseRefusal(reason) || (reason == "STALE_GENERATION" && !e.unserialized))) {
            if (!e.token || !e.currentToken)
                f.violation(event(e) + " does not record the presented token (" + str(e.token) +
                            ") and the current token (" + str(e.currentToken) + ")");
            else if (reason == "LEASE_SUPERSEDED" && *e.currentToken <= *e.token)
                f.violation(event(e) + " says token " + str(*e.token) +
                            " was superseded, but the current token was " + str(*e.currentToken));
        }
        // Freshness is judged against the environment's high-water mark,
        // which a rollback does not lower; an event recorded before it was
        // snapshotted (migration 0006) has only the current manifest.
        if (reason == "STALE_GENERATION" && e.highWaterGeneration) {
            if (e.generation && *e.generation > *e.highWaterGeneration)
                f.violation(event(e) + " refuses generation " + str(*e.generation) +
                            " as stale, but the highest generation accepted was " +
                            str(*e.highWaterGeneration));
        } else if (reason == "STALE_GENERATION") {
            if (!e.currentGeneration || !e.currentRelease)
                f.violation(event(e) + " does not record the current generation (" +
                            str(e.currentGeneration) + ") and release (" + str(e.currentRelease) + ")");
            else if (e.generation && *e.generation > *e.currentGeneration)
                f.violation(event(e) + " refuses generation " + str(*e.generation) + " as stale, but only " +
                            str(*e.currentGeneration) + " was current");
        }
    }
    // An outcome remembered as refused was recorded in the same transaction
    // as its refusal, with the op id (a DISPATCH_FROZEN or NO_LEASE refusal is
    // recorded but not remembered, so a retry can go through later).
    std::size_t refusedOutcomes = 0;
    for (const OperationRow& o : h.operations) {
        if (o.status != "refused" || !scope.env(o.env) || !scope.at(o.recordedAt))
            continue;
        ++refusedOutcomes;
        const auto events = refusedOps.find(o.opId);
        if (events == refusedOps.end())
            f.violation("operation " + o.opId + " (" + o.operation + ") was refused " + str(o.reason) +
                        " without a rejected event");
        else if (!events->second.count(o.reason.value_or("")))
            f.violation("operation " + o.opId + " (" + o.operation + ") was refused " + str(o.reason) +
                        ", but its rejected events give another reason");
    }
    return f.verdict(count(rejected, "rejected events") +
                     " give their reason and the state that explains it; " +
                     count(refusedOutcomes, "refused operations") + " each have their rejected event");
}

Verdict operationsAppliedOnce(const History& h)
{
    const Scope scope{h};
    Finding f("operations-applied-once");
    // A retry is answered from the record (relctl.replay) and records no
    // second accepted event; an op id is one operation, so it names at most
    // one lease, one manifest and one accepted effect.
    const auto once = [&](const std::string& what,
                          const std::map<std::string, std::vector<std::string>>& uses) {
        for (const auto& [op, rows] : uses) {
            if (rows.size() < 2)
                continue;
            std::string list;
            for (const std::string& r : rows)
                list += (list.empty() ? "" : ", ") + r;
            f.violation("operation " + op + " was applied " + str(static_cast<std::int64_t>(rows.size())) +
                        " times (" + what + ": " + list + ")");
        }
    };
    std::map<std::string, std::vector<std::string>> leases, manifests, effects;
    std::set<std::string> judgedOps;
    for (const LeaseRow& l : h.leases)
        if (l.opId && scope.env(l.env)) {
            leases[*l.opId].push_back(l.env + ":" + str(l.token));
            if (scope.at(l.acquiredAt))
                judgedOps.insert(*l.opId);
        }
    for (const ManifestRow& m : h.manifests)
        if (m.opId && scope.env(m.env)) {
            manifests[*m.opId].push_back("#" + str(m.id));
            if (scope.at(m.publishedAt))
                judgedOps.insert(*m.opId);
        }
    for (const Event& e : h.events)
        if (e.opId && e.outcome == "accepted" && (e.operation == "acquire" || e.operation == "publish") &&
            scope.env(e.env)) {
            effects[*e.opId].push_back(e.operation + " #" + str(e.id));
            if (scope.at(e.at))
                judgedOps.insert(*e.opId);
        }
    // Only op ids with a judged row: a duplicate wholly before `since` is not this window's.
    const auto judged = [&](std::map<std::string, std::vector<std::string>> uses) {
        for (auto it = uses.begin(); it != uses.end();)
            it = judgedOps.count(it->first) ? std::next(it) : uses.erase(it);
        return uses;
    };
    once("leases", judged(leases));
    once("manifests", judged(manifests));
    once("accepted events", judged(effects));
    return f.verdict(count(judgedOps.size(), "operation ids") +
                     " each name at most one lease, one manifest and one accepted acquire or publish");
}

// The event that granted each lease: an accepted acquire, or a rollback (the
// first, should there be more: fencing-tokens-increase judges that).
std::map<EnvToken, const Event*> grantEvents(const History& h)
{
    std::map<EnvToken, const Event*> out;
    for (const Event& e : h.events)
        if ((e.operation == "acquire" || e.operation == "rollback") && e.outcome == "accepted" && e.env &&
            e.token)
            out.emplace(EnvToken{*e.env, *e.token}, &e);
    return out;
}

std::string grantNote(const std::map<EnvToken, const Event*>& grants, const LeaseRow& l)
{
    const auto it = grants.find({l.env, l.token});
    if (it == grants.end())
        return " (no granting event)";
    const Event& e = *it->second;
    return " (granted by event #" + str(e.id) + (e.login ? " to login " + *e.login : std::string()) + ")";
}

// Only the newest token can be live: a grant (relctl.live_lease) requires the
// lease of the token before it to have ended or expired, and once a newer
// token exists that lease can neither be renewed nor end later. So it is
// enough to compare each lease with the one before it; an older lease ended
// or expired before that one was granted. A repeated token, or a lease
// acquired before a lower token, is fencing-tokens-increase's finding.
Verdict leasesNeverOverlap(const History& h)
{
    const Scope scope{h};
    Finding f("leases-never-overlap");
    const auto grants = grantEvents(h);
    std::size_t judged = 0;
    for (auto& [env, rows] : byEnv(h.leases)) {
        if (!scope.env(env))
            continue;
        std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->token < b->token; });
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const LeaseRow& l = *rows[i];
            if (!scope.at(l.acquiredAt))
                continue;
            ++judged;
            if (i == 0)
                continue;
            const LeaseRow& prev = *rows[i - 1];
            if (prev.token == l.token || l.acquiredAt < prev.acquiredAt)
                continue;
            // Equal milliseconds count as ended first (the protocol's order).
            const bool ended = prev.endedAt && *prev.endedAt < prev.expiresAt;
            const Timestamp liveUntil = ended ? *prev.endedAt : prev.expiresAt;
            if (l.acquiredAt < liveUntil)
                f.violation(lease(l) + grantNote(grants, l) + " was granted while " + lease(prev) +
                            grantNote(grants, prev) + " was live: " + str(liveUntil - l.acquiredAt) +
                            " ms before " +
                            (ended ? "it was " + str(prev.endReason) : std::string("it expired")) +
                            (prev.endedAt ? "" : ", and it never ended"));
        }
    }
    return f.verdict(count(judged, "leases") +
                     " each granted only once the lease of the token before it had ended or expired");
}

// The promotion gate (relctl.promotion_refusal), judged again from what was
// recorded: a publish on an environment promoted from another takes only a
// (release, generation) that the other accepted at least the soak before
// and had not withdrawn (relctl.withdrawn: a rollback there replaced its
// manifest, and no later rollback restored it). The path and soak in force
// are the ones the environment's env-set events had set by then (ordered
// with its publishes by event id: both take the environment's row lock);
// one never set through env-set is not known and not judged. The publish's
// instant is its manifest's, when the gate was passed. The gate reads the
// upstream's rows without locking them, so a rollback that had not
// committed when it read would show here as a publish after it.
Verdict promotionPathKept(const History& h)
{
    const Scope scope{h};
    Finding f("promotion-path-kept");
    std::map<std::int64_t, const ManifestRow*> byId;
    std::map<std::tuple<std::string, std::string, std::int64_t>, const ManifestRow*> accepted;
    for (const ManifestRow& m : h.manifests) {
        byId[m.id] = &m;
        accepted.emplace(std::make_tuple(m.env, m.release, m.generation), &m);
    }
    // The rollbacks that replaced or restored each manifest, in the order
    // they happened (ids are taken under the environment's row lock).
    std::map<std::int64_t, std::vector<const RollbackRow*>> rollbacks;
    for (const RollbackRow& r : h.rollbacks) {
        rollbacks[r.replacedManifestId].push_back(&r);
        if (r.restoredManifestId != r.replacedManifestId)
            rollbacks[r.restoredManifestId].push_back(&r);
    }
    for (auto& [id, rows] : rollbacks)
        std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->id < b->id; });
    struct Path
    {
        std::optional<std::string> from;
        std::int64_t soakMs = 0;
    };
    std::map<std::string, Path> paths;
    std::size_t promoted = 0;
    std::size_t others = 0;
    for (const Event& e : h.events) {
        if (!e.env || e.outcome != "accepted")
            continue;
        if (e.operation == "env-set") {
            Path& p = paths[*e.env];
            if (e.promoteFrom)
                p.from = e.promoteFrom->empty() ? std::nullopt : e.promoteFrom;
            if (e.soakMs)
                p.soakMs = *e.soakMs;
            continue;
        }
        if (e.operation != "publish" || !scope.env(e.env))
            continue;
        const auto written = e.manifestId ? byId.find(*e.manifestId) : byId.end();
        const ManifestRow* m = written == byId.end() ? nullptr : written->second;
        const Timestamp at = m ? m->publishedAt : e.at;
        const std::optional<std::string> release = m ? std::optional(m->release) : e.release;
        const std::optional<std::int64_t> generation = m ? std::optional(m->generation) : e.generation;
        if (!scope.at(at))
            continue;
        const Path& path = paths[*e.env];
        if (!path.from) {
            ++others;
            continue;
        }
        ++promoted;
        const std::string what = event(e) + " by job " + str(e.job) + ", login " + str(e.login) +
                                 (m ? ", manifest #" + str(m->id) : std::string()) + ", published ";
        if (!release || !generation) {
            f.violation(what + "no release and generation on " + *e.env + ", which is promoted from " +
                        *path.from);
            continue;
        }
        const std::string candidate = *release + " generation " + str(*generation) + " on " + *e.env +
                                      ", which is promoted from " + *path.from;
        const auto up = accepted.find({*path.from, *release, *generation});
        if (up == accepted.end()) {
            f.violation(what + candidate + ", where no manifest of it was ever accepted");
            continue;
        }
        const ManifestRow& u = *up->second;
        if (u.publishedAt > at)
            f.violation(what + candidate + ", " + str(u.publishedAt - at) + " ms before " + manifest(u) +
                        " accepted it there");
        else if (u.publishedAt > at - std::chrono::milliseconds(path.soakMs))
            f.violation(what + candidate + ", " + str(at - u.publishedAt) + " ms after " + manifest(u) +
                        " accepted it there, short of the soak of " + str(path.soakMs) + " ms");
        // Withdrawn when the gate looked: in the publish's millisecond, a
        // replacement counts as after it and a restoration as before it.
        const RollbackRow* withdrawnBy = nullptr;
        if (const auto touched = rollbacks.find(u.id); touched != rollbacks.end())
            for (const RollbackRow* r : touched->second) {
                if (r->replacedManifestId == u.id && r->at < at)
                    withdrawnBy = r;
                else if (r->restoredManifestId == u.id && r->at <= at)
                    withdrawnBy = nullptr;
            }
        if (withdrawnBy)
            f.violation(what + candidate + ", " + str(at - withdrawnBy->at) + " ms after " +
                        rollback(*withdrawnBy) + " withdrew it there: it replaced " + manifest(u) +
                        " (op id " + str(withdrawnBy->opId) + "), and no rollback restored it since");
    }
    return f.verdict(count(promoted, "publishes on promoted environments") +
                     " each accepted upstream at least the soak before and not rolled back there since; " +
                     count(others, "publishes") + " on environments promoted from none then");
}

// A lease's credentials are its acquirer's: a publish under it by another
// login used credentials that login was never given. The acquirer is the
// login its accepted acquire recorded, which for a queued candidate granted
// on its behalf is the login it queued with (relctl.record).
Verdict publishByAcquiringLogin(const History& h)
{
    const Scope scope{h};
    Finding f("publish-by-acquiring-login");
    std::map<EnvToken, const Event*> acquires;
    for (const Event& e : h.events)
        if (e.operation == "acquire" && e.outcome == "accepted" && e.env && e.token)
            acquires.emplace(EnvToken{*e.env, *e.token}, &e);
    std::size_t compared = 0;
    std::size_t unknown = 0;
    for (const Event& e : h.events) {
        if (e.operation != "publish" || e.outcome != "accepted" || !e.env || !e.token || !scope.env(e.env) ||
            !scope.at(e.at))
            continue;
        // A lease without its acquire (a rollback's, or none) is judged by
        // fencing-tokens-increase and publish-under-live-lease.
        const auto acquire = acquires.find({*e.env, *e.token});
        if (acquire == acquires.end())
            continue;
        const Event& a = *acquire->second;
        if (!a.login || !e.login) {
            ++unknown;
            continue;
        }
        ++compared;
        if (*a.login != *e.login)
            f.violation(event(e) + " by login " + *e.login + " published under lease " + *e.env + ":" +
                        str(*e.token) + " (job " + str(e.job ? e.job : a.job) + "), which " + event(a) +
                        " granted to login " + *a.login +
                        (e.opId ? " (publish op id " + *e.opId + ")" : std::string()));
    }
    return f.verdict(count(compared, "accepted publishes") + " by the login that acquired their lease; " +
                     count(unknown, "with an acquirer's login not kept") + " not judged");
}

Verdict expectedCurrentManifest(const History& h, const Expectations& expected)
{
    Finding f("expected-current-manifest");
    std::optional<std::string> env = expected.env ? expected.env : h.env;
    if (!env && h.environments.size() == 1)
        env = h.environments.front().name;
    const std::string want = expected.currentRelease.value_or("");
    if (!env) {
        f.violation("the expectation names no environment, and the history has " +
                    count(h.environments.size(), "environments"));
        return f.verdict({});
    }
    const auto e = std::find_if(h.environments.begin(), h.environments.end(),
                                [&](const EnvironmentRow& r) { return r.name == *env; });
    const auto m = e == h.environments.end() || !e->currentManifestId
                       ? h.manifests.end()
                       : std::find_if(h.manifests.begin(), h.manifests.end(),
                                      [&](const ManifestRow& r) { return r.id == *e->currentManifestId; });
    if (e == h.environments.end())
        f.violation("the history has no environment " + *env);
    else if (m == h.manifests.end())
        f.violation(*env + " has no current manifest; expected release " + want);
    else if (m->release != want)
        f.violation(*env + "'s current " + manifest(*m) + " is not the expected release " + want);
    return f.verdict(*env + "'s current manifest is release " + want);
}

} // namespace

const std::vector<CheckInfo>& checks()
{
    static const std::vector<CheckInfo> all{
        {"fencing-tokens-increase",
         "per environment, fencing tokens are unique, increase with acquisition time and in the order "
         "acquires and rollbacks were recorded, none exceeds the environment's last issued token, and every "
         "lease was granted by an accepted acquire or rollback (a rollback's lease released at once)"},
        {"generations-advance",
         "per environment, every manifest has a higher generation than the one before it; every rollback "
         "restores a manifest its own environment accepted before, in place of the one current then; and the "
         "current manifest is the newest, or the one the latest rollback restored when no publish came "
         "after it"},
        {"freshness-bar-kept",
         "per environment, every accepted acquire and publish has a generation above every generation "
         "published there before it (rollbacks notwithstanding), and every event's recorded high-water "
         "generation is that bar"},
        {"publish-under-live-lease",
         "every manifest with a token was published by that lease while it was live (acquired, not expired, "
         "not ended) and no newer lease existed, with the lease's job, release and generation, and not under "
         "a rollback's lease"},
        {"refusals-explained",
         "every refusal records its reason and the state that explains it (presented and current token for a "
         "lease's refusal; for a stale one the high-water generation, or the current generation and release "
         "on events recorded before it existed), and every operation remembered as refused has its rejected "
         "event"},
        {"operations-applied-once",
         "no operation id names two leases, two manifests or two accepted acquires or publishes: a retry was "
         "answered from the record"},
        {"leases-never-overlap", "per environment, no lease was granted while the lease of the token before "
                                 "it was live (neither ended "
                                 "nor expired)"},
        {"promotion-path-kept",
         "every publish on an environment promoted from another took a release and generation that the other "
         "accepted at least the soak before and had not rolled back, by the path and soak then set"},
        {"publish-by-acquiring-login", "every publish under a lease came from the login that acquired it "
                                       "(for a queued candidate granted on its "
                                       "behalf, the login it queued with)"},
        {"expected-current-manifest",
         "the environment's current manifest is the expected release (only when an expectation names one)"},
    };
    return all;
}

std::vector<Verdict> check(const History& history, const Expectations& expected)
{
    std::vector<Verdict> verdicts{
        fencingTokensIncrease(history), generationsAdvance(history), freshnessBarKept(history),
        publishUnderLiveLease(history), refusalsExplained(history),  operationsAppliedOnce(history),
        leasesNeverOverlap(history),    promotionPathKept(history),  publishByAcquiringLogin(history)};
    if (expected.currentRelease)
        verdicts.push_back(expectedCurrentManifest(history, expected));
    return verdicts;
}

bool allPassed(const std::vector<Verdict>& verdicts)
{
    return std::all_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.passed; });
}

} // namespace relctl::history
