#include "relctl/demo.h"

#include "relctl/database.h"
#include "relctl/embedded.h"

#include <map>
#include <memory>
#include <stdexcept>

namespace relctl {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;
using Time = Clock::time_point;

// The people of the demo, each with a login of their own (approvals count
// once per login, and the requester's cannot approve), and the login every
// pipeline's job runs as.
const std::vector<std::string> kPeople{"alice", "bob", "carol", "dave"};
const std::string kJobs = "ci";

// Pipelines of the week before today use generations 1 to 30 (day i of the
// six: 5i + 1 to 5i + 5; a pipeline that never deploys leaves a gap, as failed
// pipelines do); today's use 31 to 45, whatever the day of the week.
constexpr std::int64_t kToday = 30;

std::string job(std::int64_t generation)
{
    return "pipeline-" + std::to_string(100 + generation);
}

std::string label(std::int64_t generation)
{
    return "v1." + std::to_string(generation);
}

// A manifest that changes in more than its image from release to release,
// so the console's manifest diffs have something to show.
nlohmann::json manifest(std::int64_t generation)
{
    nlohmann::json m{{"image", "registry.example/app:" + label(generation)},
                     {"replicas", generation >= kToday + 13 ? 4 : 3},
                     {"features", {{"checkout_v2", generation >= kToday + 13}}}};
    if (generation >= kToday + 14)
        m["migrations"] = "0042_orders_index";
    return m;
}

// Writes the demo's week through the protocol itself (no SQL), each step at
// the time the story gives it: the server's clock is set to it just before
// (EmbeddedCluster::setClock), so every timestamp is still the server's own.
class Story
{
public:
    Story(relctl::EmbeddedCluster& cluster, Time end) : m_cluster(cluster), m_end(end) {}

    void tell()
    {
        // The finale takes the last six hours; the week's ordinary days end
        // on the day before it (or on its own day, when it starts late
        // enough for a whole working day to fit before it).
        const Time finale = m_end - 6h;
        const auto lastDay = std::chrono::floor<std::chrono::days>(finale - 20h);
        setUp(lastDay - std::chrono::days(5) + 8h + 30min);
        for (int i = 0; i < 6; ++i)
            ordinaryDay(i, lastDay - std::chrono::days(5 - i));
        today(finale);
    }

private:
    relctl::EmbeddedCluster& m_cluster;
    Time m_end;
    Time m_now{};
    std::map<std::string, std::unique_ptr<relctl::Database>> m_logins;
    std::vector<std::int64_t> m_prod; // the generations prod accepted, in order
    bool m_hadIncident = false;

    relctl::Database& as(const std::string& login)
    {
        auto& db = m_logins[login];
        if (!db)
            // A fabricated history need not wait for the disk at every commit.
            db = std::make_unique<relctl::Database>(m_cluster.conninfoAs(login) +
                                                    " options='-c synchronous_commit=off'");
        return *db;
    }

    // The server's clock reads `t` from now on. Steps are at least seconds
    // apart, far more than a step takes, so time only moves forward.
    void at(Time t)
    {
        if (t <= m_now)
            throw std::logic_error("the demo's story goes back in time");
        m_now = t;
        m_cluster.setClock(t);
    }

    relctl::Handle acquire(Time t, const std::string& env, std::int64_t generation,
                           std::chrono::milliseconds ttl = 20min)
    {
        at(t);
        relctl::AcquireRequest r;
        r.env = env;
        r.job = job(generation);
        r.release = label(generation);
        r.generation = generation;
        r.ttl = ttl;
        relctl::Outcome o = as(kJobs).acquire(r);
        return o.accepted() ? *relctl::parseHandle(o.reply<relctl::Grant>().handle) : relctl::Handle{};
    }

    bool publish(Time t, const relctl::Handle& h, std::int64_t generation)
    {
        at(t);
        return as(kJobs).publish({h, manifest(generation), {}}).accepted();
    }

    void release(Time t, const relctl::Handle& h)
    {
        at(t);
        as(kJobs).release(h);
    }

    // A deploy that takes `minutes`: the lease held that long, then the
    // manifest published and the lease released.
    void deploy(Time t, const std::string& env, std::int64_t generation, int minutes = 6)
    {
        const relctl::Handle h = acquire(t, env, generation);
        if (h.token == 0)
            return;
        if (publish(t + std::chrono::minutes(minutes), h, generation) && env == "prod")
            m_prod.push_back(generation);
        release(t + std::chrono::minutes(minutes) + 20s, h);
    }

    std::int64_t promotionId(const std::string& env, std::int64_t generation)
    {
        for (const relctl::Promotion& p : as("alice").promotions(env, true).promotions)
            if (p.generation == generation)
                return p.id;
        return 0;
    }

    void request(Time t, const std::string& by, std::int64_t generation, const std::string& reason)
    {
        at(t);
        as(by).requestPromotion({"prod", label(generation), generation, by, reason});
    }

