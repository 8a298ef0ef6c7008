// The release console's queries. Each is one call of a relctl.console_*
// function (migrations/functions/console.sql and console_*.sql) in a read-only transaction
// (but the export, which reads a view such a function makes: see auditRows):
// the filtering, paging and joining happen on the server, and times arrive as
// epoch milliseconds (read into relctl::Timestamp), so nothing here parses a
// timestamp's text.
//
// The timeline is capped on the server to the newest 20,000 leases and 50,000
// markers of the window, so that a window over years of history cannot exhaust
// memory; a console that needs more zooms in.

#include "relctl/console.h"

#include "database_impl.h"
#include "jsonfields.h"
#include "relctl/catalogue.h"
#include "rowfields.h"

#include <exception>
#include <optional>
#include <pqxx/stream_from>
#include <string>
#include <tuple>
#include <utility>

namespace relctl {

namespace {

using nlohmann::json;

using jsonfields::optional;
using jsonfields::value;

std::vector<std::string> strings(const json& array)
{
    std::vector<std::string> out;
    out.reserve(array.size());
    for (const json& s : array)
        out.push_back(s.get<std::string>());
    return out;
}

Event toEvent(const json& j)
{
    Event e;
    e.id = value<std::int64_t>(j, "id");
    e.at = value<Timestamp>(j, "at");
    e.env = optional<std::string>(j, "env");
    e.operation = value<std::string>(j, "operation");
    e.outcome = value<std::string>(j, "outcome");
    e.reason = optional<std::string>(j, "reason");
    e.job = optional<std::string>(j, "job");
    e.release = optional<std::string>(j, "release");
    e.generation = optional<std::int64_t>(j, "generation");
    e.token = optional<std::int64_t>(j, "token");
    e.currentToken = optional<std::int64_t>(j, "current_token");
    e.currentGeneration = optional<std::int64_t>(j, "current_generation");
    e.currentRelease = optional<std::string>(j, "current_release");
    e.opId = optional<std::string>(j, "op_id");
    e.host = optional<std::string>(j, "host");
    e.pid = optional<std::int64_t>(j, "pid");
    e.jobUrl = optional<std::string>(j, "job_url");
    e.actor = optional<std::string>(j, "actor");
    e.dbUser = optional<std::string>(j, "db_user");
    e.clientAddr = optional<std::string>(j, "client_addr");
    if (const auto d = j.find("detail"); d != j.end() && !d->is_null())
        e.detail = d->dump();
    return e;
}

LeaseSpan toLease(const json& j)
{
    LeaseSpan l;
    l.env = value<std::string>(j, "env");
    l.token = value<std::int64_t>(j, "token");
    l.job = value<std::string>(j, "job");
    l.release = value<std::string>(j, "release");
    l.generation = value<std::int64_t>(j, "generation");
    l.acquiredAt = value<Timestamp>(j, "acquired_at");
    l.endsAt = value<Timestamp>(j, "ends_at");
    l.ending = value<std::string>(j, "ending");
    return l;
}

std::optional<LeaseSpan> toOptionalLease(const json& j, const char* key)
{
    const auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return std::nullopt;
    return toLease(*it);
}

// A reply of an unexpected shape is the database's fault (an older schema,
// say), not the caller's: report it as internal, like an unreadable reply.
template <typename F> auto convert(F&& f) -> decltype(f())
{
    try {
        return f();
    } catch (const json::exception& e) {
        throw Error(ExitCode::Internal, std::string("unreadable reply from the database: ") + e.what());
    }
}

// One line of COPY's text format split into its fields: tab-separated, \N
// for NULL, a backslash escaping the rest. A field without a backslash is a
// view into `line`; the others are unescaped into `scratch`, reserved to the
// line's length first so that it never moves (unescaping only shortens).
void splitCopyLine(const std::string& line, std::string& scratch, AuditRowText& fields)
{
    fields.clear();
    scratch.clear();
    scratch.reserve(line.size());
    std::string_view rest(line);
    if (!rest.empty() && rest.back() == '\n')
        rest.remove_suffix(1);
    for (;;) {
        // One pass for the field's end and whether it holds an escape: a
        // find() for each is a memchr call per field, twice, for fields of
        // a few bytes.
        std::size_t tab = 0;
        bool escaped = false;
        while (tab < rest.size() && rest[tab] != '\t') {
            escaped = escaped || rest[tab] == '\\';
            ++tab;
        }
        const std::string_view field = rest.substr(0, tab);
        if (tab == rest.size())
            tab = std::string_view::npos;
        if (field == "\\N") {
            fields.emplace_back(std::nullopt);
        } else if (!escaped) {
            fields.emplace_back(field);
        } else {
            const std::size_t start = scratch.size();
            for (std::size_t i = 0; i < field.size(); ++i) {
                char c = field[i];
                if (c == '\\' && i + 1 < field.size()) {
                    switch (c = field[++i]) {
                    case 'b':
                        c = '\b';
                        break;
                    case 'f':
                        c = '\f';
                        break;
                    case 'n':
                        c = '\n';
                        break;
                    case 'r':
                        c = '\r';
                        break;
                    case 't':
                        c = '\t';
                        break;
                    case 'v':
                        c = '\v';
                        break;
                    default:
                        break; // a backslash or any other character stands for itself
                    }
                }
                scratch.push_back(c);
            }
            fields.emplace_back(std::string_view(scratch).substr(start));
        }
        if (tab == std::string_view::npos)
            return;
        rest.remove_prefix(tab + 1);
    }
}

// COPY takes no parameters: the export's arguments enter its text as
// literals, quoted by libpq (PQescapeStringConn) or formatted as numbers.
std::string literal(pqxx::transaction_base& tx, const std::optional<std::string>& s)
{
    return s ? tx.quote(*s) : std::string("NULL");
}

std::string literal(const std::optional<std::int64_t>& n)
{
    return n ? std::to_string(*n) : std::string("NULL");
}

// The console's functions take times as epoch milliseconds.
std::optional<std::int64_t> millis(const std::optional<Timestamp>& t)
{
    return t ? std::optional<std::int64_t>(t->millis()) : std::nullopt;
}

} // namespace

const char* auditSortKey(AuditSort::Column column)
{
    // The catalogue lists the keys in the enum's order; its entries are
    // literals, so data() is NUL-terminated.
    return catalogue::kAuditSortKeys.at(static_cast<std::size_t>(column)).data();
}

AuditCursor auditCursorAfter(const Event& e, AuditSort::Column column)
{
    const auto number = [](const std::optional<std::int64_t>& n) {
        return n ? std::optional<std::string>(std::to_string(*n)) : std::nullopt;
    };
    AuditCursor c{std::nullopt, e.id};
    switch (column) {
    case AuditSort::Column::Time:
        break;
    case AuditSort::Column::Environment:
        c.key = e.env;
        break;
    case AuditSort::Column::Operation:
        c.key = e.operation;
        break;
    case AuditSort::Column::Outcome:
        c.key = e.outcome;
        break;
    case AuditSort::Column::Reason:
        c.key = e.reason;
        break;
    case AuditSort::Column::Job:
        c.key = e.job;
        break;
    case AuditSort::Column::Release:
        c.key = e.release;
        break;
    case AuditSort::Column::Generation:
        c.key = number(e.generation);
        break;
    case AuditSort::Column::Token:
        c.key = number(e.token);
        break;
    case AuditSort::Column::Host:
        c.key = e.host;
        break;
    case AuditSort::Column::Actor:
        c.key = e.actor;
        break;
    }
    return c;
}

bool sameExceptClock(const EnvironmentRow& a, const EnvironmentRow& b)
{
    const auto fields = [](const EnvironmentRow& r) {
        return std::tie(r.name, r.group, r.policy, r.supersede, r.serialization, r.currentRelease,
                        r.currentGeneration, r.publishedBy, r.publishedAt, r.holderJob, r.holderRelease,
                        r.holderToken, r.holderGeneration, r.holderAcquiredAt, r.holderHost, r.leaseExpiresAt,
                        r.queueLength, r.queue, r.pendingSupersessions, r.pendingPromotions, r.frozen,
                        r.frozenBy, r.frozenReason, r.frozenAt, r.promoteFrom, r.attention);
    };
    return fields(a) == fields(b);
}

ConsoleQueries::ConsoleQueries(Database& db) : m_db(db) {}

namespace {

// A list of names as one parameter: a JSON array the server unpacks (NULL:
// no list, every environment).
std::optional<std::string> nameArray(const std::optional<std::vector<std::string>>& names)
{
    if (!names)
        return std::nullopt;
    return json(*names).dump();
}

// `call` with NAMES replaced by parameter `param` unpacked into text[].
std::string withNames(std::string call, int param)
{
    const std::string p = "$" + std::to_string(param) + "::json";
    call.replace(call.find("NAMES"), 5,
                 "CASE WHEN " + p + " IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(" + p +
                     ")) END");
    return call;
}

} // namespace

namespace {

// A JSON list of the row, parsed only when it holds something: '[]' on
// almost every row.
json list(const pqxx::field& f)
{
    if (f.is_null() || std::string_view(f.c_str(), f.size()) == "[]")
        return json::array();
    return json::parse(f.c_str(), f.c_str() + f.size());
}

} // namespace

std::vector<EnvironmentRow> ConsoleQueries::environments(const std::optional<std::vector<std::string>>& names)
{
    const pqxx::result result = internal::DatabaseGate::impl(m_db).rows(
        withNames("SELECT * FROM relctl.console_environments(NAMES)", 1), nameArray(names));
    try {
        // By name, once: the columns' order is the function's to change.
        const auto column = [&](const char* name) { return result.column_number(name); };
        const auto cName = column("name"), cGroup = column("group"), cPolicy = column("policy"),
                   cSupersede = column("supersede"), cSerialization = column("serialization"),
                   cPromoteFrom = column("promote_from"), cRelease = column("current_release"),
                   cGeneration = column("current_generation"), cPublishedBy = column("published_by"),
                   cPublishedAt = column("published_at"), cHolderJob = column("holder_job"),
                   cHolderRelease = column("holder_release"), cHolderToken = column("holder_token"),
                   cHolderGeneration = column("holder_generation"),
                   cHolderAcquiredAt = column("holder_acquired_at"), cHolderHost = column("holder_host"),
                   cExpiresAt = column("lease_expires_at"), cSupersessions = column("pending_supersessions"),
                   cPromotions = column("pending_promotions"), cFrozen = column("frozen"),
                   cFrozenBy = column("frozen_by"), cFrozenReason = column("frozen_reason"),
                   cFrozenAt = column("frozen_at"), cQueue = column("queue"),
                   cAttention = column("attention"), cNow = column("server_now");
        std::vector<EnvironmentRow> rows;
        rows.reserve(std::size_t(result.size()));
        for (const pqxx::row& x : result) {
            EnvironmentRow r;
            r.name = rowfields::required<std::string>(x[cName]);
            r.group = rowfields::required<std::string>(x[cGroup]);
            r.policy = rowfields::required<std::string>(x[cPolicy]);
            r.supersede = rowfields::required<std::string>(x[cSupersede]);
            r.serialization = rowfields::required<std::string>(x[cSerialization]);
            r.currentRelease = rowfields::optional<std::string>(x[cRelease]);
            r.currentGeneration = rowfields::optional<std::int64_t>(x[cGeneration]);
            r.publishedBy = rowfields::optional<std::string>(x[cPublishedBy]);
            r.publishedAt = rowfields::optional<Timestamp>(x[cPublishedAt]);
            r.holderJob = rowfields::optional<std::string>(x[cHolderJob]);
            r.holderRelease = rowfields::optional<std::string>(x[cHolderRelease]);
            r.holderToken = rowfields::optional<std::int64_t>(x[cHolderToken]);
            r.holderGeneration = rowfields::optional<std::int64_t>(x[cHolderGeneration]);
            r.holderAcquiredAt = rowfields::optional<Timestamp>(x[cHolderAcquiredAt]);
            r.holderHost = rowfields::optional<std::string>(x[cHolderHost]);
            r.leaseExpiresAt = rowfields::optional<Timestamp>(x[cExpiresAt]);
            for (const json& c : list(x[cQueue])) {
                QueuedCandidate q;
                q.candidate = value<std::int64_t>(c, "candidate");
                q.position = value<std::int64_t>(c, "position");
                q.job = value<std::string>(c, "job");
                q.release = value<std::string>(c, "release");
                q.generation = value<std::int64_t>(c, "generation");
                q.queuedAt = value<Timestamp>(c, "queued_at");
                q.host = optional<std::string>(c, "host");
                q.jobUrl = optional<std::string>(c, "job_url");
                q.skippedBy = optional<std::int64_t>(c, "skipped_by");
                q.wins = optional<std::int64_t>(c, "wins");
                r.queue.push_back(std::move(q));
            }
            r.queueLength = std::int64_t(r.queue.size());
            r.pendingSupersessions = rowfields::required<std::int64_t>(x[cSupersessions]);
            r.pendingPromotions = rowfields::required<std::int64_t>(x[cPromotions]);
            r.frozen = rowfields::required<bool>(x[cFrozen]);
            r.frozenBy = rowfields::optional<std::string>(x[cFrozenBy]);
            r.frozenReason = rowfields::optional<std::string>(x[cFrozenReason]);
            r.frozenAt = rowfields::optional<Timestamp>(x[cFrozenAt]);
            r.promoteFrom = rowfields::optional<std::string>(x[cPromoteFrom]);
            for (const json& a : list(x[cAttention])) {
                AttentionItem item;
                item.reason = value<std::string>(a, "reason");
                item.summary = value<std::string>(a, "summary");
                item.at = optional<Timestamp>(a, "at");
                r.attention.push_back(std::move(item));
            }
            r.serverNow = rowfields::required<Timestamp>(x[cNow]);
            rows.push_back(std::move(r));
        }
        return rows;
    } catch (const json::exception& e) {
        throw Error(ExitCode::Internal, std::string("unreadable reply from the database: ") + e.what());
    } catch (const pqxx::pqxx_exception& e) {
        // A column missing or a value that does not convert: a database
        // whose functions are not the ones this build expects.
        throw Error(ExitCode::Internal,
                    std::string("unreadable reply from the database: ") + e.base().what());
    }
}

namespace {

// A member of an array reply, empty for JSON null.
template <typename T> std::optional<T> optionalAt(const json& array, std::size_t i)
{
    if (array[i].is_null())
        return std::nullopt;
    return array[i].get<T>();
}

// An environment of relctl.console_promotions: an array of the members the
// Promotions view reads, in the order that function's comment gives. A
// database whose functions predate that sends relctl.environment_json's
// object instead, read whole.
Environment toPromotionsEnvironment(const json& a)
{
    if (a.is_object())
        return a.get<Environment>();
    enum : std::size_t {
        kName,
        kPromoteFrom,
        kSoakMs,
        kApprovalsRequired,
        kApproverRole,
        kFrozenAt,
        kFrozenBy,
        kFrozenReason,
        kCurrentId,
        kCurrentRelease,
        kCurrentGeneration,
        kMembers
    };
    if (!a.is_array() || a.size() != kMembers)
        throw json::type_error::create(302, "an environment of the promotions read: " + a.dump(), &a);
    Environment e;
    e.name = a[kName].get<std::string>();
    e.promoteFrom = optionalAt<std::string>(a, kPromoteFrom);
    e.soakMs = a[kSoakMs].get<std::int64_t>();
    e.approvalsRequired = a[kApprovalsRequired].get<std::int64_t>();
    e.approverRole = optionalAt<std::string>(a, kApproverRole);
    if (!a[kFrozenAt].is_null()) {
        Frozen f;
        f.at = a[kFrozenAt].get<Timestamp>();
        f.by = optionalAt<std::string>(a, kFrozenBy).value_or("");
        f.reason = optionalAt<std::string>(a, kFrozenReason).value_or("");
        e.frozen = std::move(f);
    }
    if (!a[kCurrentId].is_null()) {
        Manifest m;
        m.id = a[kCurrentId].get<std::int64_t>();
        m.release = a[kCurrentRelease].get<std::string>();
        m.generation = a[kCurrentGeneration].get<std::int64_t>();
        e.current = std::move(m);
    }
    return e;
}

} // namespace

PromotionsRead ConsoleQueries::promotions(const std::optional<std::vector<std::string>>& names,
                                          int decidedLimit)
{
    const json reply = internal::DatabaseGate::impl(m_db).call(
        false, withNames("SELECT relctl.console_promotions(NAMES, $2)", 1), nameArray(names), decidedLimit);
    return convert([&] {
        PromotionsRead read;
        const json& environments = reply.at("environments");
        read.environments.reserve(environments.size());
        for (const json& a : environments)
            read.environments.push_back(toPromotionsEnvironment(a));
        read.promotions = reply.at("promotions").get<std::vector<Promotion>>();
        if (const auto c = reply.find("covers"); c != reply.end() && !c->is_null())
            read.covers = strings(*c);
        return read;
    });
}

AuditPage ConsoleQueries::auditPage(const AuditPageRequest& request)
{
    // Checked here too, so a bad limit is refused before a round trip; the
    // server checks it again for any other client.
    if (request.limit < 1 || request.limit > 5000)
        throwUsage("an audit page holds 1 to 5000 events, not " + std::to_string(request.limit));
    const AuditFilter& f = request.filter;
    std::optional<std::string> afterKey;
    std::optional<std::int64_t> afterId;
    if (request.after) {
        afterKey = request.after->key;
        afterId = request.after->id;
    }
    const json reply = internal::DatabaseGate::impl(m_db).call(
        false, "SELECT relctl.console_audit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        f.env, f.job, f.operation, f.reason, millis(f.from), millis(f.to), f.text,
        std::string(auditSortKey(request.sort.column)), request.sort.descending, afterKey, afterId,
        request.newerThan, request.limit, f.outcome);
    return convert([&] {
        AuditPage page;
        for (const json& j : reply.at("events"))
            page.events.push_back(toEvent(j));
        page.more = value<bool>(reply, "more");
        page.horizon = value<std::int64_t>(reply, "horizon");
        return page;
    });
}

void ConsoleQueries::auditRows(const AuditFilter& f, const AuditSort& sort,
                               const std::function<void(const AuditRowText&)>& row)
{
    // Rows between two re-armings of the watchdog: a stall is a call bound
    // without this many rows, not an export that takes longer than one.
    constexpr std::int64_t kRowsPerBound = 4096;
    auto& d = internal::DatabaseGate::impl(m_db);
    std::exception_ptr fromRow; // what `row` threw: passed on as it is
    std::optional<session::Armed> armed;
    // The rows come from a temporary view that relctl.console_audit_export_view
    // makes for this transaction, read like the table (nothing stored on
    // either side), and gone when the transaction rolls back. A read-only
    // session or a standby cannot make one (25006); there the rows come from
    // relctl.console_audit_export, which stores them on the server first:
    // the same rows in the same order, at about two thirds of the speed.
    // Returns false when the view was refused.
    const auto read = [&](bool throughView) {
        try {
            std::optional<pqxx::work> viewTx;
            std::optional<pqxx::read_transaction> readTx;
            pqxx::transaction_base& tx = throughView
                                             ? static_cast<pqxx::transaction_base&>(viewTx.emplace(d.conn))
                                             : static_cast<pqxx::transaction_base&>(readTx.emplace(d.conn));
            // A million events take seconds, more than the statement bound made
            // for protocol calls; the watchdog bounds each stretch of rows instead.
            tx.exec("SET LOCAL statement_timeout = 0");
            // The export's `at` is the timestamp's own text (see AuditRowText):
            // one form, whatever the login's settings.
            tx.exec("SET LOCAL TimeZone = 'UTC'");
            tx.exec("SET LOCAL DateStyle = 'ISO, MDY'");
            const std::string arguments =
                literal(tx, f.env) + "::text, " + literal(tx, f.job) + "::text, " + literal(tx, f.operation) +
                "::text, " + literal(tx, f.reason) + "::text, " + literal(millis(f.from)) + "::bigint, " +
                literal(millis(f.to)) + "::bigint, " + literal(tx, f.text) + "::text, " +
                tx.quote(std::string(auditSortKey(sort.column))) + ", " +
                (sort.descending ? "true" : "false") + ", " + literal(tx, f.outcome) + "::text";
            std::string source;
            if (throughView) {
                try {
                    armed.emplace(d.watchdog, d.conn.sock(), d.callTimeout);
                    source = tx.exec1("SELECT relctl.console_audit_export_view(" + arguments + ")")[0]
                                 .as<std::string>();
                    armed->disarm();
                } catch (const pqxx::sql_error& e) {
                    if (armed)
                        armed->disarm();
                    if (e.sqlstate() != "25006")
                        throw;
                    return false;
                }
            } else {
                source = "relctl.console_audit_export(" + arguments + ")";
            }
            armed.emplace(d.watchdog, d.conn.sock(), d.callTimeout);
            pqxx::stream_from stream(tx, "(SELECT * FROM " + source + ")");
            std::string line;
            std::string scratch;
            AuditRowText fields;
            for (std::int64_t n = 1; stream.get_raw_line(line); ++n) {
                splitCopyLine(line, scratch, fields);
                try {
                    row(fields);
                } catch (...) {
                    fromRow = std::current_exception();
                    break;
                }
                if (n % kRowsPerBound == 0) {
                    if (armed->disarm())
                        d.connectionLost(false, true, "no rows within the call bound");
                    armed.emplace(d.watchdog, d.conn.sock(), d.callTimeout);
                }
            }
            if (fromRow) {
                // Stop the server rather than read the rest: cancel, then read to
                // the cancellation's error, after which the transaction rolls back.
                try {
                    d.conn.cancel_query();
                    while (stream.get_raw_line(line)) {
                    }
                } catch (...) {
                }
            } else {
                stream.complete();
                // The view's transaction rolls back, taking the view with it.
                if (viewTx)
                    viewTx->abort();
                else
                    readTx->commit();
            }
            armed->disarm();
        } catch (const pqxx::broken_connection& e) {
            d.connectionLost(false, armed && armed->disarm(), e.what());
        } catch (const Error&) {
            throw;
        } catch (...) {
            if (armed)
                armed->disarm();
            d.translateCurrentException();
        }
        return true;
    };
    if (!read(true))
        read(false);
    if (fromRow)
        std::rethrow_exception(fromRow);
}

TimelineSlice ConsoleQueries::timeline(Timestamp from, Timestamp to,
                                       const std::optional<std::vector<std::string>>& envs)
{
    const json reply = internal::DatabaseGate::impl(m_db).call(
        false, withNames("SELECT relctl.console_timeline($1, $2, NAMES)", 3), from.millis(), to.millis(),
        nameArray(envs));
    return convert([&] {
        TimelineSlice slice;
        slice.environments = strings(reply.at("environments"));
        for (const json& j : reply.at("leases"))
            slice.leases.push_back(toLease(j));
        for (const json& j : reply.at("markers")) {
            TimelineMarker m;
            m.eventId = value<std::int64_t>(j, "event");
            m.env = value<std::string>(j, "env");
            m.at = value<Timestamp>(j, "at");
            m.kind = value<std::string>(j, "kind");
            m.label = value<std::string>(j, "label");
            m.job = value<std::string>(j, "job");
            slice.markers.push_back(std::move(m));
        }
        for (const json& j : reply.at("freezes")) {
            FrozenSpan f;
            f.env = value<std::string>(j, "env");
            f.from = value<Timestamp>(j, "from");
            f.to = optional<Timestamp>(j, "to");
            f.by = value<std::string>(j, "by");
            f.reason = value<std::string>(j, "reason");
            slice.freezes.push_back(std::move(f));
        }
        slice.serverNow = value<Timestamp>(reply, "server_now");
        slice.historyFirst = optional<Timestamp>(reply, "history_first");
        slice.historyLast = optional<Timestamp>(reply, "history_last");
        return slice;
    });
}

std::optional<RefusalTrace> ConsoleQueries::trace(std::int64_t eventId)
{
    const json reply =
        internal::DatabaseGate::impl(m_db).call(false, "SELECT relctl.console_trace($1)", eventId);
    if (reply.is_null())
        return std::nullopt; // no such event, or it was accepted
    return convert([&] {
        RefusalTrace t;
        t.event = toEvent(reply.at("event"));
        t.lease = toOptionalLease(reply, "lease");
        t.supersededBy = toOptionalLease(reply, "superseded_by");
        if (t.supersededBy) {
            const json& beat = reply.at("superseded_by");
            t.supersedingHost = optional<std::string>(beat, "host");
            t.supersedingPid = optional<std::int64_t>(beat, "pid");
            t.supersedingJobUrl = optional<std::string>(beat, "job_url");
        }
        if (const auto it = reply.find("current"); it != reply.end() && !it->is_null()) {
            t.currentRelease = optional<std::string>(*it, "release");
            t.currentGeneration = optional<std::int64_t>(*it, "generation");
            t.currentJob = optional<std::string>(*it, "job");
            t.currentPublishedAt = optional<Timestamp>(*it, "published_at");
            t.publishedBeforeMs = optional<std::int64_t>(*it, "published_before_ms");
        }
        if (const auto it = reply.find("gate"); it != reply.end() && !it->is_null()) {
            const json& g = *it;
            PromotionGate gate;
            gate.upstreamEnv = optional<std::string>(g, "upstream_env");
            gate.soakMs = optional<std::int64_t>(g, "soak_ms");
            gate.upstreamAcceptedAt = optional<Timestamp>(g, "upstream_accepted_at");
            gate.soakedMs = optional<std::int64_t>(g, "soaked_ms");
            gate.soakRemainingMs = optional<std::int64_t>(g, "soak_remaining_ms");
            gate.upstreamRelease = optional<std::string>(g, "upstream_release");
            gate.upstreamGeneration = optional<std::int64_t>(g, "upstream_generation");
            gate.promotion = optional<std::int64_t>(g, "promotion");
            if (const auto by = g.find("approved_by"); by != g.end() && by->is_array())
                gate.approvedBy = strings(*by);
            gate.approvalsRequired = optional<std::int64_t>(g, "approvals_required");
            gate.deniedBy = optional<std::string>(g, "denied_by");
            gate.denialReason = optional<std::string>(g, "denial_reason");
            gate.deniedAt = optional<Timestamp>(g, "denied_at");
            gate.requestedBy = optional<std::string>(g, "requested_by");
            gate.requestedLogin = optional<std::string>(g, "requested_login");
            gate.approverRole = optional<std::string>(g, "approver_role");
            gate.decidedBy = optional<std::string>(g, "decided_by");
            gate.decidedLogin = optional<std::string>(g, "decided_login");
            t.gate = std::move(gate);
        }
        if (const auto it = reply.find("cause"); it != reply.end() && !it->is_null()) {
            const json& c = *it;
            TraceCause cause;
            cause.kind = value<std::string>(c, "kind");
            cause.summary = value<std::string>(c, "summary");
            cause.job = optional<std::string>(c, "job");
            cause.release = optional<std::string>(c, "release");
            cause.generation = optional<std::int64_t>(c, "generation");
            cause.token = optional<std::int64_t>(c, "token");
            cause.host = optional<std::string>(c, "host");
            cause.pid = optional<std::int64_t>(c, "pid");
            cause.jobUrl = optional<std::string>(c, "job_url");
            cause.approval = optional<std::int64_t>(c, "approval");
            cause.by = optional<std::string>(c, "by");
            cause.reason = optional<std::string>(c, "reason");
            cause.at = optional<Timestamp>(c, "at");
            t.cause = std::move(cause);
        }
        return std::optional<RefusalTrace>(std::move(t));
    });
}

std::vector<std::string> ConsoleQueries::operations()
{
    const json reply = internal::DatabaseGate::impl(m_db).call(false, "SELECT relctl.console_operations()");
    return convert([&] { return strings(reply); });
}

std::vector<std::string> ConsoleQueries::reasons()
{
    const json reply = internal::DatabaseGate::impl(m_db).call(false, "SELECT relctl.console_reasons()");
    return convert([&] { return strings(reply); });
}

} // namespace relctl
