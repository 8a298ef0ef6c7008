#include "demo.h"

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

    void deploy(const std::string& env, const std::string& job, std::int64_t generation)
    {
        const relctl::Handle h = acquire(env, job, generation);
        if (h.token == 0)
            return;
        db.publish(
            {h, nlohmann::json{{"image", "registry.example/app:v1." + std::to_string(generation)}}, {}});
        db.release(h);
    }
};

} // namespace

void seedDemoHistory(relctl::Database& db)
{
    if (!db.listEnvironments().environments.empty())
        return;
    Seeder s{db};
    db.addEnvironment({"test", 30s, 10min});
    db.addEnvironment({"staging", 30s, 10min});
    db.addEnvironment({"prod", 60s, 10min});
    db.setEnvironment({"staging", "newest", "approval", std::nullopt, std::nullopt, std::nullopt, std::nullopt});

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
    s.acquire("staging", "pipeline-110", 10);
    db.revoke("staging", "release-manager", "deploy stuck on a health check");
    s.deploy("staging", "pipeline-111", 11);
    s.acquire("test", "pipeline-112", 12, 10min);
    db.freeze("prod", "release-manager", "change freeze for the quarterly audit");
}

} // namespace relctl::ui
