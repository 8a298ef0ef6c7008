// The keys of the lease and queue replies (relctl/replies_lease.h).

#include "relctl/replies_lease.h"

#include "replyfields.h"

namespace relctl {

namespace {

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

template <class Io, Is<Supersessions> A> void fields(Io& io, A& a)
{
    io.required("approvals", a.requests); // the reply's key since relctl.approvals, kept for --json readers
}

template <class Io, Is<SupersessionDecision> D> void fields(Io& io, D& d)
{
    io.merged(d.supersession);
    io.required("status", d.status);
}

template <class Io, Is<Grant> G> void fields(Io& io, G& g)
{
    io.required("status", g.status);
    io.required("env", g.env);
    io.required("token", g.token);
    io.required("job", g.job);
    io.required("release", g.release);
    io.required("generation", g.generation);
    io.required("acquired_at", g.acquiredAt);
    io.required("expires_at", g.expiresAt);
    io.required("ttl_ms", g.ttlMs);
    io.nullable("op_id", g.opId);
    io.required("replayed", g.replayed);
    io.omittable("candidate", g.candidate);
    io.required("lease_id", g.leaseId);
    io.required("handle", g.handle);
}

template <class Io, Is<Renewal> R> void fields(Io& io, R& r)
{
    io.required("status", r.status);
    io.required("env", r.env);
    io.required("token", r.token);
    io.required("job", r.job);
    io.required("release", r.release);
    io.required("generation", r.generation);
    io.required("expires_at", r.expiresAt);
    io.required("ttl_ms", r.ttlMs);
}

template <class Io, Is<LeaseEnd> E> void fields(Io& io, E& e)
{
    io.required("status", e.status);
    io.required("env", e.env);
    io.required("token", e.token);
    io.required("job", e.job);
    io.required("release", e.release);
    io.required("generation", e.generation);
    io.required("released", e.released);
    io.required("state", e.state);
    io.omittable("caveat", e.caveat);
}

template <class Io, Is<DroppedCandidate> D> void fields(Io& io, D& d)
{
    io.merged(d.candidate);
    io.required("status", d.status);
    io.required("dropped_by", d.droppedBy);
    io.required("reason", d.reason);
}

} // namespace

RELCTL_JSON_FROM_FIELDS(Lease)
RELCTL_JSON_FROM_FIELDS(Candidate)
RELCTL_JSON_FROM_FIELDS(LeaseShow)
RELCTL_JSON_FROM_FIELDS(Revocation)
RELCTL_JSON_FROM_FIELDS(Supersession)
RELCTL_JSON_FROM_FIELDS(Supersessions)
RELCTL_JSON_FROM_FIELDS(SupersessionDecision)
RELCTL_JSON_FROM_FIELDS(Grant)
RELCTL_JSON_FROM_FIELDS(Renewal)
RELCTL_JSON_FROM_FIELDS(LeaseEnd)
RELCTL_JSON_FROM_FIELDS(DroppedCandidate)

} // namespace relctl
