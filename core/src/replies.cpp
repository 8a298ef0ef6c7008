#include "relctl/replies.h"

#include <concepts>
#include <type_traits>

namespace relctl {

namespace {

using nlohmann::json;

// Each type's keys are listed once, in a `fields` function that names every
// key with its member and its kind:
//   required   always there;
//   nullable   always there, null when the server has no value (an empty optional);
//   omittable  only in some replies (an empty optional: the key is left out);
//   merged     another reply's keys, in the same object (listed first: the
//              type's own keys are written over them).
// Writer and Reader walk that list: to_json writes it, from_json reads it.

// `Self` is Type, or const Type when writing: one list serves both directions.
template <class Self, class Type>
concept Is = std::same_as<std::remove_const_t<Self>, Type>;

// A member as one JSON value: by its own to_json/from_json, except an Outcome,
// which is carried as the reply it was decoded from.
template <class T> json toValue(const T& value)
{
    return json(value);
}

json toValue(const Outcome& outcome)
{
    return outcome.body;
}

template <class T> T fromValue(const json& value)
{
    return value.get<T>();
}

template <> Outcome fromValue<Outcome>(const json& value)
{
    return Outcome::fromReply(value);
}

struct Writer
{
    json& j;

    template <class T> void required(const char* key, const T& value) { j[key] = toValue(value); }

    template <class T> void nullable(const char* key, const std::optional<T>& value)
    {
        j[key] = value ? toValue(*value) : json();
    }

    template <class T> void omittable(const char* key, const std::optional<T>& value)
    {
        if (value)
            j[key] = toValue(*value);
    }

    template <class T> void nullableSince(const char* key, const std::optional<T>& value)
    {
        nullable(key, value);
    }

    template <class T> void merged(const T& value) { j.update(json(value)); }
};

// Reading is strict: a key the type expects must be there (a missing one is
// json::out_of_range, which Database reports as an unreadable reply), so a
// change of the SQL's shape fails loudly instead of printing defaults.
struct Reader
{
    const json& j;

    template <class T> void required(const char* key, T& out) { out = fromValue<T>(j.at(key)); }

    template <class T> void nullable(const char* key, std::optional<T>& out)
    {
        const json& value = j.at(key);
        if (value.is_null())
            out.reset();
        else
            out = fromValue<T>(value);
    }

    template <class T> void omittable(const char* key, std::optional<T>& out)
    {
        const auto it = j.find(key);
        if (it == j.end())
            out.reset();
        else
            out = fromValue<T>(*it);
    }

    // A nullable key that a later migration added: a schema from before it
    // does not send the key at all, which reads as null (the console talks
    // to databases not yet migrated). Written back always, like nullable.
    template <class T> void nullableSince(const char* key, std::optional<T>& out)
    {
        if (j.contains(key))
            nullable(key, out);
        else
            out.reset();
    }

