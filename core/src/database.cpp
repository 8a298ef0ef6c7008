#include "relctl/database.h"

#include "database_impl.h"
#include "relctl/naturalsort.h"
#include "relctl/parse.h"
#include "rowfields.h"

#include <algorithm>
#include <thread>

namespace relctl {

namespace {

// The primary message of a server error, without libpq's "ERROR:  " prefix and
// the DETAIL, HINT, CONTEXT and LINE parts that follow it. The primary
// message itself may span lines when it quotes input: it is kept whole
// (the CLI escapes control characters when it prints it).
std::string primaryMessage(const std::string& what)
{
    std::string text = what;
    for (const char* prefix : {"ERROR:  ", "FATAL:  "})
        if (text.rfind(prefix, 0) == 0)
            text.erase(0, std::string_view(prefix).size());
    for (const char* part :
         {"\nDETAIL:  ", "\nHINT:  ", "\nCONTEXT:  ", "\nLINE ", "\nQUERY:  ", "\nLOCATION:  "})
        if (auto at = text.find(part); at != std::string::npos)
            text.erase(at);
    while (!text.empty() && text.back() == '\n')
        text.pop_back();
    return text;
}

// libpq's own messages (a failed connection) continue with a hint on the
// next line: the first line says what happened.
std::string firstLine(const std::string& what)
{
    const std::string text = primaryMessage(what);
    // libpqxx 6.4's words when a statement is started on a connection the
    // server already ended (it tries the dead handle again): say that.
    if (text == "Connection to database failed")
        return "the server ended this session's connection";
    return text.substr(0, text.find('\n'));
}

// libpq's words for a connection that ended under a call: a server that
// crashed or shut down, a network that dropped it. Some of these reach
// libpqxx as a failed statement without a SQLSTATE rather than as a broken
// connection, and then only the words tell.
bool saysConnectionLost(std::string_view what)
{
    for (const char* words :
         {"server closed the connection unexpectedly", "terminating connection",
          "no connection to the server", "connection to server was lost",
          "could not receive data from server", "could not send data to server", "SSL SYSCALL error",
          "SSL connection has been closed unexpectedly", "lost synchronization with server"})
        if (what.find(words) != std::string_view::npos)
            return true;
    return false;
}

// A statement's failure that ended the session: the server's own words
// (08xxx, and 57P01..57P03, a server shutting down or crashing), or none.
bool endedSession(const pqxx::failure& e)
{
    if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
        const std::string& state = sql->sqlstate();
        if (state.rfind("08", 0) == 0 || state == "57P01" || state == "57P02" || state == "57P03")
            return true;
        if (!state.empty())
            return false;
    }
    return saysConnectionLost(e.what());
}

std::optional<std::int64_t> toMillis(const std::optional<std::chrono::milliseconds>& d)
{
    if (!d)
        return std::nullopt;
    return d->count();
}

const std::string kOutcomeUnknown =
    "the connection was lost during the call; the outcome is unknown (retry with "
    "the same --op-id, or check it with `relctl op show`): ";

// What a reply recovered after a lost connection says about it, in words.
std::string lostReplyNote(const Outcome& o, const std::string& opId, std::chrono::milliseconds after)
{
    const std::string how = " (op id " + opId + ", connected again after " + formatDuration(after) + ")";
    if (!o.replayed())
        return "the reply was lost, but the database had no record of op id " + opId +
               ": the first attempt never took effect, and it was sent again" + how;
    const std::string word = o.accepted() ? "completed" : "rejected (" + o.reason + ")";
    return word + "; the reply was lost and has been confirmed from the record" + how;
}

} // namespace

