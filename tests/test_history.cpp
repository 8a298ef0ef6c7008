// The history checker's checks (relctl/history.h) on fabricated histories, no
// database: one valid history on which every check passes, then for each
// check a history that breaks exactly that invariant, on which that check
// fails, names the rows involved, and every other check still passes.

#include "relctl/history.h"

#include <QtTest>
#include <algorithm>

using namespace relctl::history;
using relctl::Event;

namespace {

// The fabricated histories count time in milliseconds, as relctl.history sends it.
relctl::Timestamp ms(std::int64_t n)
{
    return relctl::Timestamp::fromMillis(n);
}

Event eventRow(std::int64_t id, std::int64_t at, const std::string& env, const std::string& operation,
               const std::optional<std::string>& reason, std::optional<std::int64_t> token,
               std::optional<std::int64_t> currentToken, std::optional<std::string> opId = {})
{
    Event e;
    e.id = id;
    e.at = ms(at);
    e.env = env;
    e.operation = operation;
    e.outcome = reason ? "rejected" : "accepted";
    e.reason = reason;
    e.token = token;
    e.currentToken = currentToken;
    e.opId = std::move(opId);
    return e;
}

// prod: j1 acquires token 1 and publishes r1 (its retried publish and a retried
// acquire without the request secret are answered from the record), releases;
// j2 does the same with r2; j0's acquire of generation 1 is refused stale;
// j3's lease (token 3) expires, its renewal is refused LEASE_EXPIRED, j4 takes
// token 4 and j3's late publish is refused LEASE_SUPERSEDED; a freeze refuses
// j4's publish. test: one lease, revoked.
History validHistory()
{
    History h;
    h.environments = {{"prod", 4, 2}, {"test", 1, std::nullopt}};
    h.leases = {
        {"prod", 1, "j1", "r1", 1, ms(1000), ms(61000), ms(5000), "released", "j1-acquire"},
        {"prod", 2, "j2", "r2", 2, ms(6000), ms(66000), ms(9000), "released", "j2-acquire"},
        {"prod", 3, "j3", "r3", 3, ms(10000), ms(11000), std::nullopt, std::nullopt, "j3-acquire"},
        {"prod", 4, "j4", "r4", 4, ms(12000), ms(72000), std::nullopt, std::nullopt, "j4-acquire"},
        {"test", 1, "t1", "tr1", 1, ms(3000), ms(63000), ms(3500), "revoked", "t1-acquire"},
    };
    h.manifests = {
        {1, "prod", "r1", 1, "j1", 1, ms(2000), "j1-publish"},
        {2, "prod", "r2", 2, "j2", 2, ms(7000), "j2-publish"},
    };
    h.events = {
        eventRow(1, 1000, "prod", "acquire", {}, 1, 1, "j1-acquire"),
        eventRow(2, 2000, "prod", "publish", {}, 1, 1, "j1-publish"),
        eventRow(3, 2500, "prod", "acquire", "REQUEST_SECRET_MISMATCH", 1, 1, "j1-acquire"),
        eventRow(4, 3000, "test", "acquire", {}, 1, 1, "t1-acquire"),
        eventRow(5, 3500, "test", "revoke", {}, 1, 1),
        eventRow(6, 5000, "prod", "release", {}, 1, 1),
        eventRow(7, 6000, "prod", "acquire", {}, 2, 2, "j2-acquire"),
        eventRow(8, 7000, "prod", "publish", {}, 2, 2, "j2-publish"),
        eventRow(9, 8000, "prod", "acquire", "STALE_GENERATION", std::nullopt, 2, "j0-acquire"),
        eventRow(10, 9000, "prod", "release", {}, 2, 2),
        eventRow(11, 10000, "prod", "acquire", {}, 3, 3, "j3-acquire"),
        eventRow(12, 11500, "prod", "renew", "LEASE_EXPIRED", 3, 3),
        eventRow(13, 12000, "prod", "acquire", {}, 4, 4, "j4-acquire"),
        eventRow(14, 12500, "prod", "publish", "LEASE_SUPERSEDED", 3, 4, "j3-publish"),
        eventRow(15, 13000, "prod", "freeze", {}, std::nullopt, 4),
        eventRow(16, 13500, "prod", "publish", "DISPATCH_FROZEN", 4, 4, "j4-publish"),
        eventRow(17, 14000, "prod", "unfreeze", {}, std::nullopt, 4),
    };
    for (Event& e : h.events) {
        // An accepted acquire or publish names its lease's generation (here, its token).
        if (e.outcome == "accepted" && (e.operation == "acquire" || e.operation == "publish"))
            e.generation = e.token;
        if (e.id >= 2 && e.env == "prod") { // the manifest current when each was recorded
            e.currentGeneration = e.id >= 8 ? 2 : 1;
            e.currentRelease = e.id >= 8 ? "r2" : "r1";
        }
    }
    h.events[8].job = "j0";
    h.events[8].release = "r0";
    h.events[8].generation = 1;
    h.events[13].generation = 3;
    h.operations = {
        {"j1-acquire", "acquire", "ok", std::nullopt, "prod", ms(1000)},
        {"j1-publish", "publish", "ok", std::nullopt, "prod", ms(2000)},
        {"t1-acquire", "acquire", "ok", std::nullopt, "test", ms(3000)},
        {"j2-acquire", "acquire", "ok", std::nullopt, "prod", ms(6000)},
        {"j2-publish", "publish", "ok", std::nullopt, "prod", ms(7000)},
        {"j0-acquire", "acquire", "refused", "STALE_GENERATION", "prod", ms(8000)},
        {"j3-acquire", "acquire", "ok", std::nullopt, "prod", ms(10000)},
        {"j4-acquire", "acquire", "ok", std::nullopt, "prod", ms(12000)},
        {"j3-publish", "publish", "refused", "LEASE_SUPERSEDED", "prod", ms(12500)},
    };
    return h;
}

LeaseRow& leaseOf(History& h, const std::string& env, std::int64_t token)
{
    for (LeaseRow& l : h.leases)
        if (l.env == env && l.token == token)
            return l;
    qFatal("no lease %s:%lld", env.c_str(), static_cast<long long>(token));
}

Event& eventOf(History& h, std::int64_t id)
{
    for (Event& e : h.events)
        if (e.id == id)
            return e;
    qFatal("no event %lld", static_cast<long long>(id));
}

// prod, with snapshots of the high-water mark: j8 publishes r8 (generation 8)
// under token 1, j9 publishes r9 (9) under token 2; alice rolls back to r8
// (token 3, a lease released at once; no manifest row). Then j9 retries its
// publish with its old handle and its acquire, and j8 its acquire: all
// refused STALE_GENERATION, since the bar stays at 9 while 8 is current.
// With `newerPublish`, j10 then acquires token 4 and publishes r10 (10).
History rolledBackHistory(bool newerPublish)
{
    History h;
    h.environments = {{"prod", newerPublish ? 4 : 3, newerPublish ? 3 : 1}};
    h.leases = {
        {"prod", 1, "j8", "r8", 8, ms(1000), ms(61000), ms(3000), "released", "j8-acquire"},
        {"prod", 2, "j9", "r9", 9, ms(4000), ms(64000), ms(6000), "released", "j9-acquire"},
        {"prod", 3, "rollback by alice", "r8", 8, ms(7000), ms(67000), ms(7000), "released", "rb-1"},
    };
    h.manifests = {
        {1, "prod", "r8", 8, "j8", 1, ms(2000), "j8-publish"},
        {2, "prod", "r9", 9, "j9", 2, ms(5000), "j9-publish"},
    };
    h.rollbacks = {{1, "prod", 3, 1, 2, ms(7000), "rb-1"}};
    struct Row
    {
        std::int64_t id;
        std::int64_t at;
        const char* operation;
        std::optional<std::string> reason;
        std::optional<std::int64_t> token;
        std::int64_t currentToken;
        std::optional<std::int64_t> generation;
        std::int64_t highWater;
        std::optional<std::int64_t> current; // current generation
        std::optional<std::string> opId;
        std::optional<std::int64_t> manifestId;
    };
    std::vector<Row> rows = {
        {1, 1000, "acquire", {}, 1, 1, 8, 0, {}, "j8-acquire", {}},
        {2, 2000, "publish", {}, 1, 1, 8, 8, 8, "j8-publish", 1},
        {3, 3000, "release", {}, 1, 1, 8, 8, 8, {}, {}},
        {4, 4000, "acquire", {}, 2, 2, 9, 8, 8, "j9-acquire", {}},
        {5, 5000, "publish", {}, 2, 2, 9, 9, 9, "j9-publish", 2},
        {6, 6000, "release", {}, 2, 2, 9, 9, 9, {}, {}},
        {7, 7000, "rollback", {}, 3, 3, 8, 9, 8, "rb-1", {}},
        {8, 8000, "publish", "STALE_GENERATION", 2, 3, 9, 9, 8, "j9-publish-again", {}},
        {9, 8500, "acquire", "STALE_GENERATION", {}, 3, 9, 9, 8, "j9-acquire-again", {}},
        {10, 9000, "acquire", "STALE_GENERATION", {}, 3, 8, 9, 8, "j8-acquire-again", {}},
    };
    h.operations = {
        {"j8-acquire", "acquire", "ok", std::nullopt, "prod", ms(1000)},
        {"j8-publish", "publish", "ok", std::nullopt, "prod", ms(2000)},
        {"j9-acquire", "acquire", "ok", std::nullopt, "prod", ms(4000)},
        {"j9-publish", "publish", "ok", std::nullopt, "prod", ms(5000)},
        {"rb-1", "rollback", "ok", std::nullopt, "prod", ms(7000)},
        {"j9-publish-again", "publish", "refused", "STALE_GENERATION", "prod", ms(8000)},
        {"j9-acquire-again", "acquire", "refused", "STALE_GENERATION", "prod", ms(8500)},
        {"j8-acquire-again", "acquire", "refused", "STALE_GENERATION", "prod", ms(9000)},
    };
    if (newerPublish) {
        h.leases.push_back(
            {"prod", 4, "j10", "r10", 10, ms(10000), ms(70000), ms(12000), "released", "j10-acquire"});
        h.manifests.push_back({3, "prod", "r10", 10, "j10", 4, ms(11000), "j10-publish"});
        rows.push_back({11, 10000, "acquire", {}, 4, 4, 10, 9, 8, "j10-acquire", {}});
        rows.push_back({12, 11000, "publish", {}, 4, 4, 10, 10, 10, "j10-publish", 3});
        rows.push_back({13, 12000, "release", {}, 4, 4, 10, 10, 10, {}, {}});
        h.operations.push_back({"j10-acquire", "acquire", "ok", std::nullopt, "prod", ms(10000)});
        h.operations.push_back({"j10-publish", "publish", "ok", std::nullopt, "prod", ms(11000)});
    }
    for (const Row& r : rows) {
        Event e = eventRow(r.id, r.at, "prod", r.operation, r.reason, r.token, r.currentToken, r.opId);
        e.generation = r.generation;
        e.release = "r" + std::to_string(r.generation.value_or(0));
        e.highWaterGeneration = r.highWater;
        e.currentGeneration = r.current;
        if (r.current)
            e.currentRelease = "r" + std::to_string(*r.current);
        e.manifestId = r.manifestId;
        h.events.push_back(e);
    }
    return h;
}

// The lease, the rollback row and the event of a further rollback on prod.
void rollBackAgain(History& h, std::int64_t token, std::int64_t restored, std::int64_t replaced,
                   std::int64_t at)
{
    h.environments[0].lastToken = token;
    h.environments[0].currentManifestId = restored;
    h.leases.push_back(
        {"prod", token, "rollback by bob", "r", 8, ms(at), ms(at + 60000), ms(at), "released", "rb-2"});
    h.rollbacks.push_back({2, "prod", token, restored, replaced, ms(at), "rb-2"});
    Event e = eventRow(100, at, "prod", "rollback", {}, token, token, "rb-2");
    e.highWaterGeneration = 9;
    h.events.push_back(e);
}

void publishAsCurrent(History& h, const ManifestRow& m)
{
    h.manifests.push_back(m);
    for (EnvironmentRow& e : h.environments)
        if (e.name == m.env)
            e.currentManifestId = m.id;
}

// rolledBackHistory(newerPublish), and canary, promoted from prod (env-set
// #20 at 9100, with a soak of `soakMs`): job c1 acquires token 1 at 9200,
// publishes (release, generation) as manifest #10 at 9500 and releases at
// 9600. Prod rolled r9 (manifest #2) back at 7000, restoring r8 (manifest #1).
History promotedHistory(const std::string& release, std::int64_t generation, std::int64_t soakMs = 1000,
                        bool newerPublish = false)
{
    History h = rolledBackHistory(newerPublish);
    h.environments.push_back({"canary", 1, 10});
    h.leases.push_back(
        {"canary", 1, "c1", release, generation, ms(9200), ms(69200), ms(9600), "released", "c1-acquire"});
    h.manifests.push_back({10, "canary", release, generation, "c1", 1, ms(9500), "c1-publish"});
    Event set = eventRow(20, 9100, "canary", "env-set", {}, std::nullopt, 0);
    set.promoteFrom = "prod";
    set.soakMs = soakMs;
    h.events.push_back(set);
    for (Event e : {eventRow(21, 9200, "canary", "acquire", {}, 1, 1, "c1-acquire"),
                    eventRow(22, 9500, "canary", "publish", {}, 1, 1, "c1-publish"),
                    eventRow(23, 9600, "canary", "release", {}, 1, 1)}) {
        e.job = "c1";
        e.release = release;
        e.generation = generation;
        if (e.operation == "publish")
            e.manifestId = 10;
        h.events.push_back(e);
    }
    h.operations.push_back({"c1-acquire", "acquire", "ok", std::nullopt, "canary", ms(9200)});
    h.operations.push_back({"c1-publish", "publish", "ok", std::nullopt, "canary", ms(9500)});
    return h;
}

// validHistory() with the login of every accepted acquire and publish.
History loggedHistory()
{
    History h = validHistory();
    for (Event& e : h.events)
        if (e.outcome == "accepted" && (e.operation == "acquire" || e.operation == "publish"))
            e.login = e.env == "test" ? "ci-test" : "ci-prod";
    return h;
}

std::string describe(const std::vector<Verdict>& verdicts)
{
    std::string out;
    for (const Verdict& v : verdicts) {
        out += (v.passed ? "PASS " : "FAIL ") + v.name + ": " + v.detail + "\n";
        for (const std::string& s : v.violations)
            out += "    " + s + "\n";
    }
    return out;
}

// Exactly `failing` fails, with a violation naming every word of `mentions`;
// every other check passes, except those named in `alsoFailing`, which fail.
void expectOnly(const std::vector<Verdict>& verdicts, const std::string& failing,
                const std::vector<std::string>& mentions, const std::vector<std::string>& alsoFailing = {})
{
    const std::string all = describe(verdicts);
    bool found = false;
    for (const Verdict& v : verdicts) {
        if (std::find(alsoFailing.begin(), alsoFailing.end(), v.name) != alsoFailing.end()) {
            QVERIFY2(!v.passed, ("expected to fail as well:\n" + all).c_str());
            continue;
        }
        if (v.name != failing) {
            QVERIFY2(v.passed, ("another check failed too:\n" + all).c_str());
            continue;
        }
        found = true;
        QVERIFY2(!v.passed, ("the check did not fail:\n" + all).c_str());
        QVERIFY(!v.violations.empty());
        QCOMPARE(v.detail.rfind(v.violations.front(), 0), std::size_t{0}); // the detail starts with the first
        QVERIFY2(v.detail.find('\n') == std::string::npos, v.detail.c_str());
        for (const std::string& word : mentions)
            QVERIFY2(v.violations.front().find(word) != std::string::npos,
                     ("\"" + word + "\" not named in: " + v.violations.front()).c_str());
    }
    QVERIFY2(found, ("no verdict " + failing + ":\n" + all).c_str());
    QVERIFY(!allPassed(verdicts));
}

} // namespace