    void decide(Time t, const std::string& by, std::int64_t generation, bool approve,
                const std::optional<std::string>& reason = std::nullopt)
    {
        at(t);
        as(by).decidePromotion(promotionId("prod", generation), approve, by, reason);
    }

    // prod takes a release staging accepted at least two hours before, once
    // two people other than the one who asked approved it.
    void promoteToProd(Time t, std::int64_t generation, const std::string& requester,
                       const std::string& first, const std::string& second)
    {
        request(t, requester, generation, "daily release");
        decide(t + 18min, first, generation, true, "dashboards green on staging");
        decide(t + 41min, second, generation, true);
        deploy(t + 55min, "prod", generation, 11);
    }

    void setUp(Time t)
    {
        at(t);
        relctl::Database& alice = as("alice");
        alice.addEnvironment({"test", 15min, 1h});
        alice.addEnvironment({"staging", 15min, 1h});
        alice.addEnvironment({"prod", 20min, 1h});
        at(t + 4min);
        alice.setEnvironment(
            {"staging", "newest", "approval", std::nullopt, "test", std::nullopt, std::nullopt});
        at(t + 9min);
        alice.setEnvironment({"prod", std::nullopt, std::nullopt, std::nullopt, "staging", 2h, 2});
    }

    // An ordinary day: releases into test through the day, one into staging
    // in the morning and another in the afternoon, yesterday's staging
    // release (soaked) promoted to prod after lunch with two approvals. Some
    // days have a race, an expired lease, an evening hotfix, a freeze with a
    // rollback; weekends only a fix or two in test.
    void ordinaryDay(int i, std::chrono::sys_days day)
    {
        const std::int64_t b = std::int64_t{5} * i;
        const Time d = day;
        const std::chrono::weekday weekday(day);
        if (weekday == std::chrono::Saturday || weekday == std::chrono::Sunday) {
            if (weekday == std::chrono::Sunday)
                deploy(d + 11h + 14min, "test", b + 1, 4);
            return;
        }
        deploy(d + 9h + 5min, "test", b + 1);
        deploy(d + 10h + 20min, "staging", b + 1, 8);
        if (i == 2) {
            // The runner of b + 2 dies holding test's lease; the lease runs
            // out, and when the job comes back its write is refused.
            const relctl::Handle lost = acquire(d + 11h + 40min, "test", b + 2, 10min);
            publish(d + 12h + 31min, lost, b + 2);
        } else {
            deploy(d + 11h + 40min, "test", b + 2, 7);
        }
        const bool even = i % 2 == 0;
        if (even) {
            // A race: pipelines b + 3 and b + 4 start together; the newer one
            // deploys, and the older one is refused when it gets its turn.
            const relctl::Handle newer = acquire(d + 13h + 10min, "test", b + 4);
            acquire(d + 13h + 10min + 6s, "test", b + 3); // busy
            publish(d + 13h + 17min, newer, b + 4);
            release(d + 13h + 17min + 20s, newer);
            acquire(d + 13h + 19min, "test", b + 3); // STALE_GENERATION
        } else {
            deploy(d + 13h + 10min, "test", b + 3);
        }
        // Promoted the same day: staging accepted it at 10:28, and the soak is two hours.
        promoteToProd(d + 14h + 5min, b + 1, even ? "alice" : "dave", "bob", even ? "carol" : "alice");
        // On the first weekday from the fourth day on (of three, one is).
        const bool incident = !m_hadIncident && i >= 3 && m_prod.size() >= 2;
        if (incident) {
            m_hadIncident = true;
            // The release makes checkout fail: prod is frozen and rolled back
            // to the release before, and unfrozen once the error rate is down.
            at(d + 15h + 32min);
            as("dave").freeze("prod", "dave", "checkout errors after " + label(m_prod.back()));
            at(d + 15h + 38min);
            relctl::RollbackRequest back;
            back.env = "prod";
            back.toGeneration = m_prod[m_prod.size() - 2];
            back.by = "dave";
            back.reason = "error rate at 4% since " + label(m_prod.back());
            as("dave").rollback(back);
        }
        const std::int64_t newest = even ? b + 4 : b + 3; // in test
        if (i == 4) {
            // staging's deploy hangs; its lease expires before the job lets go.
            const relctl::Handle hung = acquire(d + 16h + 30min, "staging", newest, 10min);
            release(d + 17h + 3min, hung);
        } else {
            deploy(d + 16h + 30min, "staging", newest, 9);
        }
        if (!even)
            deploy(d + 16h + 40min, "test", b + 4);
        else
            deploy(d + 17h + 20min, "test", b + 5);
        if (incident) {
            at(d + 17h + 45min);
            as("alice").unfreeze("prod", "alice", "error rate back to normal after the rollback");
        }
        if (!even)
            deploy(d + 19h + 42min, "test", b + 5, 5); // an evening hotfix
    }

