#include "relctl/replies.h"

namespace relctl {

namespace {

using nlohmann::json;

// Reading is strict: a key the type expects must be there (a missing one is
// json::out_of_range, which Database reports as an unreadable reply), so a
// change of the SQL's shape fails loudly instead of printing defaults.
template <class T> void read(const json& j, const char* key, T& out)
{
    j.at(key).get_to(out);
}

// A member the server sends as null when it has no value.
template <class T> void read(const json& j, const char* key, std::optional<T>& out)
{
    const json& v = j.at(key);
    if (v.is_null())
        out.reset();
    else
        out = v.get<T>();
}

// A key that only some replies carry.
template <class T> void readIfPresent(const json& j, const char* key, std::optional<T>& out)
{
    const auto it = j.find(key);
    if (it == j.end())
        out.reset();
    else
        out = it->template get<T>();
}

template <class T> json nullable(const std::optional<T>& value)
{
    return value ? json(*value) : json();
}

template <class T> void writeIfPresent(json& j, const char* key, const std::optional<T>& value)
{
    if (value)
        j[key] = *value;
}

} // namespace

void to_json(json& j, const Lease& l)
{
    j = json{{"token", l.token},
             {"job", l.job},
             {"release", l.release},
             {"generation", l.generation},
             {"acquired_at", l.acquiredAt},
             {"expires_at", l.expiresAt},
             {"ttl_ms", l.ttlMs},
             {"host", nullable(l.host)},
             {"pid", nullable(l.pid)},
             {"job_url", nullable(l.jobUrl)}};
    writeIfPresent(j, "remaining_ms", l.remainingMs);
}

void from_json(const json& j, Lease& l)
{
    read(j, "token", l.token);
    read(j, "job", l.job);
    read(j, "release", l.release);
    read(j, "generation", l.generation);
    read(j, "acquired_at", l.acquiredAt);
    read(j, "expires_at", l.expiresAt);
    read(j, "ttl_ms", l.ttlMs);
    readIfPresent(j, "remaining_ms", l.remainingMs);
    read(j, "host", l.host);
    read(j, "pid", l.pid);
    read(j, "job_url", l.jobUrl);
}

void to_json(json& j, const Candidate& c)
{
    j = json{{"candidate", c.candidate},
             {"job", c.job},
             {"release", c.release},
             {"generation", c.generation},
             {"queued_at", c.queuedAt},
             {"state", c.state},
             {"ended_at", nullable(c.endedAt)},
             {"token", nullable(c.token)},
             {"host", nullable(c.host)},
             {"pid", nullable(c.pid)},
             {"job_url", nullable(c.jobUrl)}};
}

void from_json(const json& j, Candidate& c)
{
    read(j, "candidate", c.candidate);
    read(j, "job", c.job);
    read(j, "release", c.release);
    read(j, "generation", c.generation);
    read(j, "queued_at", c.queuedAt);
    read(j, "state", c.state);
    read(j, "ended_at", c.endedAt);
    read(j, "token", c.token);
    read(j, "host", c.host);
    read(j, "pid", c.pid);
    read(j, "job_url", c.jobUrl);
}

void to_json(json& j, const Manifest& m)
{
    j = json{{"release", m.release},       {"generation", m.generation},    {"job", m.job},
             {"token", nullable(m.token)}, {"published_at", m.publishedAt}, {"manifest", m.manifest}};
}

void from_json(const json& j, Manifest& m)
{
    read(j, "release", m.release);
    read(j, "generation", m.generation);
    read(j, "job", m.job);
    read(j, "token", m.token);
    read(j, "published_at", m.publishedAt);
    m.manifest = j.at("manifest");
}

void to_json(json& j, const Frozen& f)
{
    j = json{{"at", f.at}, {"by", f.by}, {"reason", f.reason}};
}

void from_json(const json& j, Frozen& f)
{
    read(j, "at", f.at);
    read(j, "by", f.by);
    read(j, "reason", f.reason);
}

void to_json(json& j, const Environment& e)
{
    j = json{{"name", e.name},
             {"default_ttl_ms", e.defaultTtlMs},
             {"max_ttl_ms", e.maxTtlMs},
             {"last_token", e.lastToken},
             {"created_at", e.createdAt},
             {"policy", e.policy},
             {"supersede", e.supersede},
             {"serialization", e.serialization},
             {"frozen", nullable(e.frozen)},
             {"current", nullable(e.current)},
             {"lease", nullable(e.lease)},
             {"queue", e.queue},
             {"pending_supersessions", e.pendingSupersessions}};
}

void from_json(const json& j, Environment& e)
{
    read(j, "name", e.name);
    read(j, "default_ttl_ms", e.defaultTtlMs);
    read(j, "max_ttl_ms", e.maxTtlMs);
    read(j, "last_token", e.lastToken);
    read(j, "created_at", e.createdAt);
    read(j, "policy", e.policy);
    read(j, "supersede", e.supersede);
    read(j, "serialization", e.serialization);
    read(j, "frozen", e.frozen);
    read(j, "current", e.current);
    read(j, "lease", e.lease);
    read(j, "queue", e.queue);
    read(j, "pending_supersessions", e.pendingSupersessions);
}

void to_json(json& j, const EnvironmentList& l)
{
    j = json{{"environments", l.environments}};
}

void from_json(const json& j, EnvironmentList& l)
{
    read(j, "environments", l.environments);
}

// The replies about one environment are its relctl.environment_json with the
// call's own keys merged in.
void to_json(json& j, const EnvironmentAdded& a)
{
    to_json(j, a.environment);
    j["created"] = a.created;
}

void from_json(const json& j, EnvironmentAdded& a)
{
    from_json(j, a.environment);
    read(j, "created", a.created);
}

void to_json(json& j, const EnvironmentSet::Changed& c)
{
    j = json::object();
    writeIfPresent(j, "policy", c.policy);
    writeIfPresent(j, "supersede", c.supersede);
    writeIfPresent(j, "serialization", c.serialization);
}

void from_json(const json& j, EnvironmentSet::Changed& c)
{
    readIfPresent(j, "policy", c.policy);
    readIfPresent(j, "supersede", c.supersede);
    readIfPresent(j, "serialization", c.serialization);
}

void to_json(json& j, const EnvironmentSet& s)
{
    to_json(j, s.environment);
    j["status"] = s.status;
    j["changed"] = s.changed;
}

void from_json(const json& j, EnvironmentSet& s)
{
    from_json(j, s.environment);
    read(j, "status", s.status);
    read(j, "changed", s.changed);
}

void to_json(json& j, const FreezeChange& f)
{
    to_json(j, f.environment);
    j["status"] = f.status;
    j["changed"] = f.changed;
}

void from_json(const json& j, FreezeChange& f)
{
    from_json(j, f.environment);
    read(j, "status", f.status);
    read(j, "changed", f.changed);
}

void to_json(json& j, const LeaseShow& s)
{
    j = json{{"env", s.env}, {"lease", nullable(s.lease)}};
}

void from_json(const json& j, LeaseShow& s)
{
    read(j, "env", s.env);
    read(j, "lease", s.lease);
}

void to_json(json& j, const Revocation& r)
{
    j = json{{"status", r.status}, {"env", r.env}, {"revoked", r.revoked}, {"lease", nullable(r.lease)}};
    writeIfPresent(j, "by", r.by);
    writeIfPresent(j, "reason", r.reason);
    writeIfPresent(j, "message", r.message);
}

void from_json(const json& j, Revocation& r)
{
    read(j, "status", r.status);
    read(j, "env", r.env);
    read(j, "revoked", r.revoked);
    read(j, "lease", r.lease);
    readIfPresent(j, "by", r.by);
    readIfPresent(j, "reason", r.reason);
    readIfPresent(j, "message", r.message);
}

// relctl.manifest_json of a row that does not exist: every member null.
void to_json(json& j, const ManifestShow& s)
{
    if (s.manifest) {
        to_json(j, *s.manifest);
    } else {
        j = json::object();
        for (const char* key : {"release", "generation", "job", "token", "published_at", "manifest"})
            j[key] = nullptr;
    }
    j["env"] = s.env;
}

void from_json(const json& j, ManifestShow& s)
{
    read(j, "env", s.env);
    if (j.at("release").is_null())
        s.manifest.reset();
    else
        s.manifest = j.get<Manifest>();
}

void to_json(json& j, const ManifestHistory& h)
{
    json history = json::array();
    for (const Manifest& m : h.history) {
        json item = m;
        item["env"] = h.env;
        history.push_back(std::move(item));
    }
    j = json{{"env", h.env}, {"history", std::move(history)}};
}

void from_json(const json& j, ManifestHistory& h)
{
    read(j, "env", h.env);
    read(j, "history", h.history);
}

void to_json(json& j, const Supersession& s)
{
    j = json{{"id", s.id},
             {"env", s.env},
             {"state", s.state},
             {"opened_at", s.openedAt},
             {"decided_at", nullable(s.decidedAt)},
             {"decided_by", nullable(s.decidedBy)},
             {"reason", nullable(s.reason)},
             {"winner", nullable(s.winner)},
             {"skipped", s.skipped}};
}

void from_json(const json& j, Supersession& s)
{
    read(j, "id", s.id);
    read(j, "env", s.env);
    read(j, "state", s.state);
    read(j, "opened_at", s.openedAt);
    read(j, "decided_at", s.decidedAt);
    read(j, "decided_by", s.decidedBy);
    read(j, "reason", s.reason);
    read(j, "winner", s.winner);
    read(j, "skipped", s.skipped);
}

void to_json(json& j, const Approvals& a)
{
    j = json{{"approvals", a.approvals}};
}

void from_json(const json& j, Approvals& a)
{
    read(j, "approvals", a.approvals);
}

void to_json(json& j, const Decision& d)
{
    to_json(j, d.supersession);
    j["status"] = d.status;
}

void from_json(const json& j, Decision& d)
{
    from_json(j, d.supersession);
    read(j, "status", d.status);
}

void to_json(json& j, const ServerInfo& s)
{
    j = json{{"server_version", s.serverVersion},
             {"database", s.database},
             {"now", s.now},
             {"schema_version", nullable(s.schemaVersion)}};
}

void from_json(const json& j, ServerInfo& s)
{
    read(j, "server_version", s.serverVersion);
    read(j, "database", s.database);
    read(j, "now", s.now);
    read(j, "schema_version", s.schemaVersion);
}

void to_json(json& j, const Event& e)
{
    j = json{{"id", e.id},
             {"at", e.at},
             {"env", nullable(e.env)},
             {"operation", e.operation},
             {"outcome", e.outcome},
             {"reason", nullable(e.reason)},
             {"job", nullable(e.job)},
             {"release", nullable(e.release)},
             {"generation", nullable(e.generation)},
             {"token", nullable(e.token)},
             {"current_token", nullable(e.currentToken)},
             {"current_generation", nullable(e.currentGeneration)},
             {"current_release", nullable(e.currentRelease)},
             {"op_id", nullable(e.opId)},
             {"host", nullable(e.host)},
             {"pid", nullable(e.pid)},
             {"job_url", nullable(e.jobUrl)},
             {"detail", e.detail}};
}

void from_json(const json& j, Event& e)
{
    read(j, "id", e.id);
    read(j, "at", e.at);
    read(j, "env", e.env);
    read(j, "operation", e.operation);
    read(j, "outcome", e.outcome);
    read(j, "reason", e.reason);
    read(j, "job", e.job);
    read(j, "release", e.release);
    read(j, "generation", e.generation);
    read(j, "token", e.token);
    read(j, "current_token", e.currentToken);
    read(j, "current_generation", e.currentGeneration);
    read(j, "current_release", e.currentRelease);
    read(j, "op_id", e.opId);
    read(j, "host", e.host);
    read(j, "pid", e.pid);
    read(j, "job_url", e.jobUrl);
    e.detail = j.at("detail");
}

void to_json(json& j, const AuditTrail& a)
{
    j = json{{"events", a.events}};
}

void from_json(const json& j, AuditTrail& a)
{
    read(j, "events", a.events);
}

void to_json(json& j, const TracedRefusal::OwnLease& l)
{
    j = json{{"token", l.token},
             {"release", l.release},
             {"generation", l.generation},
             {"acquired_at", l.acquiredAt},
             {"expires_at", l.expiresAt},
             {"ended_at", nullable(l.endedAt)},
             {"end_reason", nullable(l.endReason)},
             {"host", nullable(l.host)},
             {"pid", nullable(l.pid)},
             {"job_url", nullable(l.jobUrl)}};
}

void from_json(const json& j, TracedRefusal::OwnLease& l)
{
    read(j, "token", l.token);
    read(j, "release", l.release);
    read(j, "generation", l.generation);
    read(j, "acquired_at", l.acquiredAt);
    read(j, "expires_at", l.expiresAt);
    read(j, "ended_at", l.endedAt);
    read(j, "end_reason", l.endReason);
    read(j, "host", l.host);
    read(j, "pid", l.pid);
    read(j, "job_url", l.jobUrl);
}

void to_json(json& j, const TracedRefusal::SupersedingLease& l)
{
    j = json{{"token", l.token},
             {"job", l.job},
             {"release", l.release},
             {"generation", l.generation},
             {"acquired_at", l.acquiredAt},
             {"expires_at", l.expiresAt},
             {"host", nullable(l.host)},
             {"pid", nullable(l.pid)},
             {"job_url", nullable(l.jobUrl)}};
}

void from_json(const json& j, TracedRefusal::SupersedingLease& l)
{
    read(j, "token", l.token);
    read(j, "job", l.job);
    read(j, "release", l.release);
    read(j, "generation", l.generation);
    read(j, "acquired_at", l.acquiredAt);
    read(j, "expires_at", l.expiresAt);
    read(j, "host", l.host);
    read(j, "pid", l.pid);
    read(j, "job_url", l.jobUrl);
}

void to_json(json& j, const TracedRefusal::CurrentManifest& m)
{
    j = json{{"release", m.release},
             {"generation", m.generation},
             {"job", m.job},
             {"token", nullable(m.token)},
             {"published_at", m.publishedAt},
             {"published_before_ms", m.publishedBeforeMs}};
}

void from_json(const json& j, TracedRefusal::CurrentManifest& m)
{
    read(j, "release", m.release);
    read(j, "generation", m.generation);
    read(j, "job", m.job);
    read(j, "token", m.token);
    read(j, "published_at", m.publishedAt);
    read(j, "published_before_ms", m.publishedBeforeMs);
}

void to_json(json& j, const TracedRefusal& r)
{
    j = json{{"event", r.event},
             {"lease", nullable(r.lease)},
             {"superseded_by", nullable(r.supersededBy)},
             {"current_manifest", nullable(r.currentManifest)}};
}

void from_json(const json& j, TracedRefusal& r)
{
    read(j, "event", r.event);
    read(j, "lease", r.lease);
    read(j, "superseded_by", r.supersededBy);
    read(j, "current_manifest", r.currentManifest);
}

void to_json(json& j, const JobTrace& t)
{
    j = json{{"job", t.job}, {"refusals", t.refusals}};
}

void from_json(const json& j, JobTrace& t)
{
    read(j, "job", t.job);
    read(j, "refusals", t.refusals);
}

void to_json(json& j, const OperationRecord& o)
{
    j = json{{"op_id", o.opId}, {"status", o.status}};
    writeIfPresent(j, "operation", o.operation);
    writeIfPresent(j, "request", o.request);
    if (o.outcome)
        j["outcome"] = o.outcome->body;
    writeIfPresent(j, "recorded_at", o.recordedAt);
}

void from_json(const json& j, OperationRecord& o)
{
    read(j, "op_id", o.opId);
    read(j, "status", o.status);
    readIfPresent(j, "operation", o.operation);
    readIfPresent(j, "request", o.request);
    if (const auto it = j.find("outcome"); it != j.end())
        o.outcome = Outcome::fromReply(*it);
    else
        o.outcome.reset();
    readIfPresent(j, "recorded_at", o.recordedAt);
}

} // namespace relctl