Outcome Database::Impl::settled(std::unique_ptr<Impl>& d, const std::string& opId, const std::string& what,
                                const std::function<Outcome()>& send)
{
    using Clock = std::chrono::steady_clock;
    std::string lost;
    std::string cause;
    try {
        return send();
    } catch (const InDoubt& e) {
        lost = e.what();
        cause = e.cause();
    }
    const std::string settle = "`relctl op show " + opId +
                               "` says what became of it, and a retry with --op-id " + opId +
                               " applies nothing twice";
    const auto window = session::reconnectWindow();
    if (window.count() == 0)
        throw Error(ExitCode::Unavailable, lost + "; " + settle);
    spdlog::warn("the connection was lost during {} before its reply ({}); connecting again to learn what "
                 "became of op id {}",
                 what, cause, opId);
    const auto start = Clock::now();
    const auto until = start + window;
    auto delay = std::chrono::milliseconds(100);
    for (;;) {
        std::string why;
        try {
            d = std::make_unique<Impl>(d->conninfo, d->client, d->callTimeout);
            break;
        } catch (const pqxx::broken_connection& e) {
            why = redactPasswords(firstLine(e.what()), d->conninfo);
        } catch (...) {
            translateCurrentException();
        }
        const auto now = Clock::now();
        if (now >= until)
            throw Error(ExitCode::Unavailable, "the connection was lost during " + what +
                                                   " and the database stayed unreachable for " +
                                                   formatDuration(window) + " (" + why +
                                                   "): the outcome is unknown; " + settle);
        std::this_thread::sleep_for(std::min<Clock::duration>(delay, until - now));
        delay = std::min(delay * 2, std::chrono::milliseconds(1000));
    }
    Outcome o;
    try {
        o = send();
    } catch (const InDoubt& e) {
        throw Error(ExitCode::Unavailable, "the connection was lost again during " + what + " (" + e.cause() +
                                               "): the outcome is unknown; " + settle);
    }
    const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    o.body["reply_lost"] = {{"confirmed_from_record", o.replayed()},
                            {"reconnected_after_ms", after.count()},
                            {"note", lostReplyNote(o, opId, after)}};
    return o;
}

void Database::Impl::connectionLost(bool write, bool stalled, const std::string& what) const
{
    const std::string detail =
        stalled ? "no reply from the database within " + formatDuration(callTimeout) : firstLine(what);
    if (write)
        throw InDoubt(kOutcomeUnknown + detail, detail);
    throw Error(ExitCode::Unavailable, "database unavailable: " + detail);
}

void Database::Impl::translateCurrentException()
{
    try {
        throw;
    } catch (const Error&) {
        throw;
    } catch (const pqxx::in_doubt_error& e) {
        throw InDoubt(kOutcomeUnknown + primaryMessage(e.what()), primaryMessage(e.what()));
    } catch (const pqxx::broken_connection& e) {
        throw Error(ExitCode::Unavailable, "database unavailable: " + firstLine(e.what()));
    } catch (const pqxx::insufficient_privilege& e) {
        // libpqxx 6.4 throws this class without its SQLSTATE (42501).
        throw Error(ExitCode::Internal,
                    primaryMessage(e.what()) +
                        ": this database login lacks the relctl role for it (relctl_job runs CI commands, "
                        "relctl_reviewer reads the audit trail, relctl_manager administers environments; "
                        "see docs/security.md, Roles)");
    } catch (const pqxx::sql_error& e) {
        const std::string& state = e.sqlstate();
        const std::string message = primaryMessage(e.what());
        // A dropped connection is "unavailable, try again" however libpqxx
        // classed it (a server crash can come without a SQLSTATE).
        if (endedSession(e))
            throw Error(ExitCode::Unavailable, "database unavailable: " + firstLine(e.what()));
        if (state == "RC002" || state.rfind("22", 0) == 0)
            throw Error(ExitCode::Usage, message);
        if (state == "RC008")
            throw Error(ExitCode::OpConflict, message);
        if (state == "3F000" || state == "42883" || state == "42P01")
            throw Error(ExitCode::Internal,
                        "the database has no relctl schema, or an older one: run `relctl migrate` (" +
                            message + ")");
        // Both ended the statement, which rolled back: nothing was applied,
        // and trying again later is the answer. relctl's own 55P03s say what
        // is locked and that nothing was applied; lock_timeout's does not.
        if (state == "55P03")
            throw Locked(message.find("nothing was applied") != std::string::npos
                             ? message
                             : "the environment is locked by another session (lock_timeout ran out); nothing "
                               "was applied, try again: " +
                                   message);
        if (state == "57014")
            throw Error(
                ExitCode::Unavailable,
                "the database cancelled the call (statement_timeout); nothing was applied, try again: " +
                    message);
        if (state.rfind("08", 0) == 0 || state.rfind("57P", 0) == 0)
            throw Error(ExitCode::Unavailable, "database unavailable: " + message);
        throw Error(ExitCode::Internal, "database error " + state + ": " + message);
    } catch (const pqxx::failure& e) {
        if (endedSession(e))
            throw Error(ExitCode::Unavailable, "database unavailable: " + firstLine(e.what()));
        throw Error(ExitCode::Internal, std::string("database error: ") + e.what());
    } catch (const nlohmann::json::exception& e) {
        throw Error(ExitCode::Internal, std::string("unreadable reply from the database: ") + e.what());
    }
}

