// Reading the history (relctl.history()) into History; the checks judging
// it are history.cpp's.

#include "database_impl.h"
#include "jsonfields.h"
#include "relctl/error.h"
#include "relctl/history.h"
#include "relctl/parse.h"

namespace relctl::history {

namespace {

using jsonfields::optional;
using jsonfields::value;
using nlohmann::json;

// The one read of the history: relctl.history() in one read-only transaction.
json read(Database& db, const std::optional<std::string>& env, const std::optional<std::string>& since)
{
    // As `relctl audit --since`: a duration is an age on the server's
    // clock, anything else a time the server reads.
    std::optional<std::string> at;
    std::optional<std::int64_t> agoMs;
    if (since) {
        if (const auto age = parseDuration(*since))
            agoMs = age->count();
        else
            at = since;
    }
    return internal::DatabaseGate::impl(db).call(false,
                                                 "SELECT relctl.history($1, coalesce($2::timestamptz, "
                                                 "clock_timestamp() - $3 * interval '1 millisecond'))",
                                                 env, at, agoMs);
}

History fromJson(const json& j)
{
    History h;
    for (const json& e : j.at("environments"))
        h.environments.push_back({e.at("name").get<std::string>(), value<std::int64_t>(e, "last_token"),
                                  optional<std::int64_t>(e, "current_manifest_id")});
    for (const json& l : j.at("leases"))
        h.leases.push_back({value<std::string>(l, "env"), value<std::int64_t>(l, "token"),
                            value<std::string>(l, "job"), value<std::string>(l, "release"),
                            value<std::int64_t>(l, "generation"), value<Timestamp>(l, "acquired_at"),
                            value<Timestamp>(l, "expires_at"), optional<Timestamp>(l, "ended_at"),
                            optional<std::string>(l, "end_reason"), optional<std::string>(l, "op_id")});
    for (const json& m : j.at("manifests"))
        h.manifests.push_back({value<std::int64_t>(m, "id"), value<std::string>(m, "env"),
                               value<std::string>(m, "release"), value<std::int64_t>(m, "generation"),
                               value<std::string>(m, "job"), optional<std::int64_t>(m, "token"),
                               value<Timestamp>(m, "published_at"), optional<std::string>(m, "op_id")});
    for (const json& r : j.at("rollbacks"))
        h.rollbacks.push_back(
            {value<std::int64_t>(r, "id"), value<std::string>(r, "env"), value<std::int64_t>(r, "token"),
             value<std::int64_t>(r, "restored_manifest_id"), value<std::int64_t>(r, "replaced_manifest_id"),
             value<Timestamp>(r, "at"), optional<std::string>(r, "op_id")});
    for (const json& v : j.at("events")) {
        Event e;
        e.id = value<std::int64_t>(v, "id");
        e.at = value<Timestamp>(v, "at");
        e.env = optional<std::string>(v, "env");
        e.operation = value<std::string>(v, "operation");
        e.outcome = value<std::string>(v, "outcome");
        e.reason = optional<std::string>(v, "reason");
        e.job = optional<std::string>(v, "job");
        e.release = optional<std::string>(v, "release");
        e.generation = optional<std::int64_t>(v, "generation");
        e.token = optional<std::int64_t>(v, "token");
        e.currentToken = optional<std::int64_t>(v, "current_token");
        e.currentGeneration = optional<std::int64_t>(v, "current_generation");
        e.currentRelease = optional<std::string>(v, "current_release");
        e.opId = optional<std::string>(v, "op_id");
        e.unserialized = value<bool>(v, "unserialized", false);
        e.highWaterGeneration = optional<std::int64_t>(v, "high_water_generation");
        e.manifestId = optional<std::int64_t>(v, "manifest_id");
        e.login = optional<std::string>(v, "login");
        // What an env-set changed of the promotion path.
        if (const auto settings = v.find("settings"); settings != v.end() && settings->is_object()) {
            e.promoteFrom = optional<std::string>(*settings, "promote_from");
            e.soakMs = optional<std::int64_t>(*settings, "soak_ms");
        }
        h.events.push_back(std::move(e));
    }
    for (const json& o : j.at("operations"))
        h.operations.push_back({value<std::string>(o, "op_id"), value<std::string>(o, "operation"),
                                value<std::string>(o, "status"), optional<std::string>(o, "reason"),
                                optional<std::string>(o, "env"), value<Timestamp>(o, "recorded_at")});
    h.env = optional<std::string>(j, "env");
    h.since = optional<Timestamp>(j, "since");
    return h;
}

} // namespace

History load(Database& db, const std::optional<std::string>& env, const std::optional<std::string>& since)
{
    const json reply = read(db, env, since);
    try {
        return fromJson(reply);
    } catch (const json::exception& e) {
        throw Error(ExitCode::Internal, std::string("unreadable history from the database: ") + e.what());
    }
}

} // namespace relctl::history
