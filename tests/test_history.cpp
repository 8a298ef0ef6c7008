// The history checker's checks (relctl/history.h) on fabricated histories, no
// database: one valid history on which every check passes, then for each
// check a history that breaks exactly that invariant, on which that check
// fails, names the rows involved, and every other check still passes.

#include "relctl/history.h"

#include <QtTest>
#include <algorithm>

using namespace relctl::history;

namespace {

EventRow eventRow(std::int64_t id, EpochMs at, const std::string& env, const std::string& operation,
                  const std::optional<std::string>& reason, std::optional<std::int64_t> token,
                  std::optional<std::int64_t> currentToken, std::optional<std::string> opId = {})
{
    EventRow e;
    e.id = id;
    e.at = at;
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
        {"prod", 1, "j1", "r1", 1, 1000, 61000, 5000, "released", "j1-acquire"},
        {"prod", 2, "j2", "r2", 2, 6000, 66000, 9000, "released", "j2-acquire"},
        {"prod", 3, "j3", "r3", 3, 10000, 11000, std::nullopt, std::nullopt, "j3-acquire"},
        {"prod", 4, "j4", "r4", 4, 12000, 72000, std::nullopt, std::nullopt, "j4-acquire"},
        {"test", 1, "t1", "tr1", 1, 3000, 63000, 3500, "revoked", "t1-acquire"},
    };
    h.manifests = {
        {1, "prod", "r1", 1, "j1", 1, 2000, "j1-publish", false},
        {2, "prod", "r2", 2, "j2", 2, 7000, "j2-publish", false},
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
    for (EventRow& e : h.events) {
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
        {"j1-acquire", "acquire", "ok", std::nullopt, "prod", 1000},
        {"j1-publish", "publish", "ok", std::nullopt, "prod", 2000},
        {"t1-acquire", "acquire", "ok", std::nullopt, "test", 3000},
        {"j2-acquire", "acquire", "ok", std::nullopt, "prod", 6000},
        {"j2-publish", "publish", "ok", std::nullopt, "prod", 7000},
        {"j0-acquire", "acquire", "refused", "STALE_GENERATION", "prod", 8000},
        {"j3-acquire", "acquire", "ok", std::nullopt, "prod", 10000},
        {"j4-acquire", "acquire", "ok", std::nullopt, "prod", 12000},
        {"j3-publish", "publish", "refused", "LEASE_SUPERSEDED", "prod", 12500},
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

EventRow& eventOf(History& h, std::int64_t id)
{
    for (EventRow& e : h.events)
        if (e.id == id)
            return e;
    qFatal("no event %lld", static_cast<long long>(id));
}

void publishAsCurrent(History& h, const ManifestRow& m)
{
    h.manifests.push_back(m);
    for (EnvironmentRow& e : h.environments)
        if (e.name == m.env)
            e.currentManifestId = m.id;
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
// every other check passes.
void expectOnly(const std::vector<Verdict>& verdicts, const std::string& failing,
                const std::vector<std::string>& mentions)
{
    const std::string all = describe(verdicts);
    bool found = false;
    for (const Verdict& v : verdicts) {
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
        const std::vector<std::string> names{"fencing-tokens-increase",  "generations-advance",
                                             "publish-under-live-lease", "refusals-explained",
                                             "operations-applied-once",  "expected-current-manifest"};
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
        QVERIFY2(verdicts[2].detail.rfind("2 serialized manifests", 0) == 0, verdicts[2].detail.c_str());
        QVERIFY2(verdicts[3].detail.rfind("5 rejected events", 0) == 0, verdicts[3].detail.c_str());
    }

    void anEmptyHistoryPasses() { QVERIFY(allPassed(check(History{}))); }

    void aPublishUnderASupersededTokenFails()
    {
        History h = validHistory();
        leaseOf(h, "prod", 3).expiresAt = 20000; // still unexpired: only token 4 makes it stale
        publishAsCurrent(h, {3, "prod", "r3", 3, "j3", 3, 12500, std::nullopt, false});
        expectOnly(check(h), "publish-under-live-lease", {"#3", "superseded", "prod:4"});
    }

    void aPublishAfterExpiryFails()
    {
        History h = validHistory();
        publishAsCurrent(h, {3, "prod", "r3", 3, "j3", 3, 11500, std::nullopt, false});
        expectOnly(check(h), "publish-under-live-lease", {"#3", "500 ms after", "expired"});
    }

    void aPublishAfterReleaseFails()
    {
        History h = validHistory();
        h.manifests[1].publishedAt = 9500; // lease 2 was released at 9000
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
        publishAsCurrent(h, {3, "prod", "r5", 5, "j5", std::nullopt, 30000, "j5-publish", false});
        const auto verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[2].detail.find("1 unserialized") != std::string::npos, verdicts[2].detail.c_str());
    }

    void aGenerationGoingBackwardsFails()
    {
        History h = validHistory();
        leaseOf(h, "prod", 4).generation = 1;
        publishAsCurrent(h, {3, "prod", "r4", 1, "j4", 4, 13000, std::nullopt, false});
        expectOnly(check(h), "generations-advance", {"#3", "generation 1", "#2"});
    }

    void aRecordedRollbackMayRestoreAnOlderGeneration()
    {
        History h = validHistory();
        leaseOf(h, "prod", 4).generation = 1;
        publishAsCurrent(h, {3, "prod", "r4", 1, "j4", 4, 13000, std::nullopt, true});
        QVERIFY(allPassed(check(h)));
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
        leaseOf(h, "prod", 4).acquiredAt = 9500; // before token 3, acquired at 10000
        expectOnly(check(h), "fencing-tokens-increase", {"prod:4", "500 ms before", "prod:3"});
    }

    void anAcquireEventWithALowerTokenFails()
    {
        History h = validHistory();
        eventOf(h, 13).token = 2;
        expectOnly(check(h), "fencing-tokens-increase", {"#13", "token 2", "#11"});
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
            std::remove_if(h.events.begin(), h.events.end(), [](const EventRow& e) { return e.id == 9; }),
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
        expectOnly(check(h), "operations-applied-once", {"j2-publish", "#8", "#18"});
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
        leaseOf(h, "prod", 2).acquiredAt = 500; // before token 1
        QVERIFY(!allPassed(check(h)));
        h.since = 9500;
        auto verdicts = check(h);
        QVERIFY2(allPassed(verdicts), describe(verdicts).c_str());
        QVERIFY2(verdicts[0].detail.rfind("2 leases", 0) == 0, verdicts[0].detail.c_str());

        History g = validHistory();
        g.since = 12000;
        leaseOf(g, "prod", 4).generation = 1;
        publishAsCurrent(g, {3, "prod", "r4", 1, "j4", 4, 13000, std::nullopt, false});
        expectOnly(check(g), "generations-advance", {"#3", "#2"});
    }
};

QTEST_GUILESS_MAIN(TestHistory)
#include "test_history.moc"