bool Database::Impl::connectionEnded(const pqxx::failure& e) const
{
    return !conn.is_open() || endedSession(e);
}

Database::Database(const std::string& conninfo, ClientContext client)
{
    // Both throw Error(Usage) before anything is sent.
    const std::string bounded = session::boundedConninfo(conninfo);
    const auto callTimeout = session::callTimeout();
    session::reconnectWindow(); // checked now: a bad value is refused before anything is sent
    try {
        try {
            d = std::make_unique<Impl>(bounded, std::move(client), callTimeout);
        } catch (...) {
            Impl::translateCurrentException();
        }
    } catch (const Error& e) {
        // libpq's connection errors quote what they could not use.
        throw Error(e.code(), redactPasswords(e.what(), conninfo), e.reason(), e.detail());
    }
}

Database::~Database() = default;

std::chrono::milliseconds Database::callTimeout() const
{
    return d->callTimeout;
}

void Database::setCallTimeout(std::chrono::milliseconds bound)
{
    d->callTimeout = bound;
}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;

EnvironmentAdded Database::addEnvironment(const EnvironmentSpec& spec)
{
    return Impl::parsed<EnvironmentAdded>(d->call(true, "SELECT relctl.env_add($1, $2, $3, $4::jsonb)",
                                                  spec.name, toMillis(spec.defaultTtl), toMillis(spec.maxTtl),
                                                  d->client.toJson().dump()));
}

EnvironmentList Database::listEnvironments(const std::optional<std::string>& group,
                                           const std::optional<std::string>& match)
{
    return Impl::parsed<EnvironmentList>(d->call(false, "SELECT relctl.env_list($1, $2)", group, match));
}

// env_brief's answer and the order its rows are read in: indexes into it
// sorted by name, naturally.
struct EnvironmentBriefs::Rows
{
    pqxx::result rows;
    std::vector<std::uint32_t> order;
};

std::size_t EnvironmentBriefs::size() const
{
    return m_rows ? m_rows->order.size() : 0;
}

EnvironmentBrief EnvironmentBriefs::operator[](std::size_t i) const
{
    const pqxx::row row = m_rows->rows[pqxx::result::size_type(m_rows->order.at(i))];
    const auto text = [](const pqxx::field& f) { return std::string_view(f.c_str(), f.size()); };
    const auto optionalText = [&text](const pqxx::field& f) {
        return f.is_null() ? std::nullopt : std::optional(text(f));
    };
    const auto integer = [](const pqxx::field& f) { return rowfields::optional<std::int64_t>(f); };
    return {text(row[0]),         text(row[1]),    optionalText(row[2]), integer(row[3]),
            optionalText(row[4]), integer(row[5]), row[6].as<bool>(),    row[7].as<std::int64_t>(),
            optionalText(row[8])};
}