class TestHistory final : public QObject
{
    Q_OBJECT

private slots:
    void theChecksAreNamedAndExplainedInOrder()
    {
        const std::vector<std::string> names{"fencing-tokens-increase",    "generations-advance",
                                             "freshness-bar-kept",         "publish-under-live-lease",
                                             "refusals-explained",         "operations-applied-once",
                                             "leases-never-overlap",       "promotion-path-kept",
                                             "publish-by-acquiring-login", "expected-current-manifest"};
        QCOMPARE(checks().size(), names.size());
        for (std::size_t i = 0; i < names.size(); ++i) {
            QCOMPARE(checks()[i].name, names[i]);
            QVERIFY(!checks()[i].meaning.empty());
        }
        const auto verdicts = check(validHistory(), {"prod", "r2"});
        QCOMPARE(verdicts.size(), names.size());
        for (std::size_t i = 0; i < names.size(); ++i)
            QCOMPARE(verdicts[i].name, names[i]);
        // Without an expected release there is nothing to expect.
        QCOMPARE(check(validHistory()).size(), names.size() - 1);
    }

    void aValidHistoryPassesEveryCheck()
    {
        const auto verdicts = check(validHistory(), {"prod", "r2"});
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        for (const Verdict& v : verdicts) {
            QVERIFY(v.violations.empty());
            QVERIFY(!v.detail.empty());
        }
        // The details count what was judged: not vacuous.
        QVERIFY2(verdicts[0].detail.rfind("5 leases", 0) == 0, verdicts[0].detail.c_str());
        QVERIFY2(verdicts[2].detail.rfind("7 accepted acquires and publishes", 0) == 0,
                 verdicts[2].detail.c_str());
        QVERIFY2(verdicts[3].detail.rfind("2 serialized manifests", 0) == 0, verdicts[3].detail.c_str());
        QVERIFY2(verdicts[4].detail.rfind("5 rejected events", 0) == 0, verdicts[4].detail.c_str());
    }

