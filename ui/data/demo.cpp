#include "demo.h"

#include "connectiontarget.h"
#include "relctl/database.h"

#include <thread>

namespace relctl::ui {

namespace {

using namespace std::chrono_literals;

struct Seeder
{
    relctl::Database& db;

    relctl::Handle acquire(const std::string& env, const std::string& job, std::int64_t generation,
                           std::chrono::milliseconds ttl = 60s)
    {
        relctl::AcquireRequest r;
        r.env = env;
        r.job = job;
        r.release = "v1." + std::to_string(generation);
        r.generation = generation;
        r.ttl = ttl;
        relctl::Outcome o = db.acquire(r);
        return o.accepted() ? *relctl::parseHandle(o.body["handle"].get<std::string>()) : relctl::Handle{};
    }

    // A manifest that changes in more than its image from release to
    // release, so the console's manifest diffs have something to show.
    static nlohmann::json manifest(std::int64_t generation)
    {
        nlohmann::json m{{"image", "registry.example/app:v1." + std::to_string(generation)},
                         {"replicas", generation >= 13 ? 4 : 3},
                         {"features", {{"checkout_v2", generation >= 13}}}};
        if (generation >= 14)
            m["migrations"] = "0042_orders_index";
        return m;
    }

    void deploy(const std::string& env, const std::string& job, std::int64_t generation)
    {
        const relctl::Handle h = acquire(env, job, generation);
        if (h.token == 0)
            return;
        db.publish({h, manifest(generation), {}});
        db.release(h);
    }

    std::int64_t manifestId(const std::string& env, std::int64_t generation)
    {
        for (const relctl::ManifestHistoryEntry& e : db.manifestHistory(env).history)
            if (e.manifest.generation == generation && e.manifest.id)
                return *e.manifest.id;
        return 0;
    }

    std::int64_t promotionId(const std::string& env, std::int64_t generation)
    {
        for (const relctl::Promotion& p : db.promotions(env, true).promotions)
            if (p.generation == generation)
                return p.id;
        return 0;
    }
};

} // namespace

QString demoRefusal(const ConnectionTarget& target, bool named)
{
    if (named)
        return QStringLiteral("--demo seeds only the embedded database and never a database named by --dsn "
                              "(%1); run it without --dsn")
            .arg(target.describe());
    const ConnectionTarget where = target.effective();
    if (where.kind == ConnectionTarget::Kind::Embedded)
        return {};
    return QStringLiteral("--demo seeds only the embedded database, but the console would connect to %1 "
                          "(the saved connection, $RELCTL_DSN or PG* variables); choose \"Embedded\" in "
                          "File > Connection or unset them, then run --demo again")
        .arg(where.describe());
}

void seedDemoHistory(relctl::Database& db)
{
    if (!db.listEnvironments().environments.empty())
        return;
    Seeder s{db};
    db.addEnvironment({"test", 30s, 10min});
    db.addEnvironment({"staging", 30s, 10min});
    db.addEnvironment({"prod", 60s, 10min});
    db.setEnvironment(
        {"staging", "newest", "approval", std::nullopt, std::nullopt, std::nullopt, std::nullopt});

    for (std::int64_t g = 1; g <= 6; ++g)
        s.deploy("test", "pipeline-" + std::to_string(100 + g), g);
    s.deploy("staging", "pipeline-104", 4);
    s.deploy("prod", "pipeline-103", 3);

    // The incident: r8 takes prod with a short lease and stalls; r9 takes
    // over after the expiry and publishes; r8's late write is refused.
    const relctl::Handle r8 = s.acquire("prod", "pipeline-108", 8, 1s);
    std::this_thread::sleep_for(1200ms);
    const relctl::Handle r9 = s.acquire("prod", "pipeline-109", 9);
    db.publish({r9, nlohmann::json{{"image", "registry.example/app:v1.9"}}, {}});
    db.release(r9);
    db.publish({r8, std::nullopt, {}});
    db.renew(r8);
    db.release(r8);

    // A runaway holder revoked by a release manager, then a freeze.
    const relctl::Handle r10 = s.acquire("staging", "pipeline-110", 10);
    db.revoke("staging", "release-manager", "deploy stuck on a health check");
    // Its job comes back to publish: refused LEASE_REVOKED, traced to the
    // release manager and their reason.
    db.publish({r10, nlohmann::json{{"image", "registry.example/app:v1.10"}}, {}});
    s.deploy("staging", "pipeline-111", 11);

    // Promotions: staging takes only what test accepted; prod only what
    // staging accepted, once two people approved it.
    db.setEnvironment(
        {"staging", std::nullopt, std::nullopt, std::nullopt, "test", std::nullopt, std::nullopt});
    db.setEnvironment({"prod", std::nullopt, std::nullopt, std::nullopt, "staging", 0ms, 2});
    for (std::int64_t g : {13, 14}) {
        s.deploy("test", "pipeline-" + std::to_string(100 + g), g);
        s.deploy("staging", "pipeline-" + std::to_string(100 + g), g);
    }
    // v1.14 fails on staging: rolled back to v1.13, which withdraws v1.14
    // from prod's path; prod refuses it (NOT_PROMOTED).
    relctl::RollbackRequest back;
    back.env = "staging";
    back.toManifest = s.manifestId("staging", 13);
    back.by = "release-manager";
    back.reason = "v1.14 fails the checkout smoke test";
    db.rollback(back);
    s.acquire("prod", "pipeline-114", 14);
    // v1.11's pipeline asks prod (APPROVAL_REQUIRED opens its request); a
    // release manager denies it, and the retry is refused APPROVAL_DENIED.
    s.acquire("prod", "pipeline-111", 11);
    db.decidePromotion(s.promotionId("prod", 11), false, "carol", "v1.13 supersedes it");
    s.acquire("prod", "pipeline-111", 11);
    // The weekly release: v1.13 asked for by alice, approved by bob (one of
    // two); v1.14 asked for too, though staging no longer has it.
    db.requestPromotion({"prod", "v1.13", 13, "alice", "weekly release"});
    db.decidePromotion(s.promotionId("prod", 13), true, "bob", std::nullopt);
    db.requestPromotion({"prod", "v1.14", 14, "dave", "orders index, needed before Friday"});
    // A soak from now on: v1.13 has minutes to go on staging.
    db.setEnvironment({"prod", std::nullopt, std::nullopt, std::nullopt, std::nullopt, 10min, std::nullopt});

    s.acquire("test", "pipeline-115", 15, 10min);
    db.freeze("prod", "release-manager", "change freeze for the quarterly audit");
}

} // namespace relctl::ui