EnvironmentBriefs Database::briefEnvironments(const std::optional<std::string>& group,
                                              const std::optional<std::string>& match)
{
    // Rows, not a JSON document: at 10,000 environments parsing the document
    // cost the client more than the server took to answer.
    auto held = std::make_shared<EnvironmentBriefs::Rows>();
    held->rows = d->rows("SELECT * FROM relctl.env_brief($1, $2)", group, match);
    const pqxx::result& rows = held->rows;
    // A schema from before env_brief gave rows answers one JSON column.
    if (rows.columns() != 9)
        throw Error(ExitCode::Internal,
                    "the database has an older relctl schema: run `relctl migrate` (relctl.env_brief)");
    // The names looked up once, not on each of the sort's comparisons.
    std::vector<std::pair<std::string_view, std::uint32_t>> names;
    names.reserve(rows.size());
    for (pqxx::result::size_type i = 0; i < rows.size(); ++i) {
        const pqxx::field name = rows[i][0];
        names.emplace_back(std::string_view(name.c_str(), name.size()), std::uint32_t(i));
    }
    std::sort(names.begin(), names.end(),
              [](const auto& a, const auto& b) { return naturalLess(a.first, b.first); });
    held->order.reserve(names.size());
    for (const auto& [name, i] : names)
        held->order.push_back(i);
    EnvironmentBriefs reply;
    reply.m_rows = std::move(held);
    return reply;
}

EnvironmentNames Database::environmentNames(const std::optional<std::string>& group,
                                            const std::optional<std::string>& match)
{
    return Impl::parsed<EnvironmentNames>(d->call(false, "SELECT relctl.env_names($1, $2)", group, match));
}

AttentionList Database::attention(const std::optional<std::string>& group,
                                  const std::optional<std::string>& match)
{
    return Impl::parsed<AttentionList>(d->call(false, "SELECT relctl.attention($1, $2)", group, match));
}

PromotionPaths Database::setPromotionPaths(const std::vector<std::string>& stages,
                                           const std::optional<std::string>& group,
                                           const std::optional<std::string>& match,
                                           std::optional<std::chrono::milliseconds> soak,
                                           std::optional<int> approvals)
{
    return Impl::parsed<PromotionPaths>(d->call(
        true,
        "SELECT relctl.env_paths(ARRAY(SELECT json_array_elements_text($1::json)), $2, $3, $4, $5, "
        "$6::jsonb)",
        nlohmann::json(stages).dump(), group, match, toMillis(soak), approvals, d->client.toJson().dump()));
}

Environment Database::showEnvironment(const std::string& name)
{
    return Impl::parsed<Environment>(d->call(false, "SELECT relctl.environment_json($1)", name));
}

Outcome Database::acquire(const AcquireRequest& r)
{
    const bool wait = r.wait && r.wait->count() > 0;
    const std::string opId = r.opId.empty() ? newOperationId() : r.opId;
    // A generated op id can never be retried: its secret need not be kept.
    const std::string secret = !r.secret.empty() ? r.secret
                               : r.opId.empty()  ? newOperationId() + newOperationId()
                                                 : requestSecret(opId);
    const auto deadline = std::chrono::steady_clock::now() + r.wait.value_or(std::chrono::milliseconds(0));
    // Sent again after a lost connection, the same op id and secret are
    // answered from the record with the lease's credentials, or (never
    // recorded) queue the candidate again on the new connection.
    return Impl::settled(d, opId, "acquire", [&] {
        // Watch before the first evaluation: a handover committed after it is
        // announced. The queued candidate's session LISTENs on its own channel
        // in the transaction that queues it, so nothing is missed in between.
        const bool watching = wait && d->watch(r.env);
        const auto attempt = [&] {
            return d->call(true, "SELECT relctl.acquire($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9)", r.env,
                           r.job, r.release, r.generation, toMillis(r.ttl), opId, d->client.toJson().dump(),
                           wait, secret);
        };
        if (!wait)
            return Outcome::fromReply(attempt());
        Outcome outcome = d->waitInQueue(d->whileLocked(deadline, attempt), deadline, secret);
        if (watching)
            d->unwatch(r.env);
        return outcome;
    });
}

Outcome Database::renew(const Handle& lease, std::optional<std::chrono::milliseconds> ttl)
{
    return Outcome::fromReply(d->call(true, "SELECT relctl.renew($1, $2, $3::uuid, $4, $5::jsonb)", lease.env,
                                      lease.token, lease.leaseId, toMillis(ttl), d->client.toJson().dump()));
}