    template <class T> void merged(T& out) { j.get_to(out); }
};

// `fields` is declared below; the call finds it when instantiated (by argument-
// dependent lookup: Writer and Reader are in this namespace).
template <class T> void writeFields(json& j, const T& value)
{
    j = json::object();
    Writer writer{j};
    fields(writer, value);
}

template <class T> void readFields(const json& j, T& value)
{
    Reader reader{j};
    fields(reader, value);
}

template <class Io, Is<Lease> L> void fields(Io& io, L& l)
{
    io.required("token", l.token);
    io.required("job", l.job);
    io.required("release", l.release);
    io.required("generation", l.generation);
    io.required("acquired_at", l.acquiredAt);
    io.required("expires_at", l.expiresAt);
    io.required("ttl_ms", l.ttlMs);
    io.omittable("remaining_ms", l.remainingMs);
    io.nullable("host", l.host);
    io.nullable("pid", l.pid);
    io.nullable("job_url", l.jobUrl);
}

template <class Io, Is<Candidate> C> void fields(Io& io, C& c)
{
    io.required("candidate", c.candidate);
    io.required("job", c.job);
    io.required("release", c.release);
    io.required("generation", c.generation);
    io.required("queued_at", c.queuedAt);
    io.required("state", c.state);
    io.nullable("ended_at", c.endedAt);
    io.nullable("token", c.token);
    io.nullable("host", c.host);
    io.nullable("pid", c.pid);
    io.nullable("job_url", c.jobUrl);
}

template <class Io, Is<Manifest> M> void fields(Io& io, M& m)
{
    io.nullable("id", m.id);
    io.required("release", m.release);
    io.required("generation", m.generation);
    io.required("job", m.job);
    io.nullable("token", m.token);
    io.required("published_at", m.publishedAt);
    io.required("manifest", m.manifest);
}

template <class Io, Is<Frozen> F> void fields(Io& io, F& f)
{
    io.required("at", f.at);
    io.required("by", f.by);
    io.required("reason", f.reason);
}

template <class Io, Is<Environment> E> void fields(Io& io, E& e)
{
    io.required("name", e.name);
    io.required("default_ttl_ms", e.defaultTtlMs);
    io.required("max_ttl_ms", e.maxTtlMs);
    io.required("last_token", e.lastToken);
    io.required("created_at", e.createdAt);
    io.required("policy", e.policy);
    io.required("supersede", e.supersede);
    io.required("serialization", e.serialization);
    io.nullable("frozen", e.frozen);
    io.nullable("current", e.current);
    io.nullable("lease", e.lease);
    io.required("queue", e.queue);
    io.required("pending_supersessions", e.pendingSupersessions);
    io.nullable("promote_from", e.promoteFrom);
    io.required("soak_ms", e.soakMs);
    io.required("approvals_required", e.approvalsRequired);
    io.required("high_water_generation", e.highWaterGeneration);
    io.required("open_promotions", e.openPromotions);
    io.nullableSince("approver_role", e.approverRole);
}

template <class Io, Is<EnvironmentList> L> void fields(Io& io, L& l)
{
    io.required("environments", l.environments);
}

// The replies about one environment are its relctl.environment_json with the
// call's own keys merged in.
template <class Io, Is<EnvironmentAdded> A> void fields(Io& io, A& a)
{
    io.merged(a.environment);
    io.required("created", a.created);
}

template <class Io, Is<EnvironmentSet::Changed> C> void fields(Io& io, C& c)
{
    io.omittable("policy", c.policy);
    io.omittable("supersede", c.supersede);
    io.omittable("serialization", c.serialization);
    io.omittable("promote_from", c.promoteFrom);
    io.omittable("soak_ms", c.soakMs);
    io.omittable("approvals_required", c.approvalsRequired);
    io.omittable("approver_role", c.approverRole);
}

template <class Io, Is<EnvironmentSet> S> void fields(Io& io, S& s)
{
    io.merged(s.environment);
    io.required("status", s.status);
    io.required("changed", s.changed);
}

template <class Io, Is<FreezeChange> F> void fields(Io& io, F& f)
{
    io.merged(f.environment);
    io.required("status", f.status);
    io.required("changed", f.changed);
}

template <class Io, Is<LeaseShow> S> void fields(Io& io, S& s)
{
    io.required("env", s.env);
    io.nullable("lease", s.lease);
}

template <class Io, Is<Revocation> R> void fields(Io& io, R& r)
{
    io.required("status", r.status);
    io.required("env", r.env);
    io.required("revoked", r.revoked);
    io.nullable("lease", r.lease);
    io.omittable("by", r.by);
    io.omittable("reason", r.reason);
    io.omittable("message", r.message);
}

template <class Io, Is<Supersession> S> void fields(Io& io, S& s)
{
    io.required("id", s.id);
    io.required("env", s.env);
    io.required("state", s.state);
    io.required("opened_at", s.openedAt);
    io.nullable("decided_at", s.decidedAt);
    io.nullable("decided_by", s.decidedBy);
    io.nullableSince("decided_login", s.decidedLogin);
    io.nullable("reason", s.reason);
    io.nullable("winner", s.winner);
    io.required("skipped", s.skipped);
}

template <class Io, Is<ReplacedManifest> M> void fields(Io& io, M& m)
{
    io.required("id", m.id);
    io.required("release", m.release);
    io.required("generation", m.generation);
}

template <class Io, Is<RollbackRecord> R> void fields(Io& io, R& r)
{
    io.required("id", r.id);
    io.required("by", r.by);
    io.required("reason", r.reason);
    io.required("at", r.at);
    io.required("token", r.token);
    io.required("replaced", r.replaced);
}

template <class Io, Is<ManifestHistoryEntry> H> void fields(Io& io, H& h)
{
    io.merged(h.manifest);
    io.required("kind", h.kind);
    io.omittable("rollback", h.rollback);
}

template <class Io, Is<PromotionVote> V> void fields(Io& io, V& v)
{
    io.required("by", v.by);
    io.nullableSince("login", v.login);
    io.nullable("reason", v.reason);
    io.required("at", v.at);
}

template <class Io, Is<PromotionUpstream> U> void fields(Io& io, U& u)
{
    io.required("env", u.env);
    io.required("soak_ms", u.soakMs);
    io.nullable("accepted_at", u.acceptedAt);
    io.nullable("soaked_ms", u.soakedMs);
    io.nullable("soak_remaining_ms", u.soakRemainingMs);
    io.required("current", u.current);
}

template <class Io, Is<Promotion> P> void fields(Io& io, P& p)
{
    io.required("id", p.id);
    io.required("env", p.env);
    io.required("release", p.release);
    io.required("generation", p.generation);
    io.required("state", p.state);
    io.required("requested_by", p.requestedBy);
    io.nullableSince("requested_login", p.requestedLogin);
    io.nullable("reason", p.reason);
    io.required("requested_at", p.requestedAt);
    io.nullable("decided_at", p.decidedAt);
    io.required("approvals_required", p.approvalsRequired);
    io.nullableSince("approvals_given", p.approvalsGiven);
    io.nullableSince("approver_role", p.approverRole);
    io.required("approvals", p.approvals);
    io.nullable("denial", p.denial);
    io.nullable("upstream", p.upstream);
    io.required("current", p.current);
    io.required("candidate_manifest", p.candidateManifest);
}

template <class Io, Is<Promotions> P> void fields(Io& io, P& p)
{
    io.required("promotions", p.promotions);
}

template <class Io, Is<Supersessions> A> void fields(Io& io, A& a)
{
    io.required("approvals", a.requests); // the reply's key since relctl.approvals, kept for --json readers
}

template <class Io, Is<SupersessionDecision> D> void fields(Io& io, D& d)
{
    io.merged(d.supersession);
    io.required("status", d.status);
}

template <class Io, Is<ServerInfo> S> void fields(Io& io, S& s)
{
    io.required("server_version", s.serverVersion);
    io.required("database", s.database);
    io.required("login", s.login);
    io.required("now", s.now);
    io.nullable("schema_version", s.schemaVersion);
}

template <class Io, Is<Event> E> void fields(Io& io, E& e)
{
    io.required("id", e.id);
    io.required("at", e.at);
    io.nullable("env", e.env);
    io.required("operation", e.operation);
    io.required("outcome", e.outcome);
    io.nullable("reason", e.reason);
    io.nullable("job", e.job);
    io.nullable("release", e.release);
    io.nullable("generation", e.generation);
    io.nullable("token", e.token);
    io.nullable("current_token", e.currentToken);
    io.nullable("current_generation", e.currentGeneration);
    io.nullable("current_release", e.currentRelease);
    io.nullable("op_id", e.opId);
    io.nullable("host", e.host);
    io.nullable("pid", e.pid);
    io.nullable("job_url", e.jobUrl);
    io.required("detail", e.detail);
    io.nullable("actor", e.actor);
    io.nullable("db_user", e.dbUser);
    io.nullable("client_addr", e.clientAddr);
    io.nullable("high_water_generation", e.highWaterGeneration);
}

template <class Io, Is<AuditTrail> A> void fields(Io& io, A& a)
{
    io.required("events", a.events);
}

template <class Io, Is<TracedRefusal::OwnLease> L> void fields(Io& io, L& l)
{
    io.required("token", l.token);
    io.required("release", l.release);
    io.required("generation", l.generation);
    io.required("acquired_at", l.acquiredAt);
    io.required("expires_at", l.expiresAt);
    io.nullable("ended_at", l.endedAt);
    io.nullable("end_reason", l.endReason);
    io.nullable("host", l.host);
    io.nullable("pid", l.pid);
    io.nullable("job_url", l.jobUrl);
}

template <class Io, Is<TracedRefusal::SupersedingLease> L> void fields(Io& io, L& l)
{
    io.required("token", l.token);
    io.required("job", l.job);
    io.required("release", l.release);
    io.required("generation", l.generation);
    io.required("acquired_at", l.acquiredAt);
    io.required("expires_at", l.expiresAt);
    io.nullable("host", l.host);
    io.nullable("pid", l.pid);
    io.nullable("job_url", l.jobUrl);
}

template <class Io, Is<TracedRefusal::CurrentManifest> M> void fields(Io& io, M& m)
{
    io.required("release", m.release);
    io.required("generation", m.generation);
    io.required("job", m.job);
    io.nullable("token", m.token);
    io.required("published_at", m.publishedAt);
    io.required("published_before_ms", m.publishedBeforeMs);
}

template <class Io, Is<RefusalCause> C> void fields(Io& io, C& c)
{
    io.required("kind", c.kind);
    io.required("summary", c.summary);
    io.nullable("job", c.job);
    io.nullable("release", c.release);
    io.nullable("generation", c.generation);
    io.nullable("token", c.token);
    io.nullable("host", c.host);
    io.nullable("pid", c.pid);
    io.nullable("job_url", c.jobUrl);
    io.nullable("approval", c.approval);
    io.nullable("by", c.by);
    io.nullable("reason", c.reason);
    io.nullable("at", c.at);
}

template <class Io, Is<TracedRefusal> R> void fields(Io& io, R& r)
{
    io.required("event", r.event);
    io.nullable("lease", r.lease);
    io.nullable("superseded_by", r.supersededBy);
    io.nullable("current_manifest", r.currentManifest);
    io.nullable("cause", r.cause);
}

template <class Io, Is<JobTrace> T> void fields(Io& io, T& t)
{
    io.required("job", t.job);
    io.required("refusals", t.refusals);
}

// The outcome is the stored reply (see toValue/fromValue).
template <class Io, Is<OperationRecord> O> void fields(Io& io, O& o)
{
    io.required("op_id", o.opId);
    io.required("status", o.status);
    io.omittable("operation", o.operation);
    io.omittable("request", o.request);
    io.omittable("outcome", o.outcome);
    io.omittable("recorded_at", o.recordedAt);
    io.omittable("state", o.state);
    io.omittable("summary", o.summary);
    io.omittable("next", o.next);
    io.omittable("evidence", o.evidence);
}

template <class Io, Is<JobStatus> S> void fields(Io& io, S& s)
{
    io.omittable("job", s.job);
    io.omittable("op_id", s.opId);
    io.required("state", s.state);
    io.required("summary", s.summary);
    io.required("next", s.next);
    io.required("evidence", s.evidence);
}

} // namespace

// to_json and from_json of a type whose keys its `fields` lists.
// NOLINTBEGIN(bugprone-macro-parentheses): the argument is a type name
#define RELCTL_JSON_FROM_FIELDS(Type)                                                                        \
    void to_json(json& j, const Type& value)                                                                 \
    {                                                                                                        \
        writeFields(j, value);                                                                               \
    }                                                                                                        \
    void from_json(const json& j, Type& value)                                                               \
    {                                                                                                        \
        readFields(j, value);                                                                                \
    }

RELCTL_JSON_FROM_FIELDS(Lease)
RELCTL_JSON_FROM_FIELDS(Candidate)
RELCTL_JSON_FROM_FIELDS(Manifest)
RELCTL_JSON_FROM_FIELDS(Frozen)
RELCTL_JSON_FROM_FIELDS(Environment)
RELCTL_JSON_FROM_FIELDS(EnvironmentList)
RELCTL_JSON_FROM_FIELDS(EnvironmentAdded)
RELCTL_JSON_FROM_FIELDS(EnvironmentSet::Changed)
RELCTL_JSON_FROM_FIELDS(EnvironmentSet)
RELCTL_JSON_FROM_FIELDS(FreezeChange)
RELCTL_JSON_FROM_FIELDS(LeaseShow)
RELCTL_JSON_FROM_FIELDS(Revocation)
RELCTL_JSON_FROM_FIELDS(Supersession)
RELCTL_JSON_FROM_FIELDS(ReplacedManifest)
RELCTL_JSON_FROM_FIELDS(RollbackRecord)
RELCTL_JSON_FROM_FIELDS(ManifestHistoryEntry)
RELCTL_JSON_FROM_FIELDS(PromotionVote)
RELCTL_JSON_FROM_FIELDS(PromotionUpstream)
RELCTL_JSON_FROM_FIELDS(Promotion)
RELCTL_JSON_FROM_FIELDS(Promotions)
RELCTL_JSON_FROM_FIELDS(Supersessions)
RELCTL_JSON_FROM_FIELDS(SupersessionDecision)
RELCTL_JSON_FROM_FIELDS(ServerInfo)
RELCTL_JSON_FROM_FIELDS(Event)
RELCTL_JSON_FROM_FIELDS(AuditTrail)
RELCTL_JSON_FROM_FIELDS(TracedRefusal::OwnLease)
RELCTL_JSON_FROM_FIELDS(TracedRefusal::SupersedingLease)
RELCTL_JSON_FROM_FIELDS(TracedRefusal::CurrentManifest)
RELCTL_JSON_FROM_FIELDS(RefusalCause)
RELCTL_JSON_FROM_FIELDS(TracedRefusal)
RELCTL_JSON_FROM_FIELDS(JobTrace)
RELCTL_JSON_FROM_FIELDS(OperationRecord)
RELCTL_JSON_FROM_FIELDS(JobStatus)

#undef RELCTL_JSON_FROM_FIELDS
// NOLINTEND(bugprone-macro-parentheses)

// Not a list of keys: relctl.manifest_json of a row that does not exist has
// every member null.
void to_json(json& j, const ManifestShow& s)
{
    if (s.manifest) {
        to_json(j, *s.manifest);
    } else {
        j = json::object();
        for (const char* key : {"id", "release", "generation", "job", "token", "published_at", "manifest"})
            j[key] = nullptr;
    }
    j["env"] = s.env;
    j["high_water_generation"] = s.highWaterGeneration;
}

void from_json(const json& j, ManifestShow& s)
{
    Reader reader{j};
    reader.required("env", s.env);
    reader.required("high_water_generation", s.highWaterGeneration);
    if (j.at("release").is_null())
        s.manifest.reset();
    else
        s.manifest = j.get<Manifest>();
}

// Not a list of keys: each entry of the history carries the environment too.
void to_json(json& j, const ManifestHistory& h)
{
    json history = json::array();
    for (const ManifestHistoryEntry& m : h.history) {
        json item = m;
        item["env"] = h.env;
        history.push_back(std::move(item));
    }
    j = json{{"env", h.env},
             {"high_water_generation", h.highWaterGeneration},
             {"current_manifest_id", h.currentManifestId ? json(*h.currentManifestId) : json()},
             {"history", std::move(history)}};
}

void from_json(const json& j, ManifestHistory& h)
{
    Reader reader{j};
    reader.required("env", h.env);
    reader.required("high_water_generation", h.highWaterGeneration);
    reader.nullable("current_manifest_id", h.currentManifestId);
    reader.required("history", h.history);
}

std::string actorWithLogin(const std::string& by, const std::optional<std::string>& login)
{
    if (!login || login->empty() || *login == by)
        return by;
    return by + " (login " + *login + ")";
}

} // namespace relctl
