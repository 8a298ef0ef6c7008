#pragma once

#include "relctl/migrations.h"
#include "relctl/protocol.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace relctl {

// The typed client of a relctl database. Every protocol operation is one call
// of a SQL function (see migrations/): one round trip, one transaction, all
// decisions on the server. One Database belongs to one thread.
class Database final
{
public:
    // Connects with a libpq connection string (keyword/value or URI; empty:
    // libpq's PG* environment). Throws Error(Usage) for a malformed string and
    // Error(Unavailable) when the server cannot be reached.
    explicit Database(const std::string& conninfo, ClientContext client = ClientContext::current());
    ~Database();
    Database(Database&&) noexcept;
    Database& operator=(Database&&) noexcept;

    // Schema. Migrations run one per transaction under a session advisory lock,
    // so concurrent runs wait for each other and the later one finds nothing to do.
    MigrationReport migrate(const std::vector<Migration>& migrations = bundledMigrations());
    std::vector<MigrationState>
    migrationStatus(const std::vector<Migration>& migrations = bundledMigrations());

    // Environments
    nlohmann::json addEnvironment(const EnvironmentSpec& spec);
    nlohmann::json listEnvironments();
    nlohmann::json showEnvironment(const std::string& name);

    // The lease protocol
    Outcome acquire(const AcquireRequest& request);
    Outcome renew(const Handle& lease, std::optional<std::chrono::milliseconds> ttl = {});
    Outcome release(const Handle& lease);
    Outcome publish(const PublishRequest& request);

    // Reading
    nlohmann::json showLease(const std::string& env);
    nlohmann::json showManifest(const std::string& env, bool history);
    nlohmann::json audit(const AuditQuery& query);
    nlohmann::json trace(const std::string& job);
    nlohmann::json showOperation(const std::string& opId);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace relctl