Outcome Database::release(const Handle& lease, const std::string& note,
                          const std::optional<StopReport>& stopped)
{
    return Outcome::fromReply(
        d->call(true, "SELECT relctl.release($1, $2, $3::uuid, $4::jsonb, $5, $6::jsonb)", lease.env,
                lease.token, lease.leaseId, d->client.toJson().dump(),
                note.empty() ? std::nullopt : std::optional<std::string>(note),
                stopped ? std::optional<std::string>(stopped->toJson().dump()) : std::nullopt));
}

namespace {

// The manifest as the text sent to the server (which re-checks both rules).
std::optional<std::string> manifestText(const std::optional<nlohmann::json>& manifest)
{
    if (!manifest)
        return std::nullopt;
    if (!manifest->is_object())
        throwUsage("a manifest must be a JSON object");
    // Before dump(), which recurses once per level.
    if (jsonDepth(*manifest) > kMaxManifestDepth)
        throwUsage("a manifest may not be nested deeper than " + std::to_string(kMaxManifestDepth) +
                   " levels");
    std::string text = manifest->dump();
    if (text.size() > kMaxManifestBytes)
        throwUsage("a manifest may not exceed 64 KiB");
    return text;
}

} // namespace

Outcome Database::publish(const PublishRequest& r,
                          std::optional<std::chrono::steady_clock::time_point> retryLockedUntil)
{
    const std::optional<std::string> manifest = manifestText(r.manifest);
    const std::string opId = r.opId.empty() ? newOperationId() : r.opId;
    return Impl::settled(d, opId, "publish", [&] {
        const auto attempt = [&] {
            return d->call(true, "SELECT relctl.publish($1, $2, $3::uuid, $4, $5, $6::jsonb)", r.lease.env,
                           r.lease.token, r.lease.leaseId, manifest, opId, d->client.toJson().dump());
        };
        return Outcome::fromReply(retryLockedUntil ? d->whileLocked(*retryLockedUntil, attempt) : attempt());
    });
}

const char* const Database::serverInfoQuery =
    "SELECT jsonb_build_object('server_version', current_setting('server_version'), "
    "'database', current_database(), 'login', session_user, 'now', clock_timestamp(), "
    "'schema_version', (SELECT max(version) FROM relctl.schema_migrations), "
    "'roles', (SELECT coalesce(jsonb_agg(rolname ORDER BY rolname), '[]') FROM pg_catalog.pg_roles "
    "WHERE rolname IN ('relctl_job', 'relctl_reviewer', 'relctl_manager') "
    "AND pg_catalog.pg_has_role(session_user, oid, 'USAGE')), "
    "'member_of', (SELECT coalesce(jsonb_agg(rolname ORDER BY rolname), '[]') FROM pg_catalog.pg_roles "
    "WHERE pg_catalog.pg_has_role(session_user, oid, 'MEMBER')), "
    "'tls', coalesce((SELECT ssl FROM pg_catalog.pg_stat_ssl WHERE pid = pg_catalog.pg_backend_pid()), "
    "false))";

ServerInfo Database::serverInfo()
{
    return Impl::parsed<ServerInfo>(d->call(false, serverInfoQuery));
}

void Database::sleepOnServer(double seconds)
{
    d->call(false, "SELECT to_jsonb(pg_sleep($1))", seconds);
}

LeaseShow Database::showLease(const std::string& env)
{
    return Impl::parsed<LeaseShow>(d->call(false, "SELECT relctl.lease_show($1)", env));
}

ManifestShow Database::showManifest(const std::string& env)
{
    return Impl::parsed<ManifestShow>(d->call(false, "SELECT relctl.manifest_show($1, false)", env));
}

ManifestHistory Database::manifestHistory(const std::string& env)
{
    return Impl::parsed<ManifestHistory>(d->call(false, "SELECT relctl.manifest_show($1, true)", env));
}

AuditTrail Database::audit(const AuditQuery& q)
{
    return Impl::parsed<AuditTrail>(
        d->call(false,
                "SELECT relctl.audit($1, $2, $3, $4, "
                "coalesce($5::timestamptz, clock_timestamp() - $6 * interval '1 millisecond'), $7)",
                q.env, q.job, q.reason, q.operation, q.since, toMillis(q.sinceAgo), q.limit));
}

