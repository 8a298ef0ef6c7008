// The keys of the environment replies (relctl/replies_environment.h).

#include "relctl/replies_environment.h"

#include "replyfields.h"

namespace relctl {

namespace {

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
    io.nullableSince("group", e.group);
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
    io.omittable("group", c.group);
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

template <class Io, Is<EnvironmentNames> N> void fields(Io& io, N& n)
{
    io.required("environments", n.environments);
    io.required("truncated", n.truncated);
}

template <class Io, Is<AttentionReason> R> void fields(Io& io, R& r)
{
    io.required("reason", r.reason);
    io.required("summary", r.summary);
    io.omittable("at", r.at);
}

template <class Io, Is<EnvironmentAttention> A> void fields(Io& io, A& a)
{
    io.required("name", a.name);
    io.required("group", a.group);
    io.required("attention", a.attention);
}

template <class Io, Is<AttentionList> L> void fields(Io& io, L& l)
{
    io.required("server_now", l.serverNow);
    io.required("environments", l.environments);
}

template <class Io, Is<PromotionPaths::Path> P> void fields(Io& io, P& p)
{
    io.required("group", p.group);
    io.required("env", p.env);
    io.required("promote_from", p.promoteFrom);
    io.required("changed", p.changed);
}

template <class Io, Is<PromotionPaths::Skipped> S> void fields(Io& io, S& s)
{
    io.required("group", s.group);
    io.required("missing", s.missing);
}

template <class Io, Is<PromotionPaths> P> void fields(Io& io, P& p)
{
    io.required("status", p.status);
    io.required("paths", p.paths);
    io.required("skipped", p.skipped);
}

} // namespace

RELCTL_JSON_FROM_FIELDS(Frozen)
RELCTL_JSON_FROM_FIELDS(Environment)
RELCTL_JSON_FROM_FIELDS(EnvironmentList)
RELCTL_JSON_FROM_FIELDS(EnvironmentAdded)
RELCTL_JSON_FROM_FIELDS(EnvironmentSet::Changed)
RELCTL_JSON_FROM_FIELDS(EnvironmentSet)
RELCTL_JSON_FROM_FIELDS(FreezeChange)
RELCTL_JSON_FROM_FIELDS(EnvironmentNames)
RELCTL_JSON_FROM_FIELDS(AttentionReason)
RELCTL_JSON_FROM_FIELDS(EnvironmentAttention)
RELCTL_JSON_FROM_FIELDS(AttentionList)
RELCTL_JSON_FROM_FIELDS(PromotionPaths::Path)
RELCTL_JSON_FROM_FIELDS(PromotionPaths::Skipped)
RELCTL_JSON_FROM_FIELDS(PromotionPaths)

} // namespace relctl
