#include "relctl/database.h"

#include "database_impl.h"

#include <libpq-fe.h>

namespace relctl {

namespace {

// The primary message of a server error, without libpq's "ERROR:  " prefix and
// the CONTEXT lines that follow it.
std::string primaryMessage(const std::string& what)
{
    std::string text = what;
    for (const char* prefix : {"ERROR:  ", "FATAL:  "})
        if (text.rfind(prefix, 0) == 0)
            text.erase(0, std::string_view(prefix).size());
    if (auto eol = text.find('\n'); eol != std::string::npos)
        text.erase(eol);
    return text;
}

// libpq reports a malformed connection string only when connecting, as a
// connection failure; check it first so it is reported as invalid input.
void validateConninfo(const std::string& conninfo)
{
    char* message = nullptr;
    PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &message);
    if (options == nullptr) {
        std::string text = message ? primaryMessage(message) : std::string("out of memory");
        PQfreemem(message);
        throwUsage("invalid connection string: " + text);
    }
    PQconninfoFree(options);
}

std::optional<std::int64_t> toMillis(const std::optional<std::chrono::milliseconds>& d)
{
    if (!d)
        return std::nullopt;
    return d->count();
}

} // namespace

void Database::Impl::translateCurrentException()
{
    try {
        throw;
    } catch (const Error&) {
        throw;
    } catch (const pqxx::in_doubt_error& e) {
        throw Error(ExitCode::Unavailable,
                    std::string("the connection was lost while committing; the outcome is unknown "
                                "(retry with the same --op-id, or check it with `relctl op show`): ") +
                        e.what());
    } catch (const pqxx::broken_connection& e) {
        throw Error(ExitCode::Unavailable, "database unavailable: " + primaryMessage(e.what()));
    } catch (const pqxx::sql_error& e) {
        const std::string state = e.sqlstate();
        const std::string message = primaryMessage(e.what());
        if (state == "RC002" || state.rfind("22", 0) == 0)
            throw Error(ExitCode::Usage, message);
        if (state == "RC008")
            throw Error(ExitCode::OpConflict, message);
        if (state == "3F000" || state == "42883" || state == "42P01")
            throw Error(ExitCode::Internal,
                        "the database has no relctl schema, or an older one: run `relctl migrate` (" +
                            message + ")");
        if (state.rfind("08", 0) == 0 || state.rfind("57P", 0) == 0)
            throw Error(ExitCode::Unavailable, "database unavailable: " + message);
        throw Error(ExitCode::Internal, "database error " + state + ": " + message);
    } catch (const pqxx::failure& e) {
        throw Error(ExitCode::Internal, std::string("database error: ") + e.what());
    } catch (const nlohmann::json::exception& e) {
        throw Error(ExitCode::Internal, std::string("unreadable reply from the database: ") + e.what());
    }
}

Database::Database(const std::string& conninfo, ClientContext client)
{
    validateConninfo(conninfo);
    try {
        d = std::make_unique<Impl>(conninfo, std::move(client));
    } catch (...) {
        Impl::translateCurrentException();
    }
}

Database::~Database() = default;
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;

nlohmann::json Database::addEnvironment(const EnvironmentSpec& spec)
{
    return d->call(true, "SELECT relctl.env_add($1, $2, $3, $4::jsonb)", spec.name, toMillis(spec.defaultTtl),
                   toMillis(spec.maxTtl), d->client.toJson().dump());
}

nlohmann::json Database::listEnvironments()
{
    return d->call(false, "SELECT relctl.env_list()");
}

nlohmann::json Database::showEnvironment(const std::string& name)
{
    return d->call(false, "SELECT relctl.environment_json($1)", name);
}

Outcome Database::acquire(const AcquireRequest& r)
{
    return Outcome::fromReply(d->call(true, "SELECT relctl.acquire($1, $2, $3, $4, $5, $6, $7::jsonb)", r.env,
                                      r.job, r.release, r.generation, toMillis(r.ttl),
                                      r.opId.empty() ? newOperationId() : r.opId, d->client.toJson().dump()));
}

Outcome Database::renew(const Handle& lease, std::optional<std::chrono::milliseconds> ttl)
{
    return Outcome::fromReply(d->call(true, "SELECT relctl.renew($1, $2, $3::uuid, $4, $5::jsonb)", lease.env,
                                      lease.token, lease.leaseId, toMillis(ttl), d->client.toJson().dump()));
}

Outcome Database::release(const Handle& lease)
{
    return Outcome::fromReply(d->call(true, "SELECT relctl.release($1, $2, $3::uuid, $4::jsonb)", lease.env,
                                      lease.token, lease.leaseId, d->client.toJson().dump()));
}

Outcome Database::publish(const PublishRequest& r)
{
    std::optional<std::string> manifest;
    if (r.manifest) {
        if (!r.manifest->is_object())
            throwUsage("a manifest must be a JSON object");
        manifest = r.manifest->dump();
        if (manifest->size() > kMaxManifestBytes)
            throwUsage("a manifest may not exceed 64 KiB");
    }
    return Outcome::fromReply(d->call(true, "SELECT relctl.publish($1, $2, $3::uuid, $4, $5, $6::jsonb)",
                                      r.lease.env, r.lease.token, r.lease.leaseId, manifest,
                                      r.opId.empty() ? newOperationId() : r.opId, d->client.toJson().dump()));
}

nlohmann::json Database::showLease(const std::string& env)
{
    return d->call(false, "SELECT relctl.lease_show($1)", env);
}

nlohmann::json Database::showManifest(const std::string& env, bool history)
{
    return d->call(false, "SELECT relctl.manifest_show($1, $2)", env, history);
}

nlohmann::json Database::audit(const AuditQuery& q)
{
    return d->call(false,
                   "SELECT relctl.audit($1, $2, $3, $4, "
                   "coalesce($5::timestamptz, clock_timestamp() - $6 * interval '1 millisecond'), $7)",
                   q.env, q.job, q.reason, q.operation, q.since, toMillis(q.sinceAgo), q.limit);
}

nlohmann::json Database::trace(const std::string& job)
{
    return d->call(false, "SELECT relctl.trace($1)", job);
}

nlohmann::json Database::showOperation(const std::string& opId)
{
    return d->call(false, "SELECT relctl.op_show($1)", opId);
}

} // namespace relctl