    // Today: the incident the console opens on, a revoke, a rollback on
    // staging and the promotion gate's refusals, two requests open for prod,
    // a job deploying to test right now, and prod frozen.
    void today(Time t0)
    {
        const std::int64_t g = kToday;
        deploy(t0, "test", g + 8);
        deploy(t0 + 20min, "test", g + 9);
        deploy(t0 + 45min, "staging", g + 8);
        deploy(t0 + 1h, "staging", g + 9);

        // A runaway holder revoked by a release manager; its job comes back
        // to publish: refused LEASE_REVOKED, traced to them and their reason.
        deploy(t0 + 1h + 20min, "test", g + 10, 3);
        deploy(t0 + 1h + 25min, "test", g + 11, 3);
        const relctl::Handle stuck = acquire(t0 + 1h + 35min, "staging", g + 10);
        at(t0 + 1h + 47min);
        as("dave").revoke("staging", "dave", "deploy stuck on a health check");
        publish(t0 + 1h + 50min, stuck, g + 10);
        deploy(t0 + 2h, "staging", g + 11, 8);

        // The incident: r38 takes prod and stalls on a migration; its lease
        // expires, r39 takes over and publishes; r38's late write is refused.
        request(t0 + 2h + 55min, "dave", g + 8, "orders service hotfix");
        request(t0 + 3h, "alice", g + 9, "daily release");
        decide(t0 + 3h + 2min, "bob", g + 8, true);
        decide(t0 + 3h + 8min, "carol", g + 8, true);
        const relctl::Handle r38 = acquire(t0 + 3h + 15min, "prod", g + 8, 10min);
        decide(t0 + 3h + 20min, "bob", g + 9, true);
        decide(t0 + 3h + 27min, "carol", g + 9, true, "includes r38's fix");
        deploy(t0 + 3h + 31min, "prod", g + 9, 9);
        publish(t0 + 3h + 46min, r38, g + 8); // STALE_GENERATION
        at(t0 + 3h + 46min + 30s);
        as(kJobs).renew(r38);
        release(t0 + 3h + 47min, r38);

        // v1.44 fails on staging: rolled back to v1.43, which withdraws
        // v1.44 from prod's path; prod refuses it (NOT_PROMOTED).
        deploy(t0 + 5h, "test", g + 13, 4);
        deploy(t0 + 5h + 8min, "staging", g + 13, 8);
        deploy(t0 + 5h + 18min, "test", g + 14, 4);
        deploy(t0 + 5h + 25min, "staging", g + 14, 8);
        at(t0 + 5h + 35min);
        relctl::RollbackRequest back;
        back.env = "staging";
        back.toGeneration = g + 13;
        back.by = "carol";
        back.reason = label(g + 14) + " fails the checkout smoke test";
        as("carol").rollback(back);
        acquire(t0 + 5h + 38min, "prod", g + 14);
        // v1.41's pipeline asks prod (APPROVAL_REQUIRED opens its request);
        // carol denies it, and the retry is refused APPROVAL_DENIED.
        acquire(t0 + 5h + 40min, "prod", g + 11);
        decide(t0 + 5h + 44min, "carol", g + 11, false, label(g + 13) + " supersedes it");
        acquire(t0 + 5h + 46min, "prod", g + 11);
        // The weekly release: v1.43 asked for by alice, approved by bob (one
        // of two), still soaking on staging; v1.44 asked for too, though
        // staging no longer has it.
        request(t0 + 5h + 50min, "alice", g + 13, "weekly release");
        decide(t0 + 5h + 53min, "bob", g + 13, true);
        request(t0 + 5h + 55min, "dave", g + 14, "orders index, needed before Friday");

        acquire(t0 + 5h + 57min, "test", g + 15, 45min);
        at(t0 + 5h + 58min);
        as("alice").freeze("prod", "alice", "change freeze for the quarterly audit");
    }
};

// A demo whose newest event is older than this is written again: its last
// day would be mostly empty.
constexpr auto kStale = 12h;

} // namespace

const std::string& demoJobLogin()
{
    return kJobs;
}

void seedDemoWeek(relctl::EmbeddedCluster& cluster, std::chrono::system_clock::time_point end)
{
    std::vector<std::pair<std::string, std::string>> logins;
    logins.reserve(kPeople.size() + 1);
    for (const std::string& person : kPeople)
        logins.emplace_back(person, "relctl_manager");
    logins.emplace_back(kJobs, "relctl_job");
    cluster.startDemo(logins);
    try {
        Story(cluster, end).tell();
    } catch (...) {
        // Half a story is no demo: emptied, the next --demo writes it again.
        cluster.startDemo(logins);
        cluster.ensureRunning();
        throw;
    }
    cluster.ensureRunning(); // back on the real clock
}

std::string openDemo(relctl::EmbeddedCluster& cluster)
{
    std::string conninfo = cluster.ensureRunning();
    {
        relctl::Database db(conninfo);
        relctl::AuditQuery recent;
        recent.sinceAgo = std::chrono::duration_cast<std::chrono::milliseconds>(kStale);
        recent.limit = 1;
        if (!db.listEnvironments().environments.empty() && !db.audit(recent).events.empty())
            return conninfo;
    }
    seedDemoWeek(cluster, std::chrono::system_clock::now() - 2min);
    return cluster.ensureRunning();
}

} // namespace relctl