JobTrace Database::trace(const std::string& job)
{
    return Impl::parsed<JobTrace>(d->call(false, "SELECT relctl.trace($1)", job));
}

OperationRecord Database::showOperation(const std::string& opId)
{
    return Impl::parsed<OperationRecord>(d->call(false, "SELECT relctl.op_show($1)", opId));
}

JobStatus Database::jobStatus(const std::string& job)
{
    return Impl::parsed<JobStatus>(d->call(false, "SELECT relctl.job_state($1)", job));
}

JobStatus Database::operationStatus(const std::string& opId)
{
    return Impl::parsed<JobStatus>(d->call(false, "SELECT relctl.op_state($1)", opId));
}

Outcome Database::publishUnserialized(const UnserializedPublishRequest& r)
{
    const std::optional<std::string> manifest = manifestText(r.manifest);
    const std::string opId = r.opId.empty() ? newOperationId() : r.opId;
    return Impl::settled(d, opId, "publish", [&] {
        return Outcome::fromReply(
            d->call(true, "SELECT relctl.publish_unserialized($1, $2, $3, $4, $5, $6, $7::jsonb)", r.env,
                    r.job, r.release, r.generation, manifest, opId, d->client.toJson().dump()));
    });
}

EnvironmentSet Database::setEnvironment(const EnvironmentSettings& s, const std::optional<std::string>& group)
{
    // Without a group, the call of a schema before the groups (0016).
    if (!group)
        return Impl::parsed<EnvironmentSet>(
            d->call(true, "SELECT relctl.env_set($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9)", s.name,
                    s.policy, s.supersede, s.serialization, d->client.toJson().dump(), s.promoteFrom,
                    toMillis(s.soak), s.approvals, s.approverRole));
    return Impl::parsed<EnvironmentSet>(
        d->call(true, "SELECT relctl.env_set($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10)", s.name,
                s.policy, s.supersede, s.serialization, d->client.toJson().dump(), s.promoteFrom,
                toMillis(s.soak), s.approvals, s.approverRole, group));
}

Revocation Database::revoke(const std::string& env, const std::string& by, const std::string& reason)
{
    return Impl::parsed<Revocation>(d->call(true, "SELECT relctl.revoke($1, $2, $3, $4::jsonb)", env, by,
                                            reason, d->client.toJson().dump()));
}

FreezeChange Database::freeze(const std::string& env, const std::string& by, const std::string& reason)
{
    return Impl::parsed<FreezeChange>(d->call(true, "SELECT relctl.freeze($1, $2, $3, $4::jsonb)", env, by,
                                              reason, d->client.toJson().dump()));
}

FreezeChange Database::unfreeze(const std::string& env, const std::string& by,
                                const std::optional<std::string>& reason)
{
    return Impl::parsed<FreezeChange>(d->call(true, "SELECT relctl.unfreeze($1, $2, $3::jsonb, $4)", env, by,
                                              d->client.toJson().dump(), reason));
}

namespace {

// The reply of relctl.freeze_many / unfreeze_many, each list in natural order.
BulkFreezeResult bulkFreezeResult(const nlohmann::json& reply)
{
    BulkFreezeResult r;
    try {
        r.changed = reply.at("changed").get<std::vector<std::string>>();
        r.unchanged = reply.at("unchanged").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(ExitCode::Internal, std::string("unexpected reply from the database: ") + e.what());
    }
    std::sort(r.changed.begin(), r.changed.end(), naturalLess);
    std::sort(r.unchanged.begin(), r.unchanged.end(), naturalLess);
    return r;
}

// The names as one parameter: a JSON array the server unpacks into text[]
// (libpqxx 6.4 has no array parameters).
const char* const kNamesParam = "ARRAY(SELECT json_array_elements_text($1::json))";

} // namespace

BulkFreezeResult Database::freezeMany(const std::vector<std::string>& envs, const std::string& by,
                                      const std::string& reason)
{
    return bulkFreezeResult(
        d->call(true, std::string("SELECT relctl.freeze_many(") + kNamesParam + ", $2, $3, $4::jsonb)",
                nlohmann::json(envs).dump(), by, reason, d->client.toJson().dump()));
}

