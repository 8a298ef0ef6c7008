// The keys of the audit, trace and status replies (relctl/replies_audit.h).

#include "relctl/replies_audit.h"

#include "replyfields.h"

#include <algorithm>

namespace relctl {

namespace {

template <class Io, Is<ServerInfo> S> void fields(Io& io, S& s)
{
    io.required("server_version", s.serverVersion);
    io.required("database", s.database);
    io.required("login", s.login);
    io.required("now", s.now);
    io.nullable("schema_version", s.schemaVersion);
    io.required("roles", s.roles);
    io.required("member_of", s.memberOf);
    io.required("tls", s.tls);
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
    io.jsonText("detail", e.detail);
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

RELCTL_JSON_FROM_FIELDS(ServerInfo)

bool ServerInfo::hasRole(const std::string& role) const
{
    return std::find(roles.begin(), roles.end(), role) != roles.end();
}

bool ServerInfo::isMemberOf(const std::string& role) const
{
    return std::find(memberOf.begin(), memberOf.end(), role) != memberOf.end();
}
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

} // namespace relctl