    void anEmptyHistoryPasses() { QVERIFY(allPassed(check(History{}))); }

    void aPublishUnderASupersededTokenFails()
    {
        History h = validHistory();
        leaseOf(h, "prod", 3).expiresAt = ms(20000); // still unexpired: only token 4 makes it stale
        publishAsCurrent(h, {3, "prod", "r3", 3, "j3", 3, ms(12500), std::nullopt});
        // Token 4 was then granted while token 3 was live, too.
        expectOnly(check(h), "publish-under-live-lease", {"#3", "superseded", "prod:4"},
                   {"leases-never-overlap"});
    }

    void aPublishAfterExpiryFails()
    {
        History h = validHistory();
        publishAsCurrent(h, {3, "prod", "r3", 3, "j3", 3, ms(11500), std::nullopt});
        expectOnly(check(h), "publish-under-live-lease", {"#3", "500 ms after", "expired"});
    }

    void aPublishAfterReleaseFails()
    {
        History h = validHistory();
        h.manifests[1].publishedAt = ms(9500); // lease 2 was released at 9000
        expectOnly(check(h), "publish-under-live-lease", {"#2", "released"});
    }

    void aPublishUnlikeItsLeaseFails()
    {
        History h = validHistory();
        h.manifests[1].release = "r2-hotfix";
        expectOnly(check(h), "publish-under-live-lease", {"#2", "differs"});
    }