BulkFreezeResult Database::unfreezeMany(const std::vector<std::string>& envs, const std::string& by,
                                        const std::optional<std::string>& reason)
{
    return bulkFreezeResult(
        d->call(true, std::string("SELECT relctl.unfreeze_many(") + kNamesParam + ", $2, $3, $4::jsonb)",
                nlohmann::json(envs).dump(), by, reason, d->client.toJson().dump()));
}

Outcome Database::dropCandidate(std::int64_t candidate, const std::string& by, const std::string& reason)
{
    return Outcome::fromReply(d->call(true, "SELECT relctl.queue_drop($1, $2, $3, $4::jsonb)", candidate, by,
                                      reason, d->client.toJson().dump()));
}

Supersessions Database::supersessions(const std::optional<std::string>& env, bool all)
{
    return Impl::parsed<Supersessions>(d->call(false, "SELECT relctl.approvals($1, $2)", env, all));
}

Outcome Database::decideSupersession(std::int64_t request, bool approve, const std::string& by,
                                     const std::optional<std::string>& reason)
{
    return Outcome::fromReply(d->call(true, "SELECT relctl.decide($1, $2, $3, $4, $5::jsonb)", request,
                                      approve, by, reason, d->client.toJson().dump()));
}

Outcome Database::requestPromotion(const PromotionRequest& r)
{
    return Outcome::fromReply(d->call(true, "SELECT relctl.promote_request($1, $2, $3, $4, $5, $6::jsonb)",
                                      r.env, r.release, r.generation, r.by, r.reason,
                                      d->client.toJson().dump()));
}

Promotions Database::promotions(const std::optional<std::string>& env, bool all)
{
    return Impl::parsed<Promotions>(d->call(false, "SELECT relctl.promotions_list($1, $2)", env, all));
}

Outcome Database::decidePromotion(std::int64_t id, bool approve, const std::string& by,
                                  const std::optional<std::string>& reason)
{
    return Outcome::fromReply(d->call(true, "SELECT relctl.decide_promotion($1, $2, $3, $4, $5::jsonb)", id,
                                      approve, by, reason, d->client.toJson().dump()));
}

Outcome Database::rollback(const RollbackRequest& r)
{
    const std::string opId = r.opId.empty() ? newOperationId() : r.opId;
    const auto deadline = std::chrono::steady_clock::now() + r.wait.value_or(std::chrono::milliseconds(0));
    const auto attempt = [&] {
        return d->call(true, "SELECT relctl.rollback($1, $2, $3, $4, $5, $6, $7, $8::jsonb)", r.env,
                       r.toRelease, r.toGeneration, r.toManifest, r.by, r.reason, opId,
                       d->client.toJson().dump());
    };
    return Impl::settled(d, opId, "rollback", [&] {
        if (!r.wait || r.wait->count() <= 0)
            return Outcome::fromReply(attempt());
        // Listen before the first attempt, so a release between it and the
        // wait is not missed.
        std::optional<QueueListener> listener;
        d->listen(listener, r.env);
        const bool watching = d->watch(r.env);
        Outcome outcome = d->retryWhileBusy(*listener, attempt, deadline);
        if (watching)
            d->unwatch(r.env);
        return outcome;
    });
}

Database connectWithin(const std::function<Database()>& connect,
                       std::optional<std::chrono::milliseconds> wait,
                       const std::function<void(const std::string&)>& tell)
{
    using Clock = std::chrono::steady_clock;
    if (!wait || wait->count() <= 0)
        return connect();
    const auto deadline = Clock::now() + *wait;
    auto pause = std::chrono::milliseconds(100);
    for (bool told = false;; told = true) {
        try {
            return connect();
        } catch (const Error& e) {
            // libpq's words for a server that did not answer within connect_timeout.
            const bool unanswered =
                e.code() == ExitCode::Unavailable &&
                std::string_view(e.what()).find("timeout expired") != std::string_view::npos;
            if (!unanswered || Clock::now() + pause >= deadline)
                throw;
            if (!told && tell)
                tell(std::string(e.what()) + "; connecting again until --wait runs out");
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::milliseconds(1000));
        }
    }
}

} // namespace relctl