    void unserializedManifestsAreCountedNotJudged()
    {
        History h = validHistory();
        publishAsCurrent(h, {3, "prod", "r5", 5, "j5", std::nullopt, ms(30000), "j5-publish"});
        const auto verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[3].detail.find("1 unserialized") != std::string::npos, verdicts[3].detail.c_str());
    }

    void aGenerationGoingBackwardsFails()
    {
        History h = validHistory();
        leaseOf(h, "prod", 4).generation = 1;
        publishAsCurrent(h, {3, "prod", "r4", 1, "j4", 4, ms(13000), std::nullopt});
        expectOnly(check(h), "generations-advance", {"#3", "generation 1", "#2"});
    }

    // Rollbacks: the current manifest may be an older one, the lease of a
    // rollback has no acquire event and no manifest, and stale retries are
    // explained by the high-water mark, not by the current manifest.
    void aRolledBackHistoryPassesEveryCheck()
    {
        for (const bool newer : {false, true}) {
            const auto verdicts = check(rolledBackHistory(newer), {"prod", newer ? "r10" : "r8"});
            QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
            QVERIFY2(verdicts[0].detail.find("1 by rollbacks") != std::string::npos,
                     verdicts[0].detail.c_str());
            QVERIFY2(verdicts[1].detail.find("1 rollbacks") != std::string::npos, verdicts[1].detail.c_str());
            const std::string bar =
                newer ? "6 accepted acquires and publishes" : "4 accepted acquires and publishes";
            QVERIFY2(verdicts[2].detail.rfind(bar, 0) == 0, verdicts[2].detail.c_str());
            QVERIFY2(verdicts[2].detail.find(newer ? "13 recorded high-water marks"
                                                   : "10 recorded high-water marks") != std::string::npos,
                     verdicts[2].detail.c_str());
            QVERIFY2(verdicts[4].detail.rfind("3 rejected events", 0) == 0, verdicts[4].detail.c_str());
        }
    }

    void aStaleRefusalAboveTheHighWaterMarkFails()
    {
        History h = rolledBackHistory(false);
        eventOf(h, 9).generation = 10;
        expectOnly(check(h), "refusals-explained",
                   {"#9", "generation 10", "highest generation accepted was 9"});
    }

    // Events recorded before migration 0006 have no high-water mark: the
    // current generation explains them, and after a rollback it cannot.
    void aStaleRefusalWithoutAHighWaterMarkFallsBackToTheCurrentGeneration()
    {
        History h = rolledBackHistory(false);
        eventOf(h, 9).highWaterGeneration.reset();
        expectOnly(check(h), "refusals-explained", {"#9", "generation 9", "only 8 was current"});
        eventOf(h, 9).generation = 8;
        QVERIFY(allPassed(check(h)));
    }

    void anAcquireAtTheBarAfterARollbackFails()
    {
        History h = rolledBackHistory(false);
        h.environments[0].lastToken = 4;
        h.leases.push_back(
            {"prod", 4, "j9", "r9", 9, ms(10000), ms(70000), std::nullopt, std::nullopt, "j9-acquire-3"});
        Event e = eventRow(11, 10000, "prod", "acquire", {}, 4, 4, "j9-acquire-3");
        e.generation = 9;
        e.highWaterGeneration = 9;
        h.events.push_back(e);
        expectOnly(check(h), "freshness-bar-kept",
                   {"#11", "accepted generation 9", "generation 9 was already"});
    }

    // A stale publish accepted after a rollback: its manifest does not
    // advance either.
    void aPublishAtTheBarAfterARollbackFails()
    {
        History h = rolledBackHistory(true);
        leaseOf(h, "prod", 4).generation = 9;
        h.manifests[2].generation = 9;
        eventOf(h, 11).generation = 9;
        eventOf(h, 12).generation = 9;
        eventOf(h, 12).highWaterGeneration = 9;
        eventOf(h, 13).highWaterGeneration = 9;
        expectOnly(check(h), "freshness-bar-kept", {"#11", "generation 9"}, {"generations-advance"});
    }

    // The protocol bug the high-water mark exists for: a rollback that
    // lowered the bar to the restored generation.
    void aRollbackThatLowersTheRecordedBarFails()
    {
        History h = rolledBackHistory(false);
        for (const std::int64_t id : {7, 8, 9, 10})
            eventOf(h, id).highWaterGeneration = 8;
        expectOnly(check(h), "freshness-bar-kept", {"#7", "high-water generation 8", "was 9"},
                   {"refusals-explained"});
    }

    void anOlderCurrentManifestWithoutARollbackFails()
    {
        History h = rolledBackHistory(false);
        h.rollbacks.clear();
        expectOnly(check(h), "generations-advance", {"prod", "#1", "not its newest", "#2"});
    }

    void aRestoredManifestAfterANewerPublishFails()
    {
        History h = rolledBackHistory(true);
        h.environments[0].currentManifestId = 1;
        expectOnly(check(h), "generations-advance", {"#1", "not its newest", "#3", "no rollback came after"});
    }

    void theNewestManifestAfterARollbackFails()
    {
        History h = rolledBackHistory(false);
        h.environments[0].currentManifestId = 2;
        expectOnly(check(h), "generations-advance", {"#2", "not manifest #1", "rollback #1"});
    }

    void aRollbackToAnotherEnvironmentsManifestFails()
    {
        History h = rolledBackHistory(false);
        h.environments.push_back({"test", 0, 3});
        h.manifests.push_back({3, "test", "t1", 1, "t1", std::nullopt, ms(500), std::nullopt});
        h.rollbacks[0].restoredManifestId = 3;
        h.environments[0].currentManifestId = 3;
        expectOnly(check(h), "generations-advance", {"rollback #1", "#3 on test", "prod's own"});
    }

    // A rollback may restore any manifest accepted before it, also one newer
    // than the current one after an earlier rollback (undoing that one)...
    void undoingARollbackPasses()
    {
        History h = rolledBackHistory(false);
        rollBackAgain(h, 4, 2, 1, 10000);
        const auto verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
    }

    // ...but never one published after it, nor the one it replaces.
    void aRollbackToALaterOrTheSameManifestFails()
    {
        History h = rolledBackHistory(false);
        h.manifests.push_back(
            {3, "prod", "r10", 10, "j10", std::nullopt, ms(12000), std::nullopt}); // unserialized
        rollBackAgain(h, 4, 3, 1, 10000);
        expectOnly(check(h), "generations-advance", {"rollback #2", "published after it"});
        History same = rolledBackHistory(false);
        rollBackAgain(same, 4, 1, 1, 10000);
        expectOnly(check(same), "generations-advance", {"rollback #2", "also replaced"});
    }

    void aRollbackThatReplacesWhatWasNotCurrentFails()
    {
        History h = rolledBackHistory(false);
        rollBackAgain(h, 4, 1, 2, 10000);
        expectOnly(check(h), "generations-advance",
                   {"rollback #2", "replaces manifest #2", "#1 was current"});
    }

    void aRollbackLeaseThatStaysLiveFails()
    {
        History h = rolledBackHistory(false);
        leaseOf(h, "prod", 3).endedAt.reset();
        leaseOf(h, "prod", 3).endReason.reset();
        expectOnly(check(h), "fencing-tokens-increase", {"prod:3", "rollback", "not released at once"});
    }

    void aLeaseWithoutItsGrantingEventFails()
    {
        History h = rolledBackHistory(false);
        h.events.erase(
            std::remove_if(h.events.begin(), h.events.end(), [](const Event& e) { return e.id == 7; }),
            h.events.end());
        expectOnly(check(h), "fencing-tokens-increase", {"prod:3", "no accepted acquire or rollback event"});
    }

    void aPublishUnderARollbacksLeaseFails()
    {
        History h = rolledBackHistory(false);
        publishAsCurrent(h, {3, "prod", "r8", 10, "rollback by alice", 3, ms(7000), std::nullopt});
        leaseOf(h, "prod", 3).generation = 10;
        expectOnly(check(h), "publish-under-live-lease", {"#3", "lease of a rollback", "prod:3"});
    }

    // A window after the rollback: its bar comes from the context manifests
    // (whose publish events are outside it), not from the restored one.
    void aWindowAfterARollbackKeepsTheBarOfItsContext()
    {
        History h = rolledBackHistory(true);
        h.since = ms(7500);
        h.events.erase(
            std::remove_if(h.events.begin(), h.events.end(), [](const Event& e) { return e.at < ms(7500); }),
            h.events.end());
        h.leases.erase(h.leases.begin(), h.leases.begin() + 2);
        auto verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[2].detail.rfind("2 accepted acquires and publishes", 0) == 0,
                 verdicts[2].detail.c_str());

        eventOf(h, 11).generation = 9;
        leaseOf(h, "prod", 4).generation = 9;
        h.events.pop_back(); // and nothing published
        h.events.pop_back();
        h.manifests.pop_back();
        h.environments[0].currentManifestId = 1;
        expectOnly(check(h), "freshness-bar-kept",
                   {"#11", "accepted generation 9", "generation 9 was already"});
    }

    void aCurrentManifestThatIsNotTheNewestFails()
    {
        History h = validHistory();
        h.environments[0].currentManifestId = 1;
        expectOnly(check(h), "generations-advance", {"prod", "#1", "#2"});
    }

    void aTokenGoingBackwardsFails()
    {
        History h = validHistory();
        leaseOf(h, "prod", 4).acquiredAt = ms(9500); // before token 3, acquired at 10000
        expectOnly(check(h), "fencing-tokens-increase", {"prod:4", "500 ms before", "prod:3"});
    }

    void anAcquireEventWithALowerTokenFails()
    {
        History h = validHistory();
        eventOf(h, 13).token = 2;
        // Token 4 has lost its granting event, and the event's own violation follows.
        const auto verdicts = check(h);
        expectOnly(verdicts, "fencing-tokens-increase", {"prod:4", "no accepted acquire"});
        const auto& violations = verdicts[0].violations;
        QVERIFY2(std::any_of(violations.begin(), violations.end(),
                             [](const std::string& v) {
                                 return v.find("#13") != std::string::npos &&
                                        v.find("token 2") != std::string::npos &&
                                        v.find("#11") != std::string::npos;
                             }),
                 describe(verdicts).c_str());
    }

    void aTokenAboveTheLastIssuedOneFails()
    {
        History h = validHistory();
        h.environments[0].lastToken = 3;
        expectOnly(check(h), "fencing-tokens-increase", {"prod:4", "last issued token 3"});
    }

    void aRefusedOperationWithoutItsEventFails()
    {
        History h = validHistory();
        h.events.erase(
            std::remove_if(h.events.begin(), h.events.end(), [](const Event& e) { return e.id == 9; }),
            h.events.end());
        expectOnly(check(h), "refusals-explained",
                   {"j0-acquire", "STALE_GENERATION", "without a rejected event"});
    }

    void aRejectedEventWithoutTheCurrentTokenFails()
    {
        History h = validHistory();
        eventOf(h, 12).currentToken.reset();
        expectOnly(check(h), "refusals-explained", {"#12", "LEASE_EXPIRED", "current token"});
    }

    void aStaleRefusalWithoutTheCurrentGenerationFails()
    {
        History h = validHistory();
        eventOf(h, 9).currentGeneration.reset();
        expectOnly(check(h), "refusals-explained", {"#9", "current generation"});
    }

    void aRejectedEventWithoutAReasonFails()
    {
        History h = validHistory();
        eventOf(h, 16).reason.reset();
        expectOnly(check(h), "refusals-explained", {"#16", "without a reason"});
    }

    void anOperationAppliedTwiceFails()
    {
        History h = validHistory();
        // A retry of j2's publish that was applied again instead of answered.
        h.events.push_back(eventRow(18, 14500, "prod", "publish", {}, 2, 4, "j2-publish"));
        h.events.back().generation = 2;
        // Applied again, it also accepted generation 2 once more.
        expectOnly(check(h), "operations-applied-once", {"j2-publish", "#8", "#18"}, {"freshness-bar-kept"});
    }

    // Only the newest token can be live: a grant needs the lease of the
    // token before it ended or expired (at the same millisecond counts).
    void aLeaseGrantedWhileTheOneBeforeWasLiveFails()
    {
        History h = validHistory();
        leaseOf(h, "prod", 3).expiresAt = ms(12600); // token 4 came at 12000
        expectOnly(check(h), "leases-never-overlap",
                   {"prod:4", "event #13", "prod:3", "event #11", "600 ms before it expired", "never ended"});

        h = validHistory();
        leaseOf(h, "prod", 2).endedAt = ms(10500); // token 3 came at 10000
        expectOnly(check(h), "leases-never-overlap",
                   {"prod:3", "prod:2 (job j2)", "500 ms before it was released"});

        h = validHistory();
        leaseOf(h, "prod", 3).expiresAt = ms(12000);
        leaseOf(h, "prod", 2).endedAt = ms(10000);
        const auto verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[6].detail.rfind("5 leases", 0) == 0, verdicts[6].detail.c_str());
    }

    void aPromotedPublishOfWhatUpstreamKeptPasses()
    {
        const auto verdicts = check(promotedHistory("r8", 8));
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[7].detail.rfind("1 publishes on promoted environments", 0) == 0,
                 verdicts[7].detail.c_str());
        QVERIFY2(verdicts[7].detail.find("2 publishes on environments promoted from none") !=
                     std::string::npos,
                 verdicts[7].detail.c_str());
    }

    // The write-time gate's rule (relctl.promotion_refusal), after the fact.
    void aPromotedPublishOfWhatUpstreamRolledBackFails()
    {
        expectOnly(check(promotedHistory("r9", 9)), "promotion-path-kept",
                   {"event #22", "job c1", "manifest #10", "r9 generation 9 on canary", "promoted from prod",
                    "2500 ms after rollback #1 on prod", "replaced manifest #2", "rb-1"});

        // A later rollback that restored it upstream makes it promotable again.
        History h = promotedHistory("r9", 9);
        rollBackAgain(h, 4, 2, 1, 9300);
        auto verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        // ... unless that came after the publish.
        h = promotedHistory("r9", 9);
        rollBackAgain(h, 4, 2, 1, 9800);
        verdicts = check(h);
        QVERIFY2(!verdicts[7].passed && verdicts[7].detail.find("rollback #1") != std::string::npos,
                 describe(verdicts).c_str());
    }

    void aPromotedPublishUpstreamNeverAcceptedOrNotSoakedFails()
    {
        expectOnly(check(promotedHistory("r7", 7)), "promotion-path-kept",
                   {"#22", "r7 generation 7 on canary", "no manifest of it was ever accepted"});
        expectOnly(check(promotedHistory("r8", 8, 8000)), "promotion-path-kept",
                   {"#22", "7500 ms after manifest #1 on prod", "soak of 8000 ms"});
        // Prod accepts r10 at 11000, after canary took it.
        expectOnly(check(promotedHistory("r10", 10, 0, true)), "promotion-path-kept",
                   {"#22", "1500 ms before manifest #3 on prod"});
    }

    // The path in force when the publish passed the gate, from the trail.
    void aClearedPromotionPathIsNotJudged()
    {
        History h = promotedHistory("r9", 9);
        const auto set = std::find_if(h.events.begin(), h.events.end(), [](auto& e) { return e.id == 20; });
        Event cleared = *set;
        cleared.promoteFrom = "";
        set->id = 19;
        h.events.insert(set + 1, cleared);
        auto verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[7].detail.rfind("0 publishes on promoted environments", 0) == 0,
                 verdicts[7].detail.c_str());
        // Judged with the window's environment only, from the path set before it.
        h = promotedHistory("r9", 9);
        h.env = "canary";
        h.since = ms(9400);
        QVERIFY(!check(h)[7].passed);
        h.env = "prod";
        QVERIFY(check(h)[7].passed);
    }

    void aPublishByAnotherLoginThanTheAcquirersFails()
    {
        auto verdicts = check(loggedHistory());
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[8].detail.rfind("2 accepted publishes", 0) == 0, verdicts[8].detail.c_str());

        History h = loggedHistory();
        eventOf(h, 8).login = "mallory";
        expectOnly(check(h), "publish-by-acquiring-login",
                   {"event #8", "login mallory", "prod:2", "event #7", "login ci-prod", "j2-publish"});

        // A grant whose requester's login was not kept is not judged.
        eventOf(h, 7).login.reset();
        verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[8].detail.find("1 with an acquirer's login not kept") != std::string::npos,
                 verdicts[8].detail.c_str());
    }

    void theWrongCurrentManifestFails()
    {
        expectOnly(check(validHistory(), {"prod", "r1"}), "expected-current-manifest", {"prod", "#2", "r1"});
        expectOnly(check(validHistory(), {"test", "r1"}), "expected-current-manifest",
                   {"test", "no current"});
    }

    // With an environment, only its rows are judged.
    void onlyTheNamedEnvironmentIsJudged()
    {
        History h = validHistory();
        leaseOf(h, "test", 1).token = 7; // above test's last token
        QVERIFY(!allPassed(check(h)));
        h.env = "prod";
        QVERIFY(allPassed(check(h)));
    }

    // With since, rows before it are context: a violation there is not this
    // window's, but the first row after it is judged against it.
    void sinceJudgesOnlyTheWindowAgainstItsContext()
    {
        History h = validHistory();
        leaseOf(h, "prod", 2).acquiredAt = ms(500); // before token 1
        QVERIFY(!allPassed(check(h)));
        h.since = ms(9500);
        auto verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[0].detail.rfind("2 leases", 0) == 0, verdicts[0].detail.c_str());

        History g = validHistory();
        g.since = ms(12000);
        leaseOf(g, "prod", 4).generation = 1;
        publishAsCurrent(g, {3, "prod", "r4", 1, "j4", 4, ms(13000), std::nullopt});
        expectOnly(check(g), "generations-advance", {"#3", "#2"});
    }
};

QTEST_GUILESS_MAIN(TestHistory)
#include "test_history.moc"
